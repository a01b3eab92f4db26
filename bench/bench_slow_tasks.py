"""The slowest tasks' items/s/core against the code they started from, measured in one run.

trajectory, multi_source_relation and mixture (room rendering, moving sources, mixtures with a
measurement of every part) set the bill of a large training run. Each is timed in one process
(render + measurement + FLAC export, validation on, default config, numba caches warm, one
thread for numba, BLAS and OpenMP) in two trees alternately: this tree and the *reference
tree*, the package as it was before these tasks were sped up (git ref ``scale-baseline``,
unpacked into a temporary folder with ``git archive``). The same loop runs in both (each
tree's own renderer, config and shard writer), so the figures are like for like: same items,
same accuracy, one thread. Each figure is the median and the min-max of ``--runs`` pairs; the
re-draw rate (draws rejected by the measurement per item) is printed beside it, since a faster
path must not reject more draws.

    python bench/bench_slow_tasks.py [--runs 3] [--n 40] [--tasks trajectory,mixture] [--ref scale-baseline]

Without the ref (a shallow clone) the reference side is skipped with one line saying so.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import results  # noqa: E402

TASKS = ("trajectory", "multi_source_relation", "mixture")
REF = "scale-baseline"
GOAL = 5.0  # items/s/core against the reference tree
CHILD_TIMEOUT_S = 1800

# Runs inside a tree (its own package first on sys.path); the same text for both trees.
CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ".")
from auralgen.export.parquet import ShardWriter
from auralgen.generation.item import Renderer
from auralgen.generation.plan import ItemSpec
from auralgen.generation.run import tune_allocator
from tests.support.builders import small_run

task, n = sys.argv[1], int(sys.argv[2])
tune_allocator()
renderer = Renderer(small_run(f"task={task}", validate="true"))
owner = renderer.tasks[task]
levels = getattr(owner, "design", owner).n_levels()
with tempfile.TemporaryDirectory() as tmp:  # warm-up: numba caches, imports (pyarrow's first write too)
    warm = ShardWriter(Path(tmp) / "warm.parquet")
    for i in range(2 * levels):
        res = renderer(ItemSpec(task, "test", 10_000 + i, i % levels))
        if res["row"] is not None:
            warm.add(res["row"])
    warm.close()
redraws = 0
with tempfile.TemporaryDirectory() as tmp:
    writer = ShardWriter(Path(tmp) / "bench.parquet")
    t0 = time.perf_counter()
    for i in range(n):
        res = renderer(ItemSpec(task, "test", i, i % levels))
        redraws += int(res["stat"]["resampled"])
        if res["row"] is not None:
            writer.add(res["row"])
    writer.close()
    seconds = time.perf_counter() - t0
print(json.dumps({"items_per_s": n / seconds, "redraws_per_item": redraws / n}))
"""


def unpack(ref: str, dest: Path) -> bool:
    """Unpack the tree at git ``ref`` of this repository into ``dest``; False if the ref is unknown."""
    try:
        tar = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True, timeout=120).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(dest, filter="data")
    (dest / "auralgen" / "conf").symlink_to(dest / "conf")  # the package's configs, as an install maps them
    return True


def run_child(tree: Path, task: str, n: int, cache: Path) -> dict:
    """One timing of ``task`` in ``tree`` (a fresh process, one thread)."""
    env = dict(
        os.environ,
        PYTHONPATH=str(tree),
        PRA_NUM_THREADS="1",
        NUMBA_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        NUMBA_CACHE_DIR=str(cache),
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, task, str(n)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    if out.returncode:
        raise SystemExit(f"{task} in {tree.name}: the timing process failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(task: str, trees: dict[str, Path], *, runs: int, n: int, caches: Path) -> dict[str, list[dict]]:
    """``runs`` alternating timings of ``task`` in each tree (reference first in each pair)."""
    got: dict[str, list[dict]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            got[name].append(run_child(tree, task, n, caches / name))
    return got


def report(task: str, got: dict[str, list[dict]]) -> tuple[list[dict], str]:
    """The figures of one task and its printed line."""
    now = [g["items_per_s"] for g in got["this tree"]]
    redraw_now = statistics.mean(g["redraws_per_item"] for g in got["this tree"])
    figures = [results.figure(f"{task}: items/s/core", now, "items/s")]
    line = f"{task:<22} {statistics.median(now):7.1f} items/s/core [{min(now):.1f}-{max(now):.1f}]"
    line += f"  re-draws {redraw_now:.2f}/item"
    if "reference" in got:
        ref = [g["items_per_s"] for g in got["reference"]]
        ratios = [a / b for a, b in zip(now, ref, strict=True)]
        redraw_ref = statistics.mean(g["redraws_per_item"] for g in got["reference"])
        figures.append(results.figure(f"{task}: reference tree items/s/core", ref, "items/s"))
        figures.append(results.figure(f"{task}: speed-up", ratios, "x", target=f">= {GOAL:g}x"))
        med = statistics.median(ratios)
        line += (
            f" | reference {statistics.median(ref):6.1f} [{min(ref):.1f}-{max(ref):.1f}],"
            f" re-draws {redraw_ref:.2f}/item"
            f" | {med:.2f}x [{min(ratios):.2f}-{max(ratios):.2f}] {'met' if med >= GOAL else 'NOT met'}"
        )
    return figures, line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timing pairs per task (default 3)")
    ap.add_argument("--n", type=int, default=40, help="items per timing (default 40)")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    ap.add_argument("--ref", default=REF, help=f"git ref of the reference tree (default {REF})")
    ap.add_argument("--results", type=Path, default=None, help="results file (default bench/results/<bench>.json)")
    args = ap.parse_args(argv)
    tasks = [t for t in args.tasks.split(",") if t]
    with tempfile.TemporaryDirectory(prefix="auralgen-ref-") as tmp:
        tmp = Path(tmp)
        trees = {"this tree": ROOT}
        if unpack(args.ref, tmp / "ref"):
            trees = {"reference": tmp / "ref", "this tree": ROOT}
        else:
            print(f"reference tree: git ref {args.ref!r} not in this clone; only this tree is timed")
        print(f"{args.runs} alternating runs of {args.n} items per tree (validate=true, FLAC, 1 thread)")
        figures = []
        for task in tasks:
            task_figures, line = report(task, measure(task, trees, runs=args.runs, n=args.n, caches=tmp / "numba"))
            figures += task_figures
            print(line, flush=True)
    command = "python bench/bench_slow_tasks.py" + (f" --runs {args.runs}" if args.runs != 3 else "")
    command += f" --n {args.n}" if args.n != 40 else ""
    results.write("bench_slow_tasks", command, figures, out=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
