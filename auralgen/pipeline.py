"""plan -> shards -> render -> validate -> export. No task-specific code lives here.

Determinism: every item draws from :func:`auralgen.random.item_rng` keyed by
``(seed, split, task, index)``; workers only render, the main process writes rows in
plan order. So the output is byte-identical for any number of workers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import multiprocessing as mp
import os
import shutil
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auralgen import __version__
from auralgen.config import RUNTIME_KEYS, RunConfig
from auralgen.errors import AuralgenError, ParameterError
from auralgen.export.audio import encode_flac
from auralgen.export.parquet import ShardWriter, sha256_file, shard_name
from auralgen.qa import answer_slot
from auralgen.random import item_rng, owner  # noqa: F401  (owner: re-exported)
from auralgen.tasks.base import Task, task_class

JOURNAL = ".auralgen-journal.json"
OWNED = ("data", "README.md", "manifest.json", "validation_report.json", JOURNAL)
MAX_AHEAD_PER_WORKER = 32  # rendered rows allowed to queue for the writer, per worker


@dataclass(frozen=True)
class ItemSpec:
    task: str
    split: str
    index: int
    level: int
    k: int = 0  # position of the item within its level


@dataclass(frozen=True)
class ShardPlan:
    path: str
    task: str
    split: str
    items: tuple[ItemSpec, ...]


def build_tasks(run: RunConfig) -> dict[str, Task]:
    return {tc.name: task_class(tc.name)(tc, run.audio) for tc in run.tasks}


def plan(run: RunConfig, tasks: dict[str, Task]) -> list[ShardPlan]:
    """Every item of the run, grouped into shards. Nothing random happens here."""
    shards = []
    for name, task in tasks.items():
        for split in run.splits:
            specs, index = [], 0
            for level in range(task.n_levels()):
                for k in range(task.items_at(level)):
                    specs.append(ItemSpec(name, split, index, level, k))
                    index += 1
            n = max(1, math.ceil(len(specs) / run.shard_size))
            for i in range(n):
                chunk = tuple(specs[i * run.shard_size : (i + 1) * run.shard_size])
                shards.append(ShardPlan(shard_name(name, split, i, n), name, split, chunk))
    return shards


def check_capacity(run: RunConfig, tasks: dict[str, Task]) -> None:
    """Refuse, before any rendering, a plan whose items cannot all find a parameter tuple of their split."""
    for name, task in tasks.items():
        key = "task" if len(run.tasks) == 1 and run.suite == name else f"tasks.{name}"
        problem = task.capacity_error(run.splits, key)
        if problem:
            raise ParameterError(problem)


def item_id(seed: int, spec: ItemSpec) -> str:
    """Opaque id: a hash of the item's coordinates, carrying no parameter value or answer."""
    return hashlib.sha256(f"{seed}/{spec.split}/{spec.task}/{spec.index}".encode()).hexdigest()[:20]


def worst_error(measured: dict[str, Any]) -> float:
    """Largest |measured - expected| over a check's records (0 if it has none)."""
    worst = 0.0
    for rec in measured.values():
        if isinstance(rec, dict) and isinstance(rec.get("measured"), (int, float)) and "expected" in rec:
            worst = max(worst, abs(rec["measured"] - rec["expected"]))
    return worst


