"""Golden datasets: every shard of a pinned suite, checked against ``tests/golden/*.json``.

A refactoring moves code without changing output. This script builds a pinned suite
through the command line users run (``generate.py``), so it keeps working while modules move,
and compares every parquet shard it wrote with the committed file, which holds per shard

* ``shards``: the SHA-256 of its bytes. On the machine type that pinned it, every shard matches.
* ``fingerprints``: what another CPU must reproduce. Floating-point results differ in the last bits
  between CPUs (numpy picks its SIMD kernels for transcendental functions at run time, numba compiles
  for the host), so across machines the promise is: every column except ``audio`` identical, the
  numbers inside them compared to ``FLOAT_DIGITS`` significant digits (a last-digit difference of a
  computed float is allowed, and one below ``FLOAT_FLOOR`` counts as 0; nothing else), and the audio
  equal within 1 LSB of its export bit depth.
  ``columns`` holds a digest per non-audio column; ``audio`` holds per clip its bit depth, shape and,
  per channel and per ``AUDIO_BLOCKS`` block, the decoded integers' minimum, maximum, sum and sum of
  absolute values. A clip within 1 LSB of the pinned one has each minimum and maximum within 1 and
  each sum within the block's length; a changed level, onset, pitch or draw moves them by far more.

A shard whose SHA-256 differs passes when its fingerprint matches; the message counts such shards.

    python bench/golden.py check fast              # 1 item per level of every default-suite task (~20 s)
    python bench/golden.py check default           # the default suite, seed 0, as `make dataset` builds it
    python bench/golden.py check default --workers 2
    python bench/golden.py check fast --tasks mixture,trajectory   # those tasks' shards only
    python bench/golden.py pin fast default        # re-pin deliberately (see below)

An item's id and bytes depend on its own task's config only, never on the other tasks of the run,
so a suite trimmed to some tasks (``--tasks``) writes those tasks' pinned shards byte for byte, and
a task added to the suite adds its shards and changes none: ``check`` names them as added (not
pinned), and ``pin`` adds them without a version bump.

Re-pinning a changed or missing shard is for a deliberate change of bytes only: explain it in the
commit and bump ``auralgen.__version__`` (the ``generator_version`` column). ``pin`` refuses to
overwrite hashes recorded for the same ``generator_version`` unless ``--force`` is given (the one
other use: the same code pinned from another CPU type, whose check passed on the fingerprints).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = ROOT / "tests" / "golden"
TIMEOUT_S = 900  # one build; the default suite takes ~15-80 s
FLOAT_DIGITS = 8  # significant digits of a float in a non-audio column that another CPU must reproduce
FLOAT_FLOOR = 1e-12  # a float below this in magnitude counts as 0 (the residue of a cancellation, e.g. sin(pi))
AUDIO_BLOCKS = 4  # blocks per clip channel in an audio fingerprint
DEFAULT_SUITE_FILE = ROOT / "conf" / "suite" / "default.yaml"


def default_suite_tasks(suite_file: Path = DEFAULT_SUITE_FILE) -> tuple[str, ...]:
    """The tasks of a suite file (default ``conf/suite/default.yaml``), in its order (the fast golden
    shrinks each to one item per level), read from its defaults list so a task added to the suite is
    pinned too."""
    import yaml

    suite = yaml.safe_load(Path(suite_file).read_text())
    return tuple(next(iter(entry.values())) for entry in suite["defaults"] if isinstance(entry, dict))


DEFAULT_TASKS = default_suite_tasks()


def suite_overrides(suite_tasks: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The overrides of each golden suite, for a default suite of ``suite_tasks``."""
    return {
        "default": ("seed=0",),
        "fast": (
            "seed=0",
            *(f"tasks.{t}.items_per_level=1" for t in suite_tasks),
            "tasks.audiogram.probe_items_per_level=1",
        ),
    }


SUITES: dict[str, tuple[str, ...]] = suite_overrides(DEFAULT_TASKS)


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


