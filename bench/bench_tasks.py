"""Items per second on one core for every registered task.

One process renders, validates (measures the label), FLAC-encodes and writes ``n`` items of
each task at its default config, levels in turn, after a warm-up over every level (numba
caches loaded). Prints the median and the min-max of ``--runs`` repetitions against the
100 items/s/core target (tasks rendering a room or a moving source are exempt
and say so: their figure is reported, not judged).

    python bench/bench_tasks.py [--runs 3] [--n 100] [--tasks a,b] [--results PATH]

Every run writes its figures to ``bench/results/bench_tasks.json`` (``--results PATH``: elsewhere); the
docs render that file (the Benchmarks page, and the million-clip projection of the scale-out page).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen.tasks.base import load_tasks, task_class  # noqa: E402
from bench import results  # noqa: E402
from bench.bench_generation import items_per_second  # noqa: E402

TARGET_ITEMS_PER_S = 100.0  # no new task below this (room-rendered tasks exempt)


def exempt(name: str) -> bool:
    """Tasks that render a room (spatial tasks, reverberation) or a mixture of rendered sources."""
    cls = task_class(name)
    return bool(cls.spatial) or "reverb" in name or name in {"mixture", "multi_source_relation", "temporal_reorder"}


def measure(names: list[str], *, runs: int, n: int) -> list[dict]:
    rows = []
    for name in names:
        rates = sorted(items_per_second(name, validate=True, n=n) for _ in range(runs))
        med = statistics.median(rates)
        rows.append(
            {
                "task": name,
                "rates": rates,  # sorted; the results file's figure takes its median and spread from them
                "exempt": exempt(name),
                "ok": exempt(name) or med >= TARGET_ITEMS_PER_S,
            }
        )
        print(
            f"{name:<24} {med:>8.1f} items/s/core  [{rates[0]:.1f}-{rates[-1]:.1f}] over {runs} runs of {n}"
            f"  {'(exempt: room/mixture rendering)' if exempt(name) else f'{med / TARGET_ITEMS_PER_S:.2f}x target'}",
            flush=True,
        )
    return rows


def figures(rows: list[dict]) -> list[dict]:
    """The results file's figures: each task's items/s on one core, with the target where it applies."""
    return [
        results.figure(
            f"{r['task']}: items/s on one core",
            r["rates"],
            "items/s",
            target="" if r["exempt"] else f">= {TARGET_ITEMS_PER_S:.0f}",
            note="A task that renders a room, a moving source or a mixture is exempt from the target."
            if r["exempt"]
            else "",
        )
        for r in rows
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: every registered task)")
    ap.add_argument("--results", type=Path, default=None, help="where the figures go (default bench/results/)")
    args = ap.parse_args(argv)
    names = [t for t in args.tasks.split(",") if t] or load_tasks().names()
    print(f"target {TARGET_ITEMS_PER_S:.0f} items/s/core (validate=true, FLAC, default config, 1 process)")
    rows = measure(names, runs=args.runs, n=args.n)
    slow = [r["task"] for r in rows if not r["ok"]]
    print(f"below target: {', '.join(slow) if slow else 'none'}")
    command = " ".join(["python bench/bench_tasks.py", *(sys.argv[1:] if argv is None else argv)])
    results.write("bench_tasks", command, figures(rows), out=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
