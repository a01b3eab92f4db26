"""trajectory task: labels match the geometry and the audio, params reproduce the clip, export."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng
from auralgen.generation.run import run as generate
from auralgen.measure.geometry import direction_of
from auralgen.rooms.trajectory import Trajectory
from auralgen.tasks.trajectory import _direct_level_db, _direct_levels_db
from tests.support.builders import decode, read_rows, small_run
from tests.support.trajectory_reference import direct_level_db

TASK = build_tasks(small_run("task=trajectory"))["trajectory"]
QUIET = lambda *_: None  # noqa: E731


def sample(i, level=None, seed=0):
    level = i % TASK.design.n_levels() if level is None else level
    return TASK.sample(item_rng(seed, "test", "trajectory", i), level)


def find(motion, seed=11, kind="noise"):
    for i in range(200):
        p = sample(i, level=1, seed=seed)
        if p["motion"] == motion and p["sounds"][0]["source"]["kind"] == kind:
            return p
    raise AssertionError(f"no {motion} item")


def test_labels_follow_the_stored_trajectory():
    motions = set()
    for i in range(40):
        p = sample(i)
        tr = Trajectory.from_dict(p["trajectory"])
        ends = tr.position_at([0.0, tr.duration_s])
        az, _, dist = direction_of(ends, p["listener_m"], p["yaw_deg"])
        left = np.sin(np.radians(az))
        assert tr.speed_m_s == pytest.approx(TASK.design.level_value(i % TASK.design.n_levels()), rel=1e-9)
        m = p["motion"]
        motions.add(m)
        if m == "left_to_right":
            assert left[0] > left[1]
        elif m == "right_to_left":
            assert left[0] < left[1]
        elif m == "approaching":
            assert dist[0] - dist[1] == pytest.approx(p["path_length_m"], rel=1e-9)
        else:
            assert dist[1] - dist[0] == pytest.approx(p["path_length_m"], rel=1e-9)
        tr.check_in(TASK_ROOM(p))  # the whole path stays >= 0.1 m from the walls
    assert motions == {"left_to_right", "right_to_left", "approaching", "receding"}


def TASK_ROOM(p):  # noqa: N802
    from auralgen.rooms.spec import load_preset

    return load_preset(p["room"])


def test_params_alone_reproduce_the_audio_bit_for_bit():
    p = sample(3)
    again = json.loads(json.dumps(p))
    a, b = TASK.render(p)[0], TASK.render(again)[0]
    assert a.dtype == np.float32 and a.shape[0] == 2 and np.array_equal(a, b)


@pytest.mark.parametrize(
    "motion,wrong",
    [
        ("left_to_right", "right_to_left"),
        ("right_to_left", "left_to_right"),
        ("approaching", "receding"),
        ("receding", "approaching"),
    ],
)
def test_check_accepts_the_label_and_rejects_the_opposite(motion, wrong):
    p = find(motion)
    clips = TASK.render(p)
    good = TASK.check(p, clips)
    assert good["valid"] is True
    assert TASK.check({**p, "motion": wrong}, clips)["valid"] is False
    if motion in ("left_to_right", "right_to_left"):  # ITD moves toward the labelled side
        change = good["itd_end_ms"] - good["itd_start_ms"]
        assert (change > 0.05) == (motion == "right_to_left") and abs(change) > 0.05
    else:  # the direct sound's level moves like 20 log10 of the distance ratio (compressed by the room)
        s = p["sounds"][0]
        expected = 20 * math.log10(s["distance_m"] / s["end_distance_m"])
        measured = good["direct_level_end_db"] - good["direct_level_start_db"]
        assert 0.3 * abs(expected) < abs(measured) <= abs(expected) + 1.0 and measured * expected > 0
        nearer_ms = good["delay_start_ms"] - good["delay_end_ms"]  # Doppler: the delay shrinks when approaching
        assert nearer_ms * (1 if motion == "approaching" else -1) > 0


def test_doppler_delay_change_is_the_path_travel_time():
    """The direct sound's delay shrinks (approaching) or grows by the path's travel time between the edge
    windows' centres, 0.7 of the path: the median over the first 16 accepted items within 15 %, each item
    with the right sign (one item's estimate moves with its reverberant tail's draw, so the size is judged
    on the median)."""
    ratios = []
    for i in range(400):
        p = sample(i, level=1, seed=11)
        if p["motion"] not in ("approaching", "receding") or p["sounds"][0]["source"]["kind"] != "noise":
            continue
        got = TASK.check(p, TASK.render(p))
        if not got["valid"]:
            continue
        nearer_ms = (got["delay_start_ms"] - got["delay_end_ms"]) * (1 if p["motion"] == "approaching" else -1)
        ratios.append(nearer_ms / (0.7 * p["path_length_m"] / 343.0 * 1e3))
        if len(ratios) == 16:
            break
    assert len(ratios) == 16 and min(ratios) > 0
    assert abs(float(np.median(ratios)) - 1.0) <= 0.15


@pytest.mark.parametrize(("motion", "kind"), [("approaching", "noise"), ("receding", "clicks")])
def test_the_direct_level_windows_measured_in_one_batch_equal_the_window_by_window_reference(motion, kind):
    p = find(motion, kind=kind)
    x = TASK.render(p)[0].astype(np.float64)
    for edge in ("first", "last"):
        got = _direct_level_db(x, p, edge)
        assert got == direct_level_db(x, p, edge) and all(map(math.isfinite, got))
    # both edges' windows in one batch, as motion_check measures them: the same values
    assert _direct_levels_db(x, p) == [direct_level_db(x, p, edge) for edge in ("first", "last")]


def test_received_level_is_normalised_to_the_roved_target():
    from auralgen.synth.levels import db_spl_to_rms

    p = find("left_to_right")
    x = TASK.render(p)[0].astype(np.float64)
    s = p["sounds"][0]
    a = int(round(s["onset_s"] * 16000))
    rms = math.sqrt(np.mean(x[:, a : a + int(s["source"]["duration_s"] * 16000)] ** 2))
    assert p["full_scale_db_spl"] == 100.0  # presented, not calibrated
    target = db_spl_to_rms(s["level_db_spl"], full_scale_db_spl=p["full_scale_db_spl"])
    assert 20 * math.log10(rms / target) == pytest.approx(0.0, abs=1e-6)


def test_too_fast_levels_are_a_config_error():
    with pytest.raises(ParameterError, match=r"task.levels=\[5.0\] is out of range; allowed: speeds 0 < m/s <= 3.0"):
        small_run("task=trajectory", "task.levels=[5.0]")
    with pytest.raises(ParameterError, match="fit none of rooms"):
        small_run("task=trajectory", "task.rooms=[living_room]", "task.levels=[2.0]")


def test_small_run_exports_and_loads(tmp_path):
    run = small_run("task=trajectory", "task.items_per_level=1", "task.levels=[1.0,0.6]", out=tmp_path / "ds")
    generate(run, log=QUIET)
    rows = read_rows(tmp_path / "ds")
    assert len(rows) == 2
    for row in rows:
        assert row["task"] == "trajectory" and row["category"] == "spatiotemporal_reasoning"
        assert row["level_unit"] == "m/s" and row["channel_layout"] == "binaural" and row["num_channels"] == 2
        assert len(row["options"]) == 4 and row["answer"] in row["options"]
        x, sr = decode(row["audio"][0])
        rendered = TASK.render(json.loads(row["params"]))[0]
        assert sr == 16000 and x.shape == rendered.shape
        assert np.max(np.abs(x - rendered)) <= 2.0**-23
        assert json.loads(row["measured"])["valid"] == row["valid"]
