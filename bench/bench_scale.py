"""Generation at scale: a million-item plan, its journal and manifest; a large tone run's speed and memory.

``python bench/bench_scale.py`` prints

- **plan**: for a 1,000,000-item plan (``pitch_relative``, 1000 items per shard), the seconds to plan it
  (capacity check, count, shards), to build every item's spec once (what the workers are sent), to
  write the journal after each of the 1000 shards (with per-level records, as a run does) and the
  manifest; the journal's final size; the peak resident memory of that process (target: < 10 s to
  plan, < 1 GB);
- **run** (``--run N``, default 100,000; ``--run 0`` skips it): items/s of an ``N``-item
  ``loudness_relative`` run on 2 workers and its peak memory (PSS of the whole process tree, polled),
  in the first and in the second half of the run: flat memory means the two agree.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PLAN_ITEMS = 1_000_000
TARGET_PLAN_S = 10.0
TARGET_PLAN_MB = 1000.0


def plan_figures(n_items: int, *, shard_size: int = 1000, out: str = "data/bench-scale-plan") -> dict:
    """Seconds and sizes of planning ``n_items`` items (pitch_relative, 7.5 items per ``items_per_level``),
    building every spec, and writing the journal after each shard and the manifest (into a temporary folder)."""
    from auralgen.config import build_tasks, fingerprint
    from auralgen.export.manifest import JournalText, write_json, write_text
    from auralgen.generation.run import checked_plan
    from auralgen.generation.summary import shard_levels, summarise
    from tests.support.builders import small_run

    probe = small_run("task=pitch_relative", "task.items_per_level=1000", out=out, shard_size=shard_size)
    per_1000 = sum(t.design.n_items() for t in build_tasks(probe).values())
    per_level = -(-n_items * 1000 // per_1000)
    run = small_run("task=pitch_relative", f"task.items_per_level={per_level}", out=out, shard_size=shard_size)
    tasks = build_tasks(run)
    t0 = time.perf_counter()
    shards = checked_plan(run, tasks)
    t_plan = time.perf_counter() - t0
    t0 = time.perf_counter()
    records = []
    for sh in shards:  # every spec once, and the shard's journal record from per-item stats as a run makes them
        stats = [
            {
                "task": s.task,
                "split": s.split,
                "level": s.level,
                "level_value": 0.0,
                "resampled": 0,
                "redraws": {},
                "dropped": None,
                "worst_error": 0.0,
            }
            for s in sh.items
        ]
        records.append(
            {
                "path": sh.path,
                "task": sh.task,
                "split": sh.split,
                "rows": len(stats),
                "sha256": "0" * 64,
                "levels": shard_levels(stats),
            }
        )
    t_specs = time.perf_counter() - t0
    journal = {"fingerprint": fingerprint(run), "shards": {}, "files": sorted(sh.path for sh in shards)}
    with tempfile.TemporaryDirectory() as tmp:
        t0, text = time.perf_counter(), JournalText()
        for rec in records:  # as generation.run does after each shard
            journal["shards"][rec["path"]] = rec
            write_text(Path(tmp) / "journal.json", text(journal))
        t_journal = time.perf_counter() - t0
        journal_mb = (Path(tmp) / "journal.json").stat().st_size / 1e6
        t0 = time.perf_counter()
        report = summarise(records, tasks)
        manifest = {
            "shards": [{k: r[k] for k in ("path", "task", "split", "rows", "sha256")} for r in records],
            "items": report["totals"],
        }
        write_json(Path(tmp) / "manifest.json", manifest)
        t_manifest = time.perf_counter() - t0
    items = sum(len(sh.items) for sh in shards)
    return {
        "items": items,
        "shards": len(shards),
        "plan_s": t_plan,
        "specs_s": t_specs,
        "journal_s": t_journal,
        "journal_mb": journal_mb,
        "manifest_s": t_manifest,
        "report_items": report["totals"]["items"],
    }


def run_figures(n_items: int) -> dict:
    """items/s and peak tree PSS (first half, second half) of an ``n_items`` loudness_relative run on 2 workers."""
    from bench.bench_generation import _tree_rss_mb

    per_level = -(-n_items // 6)  # loudness_relative: 6 levels
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "task=loudness_relative",
            f"task.items_per_level={per_level}",
            f"out={tmp}/run",
            "workers=2",
            "validate=false",
            "shard_size=1000",
            "progress=false",
        ]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "generate.py"), *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        samples = []
        while proc.poll() is None:
            samples.append((time.perf_counter() - t0, _tree_rss_mb(proc.pid)))
            time.sleep(0.5)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode()[-300:]
    half = [mb for t, mb in samples if t < wall / 2] or [0.0]
    rest = [mb for t, mb in samples if t >= wall / 2] or [0.0]
    return {
        "items": 6 * per_level,
        "exit": proc.returncode,
        "items_per_s": 6 * per_level / wall,
        "wall_s": wall,
        "peak_first_half_mb": max(half),
        "peak_second_half_mb": max(rest),
        "stderr": err,
    }


def _plan_child() -> None:
    figures = plan_figures(PLAN_ITEMS)
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))


def main(argv: list[str]) -> None:
    if "--plan-child" in argv:
        _plan_child()
        return
    n_run = int(argv[argv.index("--run") + 1]) if "--run" in argv else 100_000
    out = subprocess.run([sys.executable, __file__, "--plan-child"], capture_output=True, text=True, timeout=600)
    p = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"plan of {p['items']:,} items in {p['shards']} shards: plan {p['plan_s']:.2f} s (target < "
        f"{TARGET_PLAN_S:.0f}), "
        f"every spec built {p['specs_s']:.1f} s, journal written after each shard {p['journal_s']:.1f} s in all "
        f"(final {p['journal_mb']:.2f} MB), manifest {p['manifest_s']:.2f} s; "
        f"peak RSS {p['peak_rss_mb']:.0f} MB (target < {TARGET_PLAN_MB:.0f})"
    )
    if n_run:
        r = run_figures(n_run)
        print(
            f"run of {r['items']:,} loudness_relative items on 2 workers (validate=false): exit {r['exit']}, "
            f"{r['items_per_s']:.0f} items/s ({r['wall_s']:.0f} s); peak PSS {r['peak_first_half_mb']:.0f} MB in the "
            f"first half, {r['peak_second_half_mb']:.0f} MB in the "
            "second" + (f"; stderr: {r['stderr']}" if r["exit"] else "")
        )


if __name__ == "__main__":
    main(sys.argv[1:])
