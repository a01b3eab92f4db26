"""`make bench`: runs every benchmark script in bench/; each prints its figures and ratios.

`python bench/run.py rooms` runs only the scripts whose name contains "rooms".
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = (
    "bench_generation",
    "bench_tasks",
    "bench_rooms",
    "bench_spatial",
    "bench_receivers",
    "bench_trajectory",
    "bench_slow_tasks",
    "bench_scoring",
    "bench_eval",
    "bench_ray",
    "bench_adaptive",
    "bench_transforms",
    "bench_refusals",
    "bench_scale",
)  # bench_slow_tasks: times the git ref scale-baseline too (a full clone); bench_ray: needs the ray extra;
# bench_adaptive: 200 simulated runs per setting, 100 per failing-observer kind
# (about 1 h); bench_scale: a 1 M-item plan and a 100,000-item run on 2 workers (minutes on an idle 2-core machine)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    for name in BENCHES:
        path = HERE / f"{name}.py"
        if argv and not any(a in name for a in argv) or not path.exists():
            continue
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        saved, sys.argv = sys.argv, [str(path)]
        try:
            runpy.run_path(str(path), run_name="__main__")
        finally:
            sys.argv = saved
        print(f"   ({time.perf_counter() - t0:.0f} s)\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
