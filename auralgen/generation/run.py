"""Generate a dataset: plan -> resume -> render through an executor -> write shards in plan order ->
validation report, card, manifest. No task-specific code lives here.

Determinism: every item draws from :func:`auralgen.core.random.item_rng` keyed by
``(seed, split, task, index)``; workers only render, this process writes rows in plan order.
So the output is byte-identical for any executor and any number of workers.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import secrets
import signal
import sys
import threading
import time
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from auralgen import __version__
from auralgen.config import RunConfig, build_tasks, config_record, fingerprint
from auralgen.core.errors import EXIT_ENVIRONMENT, AuralgenError, ParameterError, environment_error
from auralgen.execution import Executor, make_executor
from auralgen.export.manifest import ERROR_LOG, FIXED_FILES, JOURNAL, JournalText, check_out_path, log_error, versions
from auralgen.export.parquet import ShardWriter
from auralgen.export.storage import filesystem, is_url
from auralgen.export.target import target
from auralgen.export.webdataset import TarShardWriter, tar_name
from auralgen.generation.item import ItemError, ItemSpec, Renderer
from auralgen.generation.plan import ShardPlan, check_capacity, count_items, plan
from auralgen.generation.summary import shard_levels
from auralgen.generation.threads import one_blas_thread
from auralgen.tasks.base import Task

MAX_AHEAD_PER_WORKER = 32  # rendered rows allowed to queue for the writer, per worker
BATCH = 4  # items per work unit sent to a worker

_WORKER: Renderer | None = None  # the worker process's renderer (set by the executor's setup)


MMAP_THRESHOLD = 128 << 20  # bytes: glibc serves smaller blocks from its heap (see tune_allocator)


def tune_allocator() -> bool:
    """Have glibc's allocator keep freed blocks under :data:`MMAP_THRESHOLD` for reuse instead of
    mapping each one fresh: an item allocates and frees dozens of arrays of a clip's size (256-512
    kB at 16 kHz), and glibc's default (a threshold that starts at 128 kB and only adapts) maps and
    unmaps many of them, so every use page-faults anew. ``bench/bench_generation.py`` runs with it,
    as every generation process does.

    Returns
    -------
    bool
        Whether glibc took both settings (False elsewhere: no effect).
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    # M_MMAP_THRESHOLD, then M_TRIM_THRESHOLD (a free heap top larger than this goes back to the OS)
    return bool(mallopt(-3, MMAP_THRESHOLD) == 1 and mallopt(-1, MMAP_THRESHOLD) == 1)


def _init_worker(run: RunConfig) -> None:
    global _WORKER
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    tune_allocator()
    one_blas_thread()
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


def _batches(todo: list[ShardPlan]):
    for sh in todo:
        for i in range(0, len(sh.items), BATCH):
            yield sh.items[i : i + BATCH]


def checked_plan(run_cfg: RunConfig, tasks: dict[str, Task]) -> list[ShardPlan]:
    """The run's plan, after every check made before any work: capacity, plan size, ``out`` path.

    Parameters
    ----------
    run_cfg : RunConfig
        The validated run config.
    tasks : dict of str to Task
        The run's tasks by name (:func:`~auralgen.config.build_tasks`).

    Returns
    -------
    list of ShardPlan
        :func:`~auralgen.generation.plan.plan` of the run.

    Raises
    ------
    ParameterError
        When a check fails: capacity, plan size, an ``out`` path that is unusable, or a public export
        into a bucket.
    """
    check_capacity(run_cfg, tasks)
    count_items(run_cfg, tasks)
    shards = plan(run_cfg, tasks)
    if is_url(run_cfg.out):  # a bucket: its filesystem must be installed; paths have no length limit to check
        filesystem(run_cfg.out)
        if run_cfg.export.public:
            raise ParameterError(
                f"export.public=true with out={run_cfg.out!r}: the public export is written to local directories "
                "only; allowed: export.public=false, or a local out"
            )
    else:
        check_out_path(run_cfg.out, [sh.path for sh in shards])
    return shards


