"""A level is the difference the item actually has; distance cues carry distance_relative;
the audiogram's labels are physical presence at a sample rate that represents every probe."""

import math
from collections import defaultdict

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng
from auralgen.tasks._binned import margin_percent
from tests.support.builders import small_run

TASKS = build_tasks(small_run())
PARAMS_TOLERANCE_PP = 1.0  # an item's recorded margin vs its level


def rendered(name, n):
    task = TASKS[name]
    for i in range(n):
        level = i % task.design.n_levels()
        p = task.sample(item_rng(3, "test", name, i), level)
        yield task, task.design.level_value(level), p, task.measure(p, task.render(p))


def test_duration_absolute_margins_from_params_and_audio_equal_the_level():
    measured = defaultdict(list)
    for task, value, p, m in rendered("duration_absolute", 48):
        assert abs(p["margin_percent"] - value) <= PARAMS_TOLERANCE_PP * 1e-6  # exact in the recipe
        assert margin_percent(p["sounds"][0]["duration_s"], task.edges) == pytest.approx(value)
        rec = m.checks["margin_percent"]
        assert rec["ok"] and m.valid and abs(rec["measured"] - value) <= rec["tolerance"]
        assert abs(rec["measured"] - value) <= 2.5  # the 15 ms duration tolerance maps to <= 4.5 pp
        measured[value].append(rec["measured"])
    for value, got in measured.items():  # the median measured margin is the level (was 28.5 % at 5 %)
        assert abs(float(np.median(got)) - value) <= PARAMS_TOLERANCE_PP


def test_distance_absolute_margins_equal_the_level_and_the_level_check_holds():
    sides = set()
    for task, value, p, m in rendered("distance_absolute", 12):
        d = p["sounds"][0]["distance_m"]
        assert margin_percent(d, task.edges) == pytest.approx(value) == p["margin_percent"]
        lo, hi = task.edges[p["bin"]], task.edges[p["bin"] + 1]
        assert lo < d < hi and m.checks["margin_percent"]["ok"]  # the level check may send an item back
        sides.add((p["bin"], p["edge_side"]))
    assert {(0, "high"), (2, "low")} <= sides


def test_distance_absolute_margin_check_fails_on_a_moved_distance():
    task, value, p, _ = next(rendered("distance_absolute", 1))
    p["sounds"][0]["distance_m"] *= 1.1
    m = task.measure(p, task.render(p))
    assert not m.valid and not m.checks["margin_percent"]["ok"]


def test_distance_relative_drr_carries_the_answer_and_level_is_roved():
    steps, louder = defaultdict(list), []
    for _task, value, p, m in rendered("distance_relative", 16):
        c = p["closer"]
        d = [s["distance_m"] for s in p["sounds"]]
        assert 20 * math.log10(d[1 - c] / d[c]) == pytest.approx(value)
        expected = [s["drr_db_expected"] for s in p["sounds"]]
        assert expected[c] - expected[1 - c] == pytest.approx(value, abs=0.01)  # statistical DRR step = level
        assert m.valid and m.checks["drr_step_db"]["measured"] > 0
        assert m.extra["clip_excess_step_db"]["measured"] > 0  # the clip orders the pair like the DRR
        steps[value].append(m.checks["drr_step_db"]["measured"])
        lv = m.extra["received_level_db_spl"]
        louder.append(lv[c] > lv[1 - c])
    assert np.median(steps[12.0]) > np.median(steps[3.0]) + 2.0  # a larger ratio, a larger measured DRR step
    assert 0.3 < np.mean(louder) < 0.95  # the received level alone does not answer every item


def test_distance_relative_refuses_a_zero_ratio():
    with pytest.raises(ParameterError, match=r"levels=\[0\.0\].*allowed: distance ratios > 0 dB"):
        build_tasks(small_run("task=distance_relative", "task.levels=[0.0]"))


def test_audiogram_options_name_presence_and_every_probe_is_far_below_nyquist():
    task = TASKS["audiogram"]
    p = task.sample(item_rng(0, "test", "audiogram", 0), 0)  # -10 dB HL
    qa = task.qa(p, np.random.default_rng(0), slot=0)
    texts = [*task.questions, *qa.options]
    assert not any(w in t.lower() for t in texts for w in ("hear", "heard", "audible"))
    assert set(qa.options) >= {"In the first half", "In the second half", "Not present"}
    top = max(*task.cfg.freqs_hz, *task.cfg.probe_freqs_hz)
    assert task.sample_rate == 48000 and top <= 0.75 * task.sample_rate / 2


def test_audiogram_refuses_a_probe_near_nyquist():
    with pytest.raises(ParameterError, match=r"freqs_hz=16000 is outside 20 Hz \.\. 12000 Hz"):
        build_tasks(small_run("task=audiogram", "task.sample_rate=32000"))
