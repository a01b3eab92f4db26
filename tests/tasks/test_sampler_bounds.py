"""Every valid config renders: what a task's sampler draws, its renderer accepts.

For EVERY registered task (the registry is iterated, not a hand-written list), every sample
rate of ``SAMPLE_RATES`` its ``check`` accepts and every level, ``render(sample(...))`` must
return finite float32 clips. The fast test covers each task's lowest and highest accepted
rate; the slow sweep covers every accepted rate with several seeds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.tasks.base import SAMPLE_RATES, AudioConfig, load_tasks, task_class

TASKS = sorted(load_tasks())


def task_at(name: str, sample_rate: int):
    """The task with its default config at ``sample_rate``, or None if ``check`` refuses that rate."""
    cls = task_class(name)
    cfg = dataclasses.replace(cls.Config(), sample_rate=sample_rate)
    audio = AudioConfig(sample_rate=sample_rate)
    try:
        cfg.check(audio, f"tasks.{name}")
    except ParameterError:
        return None
    return cls(cfg, audio)


def accepted_rates(name: str) -> list[int]:
    return [sr for sr in SAMPLE_RATES if task_at(name, sr) is not None]


def assert_renders(task, seeds) -> None:
    for level in range(task.design.n_levels()):
        for seed in seeds:
            params = task.sample(np.random.default_rng([seed, level, task.sample_rate]), level)
            clips = task.render(params)
            where = f"{task.name} sr={task.sample_rate} level={level} seed={seed}"
            assert len(clips) >= 1, where
            for clip in clips:
                assert clip.dtype == np.float32 and clip.ndim == 2 and clip.shape[1] > 0, where
                assert np.all(np.isfinite(clip)) and float(np.max(np.abs(clip))) < 1.0, where


def test_registry_holds_every_task_module():
    assert len(TASKS) >= 15 and "temporal_reorder" in TASKS and "audiogram" in TASKS


@pytest.mark.parametrize("name", TASKS)
def test_default_config_accepts_some_sample_rate(name):
    assert accepted_rates(name), f"{name}: no sample rate of {SAMPLE_RATES} passes check"


@pytest.mark.parametrize("name", TASKS)
def test_samples_render_at_lowest_and_highest_rate(name):
    rates = accepted_rates(name)
    for sr in sorted({rates[0], rates[-1]}):
        assert_renders(task_at(name, sr), seeds=(0,))


@pytest.mark.parametrize("name", TASKS)
def test_sampling_never_raises_at_any_rate(name):
    for sr in accepted_rates(name):
        task = task_at(name, sr)
        for level in range(task.design.n_levels()):
            for seed in range(2):
                params = task.sample(np.random.default_rng([seed, level, sr]), level)
                assert params["sample_rate_hz"] == sr or "sample_rate_hz" not in params


@pytest.mark.slow
@pytest.mark.parametrize("name", TASKS)
def test_samples_render_at_every_rate_and_level(name):
    for sr in accepted_rates(name):
        assert_renders(task_at(name, sr), seeds=range(5))
