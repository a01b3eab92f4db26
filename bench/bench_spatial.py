"""End-to-end speed of the spatial tasks: items per second on one core per task and
receiver layout, and how generation scales from one worker to two.

Part 1: for every spatial task (``Task.spatial``) and each of the binaural, first-order ambisonics
and tetrahedral receivers, one process renders, validates (the label measurements), FLAC-encodes and
writes ``--items`` items after a warm-up (numba caches loaded); median and min-max of ``--runs`` runs.
A layout a task refuses (it cannot carry the task's cue) is printed with the refusal; multi_source_relation
runs without its 'closer' relation on FOA and tetra (:data:`NOT_BINAURAL`).

Part 2: ``generate.py task=azimuth_relative`` with ``workers=1`` and ``workers=2`` (same items, the
shards byte-identical), ``--scaling-runs`` times (one worker and two back to back), as two jobs: N items
and 3N items (a new seed each). Each job pays a fixed cost once, whatever its size: the numba caches and HRTF set are
loaded and the first item of
each task rendered before the workers fork (about 1 s here, serial). So two rates are printed from the
render times ``generate.py`` reports: the whole-job rate of the 3N-item job, and the marginal rate,
2N over the difference of the two jobs' times -- the rate once the workers are running, what a long job
sees. The goal (2 workers >= 1.8x one) is judged on the median of the pairs' marginal ratios; a job of 240
items (10 s on one worker) shows the fixed cost more than the scaling. The ratios swing from pair to pair:
this VM's second core is shared, and its speed moves. So each run also times two independent one-worker
jobs of 3N items at once: what the two cores give to two processes that share nothing, the ceiling a
two-worker job can reach on this machine at that moment; the two-worker job's share of it is printed.

    .venv/bin/python bench/bench_spatial.py             # 20 items x 3 runs per cell, 5 scaling pairs (about 13 min)
    .venv/bin/python bench/bench_spatial.py --scaling-only
    .venv/bin/python bench/bench_spatial.py --quick     # 8 items x 1 run
    .venv/bin/python bench/bench_spatial.py --no-scaling --tasks azimuth_relative --layouts binaural

Every run writes its figures to ``bench/results/bench_spatial.json`` (``--results PATH``: elsewhere), the file
the docs' Benchmarks page renders; the file names the command, so a partial run says so.
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
from bench import results  # noqa: E402

LAYOUTS = ("binaural", "foa", "tetra")
SCALING_TASK = "azimuth_relative"
SCALING_GOAL = 1.8
RESULT_FILE = "bench/results/bench_spatial.json"
_RATE = re.compile(r"(\d+) rendered in ([\d.]+) s \([\d.]+ items/s\)")


def spatial_tasks() -> list[str]:
    return sorted(name for name, cls in TASKS.items() if getattr(cls, "spatial", False))


# what a layout other than binaural needs on top (multi_source_relation refuses 'closer' there: its onsets
# cannot be measured through the RIR's zero-phase high-pass)
NOT_BINAURAL = {"multi_source_relation": ("task.relations=[left,higher,left_of]",)}


def cell_rates(task: str, layout: str, *, items: int, runs: int) -> list[float] | str:
    """Items/s of ``runs`` runs of ``items`` items, or the refusal (a layout that cannot carry the task's cue)."""
    overrides = (f"task.receiver.type={layout}", *(NOT_BINAURAL.get(task, ()) if layout != "binaural" else ()))
    try:
        return [items_per_second(task, validate=True, n=items, overrides=overrides) for _ in range(runs)]
    except ParameterError as exc:
        return f"refused ({str(exc).split(';')[0][-60:]})"


def cell_text(rates: list[float] | str) -> str:
    if isinstance(rates, str):
        return rates
    return f"{statistics.median(rates):6.1f} [{min(rates):.1f}-{max(rates):.1f}]"


def _generate_cmd(workers: int, items_per_level: int, out: str, seed: int) -> list[str]:
    return [
        sys.executable,
        "generate.py",
        f"task={SCALING_TASK}",
        f"task.items_per_level={items_per_level}",
        f"workers={workers}",
        f"out={out}",
        f"seed={seed}",
        "progress=false",
    ]


def _reported(text: str) -> tuple[int, float]:
    m = _RATE.search(text)
    return int(m[1]), float(m[2])


def generate_time(workers: int, items_per_level: int, out: str, seed: int) -> tuple[int, float]:
    """Items rendered and render seconds (start-up of the Python process excluded) that generate.py reports."""
    proc = subprocess.run(
        _generate_cmd(workers, items_per_level, out, seed),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
        env={**os.environ, "PRA_NUM_THREADS": "1"},
    )
    return _reported(proc.stdout + proc.stderr)


def two_at_once(items_per_level: int, outs: tuple[str, str], seeds: tuple[int, int]) -> float:
    """Items/s of two independent one-worker jobs run at the same time: what this machine's two cores give
    to two processes that share nothing (the ceiling a two-worker job can reach)."""
    env = {**os.environ, "PRA_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            _generate_cmd(1, items_per_level, o, s),
            cwd=ROOT,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for o, s in zip(outs, seeds)
    ]
    done = []
    for p in procs:
        text = p.communicate(timeout=1800)[0]
        if p.returncode != 0:  # as generate_time's check=True: a failed job is an error, not a missing figure
            raise subprocess.CalledProcessError(p.returncode, p.args, output=text)
        done.append(_reported(text))
    return sum(n for n, _ in done) / max(t for _, t in done)


def scaling(per_level: int, runs: int) -> dict[str, dict[str, list[float]]]:
    """Per run ``r``, back to back: one worker, two workers (jobs of N and 3N items: whole-job and marginal
    rates, see the module docstring) and two one-worker jobs of 3N items at once (the machine's ceiling)."""
    rates: dict = {"1": {"whole": [], "marginal": []}, "2": {"whole": [], "marginal": []}, "ceiling": {"whole": []}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(runs):
            seed = 100 + 4 * r
            for workers in (1, 2):
                n1, t1 = generate_time(workers, per_level, f"{tmp}/w{workers}_{r}_a", seed)
                n3, t3 = generate_time(workers, 3 * per_level, f"{tmp}/w{workers}_{r}_b", seed + 1)
                rates[str(workers)]["whole"].append(n3 / t3)
                rates[str(workers)]["marginal"].append((n3 - n1) / (t3 - t1))
            pair = (f"{tmp}/c{r}_a", f"{tmp}/c{r}_b")
            rates["ceiling"]["whole"].append(two_at_once(3 * per_level, pair, (seed + 2, seed + 3)))
    return rates


def _spread(xs: list[float], unit: str = "") -> str:
    return f"{statistics.median(xs):.2f}{unit} [{min(xs):.2f}-{max(xs):.2f}]"


def print_scaling(rates: dict, per_level: int, reps: int) -> None:
    print(
        f"\nscaling, generate.py task={SCALING_TASK}, jobs of {6 * per_level} and {18 * per_level} items, render "
        f"items/s, median [min-max] of {reps} runs ({os.cpu_count()} cores); ratios: median [min-max] over the "
        "runs, each ratio within one run:"
    )
    for w, label in (("1", "1 worker"), ("2", "2 workers"), ("ceiling", "2 one-worker jobs at once")):
        print(
            f"  {label:26} whole {_spread(rates[w]['whole'])}"
            + (f"  marginal {_spread(rates[w]['marginal'])}" if "marginal" in rates[w] else "")
        )
    ratio = {k: [b / a for a, b in zip(rates["1"][k], rates["2"][k])] for k in ("whole", "marginal")}
    ceiling = [c / a for a, c in zip(rates["1"]["whole"], rates["ceiling"]["whole"])]
    share = [b / c for b, c in zip(rates["2"]["whole"], rates["ceiling"]["whole"])]
    met = statistics.median(ratio["marginal"]) >= SCALING_GOAL
    print(
        f"  2 workers / 1: marginal {_spread(ratio['marginal'], 'x')} (goal >= {SCALING_GOAL}x: "
        f"{'met' if met else 'MISS'}), whole job {_spread(ratio['whole'], 'x')} (its fixed cost "
        "included)"
    )
    print(
        f"  the machine's ceiling, 2 one-worker jobs at once / 1 alone: {_spread(ceiling, 'x')}; "
        f"2 workers reach {_spread(share)} of it (whole jobs)"
    )


def figures(cells: dict[tuple[str, str], list[float] | str], rates: dict | None) -> list[dict]:
    """The results file's figures: items/s per task and layout (refused cells left out), and from the
    scaling runs each rate and the two-worker ratios (see :func:`scaling`)."""
    out = [
        results.figure(f"{task}, {layout}, items/s on one core", r, "items/s")
        for (task, layout), r in cells.items()
        if not isinstance(r, str)
    ]
    if rates is None:
        return out
    job = f"generate.py task={SCALING_TASK}"
    for w, label in (("1", "1 worker"), ("2", "2 workers"), ("ceiling", "2 one-worker jobs at once")):
        for kind in rates[w]:
            out.append(results.figure(f"{job}, {label}, {kind}-job items/s", rates[w][kind], "items/s"))
    ratio = [b / a for a, b in zip(rates["1"]["marginal"], rates["2"]["marginal"])]
    out.append(results.figure(f"{job}, 2 workers / 1, marginal rate", ratio, "x", target=f">= {SCALING_GOAL}x"))
    ceiling = [c / a for a, c in zip(rates["1"]["whole"], rates["ceiling"]["whole"])]
    out.append(results.figure(f"{job}, 2 one-worker jobs at once / 1 alone (the machine's ceiling)", ceiling, "x"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=20, help="items timed per run and cell")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--scaling-items-per-level",
        type=int,
        default=40,
        help=f"{SCALING_TASK} items per level of the smaller job (6 levels; the larger job has 3x)",
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--scaling-only", action="store_true", help="part 2 only")
    ap.add_argument("--no-scaling", action="store_true", help="part 1 only")
    ap.add_argument("--scaling-runs", type=int, default=5, help="pairs of part 2 (a 2-core VM's second core swings)")
    ap.add_argument("--tasks", nargs="+", default=None, metavar="TASK", help="part 1: these spatial tasks only")
    ap.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=LAYOUTS, help="part 1: these layouts only")
    ap.add_argument("--results", type=Path, default=None, help=f"where the figures go (default {RESULT_FILE})")
    args = ap.parse_args(argv)
    tasks = args.tasks or spatial_tasks()
    unknown = sorted(set(tasks) - set(spatial_tasks()))
    if unknown:
        ap.error(f"--tasks: {', '.join(unknown)} not a spatial task; allowed: {', '.join(spatial_tasks())}")
    items, runs = (8, 1) if args.quick else (args.items, args.runs)
    cells: dict[tuple[str, str], list[float] | str] = {}
    if not args.scaling_only:
        print(
            f"items/s on one core (render + validate + FLAC + parquet), 16 kHz, median [min-max] of {runs} runs of "
            f"{items}"
        )
        print(f"{'task':<24}" + "".join(f"{lay:>26}" for lay in args.layouts))
        for task in tasks:
            row = [cell_rates(task, lay, items=items, runs=runs) for lay in args.layouts]
            cells.update(zip(((task, lay) for lay in args.layouts), row))
            print(f"{task:<24}" + "".join(f"{cell_text(r):>26}" for r in row), flush=True)
    rates = None
    if not args.no_scaling:
        per_level = 10 if args.quick else args.scaling_items_per_level
        reps = 1 if args.quick else args.scaling_runs
        rates = scaling(per_level, reps)
        print_scaling(rates, per_level, reps)
    command = " ".join(["python bench/bench_spatial.py", *(sys.argv[1:] if argv is None else argv)])
    results.write("bench_spatial", command, figures(cells, rates), out=args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
