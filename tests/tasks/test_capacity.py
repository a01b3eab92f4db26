"""Capacity at plan time: every item finds a parameter tuple of its own split, or the plan is refused.

The audiogram draws from a finite grid of (frequency, level, position) tuples; a tuple never
appears in two splits. The README's ``split=[train,validation,test]`` must work (it ran out of
tuples after ~25 s of rendering before), and a plan that cannot work is refused in one line
before any rendering.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng
from auralgen.generation.run import run as generate
from auralgen.tasks.audiogram import POSITIONS, Audiogram, AudiogramConfig
from auralgen.tasks.base import AudioConfig, deal, load_tasks
from tests.support.builders import read_rows, small_run

THREE = ("train", "validation", "test")
AUDIOGRAM = Audiogram(AudiogramConfig(), AudioConfig())


def plan_params(task, splits):
    """Params of every item of ``task`` for each split, as the renderer samples them."""
    out = {}
    for split in splits:
        index, items = 0, []
        for level in range(task.design.n_levels()):
            for k in range(task.design.items_at(level)):
                rng = item_rng(0, split, task.name, index)
                items.append(task.design.draw(task.sample, rng, level, k, split, splits))
                index += 1
        out[split] = items
    return out


def test_default_audiogram_has_room_for_three_splits_and_keeps_them_disjoint():
    assert AUDIOGRAM.design.capacity_error(THREE, "task") is None
    params = plan_params(AUDIOGRAM, THREE)
    keys = {s: {AUDIOGRAM.design.param_key(p) for p in ps} for s, ps in params.items()}
    n_items = AUDIOGRAM.cfg.items_per_level * 13 + 3 * 3
    assert all(len(params[s]) == n_items for s in THREE)
    assert not (keys["train"] & keys["validation"] or keys["train"] & keys["test"] or keys["validation"] & keys["test"])
    # the 40 dB SPL probe level (6 tuples) once had none owned by "test": now each split owns 2
    probe = len(AudiogramConfig().levels)
    assert [len(AUDIOGRAM.design.owned_cells(probe, s, THREE)) for s in THREE] == [2, 2, 2]


def test_single_split_items_are_unchanged_by_the_owned_sampler():
    """One split owns every cell: the k-th item takes cell (k + level) as before (bytes unchanged)."""
    freqs = AudiogramConfig().freqs_hz
    for level in (0, 5, 13):
        for k in range(30):
            rng = item_rng(0, "test", "audiogram", k)
            a = AUDIOGRAM.design.draw(AUDIOGRAM.sample, rng, level, k, "test", ("test",))
            b = AUDIOGRAM.sample(item_rng(0, "test", "audiogram", k), AUDIOGRAM.design.level(level, k))
            assert a == b
            if level < 13:
                assert a["freq_hz"] == float(freqs[(k + level) % 13]) and a["position"] == POSITIONS[(k + level) % 3]


def test_cells_cover_every_frequency_and_position_when_their_number_is_a_multiple_of_3():
    task = Audiogram(AudiogramConfig(freqs_hz=(250, 500, 1000, 2000, 4000, 8000)), AudioConfig())
    assert len(set(task.design.levels[0].cells)) == 18


def test_deal_is_balanced_and_one_split_owns_all():
    keys = [(i,) for i in range(7)]
    owners = deal(keys, THREE)
    assert sorted(list(owners.values()).count(s) for s in THREE) == [2, 2, 3]
    assert set(deal(keys, ("test",)).values()) == {"test"}
    assert deal(keys, THREE) == owners  # deterministic


@pytest.mark.parametrize(
    "splits,needle",
    [
        (tuple(f"s{i}" for i in range(7)), "level 13 (40 dB SPL probe) has 6 distinct"),
        (tuple(f"s{i}" for i in range(40)), "level 0 (-10 dB HL) has 39 distinct"),
    ],
)
def test_too_many_splits_are_refused_in_one_line_at_once(splits, needle):
    t0 = time.perf_counter()
    msg = AUDIOGRAM.design.capacity_error(splits, "task")
    assert time.perf_counter() - t0 < 30  # a hang guard; the speed is in bench/bench_refusals.py
    assert needle in msg and "\n" not in msg and f"needs {len(splits)}" in msg and "allowed:" in msg


def test_probe_capacity_fix_named_and_it_works():
    seven = tuple(f"s{i}" for i in range(7))
    msg = AUDIOGRAM.design.capacity_error(seven, "task")
    assert "task.probe_items_per_level=0" in msg
    assert (
        Audiogram(AudiogramConfig(probe_items_per_level=0), AudioConfig()).design.capacity_error(seven, "task") is None
    )


def test_every_task_answers_capacity_for_three_splits():
    for name, cls in load_tasks().items():
        t0 = time.perf_counter()
        assert cls(cls.Config(), AudioConfig()).design.capacity_error(THREE, f"tasks.{name}") is None
        assert time.perf_counter() - t0 < 30, name  # a hang guard; the speed is in bench/bench_refusals.py


def test_plan_refuses_before_rendering(tmp_path):
    splits = "[" + ",".join(f"s{i}" for i in range(7)) + "]"
    run = small_run("task=audiogram", f"split={splits}", out=tmp_path / "ds")
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match=r"level 13 .* has 6 distinct .*needs 7"):
        generate(run, log=lambda *_: None)
    assert time.perf_counter() - t0 < 30  # a hang guard: nothing is rendered
    assert not (tmp_path / "ds").exists()


def test_three_splits_render_the_audiogram_probes(tmp_path):
    run = small_run(
        "task=audiogram",
        "split=[train,validation,test]",
        "task.items_per_level=1",
        "task.levels=[0]",
        "validate=false",
        out=tmp_path / "ds",
    )
    generate(run, log=lambda *_: None)
    rows = read_rows(tmp_path / "ds")
    assert sorted({r["split"] for r in rows}) == sorted(THREE) and len(rows) == 3 * (1 + 3 * 3)
    assert all(np.isfinite(r["level_value"]) for r in rows)