class Renderer:
    """Renders one item from its spec; lives in each worker process."""

    def __init__(self, run: RunConfig):
        self.run = run
        self.tasks = build_tasks(run)

    def sample_owned(self, task: Task, rng, spec: ItemSpec) -> dict[str, Any]:
        # the task finds a parameter tuple owned by the item's split (see Task.sample_owned)
        return task.sample_owned(rng, spec.level, spec.k, spec.split, self.run.splits)

    def __call__(self, spec: ItemSpec) -> dict[str, Any]:
        t0 = time.perf_counter()
        task = self.tasks[spec.task]
        rng = item_rng(self.run.seed, spec.split, spec.task, spec.index)
        resampled, reason = 0, None
        for attempt in range(self.run.max_resample + 1):
            params = self.sample_owned(task, rng, spec)
            clips = task.render(params)
            measured = task.check(params, clips) if self.run.validate else {}
            if not self.run.validate or measured["valid"]:
                reason = None
                break
            resampled += attempt < self.run.max_resample
            reason = "label not supported by measurement: " + json.dumps(
                {k: v for k, v in measured.items() if k != "valid"}, sort_keys=True
            )
        stat = {"task": spec.task, "split": spec.split, "level": spec.level, "level_value": task.level_value(spec.level),
                "resampled": resampled, "dropped": reason, "worst_error": worst_error(measured) if measured else 0.0}  # fmt: skip
        if reason is not None:
            return {"row": None, "stat": stat, "seconds": time.perf_counter() - t0}
        slot = answer_slot(self.run.seed, spec.split, spec.task, spec.index, task.n_choices)
        qa = task.qa(params, rng, slot=slot)
        attribute, regime, unit = task.level_info(spec.level)
        iid = item_id(self.run.seed, spec)
        sr = int(params.get("sample_rate_hz", task.sample_rate))
        row = {
            "id": iid, "task": spec.task, "category": task.category, "sub_category": task.sub_category,
            "attribute": attribute, "regime": regime, "level": spec.level, "level_value": task.level_value(spec.level),
            "level_unit": unit, "question": qa.question, "options": list(qa.options), "answer": qa.answer,
            "answer_index": qa.answer_index,
            "audio": [{"bytes": encode_flac(c, sr, bits=self.run.export.flac_bits), "path": f"{iid}-{k}.flac"}
                      for k, c in enumerate(clips)],
            "sampling_rate": sr, "num_channels": int(clips[0].shape[0]), "channel_layout": task.channel_layout(params),
            "params": json.dumps(params, sort_keys=True), "measured": json.dumps(measured, sort_keys=True),
            "valid": bool(measured.get("valid", True)) if self.run.validate else True,
            "seed": self.run.seed, "split": spec.split, "generator_version": __version__,
        }  # fmt: skip
        return {"row": row, "stat": stat, "seconds": time.perf_counter() - t0}


_WORKER: Renderer | None = None


def _init_worker(run: RunConfig) -> None:
    global _WORKER
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    _WORKER = Renderer(run)


def _render_in_worker(spec: ItemSpec) -> dict[str, Any]:
    return _WORKER(spec)  # type: ignore[misc]


def config_record(run: RunConfig) -> dict[str, Any]:
    """The resolved config as written to the manifest (runtime-only keys left out)."""
    d = dataclasses.asdict(run)
    for k in RUNTIME_KEYS:
        d.pop(k, None)
    return d


def fingerprint(run: RunConfig) -> str:
    blob = json.dumps({"config": config_record(run), "version": __version__}, sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": ".".join(map(str, sys.version_info[:3])), "auralgen": __version__}
    for pkg in ("numpy", "scipy", "numba", "soundfile", "pyloudnorm", "pyroomacoustics", "datasets", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out


def prepare_out(run: RunConfig, fp: str) -> dict[str, Any]:
    """Check ``out`` and load the resume journal. Raises before anything is written."""
    out = Path(run.out)
    if out.exists() and not out.is_dir():
        raise ParameterError(f"out={run.out!r} is a file; allowed: a directory path")
    journal = {"fingerprint": fp, "shards": {}}
    if not out.exists():
        return journal
    prior = None
    for name in (JOURNAL, "manifest.json"):  # the journal (kept after completion) holds per-item stats
        if (out / name).exists():
            try:
                prior = json.loads((out / name).read_text())
            except (OSError, json.JSONDecodeError):
                prior = {"fingerprint": None}
            break
    foreign = [p.name for p in out.iterdir() if p.name not in OWNED]
    if run.overwrite:
        for name in OWNED:
            target = out / name
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        return journal
    if prior is None:
        if foreign or any(out.iterdir()):
            raise ParameterError(
                f"out={run.out!r} exists and is not an auralgen dataset; allowed: an empty or new directory, or overwrite=true"
            )
        return journal
    if prior.get("fingerprint") != fp:
        raise ParameterError(
            f"out={run.out!r} holds a dataset made from another config; allowed: a new out directory or overwrite=true"
        )
    if "shards" in prior and isinstance(prior["shards"], dict):
        journal["shards"] = prior["shards"]
    elif "shards" in prior:  # a finished manifest: list of shard records
        journal["shards"] = {s["path"]: s for s in prior["shards"]}
    return journal


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=list) + "\n")
    os.replace(tmp, path)


