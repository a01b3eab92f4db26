"""multi_source_relation: each named source's measured onset, level and position
against the label; an item whose measurement contradicts it is not valid."""

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.random import item_rng
from tests.support.builders import small_run

MULTI = build_tasks(small_run("task=multi_source_relation"))["multi_source_relation"]


def first_valid(level, seed=0):
    for i in range(30):
        p = MULTI.sample(item_rng(seed, "test", "multi_source_relation", i), level)
        clips = MULTI.render(p)
        m = MULTI.measure(p, clips)
        if m.valid:
            return p, clips, m.to_dict()
    raise AssertionError(f"no valid item at level {level}")


@pytest.mark.parametrize("level", [0, 3, 6, 9])  # left, closer, higher, left_of at their easiest step
def test_every_source_is_measured_and_agrees_with_the_recipe(level):
    p, _, m = first_valid(level)
    assert len(m["sources"]) == len(p["sounds"])
    for rec, s in zip(m["sources"], p["sounds"]):
        assert rec["kind"] == s["source"]["kind"]
        assert rec["onset_s"]["ok"] and abs(rec["onset_s"]["measured"] - rec["onset_s"]["expected"]) <= 0.005
        assert rec["level_db_spl"]["ok"]
        assert rec["direction"] is not None


def test_the_highest_source_is_measured_highest():
    p, _, m = first_valid(6)
    assert p["relation"] == "higher"
    elevations = [r["direction"]["elevation_deg"] for r in m["sources"]]
    assert int(np.argmax(elevations)) == p["answer_sound"]


@pytest.mark.parametrize("level", [0, 3, 6])
def test_a_wrong_answer_sound_is_contradicted_by_the_measurement(level):
    p, clips, _ = first_valid(level)
    wrong = {**p, "answer_sound": (p["answer_sound"] + 1) % 3}
    assert not MULTI.measure(wrong, clips).valid


def test_a_moved_onset_or_level_is_contradicted():
    from auralgen.tasks.multi_source_relation import source_record

    p, clips, _ = first_valid(0)
    s = p["sounds"][0]
    solo = MULTI.render({**p, "sounds": [s]})[0].astype(np.float64)
    assert source_record(p, s, solo)["onset_s"]["ok"]
    late = source_record(p, {**s, "onset_s": s["onset_s"] + 0.02}, solo)  # the recipe says 20 ms later
    assert not late["onset_s"]["ok"] and late["onset_s"]["expected"] - late["onset_s"]["measured"] > 0.015
    loud = source_record(p, {**s, "level_db_spl": s["level_db_spl"] + 3.0}, solo)
    assert not loud["level_db_spl"]["ok"]
    moved = {**p, "sounds": [{**s, "onset_s": s["onset_s"] + 0.02}, *p["sounds"][1:]]}
    m = MULTI.measure(moved, clips).to_dict()  # the sources no longer add up to the clip
    assert not m["valid"] and not m["clip_is_sum_of_sources"]


def test_a_solo_is_measured_as_its_float32_clip():
    """source_record reads the solo's float64 copy of the clip's float32 samples where it measured the float32
    clip itself: the same direction, residual and runner-up as measure_direction on the float32 solo."""
    from auralgen.tasks._direction import measure_direction
    from auralgen.tasks.multi_source_relation import source_record

    p, _, _ = first_valid(6)
    for s in p["sounds"]:
        clip = MULTI.render({**p, "sounds": [s]})[0]
        want = measure_direction(p, clip, s)
        assert clip.dtype == np.float32 and want is not None and want["residual"] < want["runner_up"]
        assert measure_direction(p, clip.astype(np.float64), s) == want
        got = source_record(p, s, clip.astype(np.float64))["direction"]
        assert got == {k: want[k] for k in ("azimuth_deg", "elevation_deg")}


@pytest.mark.parametrize("peak", [0.999, 1.0, -1.0, 1.5])
def test_full_scale_check_reads_the_largest_magnitude(peak):
    """fits_full_scale's peak is max |out| read as max(max, -min): a negative peak counts as a positive one."""
    from auralgen.core.errors import Redraw
    from auralgen.tasks._spatial import fits_full_scale

    out = np.zeros((2, 100))
    out[1, 37] = peak
    out[0, 3] = -0.5
    if abs(peak) < 1.0:
        assert fits_full_scale(out, 60.0, 100.0).dtype == np.float32
    else:
        with pytest.raises(Redraw, match=f"peak {abs(peak):.3f}"):
            fits_full_scale(out, 60.0, 100.0)
