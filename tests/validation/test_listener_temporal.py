"""Time-course answerers: temporal order from feature trends; motion direction from cue trends."""

import numpy as np
import pytest

from auralgen.generation.run import run
from auralgen.listeners import temporal as LT
from auralgen.listeners.common import NO_ANSWER
from auralgen.validation import listener as L
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731
SR = 16000


@pytest.fixture(scope="module")
def reorder_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("reorder")
    run(small_run("task=temporal_reorder", "task.levels=[100,25]", "task.items_per_level=10", out=out), log=QUIET)
    return out


@pytest.fixture(scope="module")
def trajectory_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("trajectory")
    run(small_run("task=trajectory", "task.levels=[2.0,0.3]", "task.items_per_level=10", out=out), log=QUIET)
    return out


def test_temporal_reorder_is_solved_at_the_easiest_level(reorder_data):
    acc = L.listener_accuracy(reorder_data)
    easy = acc[("temporal_reorder", 0)]
    assert easy["level_value"] == 100 and easy["n"] == 10 and easy["accuracy"] >= 0.9


def test_every_item_is_answered_in_range(reorder_data, trajectory_data):
    for out, task in ((reorder_data, "temporal_reorder"), (trajectory_data, "trajectory")):
        for r in read_rows(out, task):
            clips = [decode(a)[0] for a in r["audio"]]
            got = L.answer(task, r["question"], r["options"], clips, SR, layout=r.get("channel_layout"))
            assert 0 <= got < len(r["options"])


def test_binaural_pass_direction_is_heard_at_the_fastest_level(trajectory_data):
    rows = [r for r in read_rows(trajectory_data, "trajectory") if r["level_value"] == 2.0]
    lateral = [r for r in rows if params_of(r)["motion"] in ("left_to_right", "right_to_left")]
    assert lateral
    ok = 0
    for r in lateral:
        x, sr = decode(r["audio"][0])
        ok += L.answer("trajectory", r["question"], r["options"], [x], sr, layout="binaural") == r["answer_index"]
    assert ok / len(lateral) >= 0.8  # 25 of 25 lateral items at 2 m/s (task=trajectory, 50 items/level, seed 0)


def _sweep_clips(f_start, f_end, n_clips=3, seg_s=0.8):
    t = np.arange(int(n_clips * seg_s * SR)) / SR
    f = f_start * (f_end / f_start) ** (t / t[-1])
    x = 0.1 * np.sin(2 * np.pi * np.cumsum(f) / SR)
    return [x[None, i * int(seg_s * SR) : (i + 1) * int(seg_s * SR)] for i in range(n_clips)]


