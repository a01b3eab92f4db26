"""Each task's eval_fields(params) equals what evaluation/items.py sniffed from params before."""

import numpy as np
import pytest

from auralgen.tasks.base import AudioConfig, load_tasks, task_names


def sniffed(params: dict) -> dict:
    """The evaluation's old record code (evaluation/items.py, record_fields), written out."""
    rec = {}
    if "difference_unit" in params:
        rec["difference"] = float(params["difference"])
        rec["difference_unit"] = str(params["difference_unit"])
    if "freq_hz" in params:
        rec["frequency_hz"] = float(params["freq_hz"])
        rec["tone_position"] = params.get("position", "")
    return rec


def items(name: str):
    """One sampled item per level of task ``name`` at its default config."""
    cls = load_tasks()[name]
    task = cls(cls.Config(name=name), AudioConfig())
    for level in range(task.design.n_levels()):
        yield task, task.design.draw(task.sample, np.random.default_rng(level), level, 0, "train", ("train",))


# the tasks that existed when eval_fields replaced the sniffing; later tasks state their fields directly
ISSUE_11_TASKS = (
    "audiogram",
    "azimuth_absolute",
    "azimuth_relative",
    "distance_absolute",
    "distance_relative",
    "duration_absolute",
    "duration_relative",
    "elevation_absolute",
    "elevation_relative",
    "loudness_relative",
    "mixture",
    "multi_source_relation",
    "pitch_relative",
    "temporal_reorder",
    "trajectory",
)


@pytest.mark.parametrize("name", ISSUE_11_TASKS)
def test_eval_fields_equal_the_old_sniffing(name):
    seen = 0
    for task, params in items(name):
        assert task.eval_fields(params) == sniffed(params)
        seen += 1
    assert seen == task.design.n_levels() >= 1


def test_the_tasks_that_state_a_difference_or_a_frequency_do():
    fields = {name: set().union(*(task.eval_fields(p) for task, p in items(name))) for name in ISSUE_11_TASKS}
    assert {n for n, f in fields.items() if "difference_unit" in f} == {"distance_relative"}
    assert {n for n, f in fields.items() if "frequency_hz" in f} == {"audiogram"}


@pytest.mark.parametrize("name", task_names())
def test_a_stated_difference_is_a_finite_non_negative_number_with_a_unit(name):
    for task, params in items(name):
        rec = task.eval_fields(params)
        if "difference" in rec:
            assert np.isfinite(rec["difference"]) and rec["difference"] >= 0, (name, rec)
            assert isinstance(rec["difference_unit"], str) and rec["difference_unit"], (name, rec)
