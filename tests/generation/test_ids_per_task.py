"""An item's id and bytes depend on the seed, its own task's config, the generator version and its
coordinates: which other tasks share the run changes none of its shards."""

from __future__ import annotations

import dataclasses
import hashlib

from auralgen import generation
from auralgen.config import id_key
from tests.support.builders import read_rows, small_run

A, B, C = "pitch_relative", "loudness_relative", "duration_relative"
TONES = ("audiogram", A, B, C, "duration_absolute")  # conf/suite/tones.yaml
LEVELS = {A: "[0,100,400]", B: "[0,8,24]", C: "[0,50,200]"}  # a zero level and two others: small, fast
SMALL = tuple(o for t, lv in LEVELS.items() for o in (f"tasks.{t}.items_per_level=2", f"tasks.{t}.levels={lv}"))


def tones_with(*kept: str, **kw):
    """``suite=tones`` trimmed to ``kept``, three levels of two items (one at the zero level)."""
    drop = [f"~tasks.{t}" for t in TONES if t not in kept]
    sizes = [s for s in SMALL if s.split(".")[1] in kept]
    return small_run("suite=tones", "seed=5", *drop, *sizes, **kw)


def shard_digests(out) -> dict[str, str]:
    """``{shard path relative to out: sha256 of its bytes}``."""
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((out / "data").rglob("*.parquet"))
    }


def of(task: str, digests: dict[str, str]) -> dict[str, str]:
    return {p: h for p, h in digests.items() if p.split("/")[1] == task}


def test_adding_or_removing_a_task_leaves_every_other_tasks_shards_byte_identical(tmp_path):
    runs = {
        "ab": tones_with(A, B, out=tmp_path / "ab"),
        "abc": tones_with(A, B, C, out=tmp_path / "abc"),
        "a": tones_with(A, out=tmp_path / "a"),
        "task_a": small_run(
            f"task={A}", "seed=5", "task.items_per_level=2", f"task.levels={LEVELS[A]}", out=tmp_path / "task_a"
        ),
    }
    assert [tc.name for tc in runs["abc"].tasks] == [A, B, C]
    digests = {}
    for name, run in runs.items():
        generation.run(run, log=lambda *_: None)
        digests[name] = shard_digests(tmp_path / name)
    ab, abc, a = digests["ab"], digests["abc"], digests["a"]
    assert of(A, ab) and of(B, ab) and of(C, abc)  # each run wrote the shards of its tasks
    assert ab == {**of(A, abc), **of(B, abc)}  # adding C: the shards of A and B unchanged
    assert set(abc) - set(ab) == set(of(C, abc))  # ... and only C's added
    assert of(A, ab) == a == digests["task_a"]  # removing B, or task=A alone: A's shards unchanged
    ids = {name: {r["id"] for r in read_rows(tmp_path / name, A)} for name in runs}
    assert len(ids["a"]) == len(read_rows(tmp_path / "a")) and all(v == ids["a"] for v in ids.values())


def test_the_id_key_is_the_tasks_own_config_and_the_settings_its_bytes_depend_on():
    ab, abc = tones_with(A, B), tones_with(A, B, C)
    config_a = next(tc for tc in ab.tasks if tc.name == A)
    assert id_key(ab, config_a) == id_key(abc, config_a)  # another task in the run
    assert id_key(ab, config_a) == id_key(dataclasses.replace(ab, suite="other", shard_size=7), config_a)
    config_b = next(tc for tc in ab.tasks if tc.name == B)
    assert id_key(ab, config_a) != id_key(ab, config_b)
    changed = {  # each of these changes the bytes of A's items, so its ids
        "its own config": (ab, dataclasses.replace(config_a, items_per_level=3)),
        "seed": (dataclasses.replace(ab, seed=6), config_a),
        "splits": (dataclasses.replace(ab, splits=("test", "train")), config_a),
        "audio": (dataclasses.replace(ab, audio=dataclasses.replace(ab.audio, sample_rate=48000)), config_a),
        "flac bits": (dataclasses.replace(ab, export=dataclasses.replace(ab.export, flac_bits=16)), config_a),
        "validation": (dataclasses.replace(ab, max_resample=3), config_a),
    }
    for what, (run, tc) in changed.items():
        assert id_key(run, tc) != id_key(ab, config_a), what
