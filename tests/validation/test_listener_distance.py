"""The distance listener reads the direct-to-reverberant ratio from the clip, whatever the source levels."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from auralgen.config import build_tasks
from auralgen.core.random import item_rng
from auralgen.generation.run import run
from auralgen.listeners import distance as LD
from auralgen.validation import listener as L
from tests.support.builders import small_run

SR = 16000
QUIET = lambda *_: None  # noqa: E731


def synthetic_pair(drr_db, gain_db, *, seed=0):
    """Two copies of one noise burst, each direct + an exponential diffuse tail (RT60 1.8 s) with the
    given DRRs and overall gains (dB), 0.4 s apart, as one clip."""
    rng = np.random.default_rng(seed)
    dry = rng.standard_normal(int(0.6 * SR))
    t = np.arange(int(1.5 * SR)) / SR
    out = np.zeros((2, int(3.0 * SR)))
    start = int(0.2 * SR)
    for drr, gain in zip(drr_db, gain_db):
        tail = rng.standard_normal((2, t.size)) * 10 ** (-3 * t / 1.8)
        tail *= np.sqrt(SR * 1.8 / (6 * np.log(10))) ** -1  # unit diffuse energy
        rir = tail
        rir[:, 0] += 10 ** (drr / 20)
        wet = np.stack([np.convolve(dry, h)[: int(1.6 * SR)] for h in rir]) * 10 ** (gain / 20)
        out[:, start : start + wet.shape[1]] += wet[:, : out.shape[1] - start]
        start += int((0.6 + 0.4) * SR)
    return (out / np.max(np.abs(out)) * 0.5).astype(np.float32)


@pytest.mark.parametrize("gains", [(0.0, 0.0), (-15.0, 0.0), (0.0, -15.0)])
def test_pair_excess_orders_the_drr_whatever_the_levels(gains):
    for drr, closer in (((3.0, -6.0), 0), ((-6.0, 3.0), 1)):
        clip = synthetic_pair(drr, gains)
        excess = LD.pair_excess_db(clip, SR)
        assert excess is not None and int(np.argmax(excess)) == closer
        opts = ["The first sound", "The second sound"]
        assert LD.distance_relative("q", opts, [clip], SR) == closer


def test_distance_bins_parse_the_option_texts():
    opts = ["Near (0-3 m)", "Medium (3-8 m)", "Far (more than 8 m)"]
    assert LD.distance_bins(opts) == {0: (0.0, 3.0), 1: (3.0, 8.0), 2: (8.0, float("inf"))}


def test_distance_relative_measure_confirms_the_label_in_the_clip():
    task = build_tasks(small_run("task=distance_relative"))["distance_relative"]
    p = task.sample(item_rng(5, "test", "distance_relative", 0), 0)
    clips = task.render(p)
    m = task.measure(p, clips)
    assert m.valid and m.to_dict()["clip_excess_step_db"]["measured"] > 3.0
    flipped = {**p, "closer": 1 - p["closer"]}
    bad = task.measure(flipped, clips)
    assert not bad.valid and not bad.to_dict()["clip_excess_step_db"]["ok"]


@pytest.fixture(scope="module")
def easiest(tmp_path_factory):
    out = tmp_path_factory.mktemp("distance")
    run(
        small_run("task=distance_relative", "task.levels=[12.0]", "task.items_per_level=20", out=out, workers=1),
        log=QUIET,
    )
    return out


def test_listener_reaches_95_percent_at_the_easiest_level(easiest):
    # 98 % on 50 items at 12 dB (task=distance_relative task.items_per_level=50, seed 0); was 78 % by level
    (rec,) = [r for (t, _), r in L.listener_accuracy(easiest).items() if t == "distance_relative"]
    assert rec["n"] == 20 and rec["accuracy"] >= 0.95


def test_every_kept_item_is_measured_valid(easiest):
    table = pq.read_table(next(easiest.glob("data/distance_relative/*.parquet")), columns=["measured", "valid"])
    rows = table.to_pylist()
    assert len(rows) == 20 and all(r["valid"] for r in rows)
    assert all(json.loads(r["measured"])["clip_excess_step_db"]["ok"] for r in rows)
