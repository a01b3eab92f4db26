"""The presentation level: every task whose attribute is not absolute level plays at a normal digital
level (its dB SPL recipe kept, with the presentation full scale in ``params``); the audiogram keeps the
run's calibrated full scale; a full scale no task of a run reads is refused."""

import math

import numpy as np
import pytest

from auralgen.core.constants import DEFAULT_FULL_SCALE_DB_SPL, PRESENTATION_FULL_SCALE_DB_SPL
from auralgen.core.errors import ParameterError
from auralgen.tasks.base import AudioConfig, load_tasks, task_audio, task_names
from tests.support.builders import small_run

FRAME_S = 0.05
# the item's loudest 50 ms (dBFS RMS) of a presented task: a normal level, 40 dB or more above a 16-bit floor
# (-96 dBFS) and below clipping; loudness_relative spans 26-99 dB SPL by design (+-24 dB around a 50-75 dB SPL
# mean), its louder sound at least the mean: -66 dBFS at its 116 dB SPL full scale
LOUDEST_DBFS = {"loudness_relative": (-70.0, -3.0)}
DEFAULT_LOUDEST_DBFS = (-55.0, -3.0)


def loudest_frame_dbfs(clips, sr: int) -> float:
    """The loudest 50 ms frame's RMS (dBFS) over the item's clips, channels pooled."""
    n = max(1, int(FRAME_S * sr))
    best = 0.0
    for c in clips:
        x = np.asarray(c, np.float64)
        m = x.shape[-1] // n * n
        if m:
            best = max(best, float((x[..., :m] ** 2).mean(axis=0).reshape(-1, n).mean(axis=1).max()))
    return 10 * math.log10(best) if best > 0 else -math.inf


def task_of(name):
    cls = load_tasks()[name]
    return cls(cls.Config(name=name), AudioConfig())


@pytest.mark.parametrize("name", sorted(set(task_names()) - {"audiogram"}))
def test_every_task_not_about_absolute_level_is_presented_at_a_normal_level(name):
    """At the easiest and the hardest level: the loudest 50 ms between -55 and -3 dBFS RMS (the old
    convention, full scale 136 dB SPL, put 18 tasks at -60 to -80 dBFS), no sample clipping, and a recipe in
    dB SPL states the presentation full scale it was rendered at."""
    task = task_of(name)
    assert not task.calibrated_level and task.audio.full_scale_db_spl == task.presentation_full_scale_db_spl
    low, high = LOUDEST_DBFS.get(name, DEFAULT_LOUDEST_DBFS)
    for i in (0, task.design.n_levels() - 1):
        params = task.sample(np.random.default_rng(1000 + i), i)
        clips = task.render(params)
        if "full_scale_db_spl" in params:
            assert params["full_scale_db_spl"] == task.presentation_full_scale_db_spl
        loud = loudest_frame_dbfs(clips, task.sample_rate)
        assert low <= loud <= high, (name, i, loud)
        assert max(float(np.max(np.abs(c))) for c in clips) < 1.0


def test_the_presentation_full_scale_is_one_value_but_where_headroom_needs_more():
    scales = {n: load_tasks()[n].presentation_full_scale_db_spl for n in task_names() if n != "audiogram"}
    assert {n for n, v in scales.items() if v != PRESENTATION_FULL_SCALE_DB_SPL} == {"loudness_relative"}
    assert PRESENTATION_FULL_SCALE_DB_SPL == 100.0 and scales["loudness_relative"] == 116.0


def test_the_audiogram_keeps_the_calibrated_full_scale():
    task = task_of("audiogram")
    assert task.calibrated_level and task.audio.full_scale_db_spl == DEFAULT_FULL_SCALE_DB_SPL
    params = task.sample(np.random.default_rng(0), task.cfg.levels.index(60))
    assert params["full_scale_db_spl"] == DEFAULT_FULL_SCALE_DB_SPL
    assert task_audio(type(task), AudioConfig(full_scale_db_spl=120.0)).full_scale_db_spl == 120.0


def test_a_full_scale_is_refused_where_no_task_reads_it():
    with pytest.raises(
        ParameterError, match=r"full_scale_db_spl=120 is read by no task of this run \(pitch_relative\)"
    ):
        small_run("task=pitch_relative", "full_scale_db_spl=120")
    run = small_run("task=audiogram", "full_scale_db_spl=140")
    assert run.audio.full_scale_db_spl == 140.0