def run(run_cfg: RunConfig, *, log=print) -> dict[str, Any]:
    """Generate the dataset described by ``run_cfg`` into ``run_cfg.out``; returns the manifest."""
    from tqdm import tqdm

    from auralgen.export.card import write_card
    from auralgen.reporting import summarise, summary_table

    tasks = build_tasks(run_cfg)
    check_capacity(run_cfg, tasks)
    shards = plan(run_cfg, tasks)
    fp = fingerprint(run_cfg)
    journal = prepare_out(run_cfg, fp)
    out = Path(run_cfg.out)
    out.mkdir(parents=True, exist_ok=True)

    todo = []
    for sh in shards:
        rec = journal["shards"].get(sh.path)
        if rec and (out / sh.path).exists() and sha256_file(out / sh.path) == rec["sha256"]:
            continue
        journal["shards"].pop(sh.path, None)
        todo.append(sh)
    n_todo = sum(len(sh.items) for sh in todo)
    skipped = len(shards) - len(todo)
    if skipped:
        log(f"resuming: {skipped} of {len(shards)} shards already complete")

    t0 = time.perf_counter()
    seconds: dict[str, float] = defaultdict(float)
    workers = min(run_cfg.workers, max(1, n_todo))
    # backpressure: the pool's feeder thread takes a spec only when fewer than MAX_AHEAD rows
    # wait for the writer, so memory stays bounded however far the workers run ahead
    ahead = threading.BoundedSemaphore(MAX_AHEAD_PER_WORKER * workers)

    def feed():
        for sh in todo:
            for spec in sh.items:
                ahead.acquire()
                yield spec

    specs = feed()
    pool = None
    if workers > 1:
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        pool = ctx.Pool(workers, initializer=_init_worker, initargs=(run_cfg,))
        results = pool.imap(_render_in_worker, specs, chunksize=4)
    else:
        renderer = Renderer(run_cfg)
        results = map(renderer, specs)
    bar = tqdm(total=n_todo, unit="item", disable=not run_cfg.progress, file=sys.stderr, dynamic_ncols=True)
    writer = None
    try:
        for sh in todo:
            writer = ShardWriter(out / sh.path)
            stats = []
            for _ in sh.items:
                res = next(results)
                ahead.release()
                seconds[res["stat"]["task"]] += res["seconds"]
                stats.append(res["stat"])
                if res["row"] is not None:
                    writer.add(res["row"])
                bar.update(1)
            digest, rows = writer.close()
            writer = None
            journal["shards"][sh.path] = {"path": sh.path, "task": sh.task, "split": sh.split, "rows": rows,
                                          "sha256": digest, "items": stats}  # fmt: skip
            _write_json(out / JOURNAL, journal)
    except BaseException:
        if writer is not None:
            writer.abort()
        if pool is not None:
            pool.terminate()
        raise
    finally:
        bar.close()
    if pool is not None:
        pool.close()
        pool.join()
    wall = time.perf_counter() - t0

    records = [journal["shards"][sh.path] for sh in shards]
    report = summarise(records, tasks)
    _write_json(out / "validation_report.json", report)
    write_card(out, run_cfg, tasks, records)
    manifest = {
        "fingerprint": fp,
        "generator_version": __version__,
        "seed": run_cfg.seed,
        "splits": list(run_cfg.splits),
        "config": config_record(run_cfg),
        "versions": versions(),
        "shards": [{k: r[k] for k in ("path", "task", "split", "rows", "sha256")} for r in records],
        "items": report["totals"],
    }
    _write_json(out / "manifest.json", manifest)  # written last: its presence marks a complete dataset
    log(summary_table(report, seconds, wall, n_todo))
    log(f"wrote {sum(r['rows'] for r in records)} items in {len(records)} shards to {out.resolve()}")
    return manifest


__all__ = ["AuralgenError", "ItemSpec", "ShardPlan", "plan", "run", "Renderer", "owner", "item_id"]
