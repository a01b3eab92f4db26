"""Golden datasets: the SHA-256 of every shard of a pinned suite, checked against ``tests/golden/*.json``.

The redesign (issue 11) moves code without changing output. This script builds a pinned suite
through the command line users run (``generate.py``), so it keeps working while modules move,
hashes every parquet shard it wrote, and compares them with the committed file.

    python bench/golden.py check fast              # 1 item per level of every default-suite task (~20 s)
    python bench/golden.py check default           # the default suite, seed 0, as `make dataset` builds it
    python bench/golden.py check default --workers 2
    python bench/golden.py pin fast default        # re-pin deliberately (see below)

Re-pinning is for a deliberate change of bytes only: explain it in the commit and bump
``auralgen.__version__`` (the ``generator_version`` column). ``pin`` refuses to overwrite hashes
recorded for the same ``generator_version`` unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = ROOT / "tests" / "golden"
TIMEOUT_S = 900  # one build; the default suite takes ~15-80 s


def default_suite_tasks() -> tuple[str, ...]:
    """The tasks of ``conf/suite/default.yaml``, in its order (the fast golden shrinks each to one
    item per level), read from its defaults list so a task added to the suite is pinned too."""
    import yaml

    suite = yaml.safe_load((ROOT / "conf" / "suite" / "default.yaml").read_text())
    return tuple(next(iter(entry.values())) for entry in suite["defaults"] if isinstance(entry, dict))


DEFAULT_TASKS = default_suite_tasks()

SUITES: dict[str, tuple[str, ...]] = {
    "default": ("seed=0",),
    "fast": (
        "seed=0",
        *(f"tasks.{t}.items_per_level=1" for t in DEFAULT_TASKS),
        "tasks.audiogram.probe_items_per_level=1",
    ),
}


def golden_path(suite: str) -> Path:
    return GOLDEN_DIR / f"{suite}_suite.json"


def environment() -> dict[str, str]:
    """Library versions that take part in the bytes (parquet writer, FLAC encoder, numerics)."""
    import numba
    import numpy
    import pyarrow
    import pyloudnorm
    import pyroomacoustics
    import scipy
    import soundfile

    import auralgen

    return {
        "generator_version": auralgen.__version__,
        "python": ".".join(map(str, sys.version_info[:2])),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,  # filter design (loudness weighting): a new scipy moved the mixture shard's bytes
        "numba": numba.__version__,
        "pyloudnorm": getattr(pyloudnorm, "__version__", "?"),
        "pyroomacoustics": pyroomacoustics.__version__,
        "pyarrow": pyarrow.__version__,
        "libsndfile": soundfile.__libsndfile_version__,
    }


def build(suite: str, out: Path, *, workers: int = 1) -> None:
    """Generate ``suite`` into ``out`` with ``generate.py`` (a subprocess; bounded by TIMEOUT_S)."""
    if suite not in SUITES:
        raise SystemExit(f"error: suite={suite!r} is unknown; allowed: {', '.join(SUITES)}")
    args = [*SUITES[suite], f"out={out}", f"workers={workers}", "progress=false", "overwrite=true"]
    env = {**os.environ, "PRA_NUM_THREADS": "1"}
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".auralgen_cache" / "numba"))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode:
        raise RuntimeError(f"generate.py {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}")


def shard_hashes(out: Path) -> dict[str, str]:
    """``{relative shard path: sha256}`` of every parquet file under ``out/data``, computed from the bytes."""
    hashes = {}
    for path in sorted((out / "data").rglob("*.parquet")):
        hashes[path.relative_to(out).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    if not hashes:
        raise RuntimeError(f"no parquet shard under {out / 'data'}")
    return hashes


def generate_hashes(suite: str, *, workers: int = 1) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix=f"golden-{suite}-") as tmp:
        out = Path(tmp) / suite
        build(suite, out, workers=workers)
        return shard_hashes(out)


def load(suite: str) -> dict:
    return json.loads(golden_path(suite).read_text())


def diff(pinned: dict[str, str], got: dict[str, str]) -> list[str]:
    """One line per shard that is missing, extra or changed (empty = identical)."""
    lines = [f"missing shard {p}" for p in sorted(pinned.keys() - got.keys())]
    lines += [f"unexpected shard {p}" for p in sorted(got.keys() - pinned.keys())]
    lines += [f"changed shard {p}" for p in sorted(pinned.keys() & got.keys()) if pinned[p] != got[p]]
    return lines


def explain(suite: str, pinned: dict, got: dict[str, str]) -> str:
    """The failure message of a golden check: what changed and what to do."""
    lines = diff(pinned["shards"], got)
    env, now = pinned.get("environment", {}), environment()
    drift = [f"{k}: pinned {env.get(k)} now {v}" for k, v in now.items() if env.get(k) != v]
    head = f"golden suite {suite!r}: {len(lines)} of {len(pinned['shards'])} shard(s) differ"
    hint = (
        "output bytes changed. If unintended, the last change broke determinism or moved an RNG draw. "
        f"If deliberate: bump auralgen.__version__, explain why, then `python bench/golden.py pin {suite}`."
    )
    return "\n".join([head, *lines[:20], *(["environment differs: " + "; ".join(drift)] if drift else []), hint])


def check(suite: str, *, workers: int = 1) -> tuple[bool, str]:
    pinned = load(suite)
    got = generate_hashes(suite, workers=workers)
    if not diff(pinned["shards"], got):
        return True, f"golden suite {suite!r}: {len(got)} shard(s) identical (workers={workers})"
    return False, explain(suite, pinned, got)


def pin(suite: str, *, force: bool = False) -> str:
    """Write the hashes of ``suite`` (built twice, workers=1 and 2, which must agree) to its golden file."""
    one = generate_hashes(suite, workers=1)
    two = generate_hashes(suite, workers=2)
    if diff(one, two):
        raise RuntimeError(f"suite {suite!r} is not deterministic across workers: {diff(one, two)[:5]}")
    env = environment()
    path = golden_path(suite)
    if path.exists() and not force:
        old = json.loads(path.read_text())
        same_version = old.get("environment", {}).get("generator_version") == env["generator_version"]
        if same_version and diff(old["shards"], one):
            raise SystemExit(
                f"error: {path.name} holds other hashes for generator_version={env['generator_version']}; "
                "allowed: bump auralgen.__version__ first (a deliberate change of bytes), or --force"
            )
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    record = {"suite": suite, "overrides": list(SUITES[suite]), "environment": env, "shards": one}
    record["pinned_from"] = head.stdout.strip() or "unknown"  # the commit whose code made these bytes
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return f"pinned {len(one)} shard(s) of {suite!r} to {path.relative_to(ROOT)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("check", "pin"))
    parser.add_argument("suites", nargs="+", choices=sorted(SUITES))
    parser.add_argument(
        "--workers", type=int, default=1, help="check only: process pool size (output must not depend on it)"
    )
    parser.add_argument("--force", action="store_true", help="pin only: overwrite hashes of the same generator_version")
    ns = parser.parse_args(argv)
    code = 0
    for suite in ns.suites:
        if ns.action == "pin":
            print(pin(suite, force=ns.force))
            continue
        ok, message = check(suite, workers=ns.workers)
        print(message)
        code = code or (0 if ok else 1)
    return code


if __name__ == "__main__":
    sys.exit(main())
