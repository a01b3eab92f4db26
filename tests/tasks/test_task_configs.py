"""Each task's dataclass defaults agree with its conf/task YAML, and both validate at the default audio settings."""

import dataclasses

import pytest
import yaml

from auralgen.tasks.base import AudioConfig, load_tasks
from tests.support.builders import ROOT

TASK_NAMES = sorted(load_tasks())


def plain(v):
    return [plain(x) for x in v] if isinstance(v, (list, tuple)) else v


@pytest.mark.parametrize("name", TASK_NAMES)
def test_dataclass_defaults_match_the_yaml_and_validate(name):
    cls = load_tasks()[name]
    data = yaml.safe_load((ROOT / "conf" / "task" / f"{name}.yaml").read_text())
    cfg = cls.Config(name=name)
    fields = {f.name for f in dataclasses.fields(cfg)}
    for key, value in data.items():
        if key in ("defaults", "items_per_level") or key not in fields:
            continue  # Hydra's defaults list; suite sizes differ on purpose
        assert plain(getattr(cfg, key)) == value, key
    cfg.check(AudioConfig(), f"tasks.{name}")  # library users get a valid config too