def golden_fingerprints_path(suite: str) -> Path:
    return GOLDEN_DIR / f"{suite}_suite.fingerprints.json"


def overrides(suite: str, tasks: tuple[str, ...] | None = None, *, suite_file: Path | None = None) -> list[str]:
    """``suite``'s overrides; with ``tasks``, the suite trimmed to those tasks (``~tasks.<other>``); with
    ``suite_file`` (a copy of the default suite at ``<dir>/suite/<name>.yaml``), built from that file
    (Hydra's search path gains ``<dir>``; ``<name>`` must differ from every shipped suite)."""
    suite_tasks = DEFAULT_TASKS if suite_file is None else default_suite_tasks(suite_file)
    all_suites = suite_overrides(suite_tasks)
    if suite not in all_suites:
        raise SystemExit(f"error: suite={suite!r} is unknown; allowed: {', '.join(all_suites)}")
    chosen = []
    if suite_file is not None:
        chosen = [f"hydra.searchpath=[file://{suite_file.parent.parent}]", f"suite={suite_file.stem}"]
    if tasks is None:
        return [*chosen, *all_suites[suite]]
    unknown = sorted(set(tasks) - set(suite_tasks))
    if unknown or not tasks:
        raise SystemExit(f"error: tasks {unknown or '(none)'} not in the suite; allowed: {', '.join(suite_tasks)}")
    dropped = [t for t in suite_tasks if t not in tasks]
    kept = [o for o in all_suites[suite] if not o.startswith("tasks.") or o.split(".")[1] in tasks]
    return [*chosen, *kept, *(f"~tasks.{t}" for t in dropped)]


def command(preload: Path | None = None) -> list[str]:
    """The generate command: ``generate.py``, or with ``preload`` (a Python file, e.g. a task module kept
    outside the package) the same command line after importing that file."""
    if preload is None:
        return [sys.executable, str(ROOT / "generate.py")]
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location({preload.stem!r}, {str(preload)!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "from auralgen.cli import main\n"
        "sys.exit(main(['generate', *sys.argv[1:]]))"
    )
    return [sys.executable, "-c", code]


def build(
    suite: str,
    out: Path,
    *,
    workers: int = 1,
    tasks: tuple[str, ...] | None = None,
    suite_file: Path | None = None,
    preload: Path | None = None,
) -> None:
    """Generate ``suite`` (or its ``tasks`` only; from ``suite_file``, after importing ``preload``: see
    :func:`overrides` and :func:`command`) into ``out`` through the command line (a subprocess; bounded
    by TIMEOUT_S). The subprocess inherits the environment, so ``NPY_DISABLE_CPU_FEATURES``,
    ``NUMBA_CPU_NAME`` and ``NUMBA_CACHE_DIR`` choose its numeric code paths."""
    chosen = overrides(suite, tasks, suite_file=suite_file)
    args = [*chosen, f"out={out}", f"workers={workers}", "progress=false", "overwrite=true"]
    env = {**os.environ, "PRA_NUM_THREADS": "1"}
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".auralgen_cache" / "numba"))
    proc = subprocess.run(
        [*command(preload), *args],
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


def canonical(value):
    """``value`` with every float rounded to FLOAT_DIGITS significant digits (one below FLOAT_FLOOR in
    magnitude, and -0.0, made 0.0), through dicts and lists: the form in which another CPU must
    reproduce a non-audio column."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        return float(f"{value:.{FLOAT_DIGITS}g}") + 0.0 if abs(value) >= FLOAT_FLOOR else 0.0
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def _digest(values) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


def column_digests(table) -> dict[str, str]:
    """One digest per non-audio column of a shard (``params``/``measured`` parsed from JSON), plus the
    clips' ``audio.path`` and the schema with its metadata (the dataset card's features)."""
    digests = {"schema": _digest(table.schema.to_string(show_schema_metadata=True))}
    for name in table.column_names:
        values = table.column(name).to_pylist()
        if name == "audio":
            digests["audio.path"] = _digest([[clip["path"] for clip in row] for row in values])
            continue
        if name in ("params", "measured"):
            values = [json.loads(v) for v in values]
        digests[name] = _digest(canonical(values))
    return digests


def clip_fingerprint(samples: np.ndarray, bits: int) -> list[int]:
    """``[bits, channels, samples, then per channel and per block: min, max, sum, sum of |x|]`` of a
    clip's integers ``[channels, samples]`` on its ``bits``-bit grid (AUDIO_BLOCKS blocks per channel)."""
    x = np.asarray(samples, dtype=np.int64)
    record = [int(bits), int(x.shape[0]), int(x.shape[1])]
    for channel in x:
        for block in np.array_split(channel, AUDIO_BLOCKS):
            stats = (block.min(), block.max(), block.sum(), np.abs(block).sum()) if block.size else (0, 0, 0, 0)
            record += [int(v) for v in stats]
    return record


