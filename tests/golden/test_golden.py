"""Golden datasets: generated shards are byte-identical to the hashes pinned in this folder (issue 11 item 7).

``fast_suite.json`` (1 item per level of every default-suite task) runs in ``make test``;
``default_suite.json`` (the default suite, seed 0, as ``make dataset`` builds it) in ``make test-slow``.
Both were pinned from main at the commit in their ``pinned_from`` field, built with workers=1 and
workers=2 (which must agree) by ``python bench/golden.py pin fast default``.

A failure means the output bytes changed. The redesign moves code without changing bytes, so
first look for a reordered RNG draw or a changed default. Re-pin ONLY for a deliberate change of
output: bump ``auralgen.__version__`` (the ``generator_version`` column), say why in the commit,
then run ``python bench/golden.py pin fast default`` (it refuses new hashes under the same
generator_version unless ``--force``). A different pyarrow or libsndfile can also change the bytes;
the failure message names such a version drift.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _golden():
    spec = importlib.util.spec_from_file_location("bench_golden", ROOT / "bench" / "golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


golden = _golden()


def test_fast_golden_suite_is_byte_identical():
    ok, message = golden.check("fast", workers=1)
    assert ok, message


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_default_suite_is_byte_identical(workers):
    ok, message = golden.check("default", workers=workers)
    assert ok, message


def test_pinned_files_cover_every_default_suite_task():
    """Each golden file has one shard per task of conf/suite/default.yaml (nothing silently left out)."""
    tasks = set(golden.DEFAULT_TASKS)
    assert {"audiogram", "mixture", "trajectory"} <= tasks  # read from the suite's defaults list
    for name in ("fast", "default"):
        pinned = golden.load(name)
        assert {p.split("/")[1] for p in pinned["shards"]} == tasks, name
        assert pinned["environment"]["generator_version"], name


def test_a_changed_shard_is_named_with_the_way_to_re_pin():
    pinned = golden.load("fast")
    got = dict(pinned["shards"])
    first = sorted(got)[0]
    got[first] = "0" * 64
    del got[sorted(got)[1]]
    message = golden.explain("fast", pinned, got)
    assert f"changed shard {first}" in message
    assert "missing shard" in message
    assert "bump auralgen.__version__" in message
