"""Ray's overhead against the local pool, on a spatial task (azimuth_relative, binaural).

Prints items/s of the same generation through the local pool (2 workers), Ray on one node (a local
Ray instance of 2 CPUs) and Ray on two nodes (two ``ray start`` nodes of 1 CPU each on 127.0.0.1):
median and min-max of ``--runs`` timed runs each (one process per executor), after one warm-up run
(it fills the numba cache), and Ray's overhead as the pool's median over Ray's, minus 1 (target:
<= 10 %). Every run is a new job: the pool forks new workers, Ray joins the cluster again and
starts new worker processes, and that is in the figure; starting the cluster (``ray start``) is not.
Needs the ``ray`` extra.

A Ray job pays a fixed start-up the forked pool does not: new worker processes import auralgen and
load the numba cache (about 3 s here). So each run is two jobs, of N and of 2N items (N = 6 x
``--items-per-level``, new seeds): the whole-job rate is N over the first job's time, and the
marginal rate, N over the difference of the two jobs' times, is the rate once the workers are up
(what a long job sees). Both overheads are printed; the fixed cost is the difference of the two.

    .venv/bin/python bench/bench_ray.py [--items-per-level 200] [--runs 2] [--results PATH]

Every run writes its figures to ``bench/results/bench_ray.json`` (``--results PATH``: elsewhere), which
the docs render on the scale-out page.
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
from bench import results  # noqa: E402
from tests.execution.cluster import local_cluster  # noqa: E402
from tests.support.builders import small_run  # noqa: E402

TARGET_OVERHEAD = 0.10
MODES = {"pool": "local pool, 2 workers", "ray1": "ray, 1 node x 2 CPUs", "ray2": "ray, 2 nodes x 1 CPU"}
OTHERS = (
    "azimuth_absolute",
    "elevation_absolute",
    "elevation_relative",
    "distance_relative",
    "distance_absolute",
    "trajectory",
)


def job_seconds(make_executor, items_per_level: int, out: Path, seed: int) -> tuple[float, int]:
    """Wall seconds and items written of one generation job with a fresh executor."""
    args = [
        "suite=spatial",
        *(f"~tasks.{t}" for t in OTHERS),
        f"tasks.azimuth_relative.items_per_level={items_per_level}",
    ]
    # a new seed each job: no cache of an earlier job (numba's aside) serves its rooms
    run = small_run(*args, out=out, shard_size=12, seed=seed)
    t0 = time.perf_counter()
    manifest = generation.run(run, executor=make_executor(), log=lambda *_: None)
    return time.perf_counter() - t0, manifest["items"]["written"]


def timed_runs(make_executor, items_per_level: int, runs: int) -> tuple[list[float], list[float]]:
    """Whole-job and marginal items/s of ``runs`` runs (after one warm-up job): each run is a job of N items
    and one of 2N, each with a fresh executor, out directory and seed."""
    whole, marginal = [], []
    with tempfile.TemporaryDirectory() as tmp:
        job_seconds(make_executor, items_per_level, Path(tmp) / "warm", 99)
        for i in range(runs):
            t1, n1 = job_seconds(make_executor, items_per_level, Path(tmp) / f"{i}a", 100 + 2 * i)
            t2, n2 = job_seconds(make_executor, 2 * items_per_level, Path(tmp) / f"{i}b", 101 + 2 * i)
            whole.append(n1 / t1)
            marginal.append((n2 - n1) / (t2 - t1))
    return whole, marginal


def rates_of(mode: str, items_per_level: int, runs: int) -> tuple[tuple[list[float], list[float]], float]:
    """Whole-job and marginal items/s (:func:`timed_runs`) of one executor (``pool``, ``ray1``: one node of 2 CPUs,
    ``ray2``: two nodes of 1 CPU), and the
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
    return f"  {label:<36} {med:7.2f} items/s  (min {min(rates):.2f}, max {max(rates):.2f}){note}"


def figures(rates: dict, n: int) -> list[dict]:
    """The results file's figures from ``rates[mode] = (whole, marginal)`` items/s lists: each executor's
    rates, and per Ray mode the pool's median over Ray's (1 + Ray's overhead) and the fixed start-up
    cost per job that Ray pays beyond the pool's (s)."""
    out = []
    for mode, (whole, marginal) in rates.items():
        out.append(results.figure(f"{MODES[mode]}: whole job of {n} items, items/s", whole, "items/s"))
        out.append(results.figure(f"{MODES[mode]}: marginal rate, items/s", marginal, "items/s"))
    pool = [statistics.median(r) for r in rates["pool"]]
    for mode in ("ray1", "ray2"):
        med = [statistics.median(r) for r in rates[mode]]
        for k, kind in enumerate(("whole job", "marginal")):
            out.append(
                results.figure(
                    f"{MODES[mode]}: pool / Ray items/s, {kind} (1 + overhead)",
                    pool[k] / med[k],
                    "x",
                    target=f"<= {1 + TARGET_OVERHEAD:.2f}x",
                    n=len(rates[mode][k]),
                )
            )
        fixed = n / med[0] - n / med[1] - (n / pool[0] - n / pool[1])
        out.append(
            results.figure(f"{MODES[mode]}: start-up per job beyond the pool's", fixed, "s", n=len(rates[mode][0]))
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items-per-level", type=int, default=200, help="azimuth_relative items per level (6 levels)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--results", type=Path, default=None, help="where the figures go (default bench/results/)")
    ap.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # one executor, in its own process
    a = ap.parse_args(argv)
    if a.mode:
        print(json.dumps(rates_of(a.mode, a.items_per_level, a.runs)))
        return 0
    n = 6 * a.items_per_level
    print(
        f"azimuth_relative (binaural), runs of {n} + {2 * n} items, {a.runs} timed runs after a warm-up; the machine "
        "may be shared"
    )
    medians, rates = {}, {}
    for mode, label in MODES.items():
        child = [
            sys.executable,
            __file__,
            f"--mode={mode}",
            f"--items-per-level={a.items_per_level}",
            f"--runs={a.runs}",
        ]
        done = subprocess.run(child, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            print(f"  {label}: failed: {done.stderr.strip().splitlines()[-1:]}")
            return 1
        (whole, marginal), startup = json.loads(done.stdout.strip().splitlines()[-1])
        medians[mode] = statistics.median(whole), statistics.median(marginal)
        rates[mode] = whole, marginal
        print(
            row(f"{label}, whole job", whole, f"  (cluster start-up {startup:.1f} s, not counted)" if startup else "")
        )
        print(row(f"{label}, marginal", marginal), flush=True)
    for mode in ("ray1", "ray2"):
        over = [medians["pool"][k] / medians[mode][k] - 1 for k in (0, 1)]
        verdict = ["ok" if o <= TARGET_OVERHEAD else f"over the {TARGET_OVERHEAD:.0%} target" for o in over]
        fixed = n / medians[mode][0] - n / medians[mode][1] - (n / medians["pool"][0] - n / medians["pool"][1])
        print(
            f"  ray overhead vs the pool, {MODES[mode]}: whole job of {n} items {over[0]:+.1%} ({verdict[0]}), "
            f"marginal {over[1]:+.1%} ({verdict[1]}); fixed cost per job {fixed:+.1f} s more than the pool's"
        )
    command = " ".join(["python bench/bench_ray.py", *(sys.argv[1:] if argv is None else argv)])
    results.write("bench_ray", command, figures(rates, n), out=a.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