def decode(flac: bytes) -> tuple[np.ndarray, int]:
    """The integers ``[channels, samples]`` of a FLAC clip and its bit depth (16 or 24)."""
    import soundfile as sf

    bits = {"PCM_16": 16, "PCM_24": 24}[sf.info(io.BytesIO(flac)).subtype]
    data, _ = sf.read(io.BytesIO(flac), dtype="int32", always_2d=True)
    return (data >> (32 - bits)).T, bits


def shard_fingerprint(path: Path) -> dict:
    """``{"columns": column_digests, "audio": [[clip_fingerprint per clip] per row]}`` of one shard."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    audio = [[clip_fingerprint(*decode(clip["bytes"])) for clip in row] for row in table.column("audio").to_pylist()]
    return {"columns": column_digests(table), "audio": audio}


def compare_clip(pinned: list[int], got: list[int]) -> str | None:
    """None when ``got`` may be within 1 LSB of ``pinned`` (bit depth and shape equal, each block's
    minimum and maximum within 1, each sum within the block's length); else what differs."""
    if pinned[:3] != got[:3]:
        return f"bits/channels/samples {got[:3]} (pinned {pinned[:3]})"
    lengths = [len(b) for b in _split_lengths(pinned[2])]
    at = 3
    for channel in range(pinned[1]):
        for block, n in enumerate(lengths):
            p, g = pinned[at : at + 4], got[at : at + 4]
            at += 4
            bounds = (1, 1, n, n)
            for what, a, b, bound in zip(("min", "max", "sum", "sum |x|"), p, g, bounds, strict=True):
                if abs(a - b) > bound:
                    return f"channel {channel} block {block}: {what} {b} (pinned {a}), more than 1 LSB per sample"
    return None


def _split_lengths(n: int) -> list[range]:
    size, extra = divmod(n, AUDIO_BLOCKS)
    return [range(size + (1 if i < extra else 0)) for i in range(AUDIO_BLOCKS)]


def compare(pinned: dict, got: dict, *, ignore: frozenset[str] = frozenset()) -> list[str]:
    """What breaks the cross-CPU promise between two shard fingerprints (empty = none); columns in
    ``ignore`` are not compared."""
    names = sorted((pinned["columns"].keys() | got["columns"].keys()) - ignore)
    lines = [f"column {c} differs" for c in names if pinned["columns"].get(c) != got["columns"].get(c)]
    if len(pinned["audio"]) != len(got["audio"]):
        return [*lines, f"{len(got['audio'])} rows (pinned {len(pinned['audio'])})"]
    for row, (p_clips, g_clips) in enumerate(zip(pinned["audio"], got["audio"], strict=True)):
        if len(p_clips) != len(g_clips):
            lines.append(f"row {row}: {len(g_clips)} clips (pinned {len(p_clips)})")
            continue
        for k, (p, g) in enumerate(zip(p_clips, g_clips, strict=True)):
            if (problem := compare_clip(p, g)) is not None:
                lines.append(f"row {row} clip {k}: {problem}")
    return lines


def load(suite: str) -> dict:
    """The golden record of ``suite`` with its ``fingerprints`` (from the companion file)."""
    record = json.loads(golden_path(suite).read_text())
    fp = golden_fingerprints_path(suite)
    record["fingerprints"] = json.loads(fp.read_text()) if fp.exists() else {}
    return record


def diff(pinned: dict[str, str], got: dict[str, str]) -> list[str]:
    """One line per shard that is missing, extra or changed (empty = identical)."""
    lines = [f"missing shard {p}" for p in sorted(pinned.keys() - got.keys())]
    lines += [f"unexpected shard {p}" for p in sorted(got.keys() - pinned.keys())]
    lines += [f"changed shard {p}" for p in sorted(pinned.keys() & got.keys()) if pinned[p] != got[p]]
    return lines


def explain(suite: str, pinned: dict, lines: list[str]) -> str:
    """The failure message of a golden check: what changed and what to do."""
    env, now = pinned.get("environment", {}), environment()
    drift = [f"{k}: pinned {env.get(k)} now {v}" for k, v in now.items() if env.get(k) != v]
    head = f"golden suite {suite!r}: {len(lines)} of {len(pinned['shards'])} shard(s) differ"
    hint = (
        "output changed beyond another CPU's rounding (non-audio columns, or audio by more than 1 LSB). "
        "If unintended, the last change broke determinism or moved an RNG draw. "
        f"If deliberate: bump auralgen.__version__, explain why, then `python bench/golden.py pin {suite}`."
    )
    return "\n".join([head, *lines[:20], *(["environment differs: " + "; ".join(drift)] if drift else []), hint])


def added_shards(pinned: dict[str, str], got: dict[str, str]) -> list[str]:
    """Shards of ``got`` whose task has no pinned shard: a task added to the suite (not an error)."""
    pinned_tasks = {p.split("/")[1] for p in pinned}
    return sorted(p for p in got.keys() - pinned.keys() if p.split("/")[1] not in pinned_tasks)


def check(
    suite: str,
    *,
    workers: int = 1,
    tasks: tuple[str, ...] | None = None,
    suite_file: Path | None = None,
    preload: Path | None = None,
) -> tuple[bool, str]:
    """Build ``suite`` (or its ``tasks``; from ``suite_file`` after importing ``preload``, see :func:`build`)
    and compare: a pinned shard passes when its bytes equal the pinned SHA-256 or, failing that, its
    fingerprint keeps the cross-CPU promise (module docstring). The shards of a task with no pinned
    shard (one added to the suite) are named as added, not pinned; they fail nothing."""
    pinned = load(suite)
    expected = {p: h for p, h in pinned["shards"].items() if tasks is None or p.split("/")[1] in tasks}
    with tempfile.TemporaryDirectory(prefix=f"golden-{suite}-") as tmp:
        out = Path(tmp) / suite
        build(suite, out, workers=workers, tasks=tasks, suite_file=suite_file, preload=preload)
        got = shard_hashes(out)
        added = added_shards(pinned["shards"], got)
        lines = [
            ln
            for ln in diff(expected, {p: h for p, h in got.items() if p not in added})
            if not ln.startswith("changed")
        ]
        kinds = {"byte-identical": 0, "fingerprint-identical": 0, "audio within 1 LSB": 0}
        for path in sorted(expected.keys() & got.keys()):
            if expected[path] == got[path]:
                kinds["byte-identical"] += 1
            elif path not in pinned["fingerprints"]:
                lines.append(f"changed shard {path} (no fingerprint pinned)")
            elif problems := compare(pinned["fingerprints"][path], fp := shard_fingerprint(out / path)):
                lines.append(f"changed shard {path}: " + "; ".join(problems[:3]))
            else:
                same_audio = fp["audio"] == pinned["fingerprints"][path]["audio"]
                kinds["fingerprint-identical" if same_audio else "audio within 1 LSB"] += 1
    if lines:
        return False, explain(suite, pinned, lines)
    counts = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    scope = f"tasks {','.join(tasks)}" if tasks else "all tasks"
    message = f"golden suite {suite!r} holds, {scope}, workers={workers}: {counts}"
    if added:
        message += f"; {len(added)} shard(s) of new tasks added, not pinned: {', '.join(added)}"
    return True, message


def _write_fingerprints(path: Path, fingerprints: dict) -> None:
    """One shard per line, so a re-pin's diff names the shards it changed."""
    body = ",\n".join(
        f" {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in sorted(fingerprints.items())
    )
    path.write_text("{\n" + body + "\n}\n")


def repin_refusal(old: dict, shards: dict[str, str], version: str) -> str | None:
    """Why ``pin`` (without ``--force``) refuses to replace the golden record ``old`` by ``shards`` built
    at generator ``version``, or None: under the same version, every pinned shard must keep its hash
    and any new shard must belong to a task with no pinned shard (a task added to the suite)."""
    if old.get("environment", {}).get("generator_version") != version:
        return None
    moved = [line for line in diff(old["shards"], shards) if not line.startswith("unexpected")]
    foreign = sorted(set(shards) - set(old["shards"]) - set(added_shards(old["shards"], shards)))
    if not moved and not foreign:
        return None
    return (
        f"holds other hashes for generator_version={version} ({'; '.join([*moved, *foreign][:3])}); "
        "allowed: bump auralgen.__version__ first (a deliberate change of bytes), or --force "
        "(a new task's shards alone need neither)"
    )


def pin(suite: str, *, force: bool = False) -> str:
    """Write the hashes and fingerprints of ``suite`` (built twice, workers=1 and 2, which must agree)
    to its golden files."""
    with tempfile.TemporaryDirectory(prefix=f"golden-{suite}-") as tmp:
        build(suite, Path(tmp) / "one", workers=1)
        build(suite, Path(tmp) / "two", workers=2)
        one, two = shard_hashes(Path(tmp) / "one"), shard_hashes(Path(tmp) / "two")
        if diff(one, two):
            raise RuntimeError(f"suite {suite!r} is not deterministic across workers: {diff(one, two)[:5]}")
        fingerprints = {p: shard_fingerprint(Path(tmp) / "one" / p) for p in one}
    env = environment()
    path = golden_path(suite)
    if path.exists() and not force:
        refusal = repin_refusal(json.loads(path.read_text()), one, env["generator_version"])
        if refusal:
            raise SystemExit(f"error: {path.name} {refusal}")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    record = {"suite": suite, "overrides": list(SUITES[suite]), "environment": env, "shards": one}
    record["pinned_from"] = head.stdout.strip() or "unknown"  # the commit whose code made these bytes
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    _write_fingerprints(golden_fingerprints_path(suite), fingerprints)
    return f"pinned {len(one)} shard(s) of {suite!r} to {path.relative_to(ROOT)} (+ fingerprints)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("check", "pin"))
    parser.add_argument("suites", nargs="+", choices=sorted(SUITES))
    parser.add_argument(
        "--workers", type=int, default=1, help="check only: process pool size (output must not depend on it)"
    )
    parser.add_argument(
        "--tasks",
        default=None,
        help="check only: comma-separated tasks of the suite to build and compare (default: all)",
    )
    parser.add_argument("--force", action="store_true", help="pin only: overwrite hashes of the same generator_version")
    ns = parser.parse_args(argv)
    tasks = tuple(ns.tasks.split(",")) if ns.tasks else None
    code = 0
    for suite in ns.suites:
        if ns.action == "pin":
            print(pin(suite, force=ns.force))
            continue
        ok, message = check(suite, workers=ns.workers, tasks=tasks)
        print(message)
        code = code or (0 if ok else 1)
    return code


if __name__ == "__main__":
    sys.exit(main())
