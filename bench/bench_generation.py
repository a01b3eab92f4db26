"""Generation speed and memory.

Prints, for each tone task at 16 kHz (4 s clips, FLAC included): items per second on
one core (a single process renders, validates, encodes and writes the parquet shard),
with validation off and on, the median [min-max] of three runs, as a ratio against the
300 items/s/core target; the peak resident memory of a 20,000-item run (main process + pool
workers, polled from /proc) against the 500 MB target; and the wall time of the default suite (`make dataset`'s
work) against the 60 s target.
"""

from __future__ import annotations

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
from tests.support.builders import small_run  # noqa: E402

TONE_TASKS = ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute", "audiogram")
TARGET_ITEMS_PER_S = 300.0
RUNS = 3  # each tone-task figure: the median of this many runs, [min-max] in its label
TARGET_RSS_MB = 500.0
TARGET_SUITE_S = 60.0
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


def run(*, quick: bool = False) -> list[dict]:
    rows = []
    for task in TONE_TASKS:
        for validate in (False, True):
            rates = sorted(items_per_second(task, validate=validate, n=100 if quick else 300) for _ in range(RUNS))
            rate = float(np.median(rates))
            rows.append(
                {
                    "bench": f"{task} items/s/core (validate={validate}) [{rates[0]:.0f}-{rates[-1]:.0f}]",
                    "value": rate,
                    "target": TARGET_ITEMS_PER_S,
                    "ratio": rate / TARGET_ITEMS_PER_S,
                }
            )
    with tempfile.TemporaryDirectory() as tmp:
        n_per_level = 300 if quick else 3334  # 6 levels -> 20,004 items
        wall, peak, code = run_generate(
            [
                "task=loudness_relative",
                f"task.items_per_level={n_per_level}",
                f"out={tmp}/big",
                "validate=false",
                "shard_size=5000",
            ]
        )
        rows.append(
            {
                "bench": f"peak PSS MB, {6 * n_per_level} items, 2 workers "
                f"(exit {code}, {6 * n_per_level / wall:.0f} items/s)",
                "value": peak,
                "target": TARGET_RSS_MB,
                "ratio": peak / TARGET_RSS_MB,
            }
        )
        wall, peak, code = run_generate([f"out={tmp}/default"])
        rows.append(
            {
                "bench": f"default suite wall s (exit {code})",
                "value": wall,
                "target": TARGET_SUITE_S,
                "ratio": wall / TARGET_SUITE_S,
            }
        )
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'benchmark':<70} {'value':>10} {'target':>8} {'ratio':>7}")
    for r in rows:
        print(f"{r['bench']:<70} {r['value']:>10.1f} {r['target']:>8.0f} {r['ratio']:>7.2f}")


def main() -> None:
    print_table(run(quick="--quick" in sys.argv))


if __name__ == "__main__":
    main()
