"""Where one task's item time goes: wall time per item of named functions, in one process.

Renders ``N`` items of ``TASK`` as ``bench/bench_slow_tasks.py`` times them (validation on, FLAC, a
parquet shard, one thread, a warm-up of two items per level first), with each named function wrapped
by a timer. Each line is that function's inclusive time per item and its calls per item; nested
functions count in both (``render`` includes ``spatial_rir``). A name is ``module:attribute``, the
attribute a function or ``Class.method`` of that module; the wrapper replaces the attribute in the
module and in every loaded module that imported it by name.

    python bench/stage_times.py trajectory 80 auralgen.rooms._moving:early_moving \\
        auralgen.rooms._moving:add_late auralgen.export.audio:encode_flac

Prints ``total <ms> ms/item`` and one line per name, largest first.
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen.export.parquet import ShardWriter  # noqa: E402
from auralgen.generation.item import Renderer  # noqa: E402
from auralgen.generation.plan import ItemSpec  # noqa: E402
from auralgen.generation.run import tune_allocator  # noqa: E402
from auralgen.generation.threads import one_blas_thread  # noqa: E402
from tests.support.builders import small_run  # noqa: E402


def fail(message: str) -> None:
    """One line on stderr naming what is wrong and what is allowed; exit code 2."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def wrap(name: str, seconds: collections.Counter, calls: collections.Counter) -> None:
    """Replace the function ``module:attribute`` by a timer that adds into ``seconds`` and ``calls``."""
    module_name, _, attr = name.partition(":")
    try:
        owner = importlib.import_module(module_name)
        *path, leaf = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        func = getattr(owner, leaf)
    except (ImportError, AttributeError, ValueError) as exc:
        fail(f"{name!r}: not a function ({exc}); allowed: module:function or module:Class.method")

    @functools.wraps(func)
    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            seconds[name] += time.perf_counter() - t0
            calls[name] += 1

    setattr(owner, leaf, timed)
    if not path:  # modules that imported the function by name call their own reference
        for module in list(sys.modules.values()):
            if module is not None and getattr(module, "__dict__", {}).get(leaf) is func:
                setattr(module, leaf, timed)


def render_items(renderer: Renderer, task: str, n: int, levels: int, *, first: int, out: Path) -> None:
    """``n`` items of ``task`` rendered (seeds ``first``...) and written to a parquet shard at ``out``."""
    writer = ShardWriter(out)
    for i in range(n):
        res = renderer(ItemSpec(task, "test", first + i, i % levels))
        if res["row"] is not None:
            writer.add(res["row"])
    writer.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task")
    ap.add_argument("n", type=int, help="items timed (after the warm-up)")
    ap.add_argument("names", nargs="*", help="functions to time, module:function or module:Class.method")
    args = ap.parse_args(argv)
    if args.n < 1:
        fail(f"n={args.n}; allowed: >= 1")
    tune_allocator()
    one_blas_thread()
    renderer = Renderer(small_run(f"task={args.task}", validate="true"))
    owner = renderer.tasks[args.task]
    levels = getattr(owner, "design", owner).n_levels()
    seconds: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        render_items(renderer, args.task, 2 * levels, levels, first=10_000, out=Path(tmp) / "warm.parquet")
        for name in args.names:
            wrap(name, seconds, calls)
        t0 = time.perf_counter()
        render_items(renderer, args.task, args.n, levels, first=0, out=Path(tmp) / "timed.parquet")
        total = time.perf_counter() - t0
    print(f"total {total / args.n * 1e3:.2f} ms/item")
    for name, s in seconds.most_common():
        print(f"{s / args.n * 1e3:8.2f} ms/item {calls[name] / args.n:6.2f} calls/item  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
