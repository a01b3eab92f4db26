"""End-to-end speed of the spatial tasks (issue 16, point 3): items per second on one core per task and
receiver layout, and how generation scales from one worker to two.

Part 1: for every spatial task (``Task.spatial``) and each of the binaural, first-order ambisonics
and tetrahedral receivers, one process renders, validates (the label measurements), FLAC-encodes and
writes ``--items`` items after a warm-up (numba caches loaded); median and min-max of ``--runs`` runs.
A layout a task refuses (it cannot carry the task's cue) is printed with the refusal; multi_source_relation
runs without its 'closer' relation on FOA and tetra (:data:`NOT_BINAURAL`).

Part 2: ``generate.py task=azimuth_relative`` with ``workers=1`` and ``workers=2`` (same items, the
shards byte-identical), each ``--runs`` times; the render throughput ``generate.py`` reports (start-up
excluded) and the ratio two workers / one against the 1.8x goal.

    .venv/bin/python bench/bench_spatial.py             # 20 items x 3 runs per cell (about 8 min here)
    .venv/bin/python bench/bench_spatial.py --quick     # 8 items x 1 run
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("PRA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_generation import items_per_second  # noqa: E402

from auralgen.core.errors import ParameterError  # noqa: E402
from auralgen.tasks import TASKS  # noqa: E402

LAYOUTS = ("binaural", "foa", "tetra")
SCALING_TASK = "azimuth_relative"
SCALING_GOAL = 1.8
_RATE = re.compile(r"rendered in [\d.]+ s \(([\d.]+) items/s\)")


def spatial_tasks() -> list[str]:
    return sorted(name for name, cls in TASKS.items() if getattr(cls, "spatial", False))


# what a layout other than binaural needs on top (multi_source_relation refuses 'closer' there: its onsets
# cannot be measured through the RIR's zero-phase high-pass)
NOT_BINAURAL = {"multi_source_relation": ("task.relations=[left,higher,left_of]",)}


def cell(task: str, layout: str, *, items: int, runs: int) -> str:
    overrides = (f"task.receiver.type={layout}", *(NOT_BINAURAL.get(task, ()) if layout != "binaural" else ()))
    try:
        rates = [items_per_second(task, validate=True, n=items, overrides=overrides) for _ in range(runs)]
    except ParameterError as exc:
        return f"refused ({str(exc).split(';')[0][-60:]})"
    return f"{statistics.median(rates):6.1f} [{min(rates):.1f}-{max(rates):.1f}]"


def generate_rate(workers: int, items_per_level: int, out: str) -> float:
    """Render throughput (items/s, start-up excluded) that generate.py reports for one run."""
    cmd = [sys.executable, "generate.py", f"task={SCALING_TASK}", f"task.items_per_level={items_per_level}",
           f"workers={workers}", f"out={out}", "progress=false"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=True,
                          env={**os.environ, "PRA_NUM_THREADS": "1"})  # fmt: skip
    return float(_RATE.search(proc.stdout + proc.stderr)[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=20, help="items timed per run and cell")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--scaling-items-per-level", type=int, default=40, help=f"{SCALING_TASK} items per level (6 levels)"
    )
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    items, runs = (8, 1) if args.quick else (args.items, args.runs)
    print(
        f"items/s on one core (render + validate + FLAC + parquet), 16 kHz, median [min-max] of {runs} runs of {items}"
    )
    print(f"{'task':<24}" + "".join(f"{lay:>26}" for lay in LAYOUTS))
    for task in spatial_tasks():
        print(f"{task:<24}" + "".join(f"{cell(task, lay, items=items, runs=runs):>26}" for lay in LAYOUTS), flush=True)
    per_level = 10 if args.quick else args.scaling_items_per_level
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            rates[workers] = [generate_rate(workers, per_level, f"{tmp}/w{workers}_{r}") for r in range(runs)]
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"\nscaling, generate.py task={SCALING_TASK} ({6 * per_level} items), render items/s, median of {runs}: "
          f"1 worker {one:.1f} {rates[1]}, 2 workers {two:.1f} {rates[2]} -> {two / one:.2f}x "
          f"(goal >= {SCALING_GOAL}x: {'met' if two / one >= SCALING_GOAL else 'MISS'}; {os.cpu_count()} cores)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
