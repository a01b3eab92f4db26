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
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auralgen import __version__
from auralgen.config import RUNTIME_KEYS, RunConfig
from auralgen.core.schema import Row
from auralgen.errors import AuralgenError, ParameterError
from auralgen.export.audio import encode_flac
from auralgen.export.parquet import ShardWriter, sha256_file, shard_name
from auralgen.qa import answer_slot
from auralgen.random import item_rng, owner  # noqa: F401  (owner: re-exported)
from auralgen.tasks.base import Task, task_class

JOURNAL = ".auralgen-journal.json"
ERROR_LOG = ".auralgen-error.log"
FIXED_FILES = ("README.md", "manifest.json", "validation_report.json", JOURNAL, ERROR_LOG)  # besides the shards
MAX_AHEAD_PER_WORKER = 32  # rendered rows allowed to queue for the writer, per worker
BATCH = 4  # items per work unit sent to a worker
MAX_PLAN_ITEMS = 10_000_000  # items one run may plan (a typo such as items_per_level=1e12 is refused)


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
        row = Row(
            id=iid, task=spec.task, category=task.category, sub_category=task.sub_category,
            attribute=attribute, regime=regime, level=spec.level, level_value=task.level_value(spec.level),
            level_unit=unit, question=qa.question, options=list(qa.options), answer=qa.answer,
            answer_index=qa.answer_index,
            audio=[{"bytes": encode_flac(c, sr, bits=self.run.export.flac_bits), "path": f"{iid}-{k}.flac"}
                   for k, c in enumerate(clips)],
            sampling_rate=sr, num_channels=int(clips[0].shape[0]), channel_layout=task.channel_layout(params),
            params=json.dumps(params, sort_keys=True), measured=json.dumps(measured, sort_keys=True),
            valid=bool(measured.get("valid", True)) if self.run.validate else True,
            seed=self.run.seed, split=spec.split, generator_version=__version__,
        ).to_record()  # fmt: skip
        return {"row": row, "stat": stat, "seconds": time.perf_counter() - t0}


_WORKER: Renderer | None = None


class ItemError(Exception):
    """An item failed while rendering: names the item (task, split, index, level) and the cause.

    ``bad_input`` tells a user's bad input (an :class:`AuralgenError`, exit code 2) from an internal
    error (exit code 1); ``trace`` holds the worker's traceback for the error log.
    """

    def __init__(self, task: str, split: str, index: int, level: int, cause: str, bad_input: bool, trace: str = ""):
        super().__init__(task, split, index, level, cause, bad_input, trace)
        self.task, self.split, self.index, self.level = task, split, index, level
        self.cause, self.bad_input, self.trace = cause, bad_input, trace

    @classmethod
    def of(cls, spec: ItemSpec, exc: BaseException) -> ItemError:
        import traceback

        text = " ".join(str(exc).split()) or type(exc).__name__
        cause = text if isinstance(exc, AuralgenError) else f"{type(exc).__name__}: {text}"
        trace = "".join(traceback.format_exception(exc))
        return cls(spec.task, spec.split, spec.index, spec.level, cause, isinstance(exc, AuralgenError), trace)

    def __str__(self) -> str:
        where = f"task={self.task} split={self.split} index={self.index} (level {self.level})"
        kind = "" if self.bad_input else "internal error "
        return f"item {where} failed: {kind}{self.cause}"


def _init_worker(run: RunConfig) -> None:
    global _WORKER
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    _WORKER = Renderer(run)


def _render_batch(specs: tuple[ItemSpec, ...]) -> list[dict[str, Any]]:
    """Render a batch of items in a worker; an error comes back as :class:`ItemError` naming the item."""
    out = []
    for spec in specs:
        try:
            out.append(_WORKER(spec))  # type: ignore[misc]
        except Exception as exc:
            raise ItemError.of(spec, exc) from None
    return out


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


