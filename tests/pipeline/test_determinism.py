"""Same config and seed -> byte-identical shards and manifest, for any workers value and shard size."""

import hashlib

import pytest

from auralgen import generation
from tests.support.builders import read_rows, small_run

ARGS = ("task=pitch_relative", "task.levels=[0,100,400]", "task.items_per_level=3")


def digest_tree(root):
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("shard_size", [2, 5])
def test_workers_do_not_change_bytes(tmp_path, shard_size):
    a = generation.run(small_run(*ARGS, out=tmp_path / "w1", workers=1, shard_size=shard_size), log=lambda *_: None)
    generation.run(small_run(*ARGS, out=tmp_path / "w2", workers=2, shard_size=shard_size), log=lambda *_: None)
    assert digest_tree(tmp_path / "w1") == digest_tree(tmp_path / "w2")
    assert len(a["shards"]) == -(-9 // shard_size)


def test_an_executor_passed_in_renders_the_same_bytes_and_is_closed(tmp_path):
    """``run(executor=...)`` uses that executor (a 3-worker pool here, while the config says 1) and closes it."""
    from auralgen.execution import LocalPoolExecutor

    class Pool(LocalPoolExecutor):
        started: list[int] = []

        def _start(self, fn, setup):
            super()._start(fn, setup)
            self.started.append(len(self._procs))

    pool = Pool(3)
    generation.run(small_run(*ARGS, out=tmp_path / "p", workers=1, shard_size=2), executor=pool, log=lambda *_: None)
    generation.run(small_run(*ARGS, out=tmp_path / "s", workers=1, shard_size=2), log=lambda *_: None)
    assert digest_tree(tmp_path / "p") == digest_tree(tmp_path / "s")
    assert pool.started == [3] and pool._procs == [] and len(read_rows(tmp_path / "p")) == 9


def test_shard_size_does_not_change_rows(tmp_path):
    generation.run(small_run(*ARGS, out=tmp_path / "s2", shard_size=2), log=lambda *_: None)
    generation.run(small_run(*ARGS, out=tmp_path / "s9", shard_size=9), log=lambda *_: None)
    r2, r9 = read_rows(tmp_path / "s2"), read_rows(tmp_path / "s9")
    assert len(r2) == 9
    assert r2 == r9


def test_seed_changes_items(tmp_path):
    generation.run(small_run(*ARGS, out=tmp_path / "a", seed=1), log=lambda *_: None)
    generation.run(small_run(*ARGS, out=tmp_path / "b", seed=2), log=lambda *_: None)
    pa, pb = [r["params"] for r in read_rows(tmp_path / "a")], [r["params"] for r in read_rows(tmp_path / "b")]
    assert not set(pa) & set(pb)


def test_splits_are_disjoint_and_independent(tmp_path):
    run = small_run(
        "task=audiogram",
        "task.levels=[0,10]",
        "task.items_per_level=20",
        "task.probe_items_per_level=0",
        "task.freqs_hz=[500,1000]",
        "split=[train,test]",
        "validate=false",
        out=tmp_path / "s",
    )
    generation.run(run, log=lambda *_: None)
    import json

    rows = read_rows(tmp_path / "s")
    keys = {}
    for r in rows:
        p = json.loads(r["params"])
        keys.setdefault(r["split"], set()).add((p["freq_hz"], p["level_value"], p["position"]))
    assert set(keys) == {"train", "test"}
    # 2 freqs x 2 levels x 3 positions = 12 tuples, shared out between the splits, none in both
    assert not keys["train"] & keys["test"]
    assert len(keys["train"] | keys["test"]) == 12
    assert sum(1 for r in rows if r["split"] == "train") == 40


def test_spatial_motion_mixture_and_reorder_items_are_byte_identical_across_workers(tmp_path):
    tasks = (
        "azimuth_relative",
        "distance_absolute",
        "trajectory",
        "multi_source_relation",
        "temporal_reorder",
        "mixture",
    )
    args = ["suite=spatial"] + [
        f"+task@tasks.{t}={t}" for t in ("multi_source_relation", "temporal_reorder", "mixture")
    ]
    keep = [f"tasks.{t}.items_per_level=1" for t in tasks]
    drop = [
        f"~tasks.{t}" for t in ("azimuth_absolute", "elevation_absolute", "elevation_relative", "distance_relative")
    ]
    run1 = small_run(*args, *keep, *drop, out=tmp_path / "w1", workers=1, shard_size=3)
    run2 = small_run(*args, *keep, *drop, out=tmp_path / "w2", workers=2, shard_size=3)
    assert sorted(t.name for t in run1.tasks) == sorted(tasks)
    generation.run(run1, log=lambda *_: None)
    generation.run(run2, log=lambda *_: None)
    assert digest_tree(tmp_path / "w1") == digest_tree(tmp_path / "w2")


def test_a_forking_pool_is_prewarmed_with_one_item_per_task_and_bytes_do_not_change(tmp_path, monkeypatch):
    """Before a forking pool starts, this process renders the first item of each task (its numba code and
    caches are then shared copy-on-write by the workers); the serial path does not; output is unchanged."""
    import importlib

    run_mod = importlib.import_module("auralgen.generation.run")
    calls = []
    real = run_mod._render_batch

    def spy(specs):
        calls.append([(s.task, s.index) for s in specs])
        return real(specs)

    monkeypatch.setattr(run_mod, "_render_batch", spy)  # only this process's calls: workers fork before it is read
    args = (
        "suite=tones",
        *(
            f"tasks.{t}.items_per_level=1"
            for t in ("audiogram", "pitch_relative", "loudness_relative", "duration_relative", "duration_absolute")
        ),
    )
    generation.run(small_run(*args, out=tmp_path / "w2", workers=2, shard_size=4), log=lambda *_: None)
    first = {}
    for row in read_rows(tmp_path / "w2"):
        first.setdefault(row["task"], row)
    assert len(calls) == 1 and sorted(t for t, _ in calls[0]) == sorted(first)  # one item of every task
    assert all(i == 0 for _, i in calls[0])
    calls.clear()
    generation.run(small_run(*args, out=tmp_path / "w1", workers=1, shard_size=4), log=lambda *_: None)
    assert all(len(c) <= 4 for c in calls) and sum(len(c) for c in calls) == len(read_rows(tmp_path / "w1"))
    assert digest_tree(tmp_path / "w1") == digest_tree(tmp_path / "w2")
