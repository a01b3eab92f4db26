"""Tasks sample by level value (tasks.base.Level): off the grid (index=None) at any value, the same
params as the grid item of that value; tasks that pick their sub-question by grid index refuse it."""

import json

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.tasks.base import AudioConfig, Level, load_tasks, task_names

BY_INDEX = {"mixture", "multi_source_relation"}  # the sub-question is a function of the grid index


def task_of(name):
    cls = load_tasks()[name]
    return cls(cls.Config(name=name), AudioConfig())


@pytest.mark.parametrize("name", sorted(set(task_names()) - BY_INDEX))
def test_a_level_off_the_grid_samples_like_the_grid_item_of_its_value(name):
    task = task_of(name)
    n = len(task.cfg.levels)  # the audiogram's probe levels lie beyond: they sample by index
    for i in range(n):
        grid = task.sample(np.random.default_rng(i), i)
        off = task.sample(np.random.default_rng(i), Level(None, task.design.level_value(i)))
        assert json.dumps(off, sort_keys=True) == json.dumps(grid, sort_keys=True)


@pytest.mark.parametrize("name", ["pitch_relative", "loudness_relative", "duration_relative"])
def test_a_value_between_grid_levels_is_sampled_at_that_value(name):
    task = task_of(name)
    value = (task.design.level_value(0) + task.design.level_value(1)) / 2
    params = task.sample(np.random.default_rng(0), Level(None, value))
    assert params["difference"] == value and value not in task.cfg.levels


@pytest.mark.parametrize("name", sorted(BY_INDEX))
def test_tasks_that_ask_by_grid_index_refuse_a_level_without_one(name):
    task = task_of(name)
    with pytest.raises(ParameterError, match=f"task {name} level value 3.0 has no grid index; allowed: a level of"):
        task.sample(np.random.default_rng(0), Level(None, 3.0))
    assert task.sample(np.random.default_rng(0), Level(0, task.design.level_value(0))) == task.sample(
        np.random.default_rng(0), 0
    )
