"""Generation speed and memory.

Prints, for each tone task at 16 kHz (4 s clips, FLAC included): items per second on
one core (a single process renders, validates, encodes and writes the parquet shard),
with validation off and on, the median [min-max] of three runs, as a ratio against the
300 items/s/core target; the peak resident memory of a 20,000-item run (main process + pool
workers, polled from /proc) against the 500 MB target; and the wall time of the default suite (`make dataset`'s
work) against the 60 s target. Every run writes its figures (median, min-max, runs) to
``bench/results/bench_generation.json`` (``--results PATH``: elsewhere), the file the docs' Benchmarks page
renders; the file names the command, so a partial or quick run says so.

    python bench/bench_generation.py          # 3 runs of 300 items per tone figure, 20,004 items, the suite
    python bench/bench_generation.py --quick  # 100 items per run, a 1,800-item memory run
    python bench/bench_generation.py --tasks pitch_relative --items 20 --runs 1 --parts tone --results g.json
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen.export.parquet import ShardWriter  # noqa: E402
from auralgen.generation.item import Renderer  # noqa: E402
from auralgen.generation.plan import ItemSpec  # noqa: E402
from auralgen.generation.run import tune_allocator  # noqa: E402
from auralgen.generation.threads import one_blas_thread  # noqa: E402
from bench import results  # noqa: E402
from tests.support.builders import small_run  # noqa: E402

TONE_TASKS = ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute", "audiogram")
TARGET_ITEMS_PER_S = 300.0
RUNS = 3  # each tone-task figure: the median of this many runs, [min-max] in its label
TARGET_RSS_MB = 500.0
TARGET_SUITE_S = 60.0
PARTS = ("tone", "memory", "suite")
RESULT_FILE = "bench/results/bench_generation.json"
AUDIOGRAM_16K = (
    "task.sample_rate=16000",
    "task.freqs_hz=[125,250,500,1000,2000,4000,5657]",
    "task.probe_freqs_hz=[20]",
)


def items_per_second(task: str, *, validate: bool, n: int = 300, overrides: tuple = ()) -> float:
    """Items per second of one process rendering, validating (or not), encoding and writing ``n`` items."""
    extra = AUDIOGRAM_16K if task == "audiogram" else ()
    tune_allocator()  # as every generation process does (generation/run.py::_init_worker)
    one_blas_thread()  # ditto
    run = small_run(f"task={task}", *extra, *overrides, validate=str(validate).lower())
    renderer = Renderer(run)
    levels = renderer.tasks[task].design.n_levels()
    for i in range(2 * levels):  # numba caches loaded for every level's signatures, imports done
        renderer(ItemSpec(task, "test", 10_000 + i, i % levels))
    with tempfile.TemporaryDirectory() as tmp:
        writer = ShardWriter(Path(tmp) / "bench.parquet")
        t0 = time.perf_counter()
        for i in range(n):
            res = renderer(ItemSpec(task, "test", i, i % levels))
            if res["row"] is not None:
                writer.add(res["row"])
        writer.close()
        return n / (time.perf_counter() - t0)


def _tree_rss_mb(root_pid: int) -> float:
    """Proportional set size (PSS) of a process and all its descendants (MB).

    PSS splits each shared page between the processes sharing it, so pages a forked worker
    shares copy-on-write with its parent are counted once, not once per process (summing
    RSS would count the ~150 MB of imported libraries once per worker).
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/smaps_rollup") as fh:
                pss = next(line for line in fh if line.startswith("Pss:"))
                rss[int(entry)] = int(pss.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total / 1e6


def run_generate(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak tree PSS MB, exit code) of one generate.py run."""
    env = {**os.environ, "PRA_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "generate.py"), *args, "progress=false"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid))
        time.sleep(0.2)
    return time.perf_counter() - t0, peak, proc.returncode


def _row(label: str, values: list[float], target: float, figure: dict) -> dict:
    """A printed row (median against the target) and the results file's figure of the same values."""
    value = float(np.median(values))
    return {"bench": label, "value": value, "target": target, "ratio": value / target, "figure": figure}


def tone_rows(tasks=TONE_TASKS, *, items: int = 300, runs: int = RUNS) -> list[dict]:
    """Items/s on one core per tone task, validation off and on: ``runs`` runs of ``items`` items each."""
    rows = []
    for task in tasks:
        for validate in (False, True):
            rates = sorted(items_per_second(task, validate=validate, n=items) for _ in range(runs))
            name = f"{task}, items/s on one core (validation {'on' if validate else 'off'})"
            figure = results.figure(name, rates, "items/s", target=f">= {TARGET_ITEMS_PER_S:.0f}", n=runs)
            label = f"{task} items/s/core (validate={validate}) [{rates[0]:.0f}-{rates[-1]:.0f}]"
            rows.append(_row(label, rates, TARGET_ITEMS_PER_S, figure))
    return rows


def memory_row(tmp: str, n_per_level: int) -> dict:
    """Peak PSS of a ``6 * n_per_level``-item loudness_relative run on the default 2 workers."""
    args = ["task=loudness_relative", f"task.items_per_level={n_per_level}", f"out={tmp}/big", "validate=false"]
    wall, peak, code = run_generate([*args, "shard_size=5000"])
    n = 6 * n_per_level
    name = f"peak memory generating {n:,} items (2 workers, PSS of the process tree)"
    note = f"exit code {code}" if code else ""
    figure = results.figure(name, peak, "MB", target=f"<= {TARGET_RSS_MB:.0f} MB", note=note)
    return _row(
        f"peak PSS MB, {n} items, 2 workers (exit {code}, {n / wall:.0f} items/s)", [peak], TARGET_RSS_MB, figure
    )


def suite_row(tmp: str) -> dict:
    """Wall time of ``generate.py`` with no arguments (the default suite, ``make dataset``'s work)."""
    wall, _, code = run_generate([f"out={tmp}/default"])
    note = f"exit code {code}" if code else ""
    figure = results.figure(
        "default suite, wall time of generate.py with no arguments",
        wall,
        "s",
        target=f"<= {TARGET_SUITE_S:.0f} s",
        note=note,
    )
    return _row(f"default suite wall s (exit {code})", [wall], TARGET_SUITE_S, figure)


def run(
    *, quick: bool = False, tasks=TONE_TASKS, items: int | None = None, runs: int = RUNS, parts=PARTS
) -> list[dict]:
    """The rows of the parts asked (``tone``, ``memory``, ``suite``); ``quick``: 100 items per tone run and a
    1,800-item memory run (300 and 20,004 otherwise)."""
    rows = tone_rows(tasks, items=items or (100 if quick else 300), runs=runs) if "tone" in parts else []
    with tempfile.TemporaryDirectory() as tmp:
        if "memory" in parts:
            rows.append(memory_row(tmp, 300 if quick else 3334))  # 6 levels -> 20,004 items
        if "suite" in parts:
            rows.append(suite_row(tmp))
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'benchmark':<70} {'value':>10} {'target':>8} {'ratio':>7}")
    for r in rows:
        print(f"{r['bench']:<70} {r['value']:>10.1f} {r['target']:>8.0f} {r['ratio']:>7.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 items per tone run, a 1,800-item memory run")
    ap.add_argument("--tasks", nargs="+", default=list(TONE_TASKS), choices=TONE_TASKS, metavar="TASK")
    ap.add_argument("--items", type=int, default=None, help="items per tone run (default 300, --quick 100)")
    ap.add_argument("--runs", type=int, default=RUNS, help="runs per tone figure")
    ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    ap.add_argument("--results", type=Path, default=None, help=f"where the figures go (default {RESULT_FILE})")
    args = ap.parse_args(argv)
    rows = run(quick=args.quick, tasks=tuple(args.tasks), items=args.items, runs=args.runs, parts=tuple(args.parts))
    print_table(rows)
    command = " ".join(["python bench/bench_generation.py", *(sys.argv[1:] if argv is None else argv)])
    results.write("bench_generation", command, [r["figure"] for r in rows], out=args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
