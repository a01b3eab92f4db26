"""No silent or near-silent clip: every clip of an item must be heard (checked at generation)."""

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.random import item_rng
from auralgen.measure.level import AUDIBLE_SPREAD_DB, clip_audibility, loudest_frame_db
from tests.support.builders import small_run

REORDER = build_tasks(small_run("task=temporal_reorder"))["temporal_reorder"]


def _bouncing(extent_level: int, n: int):
    """The bouncing items among the first ``n`` draws at grid level ``extent_level``."""
    out = []
    for i in range(n):
        p = REORDER.sample(item_rng(5, "test", "temporal_reorder", i), extent_level)
        if p["process"] == "bouncing":
            out.append(p)
    return out


@pytest.mark.parametrize("level", [0, 1, 2])
def test_every_bouncing_segment_holds_impacts_within_the_spread(level):
    """The bouncing process at 100 % extent died out in its first two segments, leaving a clip of
    digital silence (about one bouncing item in three)."""
    items = _bouncing(level, 60)
    assert len(items) >= 6
    for p in items:
        clips = REORDER.render(p)
        loudest = [loudest_frame_db(c, p["sample_rate_hz"]) for c in clips]
        assert max(loudest) - min(loudest) < 26.0, loudest  # 24 dB x extent from first to last impact
        m = REORDER.check(p, clips)
        assert m["audible"]["ok"] and m["valid"], m


def test_a_silent_or_near_silent_clip_makes_the_item_invalid():
    p = _bouncing(0, 40)[0]
    clips = REORDER.render(p)
    assert REORDER.check(p, clips)["valid"]
    silent = [clips[0], clips[1], np.zeros_like(clips[2])]
    m = REORDER.check(p, silent)
    assert m["valid"] is False and m["audible"]["ok"] is False and m["audible"]["loudest_50ms_dbfs"][2] is None
    quiet = [clips[0], clips[1], clips[2] * 10 ** (-(AUDIBLE_SPREAD_DB + 20) / 20)]
    assert REORDER.check(p, quiet)["audible"]["ok"] is False


def test_clip_audibility_floor_follows_the_calibration():
    x = np.full((1, 1600), 2e-5, dtype=np.float32)  # -94 dBFS
    assert clip_audibility([x], 16000)["ok"] is True  # uncalibrated floor -100 dBFS
    assert clip_audibility([x], 16000, full_scale_db_spl=110.0)["ok"] is False  # 16 dB SPL < 20 dB SPL
    assert clip_audibility([x], 16000, full_scale_db_spl=120.0)["ok"] is True  # 26 dB SPL