@pytest.mark.parametrize("shuffle", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
@pytest.mark.parametrize("f_start,f_end", [(200.0, 3200.0), (3200.0, 200.0)])
def test_a_sweep_in_either_direction_is_put_back_in_order(shuffle, f_start, f_end):
    parts = _sweep_clips(f_start, f_end)
    clips = [parts[k] for k in shuffle]  # clip i holds segment shuffle[i]
    truth = tuple(shuffle.index(j) + 1 for j in range(3))
    options = [
        "Audio 1, then Audio 2, then Audio 3",
        "Audio 3, then Audio 2, then Audio 1",
        f"Audio {truth[0]}, then Audio {truth[1]}, then Audio {truth[2]}",
    ]
    got = L.answer("temporal_reorder", "", options, clips, SR)
    assert LT.parse_order(options[got]) == truth


def test_silence_gives_no_answer_never_a_guess():
    silent = [np.zeros((1, SR), np.float32)] * 3
    opts = ["Audio 1, then Audio 2, then Audio 3", "Audio 2, then Audio 1, then Audio 3"]
    assert L.answer("temporal_reorder", "", opts, silent, SR) in (0, 1, NO_ANSWER)  # never raises
    motion = ["Left to right", "Right to left", "Approaching", "Receding"]
    assert L.answer("trajectory", "", motion, [np.zeros((2, 2 * SR), np.float32)], SR, layout="binaural") == NO_ANSWER


def _moving_noise(itd_start_s, itd_end_s, gain_start_db, gain_end_db, seed=0):
    """Two-ear noise whose ITD and level glide linearly (a synthetic moving source)."""
    rng = np.random.default_rng(seed)
    n, lead = int(1.5 * SR), int(0.2 * SR)
    s = rng.standard_normal(n + 64)
    t = np.linspace(0.0, 1.0, n)
    lag = (itd_start_s + (itd_end_s - itd_start_s) * t) * SR  # + = left leads
    idx = np.arange(n) + 32
    left = np.interp(idx + lag / 2, np.arange(s.size), s)
    right = np.interp(idx - lag / 2, np.arange(s.size), s)
    g = 10 ** ((gain_start_db + (gain_end_db - gain_start_db) * t) / 20) * 0.01
    x = np.zeros((2, n + 2 * lead))
    x[:, lead : lead + n] = np.stack([left, right]) * g
    return x


@pytest.mark.parametrize(
    "itd0,itd1,g0,g1,expected",
    [
        (-4e-4, 4e-4, 0.0, 0.0, "Right to left"),
        (4e-4, -4e-4, 0.0, 0.0, "Left to right"),
        (0.0, 0.0, -6.0, 6.0, "Approaching"),
        (0.0, 0.0, 6.0, -6.0, "Receding"),
    ],
)
def test_synthetic_motion_is_classified_by_its_strongest_trend(itd0, itd1, g0, g1, expected):
    options = ["Approaching", "Left to right", "Receding", "Right to left"]
    got = L.answer("trajectory", "", options, [_moving_noise(itd0, itd1, g0, g1)], SR, layout="binaural")
    assert options[got] == expected


@pytest.mark.parametrize(
    "itd0,itd1,g0,g1,expected",
    [
        (4e-4, 1.5e-4, 6.0, -6.0, "Receding"),  # at the side, drifting toward the midline as the direct sound fades
        (1.5e-4, 4e-4, -6.0, 6.0, "Approaching"),
    ],
)
def test_a_radial_path_at_the_side_is_not_read_as_a_pass(itd0, itd1, g0, g1, expected):
    options = ["Approaching", "Left to right", "Receding", "Right to left"]
    got = L.answer("trajectory", "", options, [_moving_noise(itd0, itd1, g0, g1)], SR, layout="binaural")
    assert options[got] == expected


def _moving_clicks(itd_start_s, itd_end_s, gain_start_db, gain_end_db, rate_hz=8.0, tail_db=-6.0):
    """Two-ear clicks (ITD and level gliding) each followed by a 100 ms diffuse tail ``tail_db`` re the click."""
    rng = np.random.default_rng(1)
    n, lead = int(1.5 * SR), int(0.2 * SR)
    x = np.zeros((2, n + 2 * lead + SR // 5))
    clicks = np.arange(0, n, int(SR / rate_hz))
    for k, c in enumerate(clicks):
        t = k / max(len(clicks) - 1, 1)
        lag = int(round((itd_start_s + (itd_end_s - itd_start_s) * t) * SR))
        g = 10 ** ((gain_start_db + (gain_end_db - gain_start_db) * t) / 20) * 0.1
        a = lead + c
        x[0, a + max(-lag, 0)] += g
        x[1, a + max(lag, 0)] += g
        tail = rng.standard_normal((2, SR // 10)) * np.exp(-np.arange(SR // 10) / (0.03 * SR))
        x[:, a + 48 : a + 48 + SR // 10] += tail * g * 10 ** (tail_db / 20) * 0.3
    return x


@pytest.mark.parametrize(
    "itd0,itd1,g0,g1,expected",
    [
        (-4e-4, 4e-4, 0.0, 0.0, "Right to left"),
        (0.0, 0.0, -6.0, 6.0, "Approaching"),
        (0.0, 0.0, 6.0, -6.0, "Receding"),
    ],
)
def test_a_click_train_is_read_click_by_click(itd0, itd1, g0, g1, expected):
    x = _moving_clicks(itd0, itd1, g0, g1)
    assert LT.click_cues(x, SR, "binaural") is not None  # impulsive: the click-by-click cues are used
    options = ["Approaching", "Left to right", "Receding", "Right to left"]
    assert options[L.answer("trajectory", "", options, [x], SR, layout="binaural")] == expected


def test_parse_order_reads_the_option_text():
    assert LT.parse_order("Audio 3, then Audio 1, then Audio 2") == (3, 1, 2)
    assert LT.parse_order("Cannot tell") is None
