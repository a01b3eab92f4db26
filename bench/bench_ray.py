"""Ray's overhead against the local pool (issue 17), on a spatial task (azimuth_relative, binaural).

Prints items/s of the same generation through the local pool (2 workers), Ray on one node (a local
Ray instance of 2 CPUs) and Ray on two nodes (two ``ray start`` nodes of 1 CPU each on 127.0.0.1):
median and min-max of ``--runs`` timed runs each, after one warm-up run (it starts Ray's worker
processes and loads the numba cache), and Ray's overhead as the pool's median over Ray's, minus 1
(target: <= 10 %). Ray's start-up (``ray.init`` / ``ray start``) is printed apart: it is paid once
per job, not per item. Needs the ``ray`` extra.

    .venv/bin/python bench/bench_ray.py [--items-per-level 6] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
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
OTHERS = ("azimuth_absolute", "elevation_absolute", "elevation_relative", "distance_relative", "distance_absolute",
          "trajectory")  # fmt: skip


def timed_runs(make_executor, items_per_level: int, runs: int) -> list[float]:
    """items/s of ``runs`` generations (after one warm-up), each with a fresh executor and out directory."""
    args = [
        "suite=spatial",
        *(f"~tasks.{t}" for t in OTHERS),
        f"tasks.azimuth_relative.items_per_level={items_per_level}",
    ]
    rates = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs + 1):
            run = small_run(*args, out=Path(tmp) / str(i), shard_size=12)
            ex = make_executor()
            t0 = time.perf_counter()
            manifest = generation.run(run, executor=ex, log=lambda *_: None)
            if i:
                rates.append(manifest["items"]["written"] / (time.perf_counter() - t0))
    return rates


def ray_rates(address: str | None, items_per_level: int, runs: int) -> tuple[list[float], float]:
    """Ray's items/s over one connection (one job: the worker processes stay up between runs) and its start-up seconds."""
    import ray

    from auralgen.execution.ray import RayExecutor

    t0 = time.perf_counter()
    assert RayExecutor(address, num_cpus=None if address else 2).workers == 2  # connects
    startup = time.perf_counter() - t0
    try:
        return timed_runs(lambda: RayExecutor(address), items_per_level, runs), startup
    finally:
        ray.shutdown()


def row(label: str, rates: list[float], note: str = "") -> str:
    med = statistics.median(rates)
    return f"  {label:<28} {med:7.2f} items/s  (min {min(rates):.2f}, max {max(rates):.2f}){note}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items-per-level", type=int, default=6, help="azimuth_relative items per level (6 levels)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    n = 6 * a.items_per_level
    print(
        f"azimuth_relative (binaural), {n} items a run, {a.runs} timed runs after a warm-up; the machine may be shared"
    )
    pool = timed_runs(lambda: LocalPoolExecutor(2), a.items_per_level, a.runs)
    print(row("local pool, 2 workers", pool), flush=True)
    one, start1 = ray_rates(None, a.items_per_level, a.runs)
    print(row("ray, 1 node x 2 CPUs", one, f"  start-up {start1:.1f} s"), flush=True)
    t0 = time.perf_counter()
    with local_cluster(nodes=2, cpus_per_node=1) as address:
        start2 = time.perf_counter() - t0
        two, join = ray_rates(address, a.items_per_level, a.runs)
    print(row("ray, 2 nodes x 1 CPU", two, f"  start-up {start2:.1f} s (ray start) + {join:.1f} s (join)"))
    base = statistics.median(pool)
    for label, rates in (("1 node", one), ("2 nodes", two)):
        over = base / statistics.median(rates) - 1
        verdict = "ok" if over <= TARGET_OVERHEAD else f"over the {TARGET_OVERHEAD:.0%} target"
        print(f"  ray overhead vs pool, {label}: {over:+.1%} ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
