"""Comparison tasks whose attribute is not level rove each sound's level on its own, so no level
measure of the two sounds follows the answer (at equal loudness the brighter or the faster-rising
sound had the lower RMS: "sign of the RMS difference" answered 95.6-96.7 % of non-zero items)."""

import math

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.random import item_rng
from auralgen.synth import n_samples
from auralgen.tasks._sounds import LEVEL_ROVE_DB
from tests.support.builders import small_run

N = 240  # non-zero items per task: the 95 % interval of a chance rate of 0.5 is +-0.063


def part_levels(params, clip) -> list[tuple[float, float]]:
    """(RMS dB, peak dB) of each sound's span in the clip."""
    sr, x = params["sample_rate_hz"], clip[0].astype(np.float64)
    out = []
    for s in params.get("sounds") or params["notes"]:
        a = n_samples(s["onset_s"], sr)
        seg = x[a : a + n_samples(s["duration_s"], sr)]
        out.append((10 * math.log10(np.mean(seg**2)), 20 * math.log10(np.max(np.abs(seg)))))
    return out


@pytest.mark.parametrize("name", ["brightness_relative", "attack_relative", "timbre_relative"])
def test_no_level_measure_of_the_two_sounds_follows_the_answer(name):
    task = build_tasks(small_run(f"task={name}"))[name]
    levels = [i for i in range(task.design.n_levels()) if task.design.level_value(i) > 0]
    hits = {"rms": 0, "peak": 0}
    spread = []
    for i in range(N):
        p = task.sample(item_rng(31, "test", name, i), levels[i % len(levels)])
        (r0, k0), (r1, k1) = part_levels(p, task.render(p)[0])
        positive = p["direction"] in ("up", "different") if name != "timbre_relative" else i % 2 == 0
        hits["rms"] += (r1 > r0) == positive
        hits["peak"] += (k1 > k0) == positive
        spread.append(r1 - r0)
    for key, n in hits.items():
        if name != "timbre_relative":  # timbre's answer has no sign: the |difference| is checked below
            assert abs(n / N - 0.5) < 0.09, (name, key, n / N)
    assert np.std(spread) > LEVEL_ROVE_DB / 2  # roved: the two sounds' levels differ by ~+-2 dB (SD), not ~0.1 dB