def preflight(cfg) -> RunConfig:
    """Every check made before any work, for one job's composed config: the config itself, the
    capacity of each task, the size of the plan and the ``out`` path.

    Parameters
    ----------
    cfg : mapping
        The job's composed config (a DictConfig or dict).

    Returns
    -------
    RunConfig
        The validated config.

    Raises
    ------
    ParameterError
        The first check that fails, on one line.
    """
    from auralgen.config import validate

    run_cfg = validate(cfg)
    checked_plan(run_cfg, build_tasks(run_cfg))
    return run_cfg


def _write_shard(out: Path, sh: ShardPlan, results, bar, seconds: dict[str, float], wds: bool) -> dict[str, Any]:
    """Write the rows of shard ``sh`` from ``results`` (in plan order), and with ``wds`` its WebDataset
    tar beside it; returns its journal record."""
    writers, stats = [], []
    try:
        writers.append(ShardWriter(out / sh.path))
        if wds:
            writers.append(TarShardWriter(out / tar_name(sh.path)))
        for _ in range(0, len(sh.items), BATCH):
            for res in next(results):
                seconds[res["stat"]["task"]] += res["seconds"]
                stats.append(res["stat"])
                if res["row"] is not None:
                    for w in writers:
                        w.add(res["row"])
                bar.update(1)
        (digest, rows), *tar = [w.close() for w in writers]
    except BaseException:
        for w in writers:
            w.abort()
        raise
    record = {"path": sh.path, "task": sh.task, "split": sh.split, "rows": rows, "sha256": digest}
    record["levels"] = shard_levels(stats)
    if tar:
        record["webdataset"] = {"path": tar_name(sh.path), "sha256": tar[0][0]}
    return record


def default_executor(run_cfg: RunConfig, n_items: int) -> Executor:
    """The run's ``executor`` group: a Ray cluster, or serial / a local pool of ``workers`` (at most ``n_items``).

    Parameters
    ----------
    run_cfg : RunConfig
        The validated run config.
    n_items : int
        Items to render; a local pool gets no more workers than that (at least one).

    Returns
    -------
    Executor
        A ``RayExecutor`` for ``executor.kind=ray``, else :func:`~auralgen.execution.make_executor`'s.
    """
    ex = run_cfg.executor
    if ex.kind == "ray":
        from auralgen.execution.ray import RayExecutor

        return RayExecutor(
            ex.address,
            num_cpus_per_task=ex.num_cpus_per_task,
            max_retries=ex.max_retries,
            connect_timeout_s=ex.connect_timeout_s,
        )
    return make_executor(min(run_cfg.workers, max(1, n_items)))


def _prewarm(run_cfg: RunConfig, todo: list[ShardPlan]) -> None:
    """Render the first item of each task here, before a forking pool starts, and discard it: the
    numba code, HRTF sets and caches it loads are then inherited copy-on-write by every worker,
    shared instead of loaded once per worker (`bench/bench_generation.py`'s memory row). Output is
    unchanged: an item depends on its spec alone."""
    _init_worker(run_cfg)
    first = {}
    for sh in todo:
        if sh.items:
            first.setdefault(sh.task, sh.items[0])
    _render_batch(tuple(first.values()))


class Interrupts:
    """Ctrl-C while shards are written: SIGINT raises KeyboardInterrupt as Python's own handler does,
    and is remembered, so that one raised where Python ignores exceptions (a finalizer, e.g. a
    ``ParquetWriter.__del__`` run as a shard closes) is raised again at the next batch or shard
    instead of being lost. Installed only in the main thread, and not where SIGINT is ignored."""

    def __init__(self) -> None:
        self.seen = False
        self._installed, self._previous = False, None

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.getsignal(signal.SIGINT)
            if self._previous is not signal.SIG_IGN:
                signal.signal(signal.SIGINT, self._handle)
                self._installed = True
        return self

    def __exit__(self, *exc) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)

    def _handle(self, signum, frame) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def check(self) -> None:
        """Raise KeyboardInterrupt if SIGINT was seen (again, when a finalizer swallowed it).

        Raises
        ------
        KeyboardInterrupt
            When SIGINT was seen since the context was entered.
        """
        if self.seen:
            raise KeyboardInterrupt

    def checked(self, results):
        """``results``, with :meth:`check` before each is passed on.

        Parameters
        ----------
        results : iterable
            Batches or shard records from an executor.

        Yields
        ------
        object
            Each item of ``results``, in order.
        """
        for batch in results:
            self.check()
            yield batch