def _recorded(prior: dict[str, Any]) -> set[str]:
    """Paths (relative to ``out``) a previous auralgen run recorded as its own in its journal or manifest."""
    files = set(FIXED_FILES)
    files.update(p for p in prior.get("files") or () if isinstance(p, str))
    shards = prior.get("shards") or {}
    files.update(shards if isinstance(shards, dict) else (s.get("path") for s in shards if isinstance(s, dict)))
    files.update([f + ".tmp" for f in files if isinstance(f, str)])
    return {f for f in files if isinstance(f, str)}


def _foreign(out: Path, recorded: set[str]) -> list[str]:
    """Entries under ``out`` that are neither recorded files nor folders holding recorded files."""
    parents = {p.as_posix() for f in recorded for p in Path(f).parents if p != Path(".")}
    found = []
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if rel in recorded and not p.is_dir():
            continue
        if rel in parents and p.is_dir() and not p.is_symlink():
            continue
        found.append(rel)
    return found


def _read_prior(out: Path) -> dict[str, Any] | None:
    """The journal (kept after completion, with per-item stats) or manifest of a previous run, if any."""
    for name in (JOURNAL, "manifest.json"):
        if (out / name).exists():
            try:
                prior = json.loads((out / name).read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                return None
            return prior if isinstance(prior, dict) and "fingerprint" in prior else None
    return None


def _remove_recorded(out: Path, recorded: set[str]) -> None:
    """Delete the recorded files, then the folders they leave empty; nothing else."""
    for rel in sorted(recorded):
        target = out / rel
        if target.is_file() or target.is_symlink():
            target.unlink()
    folders = {p for rel in recorded for p in Path(rel).parents if p != Path(".")}
    for folder in sorted(folders, key=lambda f: -len(f.parts)):
        if (out / folder).is_dir() and not any((out / folder).iterdir()):
            (out / folder).rmdir()


def prepare_out(run: RunConfig, fp: str) -> dict[str, Any]:
    """Check ``out`` and load the resume journal. Raises before anything is written.

    ``overwrite=true`` removes only the files a previous auralgen run recorded in its journal or
    manifest; a folder holding anything else is refused."""
    out = Path(run.out)
    if out.exists() and not out.is_dir():
        raise ParameterError(f"out={run.out!r} is a file; allowed: a directory path")
    journal: dict[str, Any] = {"fingerprint": fp, "shards": {}}
    if not out.exists() or not any(out.iterdir()):
        return journal
    prior = _read_prior(out)
    if prior is None:
        first = sorted(p.name for p in out.iterdir())[0]
        raise ParameterError(
            f"out={run.out!r} exists and is not an auralgen dataset (it holds {first!r}); allowed: an empty or new directory"
        )
    if run.overwrite:
        recorded = _recorded(prior)
        foreign = _foreign(out, recorded)
        if foreign:
            raise ParameterError(
                f"out={run.out!r} overwrite=true: it holds {foreign[0]!r}, which no auralgen run recorded ({len(foreign)} such entries); allowed: a directory holding only an auralgen dataset, or a new out"
            )
        _remove_recorded(out, recorded)
        return journal
    if prior.get("fingerprint") != fp:
        raise ParameterError(
            f"out={run.out!r} holds a dataset made from another config; allowed: the same config (to resume), a new out directory, or overwrite=true"
        )
    if isinstance(prior.get("shards"), dict):
        journal["shards"] = prior["shards"]
    elif isinstance(prior.get("shards"), list):  # a finished manifest: list of shard records
        journal["shards"] = {s["path"]: s for s in prior["shards"]}
    return journal


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=list) + "\n")
    os.replace(tmp, path)


