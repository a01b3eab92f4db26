"""The audio-nuisance control per task at large n: train on seed 1, test on seed 0, one markdown table.

For each task (default: every task of the default suite) generates seeds 0 and 1 with at least ``--n``
items (``items_per_level`` raised from the suite's own, never lowered; a seed whose directory already
holds a ``manifest.json`` is reused), then runs the learned controls
(:func:`auralgen.validation.controls.task_controls`, the same code as ``auralgen audit --controls``)
and prints one row per task:

=================  ===========================================================================
n                  test items (seed 0); the training set (seed 1) has as many
honest chance      the best of the answer-text prior, the position prior and ``1/options``
audio [95 % CI]    the audio-nuisance control's accuracy (kNN on level, loudness and timing
                   facts per clip and part, declared cues left out) with its Wilson interval
excess             audio minus honest chance (percentage points)
MDE                the smallest excess the flagging rule detects with 80 % power at this n
verdict            ``clean``: not flagged (Holm over the task's five controls, chance + 2 pp);
                   ``FLAG``: flagged; ``too few items`` below 200
declared           the nuisance features the task declares as its cue (left out)
=================  ===========================================================================

Run ``python bench/nuisance_table.py [--n 1000] [--tasks a,b] [--out data/nuisance] [--workers 2]
[--results bench/results/nuisance_table.md]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import platform
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen.cli._hydra import compose  # noqa: E402
from auralgen.config import build_tasks, validate  # noqa: E402
from auralgen.generation.run import run  # noqa: E402
from auralgen.validation.controls import ControlsReport, samples, task_controls  # noqa: E402
from auralgen.validation.nuisance import declared  # noqa: E402


def overrides_for(n: int, tasks: list[str] | None) -> list[str]:
    """Default-suite overrides: only ``tasks`` (all when None), each raised to at least ``n`` items."""
    suite = build_tasks(validate(compose(["progress=false"])))
    out = [f"~tasks.{name}" for name in suite if tasks is not None and name not in tasks]
    for name, task in suite.items():
        if tasks is not None and name not in tasks:
            continue
        have = task.design.n_items()
        if have < n:
            out.append(f"tasks.{name}.items_per_level={math.ceil(task.cfg.items_per_level * n / have)}")
    return out


def _pct(v: float) -> str:
    return f"{100 * v:.1f}"


def table(rows: list[dict], flags: list[dict]) -> str:
    """The markdown table of ``rows`` (:func:`task_controls` rows) and the report's ``flags``."""
    flagged = {(f["task"], f["detail"].split(" ", 1)[0]) for f in flags}
    head = ["task", "n", "honest chance", "audio [95 % CI]", "excess (pp)", "MDE", "verdict", "declared cue"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        c = r["controls"]["nuisance"]
        verdict = (
            "too few items"
            if r["status"] == "too few items"
            else ("FLAG" if (r["task"], "nuisance") in flagged else "clean")
        )
        cue = ", ".join(sorted(declared(r["task"]))) or "–"
        lines.append(
            f"| {r['task']} | {r['n']} | {_pct(r['honest_chance'])} | {_pct(c['accuracy'])} "
            f"[{_pct(c['ci'][0])}, {_pct(c['ci'][1])}] | {100 * (c['accuracy'] - r['honest_chance']):+.1f} | "
            f"{_pct(r['mde'])} | {verdict} | {cue} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="items per task and seed (at least)")
    parser.add_argument("--tasks", default=None, help="comma-separated task names (default: the default suite's)")
    parser.add_argument("--out", default="data/nuisance", help="where the two seeds are written")
    parser.add_argument("--workers", default="2", help="generation workers (the output does not depend on it)")
    parser.add_argument("--results", default=None, help="also write the command, date, timings and table here")
    args = parser.parse_args(argv)
    tasks = args.tasks.split(",") if args.tasks else None
    extra = overrides_for(args.n, tasks)
    dirs, timings = [], []
    for seed in (0, 1):
        out = Path(args.out) / f"seed{seed}"
        dirs.append(out)
        if (out / "manifest.json").exists():
            timings.append(f"seed {seed}: {out} reused")
            continue
        t0 = time.perf_counter()
        cfg = validate(compose([*extra, f"seed={seed}", f"out={out}", f"workers={args.workers}", "progress=false"]))
        run(cfg, log=lambda *_: None)
        timings.append(f"seed {seed}: generated in {time.perf_counter() - t0:.0f} s")
        print(timings[-1], flush=True)
    t0 = time.perf_counter()
    test, train = samples(dirs[0]), samples(dirs[1])
    by_task = defaultdict(list)
    for s in train:
        by_task[s.task].append(s)
    report = ControlsReport(str(dirs[1]), str(dirs[0]))
    rows = [
        task_controls(name, by_task[name], [s for s in test if s.task == name], report)
        for name in sorted({s.task for s in test})
        if by_task.get(name)
    ]
    timings.append(f"controls: {len(test)} test items in {time.perf_counter() - t0:.0f} s")
    out = table(rows, report.flags)
    print(out)
    print("\n".join(timings))
    if args.results:
        command = shlex.join(["python", "bench/nuisance_table.py", *(argv if argv is not None else sys.argv[1:])])
        stamp = (
            f"Measured by `{command}` on {dt.date.today().isoformat()} ({os.cpu_count()} cores, "
            f"Python {platform.python_version()}); {'; '.join(timings)}."
        )
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(f"{stamp}\n\n{out}\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
