"""Ray's overhead against the local pool (issue 17), on a spatial task (azimuth_relative, binaural).

Prints items/s of the same generation through the local pool (2 workers), Ray on one node (a local
Ray instance of 2 CPUs) and Ray on two nodes (two ``ray start`` nodes of 1 CPU each on 127.0.0.1):
median and min-max of ``--runs`` timed runs each (one process per executor), after one warm-up run
(it fills the numba cache), and Ray's overhead as the pool's median over Ray's, minus 1 (target:
<= 10 %). Every run is a new job: the pool forks new workers, Ray joins the cluster again and
starts new worker processes, and that is in the figure; starting the cluster (``ray start``) is not.
Needs the ``ray`` extra.

A Ray job pays a fixed start-up the forked pool does not: new worker processes import auralgen and
load the numba cache (about 3 s here). The script prints it (extra seconds per job), and the overhead
is measured on a job of 1,200 items by default (about 25 s): on 60 items the fixed cost alone was
+115 %, on 480 items +30 %, on 2,400 items +3 % (one node; see the closing note of issue 17).

    .venv/bin/python bench/bench_ray.py [--items-per-level 200] [--runs 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen import generation  # noqa: E402
from auralgen.execution import LocalPoolExecutor  # noqa: E402
from tests.execution.cluster import local_cluster  # noqa: E402
from tests.support.builders import small_run  # noqa: E402

TARGET_OVERHEAD = 0.10
MODES = {"pool": "local pool, 2 workers", "ray1": "ray, 1 node x 2 CPUs", "ray2": "ray, 2 nodes x 1 CPU"}
OTHERS = ("azimuth_absolute", "elevation_absolute", "elevation_relative", "distance_relative", "distance_absolute",
          "trajectory")  # fmt: skip


def timed_runs(make_executor, items_per_level: int, runs: int) -> list[float]:
    """items/s of ``runs`` generations (after one warm-up), each with a fresh executor, out directory and seed."""
    args = [
        "suite=spatial",
        *(f"~tasks.{t}" for t in OTHERS),
        f"tasks.azimuth_relative.items_per_level={items_per_level}",
    ]
    rates = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs + 1):
            # a new seed each run: no cache of an earlier run (numba's aside) serves its rooms
            run = small_run(*args, out=Path(tmp) / str(i), shard_size=12, seed=100 + i)
            ex = make_executor()
            t0 = time.perf_counter()
            manifest = generation.run(run, executor=ex, log=lambda *_: None)
            if i:
                rates.append(manifest["items"]["written"] / (time.perf_counter() - t0))
    return rates


def rates_of(mode: str, items_per_level: int, runs: int) -> tuple[list[float], float]:
    """items/s of one executor (``pool``, ``ray1``: one node of 2 CPUs, ``ray2``: two nodes of 1 CPU), and the
    seconds to start its cluster. Each Ray run joins the cluster as a new job (fresh worker processes, as
    the pool forks fresh workers): the start-up a run pays is in its figure."""
    if mode == "pool":
        return timed_runs(lambda: LocalPoolExecutor(2), items_per_level, runs), 0.0
    from auralgen.execution.ray import RayExecutor

    nodes, cpus = (1, 2) if mode == "ray1" else (2, 1)
    t0 = time.perf_counter()
    with local_cluster(nodes=nodes, cpus_per_node=cpus) as address:
        startup = time.perf_counter() - t0
        return timed_runs(lambda: RayExecutor(address), items_per_level, runs), startup


def row(label: str, rates: list[float], note: str = "") -> str:
    med = statistics.median(rates)
    return f"  {label:<28} {med:7.2f} items/s  (min {min(rates):.2f}, max {max(rates):.2f}){note}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items-per-level", type=int, default=200, help="azimuth_relative items per level (6 levels)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # one executor, in its own process
    a = ap.parse_args()
    if a.mode:
        print(json.dumps(rates_of(a.mode, a.items_per_level, a.runs)))
        return 0
    n = 6 * a.items_per_level
    print(
        f"azimuth_relative (binaural), {n} items a run, {a.runs} timed runs after a warm-up; the machine may be shared"
    )
    medians = {}
    for mode, label in MODES.items():
        argv = [
            sys.executable,
            __file__,
            f"--mode={mode}",
            f"--items-per-level={a.items_per_level}",
            f"--runs={a.runs}",
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            print(f"  {label}: failed: {done.stderr.strip().splitlines()[-1:]}")
            return 1
        rates, startup = json.loads(done.stdout.strip().splitlines()[-1])
        medians[mode] = statistics.median(rates)
        print(row(label, rates, f"  (cluster start-up {startup:.1f} s, not counted)" if startup else ""), flush=True)
    for mode in ("ray1", "ray2"):
        over = medians["pool"] / medians[mode] - 1
        verdict = "ok" if over <= TARGET_OVERHEAD else f"over the {TARGET_OVERHEAD:.0%} target"
        extra = n / medians[mode] - n / medians["pool"]
        print(
            f"  ray overhead vs the pool, {MODES[mode]}: {over:+.1%} ({verdict}); {extra:+.1f} s per job of {n} items"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