def count_items(run: RunConfig, tasks: dict[str, Task]) -> int:
    """Items the plan will hold, counted without building it; refuses more than :data:`MAX_PLAN_ITEMS`."""
    total = 0
    for name, task in tasks.items():
        n = sum(task.items_at(level) for level in range(task.n_levels())) * len(run.splits)
        total += n
        if total > MAX_PLAN_ITEMS:
            key = "task" if run.suite == name and len(run.tasks) == 1 else f"tasks.{name}"
            per = task.cfg.items_per_level
            raise ParameterError(
                f"{key}.items_per_level={per} makes a plan of {total:.4g} items ({task.n_levels()} levels x {len(run.splits)} splits); allowed: at most {MAX_PLAN_ITEMS} items per run"
            )
    return total


def _nearest_existing(path: Path) -> Path:
    while path != path.parent:
        try:
            if path.exists():
                return path
        except OSError:  # a name too long to even look up
            pass
        path = path.parent
    return path


def check_out_path(run: RunConfig, shards: list[ShardPlan]) -> None:
    """Refuse an ``out`` that cannot be written or whose longest file path the system cannot hold."""
    import tempfile

    out = Path(run.out).absolute()
    base = _nearest_existing(out)
    longest = max([sh.path + ".tmp" for sh in shards] + [JOURNAL + ".tmp"], key=len)
    name_max, path_max = 255, 4096
    try:
        name_max, path_max = os.pathconf(base, "PC_NAME_MAX"), os.pathconf(base, "PC_PATH_MAX")
    except (OSError, ValueError):
        pass
    full = out / longest
    long_part = max(full.parts, key=len)
    if len(os.fsencode(long_part)) > name_max or len(os.fsencode(str(full))) >= path_max:
        raise ParameterError(
            f"out={run.out!r} is too long: it would hold {str(full)!r} ({len(str(full))} characters, a name of {len(long_part)}); allowed: paths under {path_max} bytes with names under {name_max + 1}"
        )
    try:
        tempfile.TemporaryDirectory(prefix=".auralgen-probe-", dir=base).cleanup()
    except OSError as exc:
        raise ParameterError(
            f"out={run.out!r} cannot be written ({base} refuses: {exc.strerror or exc}); allowed: a writable directory path"
        ) from None


def preflight(cfg) -> RunConfig:
    """Every check made before any work, for one job's composed config: the config itself, the
    capacity of each task, the size of the plan and the ``out`` path. Returns the RunConfig."""
    from auralgen.config import validate

    run_cfg = validate(cfg)
    tasks = build_tasks(run_cfg)
    check_capacity(run_cfg, tasks)
    count_items(run_cfg, tasks)
    check_out_path(run_cfg, plan(run_cfg, tasks))
    return run_cfg


def _pending(out: Path, shards: list[ShardPlan], journal: dict[str, Any]) -> list[ShardPlan]:
    """Shards still to write; finished shards whose bytes match the journal are kept."""
    todo = []
    for sh in shards:
        rec = journal["shards"].get(sh.path)
        if rec and (out / sh.path).exists() and sha256_file(out / sh.path) == rec["sha256"]:
            continue
        journal["shards"].pop(sh.path, None)
        todo.append(sh)
    return todo


def _batches(todo: list[ShardPlan]):
    for sh in todo:
        for i in range(0, len(sh.items), BATCH):
            yield sh.items[i : i + BATCH]


