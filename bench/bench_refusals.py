"""How fast bad plans are refused, before anything is rendered (the tests only guard against a hang).

    python bench/bench_refusals.py            # median [min-max] of 5 runs, in ms

* ``capacity_error`` of the audiogram for 7 and 40 splits (more splits than a level has tuples);
* ``capacity_error`` of every registered task for three splits (the common case, answered per run);
* ``generation.run`` refusing a plan of 1e12 items (``task.items_per_level=1e12``) before its out exists,
  and, apart, composing and validating that config (Hydra), which is most of a refusal's wall time.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auralgen import generation  # noqa: E402
from auralgen.cli._hydra import compose  # noqa: E402
from auralgen.config import validate  # noqa: E402
from auralgen.core.errors import ParameterError  # noqa: E402
from auralgen.tasks.audiogram import Audiogram, AudiogramConfig  # noqa: E402
from auralgen.tasks.base import AudioConfig, load_tasks  # noqa: E402

RUNS = 5


def timed_ms(fn) -> str:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t0))
    return f"{statistics.median(times):.1f} [{min(times):.1f}-{max(times):.1f}] ms"


def huge_plan(out: Path):
    return validate(compose(["task=pitch_relative", "task.items_per_level=1e12", f"out={out}", "progress=false"]))


def refuse(run) -> None:
    try:
        generation.run(run, log=lambda *_: None)
    except ParameterError:
        return
    raise RuntimeError("a plan of 1e12 items was not refused")


def main() -> int:
    audiogram = Audiogram(AudiogramConfig(), AudioConfig())
    for n in (7, 40):
        splits = tuple(f"s{i}" for i in range(n))
        took = timed_ms(lambda s=splits: audiogram.design.capacity_error(s, "task"))
        print(f"audiogram capacity_error, {n} splits: {took}")
    tasks = [cls(cls.Config(), AudioConfig()) for cls in load_tasks().values()]
    three = ("train", "validation", "test")
    every = lambda: [t.design.capacity_error(three, "task") for t in tasks]  # noqa: E731
    print(f"capacity_error of all {len(tasks)} tasks, 3 splits: {timed_ms(every)}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "o"
        print(f"its config composed and validated (Hydra): {timed_ms(lambda: huge_plan(out))}")
        run = huge_plan(out)
        print(f"a plan of 1e12 items refused by generation.run: {timed_ms(lambda: refuse(run))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
