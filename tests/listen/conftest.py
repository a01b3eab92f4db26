"""A small pitch dataset and study builders shared by the listening-test tests."""

import pytest

from auralgen.generation.run import run
from auralgen.listen.study import study_from_dict
from tests.support.builders import small_run

QUIET = lambda *_: None  # noqa: E731


@pytest.fixture(scope="session")
def pitch_dataset(tmp_path_factory):
    """pitch_relative, one item per level: 6 items (0 to 1200 cents)."""
    out = tmp_path_factory.mktemp("listen_ds")
    run(small_run("task=pitch_relative", "task.items_per_level=1", out=out, workers=1), log=QUIET)
    return out


def make_study(out, data=None, **over):
    """A short study: 2 practice trials, the dataset as fixed block, a short pitch track."""
    node = {
        "out": str(out),
        "seed": 0,
        "practice": 2,
        "audio": {"length_s": 4.0},
        "adaptive": {"tasks": ["pitch_relative"], "settings": {"min_trials": 6, "max_trials": 8}},
    }
    if data is not None:
        node["fixed"] = {"data": str(data)}
    node.update(over)
    return study_from_dict(node)