class _NoBar:
    def update(self, n: int) -> None:
        """A worker's shard has no progress bar (the caller's advances per shard)."""


def _render_shard_into(out: str, wds: bool, sh: ShardPlan) -> tuple[dict[str, Any], dict[str, float]]:
    """In a worker: render shard ``sh``, write it (and with ``wds`` its tar) in a private staging folder
    and put it in the bucket ``out`` as one object; returns its journal record and render seconds per
    task. A worker that dies mid-shard leaves no object; its rerun puts the same bytes under the same key."""
    from auralgen.export.target import BucketTarget

    dest, seconds = BucketTarget(out), defaultdict(float)
    try:
        results = (_render_batch(sh.items[i : i + BATCH]) for i in range(0, len(sh.items), BATCH))
        rec = _write_shard(dest.dir, sh, results, _NoBar(), seconds, wds)
        dest.publish(sh.path)
        if wds:
            dest.publish(rec["webdataset"]["path"])
    finally:
        dest.close()
    return rec, dict(seconds)


def _shards_written(run_cfg, dest, todo, bar, seconds, executor, interrupts):
    """Yield each pending shard's journal record, in plan order: from workers that write the shards
    themselves (an executor whose workers share no filesystem with this process, into a bucket), or
    by writing here the rows the workers render."""
    wds = run_cfg.export.format == "parquet+webdataset"
    workers, setup = getattr(executor, "workers", 1), partial(_init_worker, run_cfg)
    if getattr(executor, "remote", False) and is_url(run_cfg.out):
        done = executor.map_ordered(
            partial(_render_shard_into, run_cfg.out, wds), todo, setup=setup, max_ahead=2 * workers
        )
        for sh, (rec, secs) in zip(todo, interrupts.checked(done)):
            for task, t in secs.items():
                seconds[task] += t
            bar.update(len(sh.items))
            yield rec
        return
    results = executor.map_ordered(
        _render_batch, _batches(todo), setup=setup, max_ahead=max(2, MAX_AHEAD_PER_WORKER * workers // BATCH)
    )
    results = interrupts.checked(results)
    for sh in todo:
        rec = _write_shard(dest.dir, sh, results, bar, seconds, wds)
        dest.publish(sh.path)
        if wds:
            dest.publish(rec["webdataset"]["path"])
        yield rec


def _render_shards(
    run_cfg: RunConfig, dest, todo: list[ShardPlan], journal: dict[str, Any], bar, seconds, executor: Executor | None
) -> None:
    """Render the pending shards through ``executor`` (default: :func:`default_executor`); shards are
    written in plan order and the journal updated after each shard."""
    global _WORKER
    if executor is None:
        executor = default_executor(run_cfg, sum(len(sh.items) for sh in todo))
    if getattr(executor, "forks", False):
        _prewarm(run_cfg, todo)
    try:
        with Interrupts() as interrupts:
            journal_text = JournalText()
            for rec in _shards_written(run_cfg, dest, todo, bar, seconds, executor, interrupts):
                journal["shards"][rec["path"]] = rec
                interrupts.check()
                dest.write_text(JOURNAL, journal_text(journal))
    except BaseException:
        try:
            executor.close(cancel=True)
        finally:  # no partial shard survives an interrupt, wherever it landed (the writer's own abort aside)
            for tmp in [*dest.dir.rglob("*.parquet.tmp"), *dest.dir.rglob("*.tar.tmp")]:
                tmp.unlink(missing_ok=True)
        raise
    finally:
        _WORKER = None
    executor.close()


def run(run_cfg: RunConfig, *, executor: Executor | None = None, log=print) -> dict[str, Any]:
    """Generate the dataset described by ``run_cfg`` into ``run_cfg.out``; returns the manifest.

    Finished shards of an earlier run of the same config are kept (resume). ``executor`` renders
    the items (default: serial for ``workers=1``, else a local process pool); it is closed at the end.
    A second run into the same ``out`` while this one is writing is refused
    (:func:`~auralgen.export.manifest.out_lock`).

    Parameters
    ----------
    run_cfg : RunConfig
        The validated run config.
    executor : Executor, optional
        Renders the items (default: :func:`default_executor`); closed at the end.
    log : callable, optional
        Receives the summary table and progress lines (default: ``print``).

    Returns
    -------
    dict of str to object
        The manifest written to ``manifest.json``.

    Raises
    ------
    AuralgenError
        Bad input (a ``ParameterError``) or a failed export.
    ItemError
        An item failed to render (:class:`~auralgen.generation.item.ItemError` names it and the cause).
    """
    tasks = build_tasks(run_cfg)
    shards = checked_plan(run_cfg, tasks)
    if executor is None and run_cfg.executor.kind == "ray":  # a dead cluster address: refused before any write
        executor = default_executor(run_cfg, 0)
    getattr(executor, "check", lambda: None)()
    dest = target(run_cfg.out)
    try:
        with dest.lock():  # one run at a time per out directory or prefix
            return _run_locked(run_cfg, dest, tasks, shards, executor, log)
    finally:
        dest.close()


def _run_locked(
    run_cfg: RunConfig, dest, tasks: dict[str, Task], shards: list[ShardPlan], executor, log
) -> dict[str, Any]:
    from tqdm import tqdm

    fp = fingerprint(run_cfg)
    journal = dest.prepare(fp, overwrite=run_cfg.overwrite)
    wds = run_cfg.export.format == "parquet+webdataset"
    tars = {sh.path: (tar_name(sh.path),) if wds else () for sh in shards}
    # recorded before anything else is written: what overwrite=true may remove later
    own = {sh.path for sh in shards} | {t for ts in tars.values() for t in ts}
    journal["files"] = sorted(own | set(FIXED_FILES) | set(_public_files(run_cfg, shards)))
    if run_cfg.seed_secret:  # the commitment's salt: drawn once, kept by a resumed run
        journal.setdefault("seed_salt", secrets.token_hex(16))
    dest.write_json(JOURNAL, journal)

    todo = [sh for sh in shards if not dest.is_done(sh.path, journal, tars[sh.path])]
    n_todo = sum(len(sh.items) for sh in todo)
    if len(shards) > len(todo):
        log(f"resuming: {len(shards) - len(todo)} of {len(shards)} shards already complete")
    t0 = time.perf_counter()
    seconds: dict[str, float] = defaultdict(float)
    bar = tqdm(total=n_todo, unit="item", disable=not run_cfg.progress, file=sys.stderr, dynamic_ncols=True)
    try:
        _render_shards(run_cfg, dest, todo, journal, bar, seconds, executor)
    finally:
        bar.close()
    return _finish(run_cfg, dest, tasks, shards, journal, fp, seconds, time.perf_counter() - t0, n_todo, log)


def _public_files(run_cfg: RunConfig, shards: list[ShardPlan]) -> list[str]:
    from auralgen.export.public import public_files

    return public_files([sh.path for sh in shards]) if run_cfg.export.public else []


def seed_commitment(run_cfg: RunConfig, journal: dict[str, Any]) -> dict[str, Any]:
    """For a secret seed, the manifest's ``seed_commitment``: ``sha256`` of ``"<salt>:<seed in hex>"``
    and the ``salt`` (16 random bytes, drawn once and kept in the journal so a resumed run writes the
    same). Whoever holds the seed can later prove which one it was; nobody else learns it.

    Parameters
    ----------
    run_cfg : RunConfig
        The validated run config.
    journal : dict of str to object
        The run's journal, holding ``seed_salt`` for a secret seed.

    Returns
    -------
    dict of str to object
        ``{"seed_commitment": {"sha256", "salt", "of"}}``, or ``{}`` for a public seed.
    """
    if not run_cfg.seed_secret:
        return {}
    salt = journal["seed_salt"]
    digest = hashlib.sha256(f"{salt}:{run_cfg.seed:x}".encode()).hexdigest()
    return {
        "seed_commitment": {
            "sha256": digest,
            "salt": salt,
            "of": "sha256(salt + ':' + seed in lowercase hex, no leading zeros)",
        }
    }


def source_record(source) -> dict[str, Any] | None:
    """What the card says of a recorded source (None for procedural sounds): every file the run
    could draw with its license and attribution, and the files left out with the reason.

    Parameters
    ----------
    source : SourceConfig
        The run's ``audio.source``.

    Returns
    -------
    dict of str to object or None
        ``kind``, ``root``, ``files`` (one row per file) and ``skipped``; None for procedural sounds.
    """
    if not source.recorded:
        return None
    from auralgen.sounds.corpus import load_corpus

    corpus = load_corpus(source)
    return {"kind": corpus.kind, "root": corpus.root, "files": corpus.card_rows(), "skipped": list(corpus.skipped)}


def _finish(run_cfg, dest, tasks, shards, journal, fp, seconds, wall, n_todo, log) -> dict[str, Any]:
    """Validation report, dataset card and manifest (written last: it marks a complete dataset)."""
    from auralgen.export.card import write_card
    from auralgen.generation.summary import summarise, summary_table

    records = [journal["shards"][sh.path] for sh in shards]
    report = summarise(records, tasks)
    empty = _empty_task(records)
    if empty is not None:  # no manifest: nothing marks the folder as a dataset
        log(summary_table(report, seconds, wall, n_todo))
        raise ParameterError(empty)
    dest.write_json("validation_report.json", report)
    write_card(dest.dir, run_cfg, tasks, records, report, source_record(run_cfg.audio.source), opener=dest.open)
    dest.publish("README.md")
    manifest = {
        "fingerprint": fp,
        "generator_version": __version__,
        "seed": None if run_cfg.seed_secret else run_cfg.seed,
        **seed_commitment(run_cfg, journal),
        "splits": list(run_cfg.splits),
        "config": config_record(run_cfg),
        "versions": versions(),
        "shards": [{k: r[k] for k in ("path", "task", "split", "rows", "sha256")} for r in records],
        "items": report["totals"],
    }
    if any("webdataset" in r for r in records):
        manifest["webdataset"] = [{**r["webdataset"], "rows": r["rows"]} for r in records]
    if run_cfg.export.public:
        from auralgen.export.public import write_public

        manifest["public"] = write_public(dest.dir, [r["path"] for r in records], run_cfg.export.pretty_name)
    dest.write_json("manifest.json", manifest)
    dest.remove(ERROR_LOG)
    log(summary_table(report, seconds, wall, n_todo))
    log(f"wrote {sum(r['rows'] for r in records)} items in {len(records)} shards to {dest.where()}")
    return manifest


def _empty_task(records: list[dict[str, Any]]) -> str | None:
    """Why the run's dataset is refused when a task of it has no row (every item dropped), or None."""
    rows: dict[str, int] = defaultdict(int)
    for r in records:
        rows[r["task"]] += r["rows"]
    for task in (t for t, n in rows.items() if n == 0):
        parts = [
            p
            for r in records
            if r["task"] == task
            for p in (r["levels"] if "levels" in r else shard_levels(r["items"]))
        ]
        reasons = sorted({why.split(":")[0] for p in parts for why in p["drop_reasons"]})
        n_items = sum(p["items"] for p in parts)
        return (
            f"task={task} yields 0 items: all {n_items} were dropped ({'; '.join(reasons) or 'no row written'}); "
            "allowed: a config whose items pass their measurements (see the table above for each level)"
        )
    return None


def run_reported(run_cfg: RunConfig, *, executor: Executor | None = None, log=print) -> int:
    """:func:`run` for a command line. Returns the exit code: 0 done; on failure one line
    ``error: ...`` on stderr and 2 (bad input), 1 (internal error), 75 (disk full or quota
    exceeded: :data:`~auralgen.core.errors.EXIT_ENVIRONMENT`) or 130 (interrupted).
    Finished shards are kept, so the same command resumes.

    Parameters
    ----------
    run_cfg : RunConfig
        The validated run config.
    executor : Executor, optional
        As for :func:`run`.
    log : callable, optional
        As for :func:`run`.

    Returns
    -------
    int
        The exit code: 0, 1, 2, 75 or 130.
    """
    import traceback

    resume = "; finished shards are kept: rerun the same command to resume"
    try:
        run(run_cfg, executor=executor, log=log)
        return 0
    except ItemError as exc:
        hint = log_error(run_cfg.out, exc.trace)
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
        env = environment_error(exc, run_cfg.out)
        if env is not None:  # disk full: the machine failed, not the input (no log: it would not fit either)
            print(f"{env}; finished shards are kept", file=sys.stderr)
            return EXIT_ENVIRONMENT
        hint = log_error(run_cfg.out, traceback.format_exc())
        text = " ".join(str(exc).split())
        print(f"error: internal error: {type(exc).__name__}: {text}{hint}{resume}", file=sys.stderr)
        return 1