def _render_shards(run_cfg: RunConfig, out: Path, todo: list[ShardPlan], journal: dict[str, Any], bar, seconds) -> None:
    """Render the pending shards through an executor; rows are written in plan order."""
    from functools import partial

    from auralgen.execution import make_executor

    n_todo = sum(len(sh.items) for sh in todo)
    workers = min(run_cfg.workers, max(1, n_todo))
    executor = make_executor(workers)
    results = executor.map_ordered(
        _render_batch, _batches(todo), setup=partial(_init_worker, run_cfg),
        max_ahead=max(2, MAX_AHEAD_PER_WORKER * workers // BATCH),
    )  # fmt: skip
    writer = None
    try:
        for sh in todo:
            writer = ShardWriter(out / sh.path)
            stats = []
            for _ in range(0, len(sh.items), BATCH):
                for res in next(results):
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
        executor.close(cancel=True)
        raise
    finally:
        global _WORKER
        _WORKER = None
    executor.close()


def run(run_cfg: RunConfig, *, log=print) -> dict[str, Any]:
    """Generate the dataset described by ``run_cfg`` into ``run_cfg.out``; returns the manifest."""
    from tqdm import tqdm

    tasks = build_tasks(run_cfg)
    check_capacity(run_cfg, tasks)
    count_items(run_cfg, tasks)
    shards = plan(run_cfg, tasks)
    check_out_path(run_cfg, shards)
    fp = fingerprint(run_cfg)
    journal = prepare_out(run_cfg, fp)
    out = Path(run_cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    # recorded before anything else is written: what overwrite=true may remove later
    journal["files"] = sorted({sh.path for sh in shards} | set(FIXED_FILES))
    _write_json(out / JOURNAL, journal)

    todo = _pending(out, shards, journal)
    n_todo = sum(len(sh.items) for sh in todo)
    if len(shards) > len(todo):
        log(f"resuming: {len(shards) - len(todo)} of {len(shards)} shards already complete")
    t0 = time.perf_counter()
    seconds: dict[str, float] = defaultdict(float)
    bar = tqdm(total=n_todo, unit="item", disable=not run_cfg.progress, file=sys.stderr, dynamic_ncols=True)
    try:
        _render_shards(run_cfg, out, todo, journal, bar, seconds)
    finally:
        bar.close()
    return _finish(run_cfg, tasks, shards, journal, fp, seconds, time.perf_counter() - t0, n_todo, log)


def _finish(run_cfg, tasks, shards, journal, fp, seconds, wall, n_todo, log) -> dict[str, Any]:
    """Validation report, dataset card and manifest (written last: it marks a complete dataset)."""
    from auralgen.export.card import write_card
    from auralgen.reporting import summarise, summary_table

    out = Path(run_cfg.out)
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
    _write_json(out / "manifest.json", manifest)
    (out / ERROR_LOG).unlink(missing_ok=True)
    log(summary_table(report, seconds, wall, n_todo))
    log(f"wrote {sum(r['rows'] for r in records)} items in {len(records)} shards to {out.resolve()}")
    return manifest


def _log_error(run_cfg: RunConfig, trace: str) -> str:
    """Write ``trace`` to the error log in ``out`` (when it exists); returns a hint naming it."""
    path = Path(run_cfg.out) / ERROR_LOG
    try:
        if path.parent.is_dir():
            path.write_text(trace)
            return f" (traceback in {path})"
    except OSError:
        pass
    return ""


def run_reported(run_cfg: RunConfig, *, log=print) -> int:
    """:func:`run` for a command line. Returns the exit code: 0 done; on failure one line
    ``error: ...`` on stderr and 2 (bad input), 1 (internal error) or 130 (interrupted).
    Finished shards are kept, so the same command resumes."""
    import traceback

    resume = "; finished shards are kept: rerun the same command to resume"
    try:
        run(run_cfg, log=log)
        return 0
    except ItemError as exc:
        hint = _log_error(run_cfg, exc.trace)
        fix = "fix the input, then rerun the same command to resume" if exc.bad_input else "please report it"
        print(f"error: {exc}{hint}; {fix}", file=sys.stderr)
        return 2 if exc.bad_input else 1
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"error: interrupted{resume}", file=sys.stderr)
        return 130
    except Exception as exc:
        hint = _log_error(run_cfg, traceback.format_exc())
        text = " ".join(str(exc).split())
        print(f"error: internal error: {type(exc).__name__}: {text}{hint}{resume}", file=sys.stderr)
        return 1


__all__ = ["AuralgenError", "ItemError", "ItemSpec", "ShardPlan", "plan", "run", "run_reported", "preflight",
           "Renderer", "owner", "item_id"]  # fmt: skip
