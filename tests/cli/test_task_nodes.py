"""The ``task`` config group comes from the task dataclasses (auralgen/cli/_hydra.py), not from YAML."""

from __future__ import annotations

import dataclasses

import pytest
from omegaconf import OmegaConf

from auralgen.cli._hydra import compose, task_node
from auralgen.config import validate
from auralgen.core.errors import ParameterError
from auralgen.core.mapping import plain
from auralgen.core.resources import conf_dir
from auralgen.tasks.base import TASKS, AuditSpec, Task, TaskConfig

TASK_NAMES = TASKS.names()


def test_no_task_yaml_is_shipped():
    assert not (conf_dir() / "task").exists()


@pytest.mark.parametrize("name", TASK_NAMES)
def test_task_selects_every_dataclass_default_and_validates(name):
    cfg = compose([f"task={name}", "out=o"])
    got = OmegaConf.to_container(cfg.task, resolve=True)
    want = plain(dataclasses.asdict(TASKS.get(name).Config(name=name)))
    assert sorted(got) == sorted(want)  # every key
    groups = [
        d for entry in task_node(TASKS.get(name), name).get("defaults", []) if isinstance(entry, dict) for d in entry
    ]
    swapped = {
        g.split("@")[1] for g in groups
    }  # fields a config group fills (mixture.mixing: the mixing/default node, MixSpec's defaults)
    assert {k: v for k, v in got.items() if k not in swapped} == {k: v for k, v in want.items() if k not in swapped}
    assert all(set(got[k]) == set(want[k]) for k in swapped)
    (task,) = validate(cfg).tasks
    assert type(task) is TASKS.get(name).Config and plain(dataclasses.asdict(task)) == got


def test_a_group_field_is_swapped_whole_by_its_config_group():
    node = task_node(TASKS.get("mixture"), "mixture")
    assert node["defaults"] == [{"/mixing@mixing": "default"}, "_self_"] and "mixing" not in node
    mixing = compose(["task=mixture", "mixing@task.mixing=sequential"]).task.mixing
    assert mixing.timing == "sequential" and mixing.gap_s.dist == "truncnorm"


def test_a_suite_sets_its_own_items_per_level():
    cfg = compose(["suite=tones"])
    assert {k: v.items_per_level for k, v in cfg.tasks.items()} == {
        "audiogram": 26,
        "pitch_relative": 8,
        "loudness_relative": 8,
        "duration_relative": 8,
        "duration_absolute": 8,
    }
    assert compose(["task=audiogram"]).task.items_per_level == TaskConfig.items_per_level == 10
    assert list(compose(["suite=tones", "~tasks.audiogram"]).tasks) == [
        "pitch_relative",
        "loudness_relative",
        "duration_relative",
        "duration_absolute",
    ]


@dataclasses.dataclass(frozen=True)
class ProbeConfig(TaskConfig):
    levels: tuple = (3, 2, 1)
    loudness: float = 0.5


class Probe(Task):
    name, sub_category, attribute, regime, level_unit, n_choices, questions = (
        "_test_python_only",
        "x",
        "x",
        "relative",
        "x",
        2,
        ("q",),
    )
    Config = ProbeConfig
    audit = AuditSpec(("difference",), listener_easiest=None, reason="a test task nobody generates")
    listener = None


def test_a_task_registered_only_in_python_gets_its_node():
    TASKS.register(Probe)
    try:
        cfg = compose(["task=_test_python_only", "task.loudness=0.25", "out=o"])
        assert OmegaConf.to_container(cfg.task) == {
            "name": "_test_python_only",
            "levels": [3, 2, 1],
            "items_per_level": 10,
            "sample_rate": None,
            "phrasings": None,
            "loudness": 0.25,
        }
        (task,) = validate(cfg).tasks
        assert task == ProbeConfig(name="_test_python_only", loudness=0.25)
        with pytest.raises(Exception, match="Could not override 'task.loudnes'"):
            compose(["task=_test_python_only", "task.loudnes=1"])
    finally:
        TASKS.unregister("_test_python_only")
    with pytest.raises(Exception, match="Could not find 'task/_test_python_only'"):
        compose(["task=_test_python_only"])


def test_an_unknown_task_lists_the_registered_ones():
    with pytest.raises(Exception, match="(?s)Available options in 'task'.*pitch_relative") as info:
        compose(["task=nope"])
    assert not isinstance(info.value, ParameterError)  # Hydra's own error; the CLI prints it in one line


def test_cfg_job_prints_every_key_of_the_selected_task(tmp_path):
    """--cfg skips the command-line check, so the command itself must register the task group."""
    import subprocess
    import sys

    import yaml

    proc = subprocess.run(
        [sys.executable, "-m", "auralgen.cli", "generate", "task=pitch_relative", "task.n_harmonics=3", "--cfg", "job"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    task = yaml.safe_load(proc.stdout)["task"]
    want = plain(dataclasses.asdict(TASKS.get("pitch_relative").Config(name="pitch_relative")))
    assert task == {**want, "n_harmonics": 3}
