"""The learned controls on the default suite: train on seed 0, test on seed 1, print the per-task table.

Generates the default suite twice (seeds 0 and 1) with every task raised to at least
``MIN_ITEMS`` (200) items -- ``items_per_level`` scaled up from the suite's own, never down --
then runs :func:`~auralgen.validation.controls.audit_controls` and prints its table and timings.
A seed whose directory already holds a ``manifest.json`` is not generated again.

Run: ``.venv/bin/python bench/bench_controls.py [--out data/controls] [--workers 2] [--quick]``
(``--quick``: the suite's own sizes, a few minutes less, every task "too few items").
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from auralgen.cli._hydra import compose
from auralgen.config import build_tasks, validate
from auralgen.generation.run import run
from auralgen.validation.controls import MIN_ITEMS, audit_controls


def overrides_for(min_items: int) -> list[str]:
    """``tasks.<name>.items_per_level=...`` raising every default-suite task to ``min_items`` items."""
    tasks = build_tasks(validate(compose(["progress=false"])))
    out = []
    for name, task in tasks.items():
        n = task.design.n_items()
        per = task.cfg.items_per_level
        if n < min_items:
            out.append(f"tasks.{name}.items_per_level={math.ceil(per * min_items / n)}")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="data/controls", help="where the two seeds are written")
    parser.add_argument("--workers", default="1", help="generation workers (the output does not depend on it)")
    parser.add_argument("--quick", action="store_true", help="the default suite's own sizes")
    args = parser.parse_args(argv)
    extra = [] if args.quick else overrides_for(MIN_ITEMS)
    print("overrides:", " ".join(extra) or "(none)", flush=True)
    dirs = []
    for seed in (0, 1):
        out = Path(args.out) / f"seed{seed}"
        dirs.append(out)
        if (out / "manifest.json").exists():
            print(f"seed {seed}: {out} exists, reused", flush=True)
            continue
        t0 = time.perf_counter()
        cfg = validate(compose([*extra, f"seed={seed}", f"out={out}", f"workers={args.workers}", "progress=false"]))
        run(cfg, log=lambda *_: None)
        print(f"seed {seed}: generated {out} in {time.perf_counter() - t0:.0f} s", flush=True)
    t0 = time.perf_counter()
    report = audit_controls(*dirs)
    print(report.table())
    print(f"controls: {sum(t['n'] for t in report.tasks)} test items in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
