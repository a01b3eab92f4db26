"""Structured configuration: dataclass schemas and validation of a composed config.

Hydra composes ``conf/``; :func:`validate` turns the composed mapping into frozen
dataclasses before any work, raising :class:`~auralgen.core.errors.ParameterError` with
one line naming the key, the value and what is allowed. :func:`build_tasks` makes the run's
task objects; :func:`fingerprint` identifies the output a whole run config produces (the resume
journal and the manifest record it; the dataset audit recomputes it); :func:`id_key` keys the ids
of one task's items.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass, field, fields
from typing import Any

from auralgen import __version__
from auralgen.core.constants import PRESENTATION_FULL_SCALE_DB_SPL
from auralgen.core.errors import ParameterError
from auralgen.core.mapping import coerce as _coerce  # noqa: F401  (re-exported)
from auralgen.core.mapping import from_mapping
from auralgen.core.mapping import plain as _plain
from auralgen.core.random import as_written
from auralgen.sounds.corpus import check_source, dataset_license
from auralgen.tasks.base import (
    SAMPLE_RATES,
    AudioConfig,
    Task,
    TaskConfig,
    check_levels,
    task_audio,
    task_class,
    task_names,
)

MAX_SEED = 2**63  # seeds are stored in an int64 column
SECRET_SEED_ENV = "AURALGEN_SECRET_SEED"  # where seed_secret=true reads the seed from
SECRET_SEED = re.compile(r"[0-9a-fA-F]{32,64}")  # 128 to 256 bits: too many to guess or search
SPLIT_NAME = re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*")


@dataclass(frozen=True)
class ExportConfig:
    format: str = "parquet"
    flac_bits: int = 24
    license: str | None = None  # None: the sources' common license (auralgen.sounds.corpus.dataset_license)
    pretty_name: str = "auralgen perception suite"
    public: bool = False  # also write <out>/public: only the columns a model may see (auralgen.export.public)
    # pad every FLAC file to its uncompressed size so the size says nothing about the audio (see
    # auralgen.export.audio). false: smaller files whose size leaks content -- for training data, never a test split
    fixed_size: bool = True


@dataclass(frozen=True)
class ExecutorConfig:
    """Where the items render (never what they hold): ``local``, the process pool of ``workers``, or
    ``ray``, a Ray cluster (``pip install 'auralgen[ray]'``; auralgen.execution.ray.RayExecutor)."""

    kind: str = "local"
    address: str | None = None  # ray: None starts a local Ray instance; "auto" or "host:port" joins a cluster
    num_cpus_per_task: float = 1.0  # ray: CPUs reserved for each task (a batch of items; a shard for out=<bucket>)
    max_retries: int = 3  # ray: reruns of a task whose worker process died
    connect_timeout_s: float = 30.0  # ray: how long joining executor.address waits for it to answer


EXECUTOR_KINDS = ("local", "ray")


@dataclass(frozen=True)
class RunConfig:
    seed: int
    splits: tuple[str, ...]
    out: str
    workers: int
    shard_size: int
    audio: AudioConfig
    tasks: tuple[TaskConfig, ...]
    export: ExportConfig
    suite: str = "default"
    validate: bool = True
    progress: bool = True
    overwrite: bool = False
    max_resample: int = 8
    seed_secret: bool = False  # seed read from $AURALGEN_SECRET_SEED, never written (see secret_seed)
    executor: ExecutorConfig = ExecutorConfig()


def _runtime(default):
    """A setting that changes how a run works, never its output bytes (left out of the fingerprint)."""
    return field(default=default, metadata={"runtime": True})


@dataclass(frozen=True)
class RunSettings:
    """The top-level settings of a generation config and their defaults, written once: :func:`validate`
    falls back to them and the command line stores them as a config node (``auralgen/cli/_hydra.py``)."""

    seed: int = 0
    seed_secret: bool = False  # take the seed from $AURALGEN_SECRET_SEED; no public file holds it
    split: str | tuple[str, ...] = "test"  # a name, or a list: split=[train,test]
    out: str = _runtime("data/default")
    workers: int | str = _runtime("auto")  # process pool size, or "auto"; output is identical for any value
    shard_size: int = 1000  # rows per parquet shard
    sample_rate: int = AudioConfig.sample_rate  # Hz; a task may set its own
    full_scale_db_spl: float = AudioConfig.full_scale_db_spl  # dB SPL of digital RMS 1.0, calibrated tasks only
    validate: bool = True  # measure every item; re-sample or drop items the audio does not support
    max_resample: int = 8
    progress: bool = _runtime(True)
    overwrite: bool = _runtime(False)
    suite_name: str = "default"


SETTINGS = RunSettings()
# change no output byte (the executor group too: left out of the manifest and the fingerprint)
RUNTIME_KEYS = (*(f.name for f in fields(RunSettings) if f.metadata.get("runtime")), "executor")
TOP_KEYS = frozenset({*(f.name for f in fields(RunSettings)), "tasks", "task", "export", "executor", "source"})


def check_executor(data) -> ExecutorConfig:
    """The ``executor`` group, checked before any work (``ray`` must be importable).

    Parameters
    ----------
    data : Mapping or None
        The composed ``executor`` node; None or empty gives the defaults (``kind=local``).

    Returns
    -------
    ExecutorConfig
        The checked settings.

    Raises
    ------
    ParameterError
        An unknown ``kind``, a ``connect_timeout_s`` that is not > 0 seconds, or ``kind=ray`` without Ray installed.
    """
    ex = from_mapping(ExecutorConfig, data or {}, "executor")
    if ex.kind not in EXECUTOR_KINDS:
        raise ParameterError(f"executor.kind={ex.kind!r} is unsupported; allowed: {', '.join(EXECUTOR_KINDS)}")
    if not ex.connect_timeout_s > 0:
        raise ParameterError(f"executor.connect_timeout_s={ex.connect_timeout_s!r}; allowed: a number of seconds > 0")
    if ex.kind == "ray":
        import importlib.util

        from auralgen.execution.ray import INSTALL_HINT

        if importlib.util.find_spec("ray") is None:
            raise ParameterError(INSTALL_HINT)
    return ex


def build_task_config(name_key: str, data) -> TaskConfig:
    """One task's config node, checked into its task's ``Config`` dataclass.

    Parameters
    ----------
    name_key : str
        Where the node sits in the config (``task`` or ``tasks.<name>``); error messages name it.
    data : Mapping
        The node; its ``name`` picks the task class.

    Returns
    -------
    TaskConfig
        The task's own ``Config`` subclass, with levels, ``items_per_level``, ``sample_rate`` (Hz) and
        ``phrasings`` checked.

    Raises
    ------
    ParameterError
        An unknown task name or a value out of its allowed range.
    """
    name = data.get("name") if hasattr(data, "get") else None
    if name not in task_names():
        raise ParameterError(f"{name_key}.name={name!r} is not a known task; allowed: {', '.join(task_names())}")
    cls = task_class(name)
    cfg = from_mapping(cls.Config, data, name_key)
    check_levels(f"{name_key}.levels", cfg.levels)
    if cfg.items_per_level <= 0:
        raise ParameterError(
            f"{name_key}.items_per_level={cfg.items_per_level} is not positive; allowed: an integer >= 1"
        )
    if cfg.sample_rate is not None and cfg.sample_rate not in SAMPLE_RATES:
        raise ParameterError(f"{name_key}.sample_rate={cfg.sample_rate} is unsupported; allowed: {list(SAMPLE_RATES)}")
    n_q = len(cls.questions)
    if cfg.phrasings is not None:
        bad = [p for p in cfg.phrasings if not (isinstance(p, int) and 0 <= p < n_q)]
        if bad or not cfg.phrasings or len(set(cfg.phrasings)) != len(cfg.phrasings):
            raise ParameterError(
                f"{name_key}.phrasings={list(cfg.phrasings)!r} is invalid; "
                f"allowed: distinct indices 0..{n_q - 1}, non-empty"
            )
    return cfg


def check_splits(split) -> tuple[str, ...]:
    """Split names as Hugging Face ``datasets`` accepts them (``NamedSplit``: ``\\w+(\\.\\w+)*``), in
    ASCII, not the reserved ``all`` (the union of every split), distinct.

    Parameters
    ----------
    split : str or list of str
        The ``split`` setting: one name or a list of names.

    Returns
    -------
    tuple of str
        The split names, in the order given.

    Raises
    ------
    ParameterError
        An empty setting, a name that is not allowed, or a repeated name.
    """
    splits = (split,) if isinstance(split, str) else tuple(split) if isinstance(split, list) else ()
    allowed = (
        "a name or list of names of ASCII letters, digits and '_' (parts may be joined by '.'), "
        "at most 64 characters, not 'all'"
    )
    if not splits:
        raise ParameterError(f"split={split!r} is invalid; allowed: {allowed}")
    for s in splits:
        if not (isinstance(s, str) and SPLIT_NAME.fullmatch(s) and len(s) <= 64 and s != "all"):
            raise ParameterError(f"split={s!r} is not a split name Hugging Face datasets accepts; allowed: {allowed}")
    if len(set(splits)) != len(splits):
        raise ParameterError(f"split={list(splits)!r} repeats a name; allowed: distinct split names")
    return splits


def resolve_workers(value) -> int:
    """The process pool size of the ``workers`` setting.

    Parameters
    ----------
    value : int, str or None
        An integer >= 1, or ``"auto"`` / None for the CPUs this process may run on.

    Returns
    -------
    int
        The number of worker processes, >= 1.

    Raises
    ------
    ParameterError
        Any other value.
    """
    if value == "auto" or value is None:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"workers={value!r} is invalid; allowed: auto or an integer >= 1")
    return value


def secret_seed() -> int:
    """The seed of a ``seed_secret=true`` run: the hex digits of ``$AURALGEN_SECRET_SEED`` as an integer.

    The value is never echoed (not in errors either); 32-64 hex digits, so the seed cannot be found
    by trying seeds against the public files.

    Returns
    -------
    int
        The seed, 128 to 256 bits.

    Raises
    ------
    ParameterError
        The variable is unset or not 32-64 hex digits.
    """
    text = os.environ.get(SECRET_SEED_ENV, "").strip()
    if not SECRET_SEED.fullmatch(text):
        state = "is not set" if not text else f"holds {len(text)} characters that are not 32-64 hex digits"
        raise ParameterError(
            f"seed_secret=true but {SECRET_SEED_ENV} {state}; allowed: 32-64 hex digits, e.g. the output of "
            "python -c 'import secrets; print(secrets.token_hex(16))'"
        )
    return int(text, 16)


def _seed(cfg) -> tuple[int, bool]:
    """``(seed, seed_secret)`` of a composed config: ``seed``, or the secret one with ``seed_secret=true``."""
    seed = _coerce("seed", cfg.get("seed", SETTINGS.seed), int)
    if not 0 <= seed < MAX_SEED:
        raise ParameterError(f"seed={seed} is out of range; allowed: an integer with 0 <= seed < 2**63")
    seed_secret = _coerce("seed_secret", cfg.get("seed_secret", SETTINGS.seed_secret), bool)
    return (secret_seed() if seed_secret else seed), seed_secret


def check_takers(kind: str, task_cfgs) -> None:
    """Every task of the run takes sounds of source ``kind`` (else a task would ignore it).

    Parameters
    ----------
    kind : str
        The ``source`` kind of the run (e.g. ``procedural``).
    task_cfgs : sequence of TaskConfig
        The run's task configs.

    Raises
    ------
    ParameterError
        A task of the run does not take sounds of ``kind``; the message lists the tasks that do.
    """
    refused = [tc.name for tc in task_cfgs if kind not in task_class(tc.name).takes_sources]
    if refused:
        takers = [n for n in task_names() if kind in task_class(n).takes_sources]
        raise ParameterError(
            f"source={kind} is not taken by {', '.join(refused)}; "
            f"allowed: a suite or task=<name> of those that take it: {', '.join(takers)}"
        )


def check_full_scale(fs_db: float, task_cfgs) -> None:
    """A ``full_scale_db_spl`` other than the default needs a task that reads it: only a task about absolute
    level (``calibrated_level``, the audiogram) does; every other task is presented at the presentation full scale.

    Parameters
    ----------
    fs_db : float
        The run's ``full_scale_db_spl``: dB SPL of a digital RMS of 1.0.
    task_cfgs : sequence of TaskConfig
        As in :func:`check_takers`.

    Raises
    ------
    ParameterError
        ``fs_db`` is not the default and no task of the run is calibrated in absolute level.
    """
    if fs_db == SETTINGS.full_scale_db_spl or any(task_class(tc.name).calibrated_level for tc in task_cfgs):
        return
    names = ", ".join(tc.name for tc in task_cfgs)
    raise ParameterError(
        f"full_scale_db_spl={fs_db:g} is read by no task of this run ({names}): tasks whose attribute "
        f"is not absolute level are presented at {PRESENTATION_FULL_SCALE_DB_SPL:g} dB SPL full scale; "
        f"allowed: {SETTINGS.full_scale_db_spl:g}, or a run with the audiogram"
    )


def _audio(cfg) -> AudioConfig:
    """The run's audio settings: ``sample_rate`` (Hz), ``full_scale_db_spl`` and the ``source`` group, checked."""
    sample_rate = _coerce("sample_rate", cfg.get("sample_rate", SETTINGS.sample_rate), int)
    if sample_rate not in SAMPLE_RATES:
        raise ParameterError(f"sample_rate={sample_rate} is unsupported; allowed: {list(SAMPLE_RATES)}")
    fs_db = _coerce("full_scale_db_spl", cfg.get("full_scale_db_spl", SETTINGS.full_scale_db_spl), float)
    if not 60.0 <= fs_db <= 200.0:
        raise ParameterError(f"full_scale_db_spl={fs_db} is out of range; allowed: 60 <= full_scale_db_spl <= 200")
    return AudioConfig(sample_rate=sample_rate, full_scale_db_spl=fs_db, source=check_source(cfg.get("source")))


def _task_configs(cfg, audio: AudioConfig) -> tuple[TaskConfig, ...]:
    """The run's task configs (``task=<name>`` or the suite's ``tasks``), each checked against ``audio``."""
    task = cfg.get("task")
    if task is not None:
        task_cfgs = (build_task_config("task", task),)
    else:
        tasks = cfg.get("tasks") or {}
        task_cfgs = tuple(build_task_config(f"tasks.{k}", tasks[k]) for k in tasks.keys())
        if not task_cfgs:
            raise ParameterError("tasks is empty; allowed: a suite with at least one task, or task=<name>")
    check_takers(audio.source.kind, task_cfgs)
    check_full_scale(audio.full_scale_db_spl, task_cfgs)
    for tc in task_cfgs:
        key = "task" if task is not None else f"tasks.{tc.name}"
        tc.check(task_audio(task_class(tc.name), audio), key)
    return task_cfgs


def _export(cfg, audio: AudioConfig) -> ExportConfig:
    """The ``export`` group, checked; ``license`` resolved against the sound source's."""
    export = from_mapping(ExportConfig, cfg.get("export", {}) or {}, "export")
    if export.format not in ("parquet", "parquet+webdataset"):
        raise ParameterError(f"export.format={export.format!r} is unsupported; allowed: parquet, parquet+webdataset")
    if export.flac_bits not in (16, 24):
        raise ParameterError(f"export.flac_bits={export.flac_bits} is unsupported; allowed: 16 or 24")
    return dataclasses.replace(export, license=dataset_license(audio.source, export.license))


def validate(cfg) -> RunConfig:
    """Validate a composed config mapping (DictConfig or dict) into a :class:`RunConfig`.

    Parameters
    ----------
    cfg : DictConfig or dict
        The composed generation config; a missing top-level key takes its :class:`RunSettings` default.

    Returns
    -------
    RunConfig
        The frozen, checked run config.

    Raises
    ------
    ParameterError
        One line naming the first key whose value is not allowed, the value and what is allowed.
    """
    for k in cfg.keys():
        if k not in TOP_KEYS and k != "hydra":
            raise ParameterError(f"{k}: unknown key; allowed keys: {', '.join(sorted(TOP_KEYS))}")
    seed, seed_secret = _seed(cfg)
    splits = check_splits(_plain(cfg.get("split", SETTINGS.split)))
    audio = _audio(cfg)
    shard_size = _coerce("shard_size", cfg.get("shard_size", SETTINGS.shard_size), int)
    if shard_size < 1:
        raise ParameterError(f"shard_size={shard_size} is not positive; allowed: an integer >= 1")
    max_resample = _coerce("max_resample", cfg.get("max_resample", SETTINGS.max_resample), int)
    if max_resample < 0:
        raise ParameterError(f"max_resample={max_resample} is negative; allowed: an integer >= 0")
    task = cfg.get("task")
    task_cfgs = _task_configs(cfg, audio)
    out = _coerce("out", cfg.get("out", SETTINGS.out), str)
    if not out.strip() or "\0" in out:
        raise ParameterError(f"out={out!r} is empty or invalid; allowed: a directory path (out=. for the current one)")
    export = _export(cfg, audio)
    suite_name = _coerce("suite_name", cfg.get("suite_name", SETTINGS.suite_name), str)
    return RunConfig(
        seed=seed,
        splits=splits,
        out=out,
        workers=resolve_workers(_plain(cfg.get("workers", SETTINGS.workers))),
        shard_size=shard_size,
        audio=audio,
        tasks=task_cfgs,
        export=export,
        suite=suite_name if task is None else task_cfgs[0].name,
        validate=_coerce("validate", cfg.get("validate", SETTINGS.validate), bool),
        progress=_coerce("progress", cfg.get("progress", SETTINGS.progress), bool),
        overwrite=_coerce("overwrite", cfg.get("overwrite", SETTINGS.overwrite), bool),
        max_resample=max_resample,
        seed_secret=seed_secret,
        executor=check_executor(cfg.get("executor")),
    )


def build_tasks(run: RunConfig) -> dict[str, Task]:
    """The run's task objects, by name, in config order.

    Parameters
    ----------
    run : RunConfig
        A run config from :func:`validate`; its ``tasks`` and ``audio`` are read.

    Returns
    -------
    dict of str to Task
        Task name to its task object, built from its config and the run's audio settings.
    """
    return {tc.name: task_class(tc.name)(tc, run.audio) for tc in run.tasks}


def config_record(run: RunConfig) -> dict[str, Any]:
    """The resolved config as written to the manifest (runtime-only keys left out; a secret seed as None).

    Parameters
    ----------
    run : RunConfig
        A run config from :func:`validate`.

    Returns
    -------
    dict of str to Any
        A JSON-able record; distributions as written in the config.
    """
    d = as_written(dataclasses.asdict(run))  # a distribution records as written
    for k in RUNTIME_KEYS:
        d.pop(k, None)
    if run.seed_secret:
        d["seed"] = None
    if not run.audio.source.recorded:
        d["audio"].pop("source")  # procedural sounds: no source key, so their ids do not depend on it
    d["export"].pop("public", None)  # a second view of the same items: changes no item (nor its id)
    return d


def id_key(run: RunConfig, task: TaskConfig) -> str:
    """What the ids of ``task``'s items are keyed by: SHA-256 of that task's config, the run settings
    its bytes depend on (seed, splits, audio, source, validation, FLAC bit depth) and the generator
    version. The other tasks of the run, the suite's name and the keys that only lay out the files
    (``shard_size``; of ``export``, all but ``flac_bits``) are left out, so adding a task to a suite
    changes no item of another task.

    Parameters
    ----------
    run : RunConfig
        The run ``task`` belongs to.
    task : TaskConfig
        One task of ``run``.

    Returns
    -------
    str
        64 hex digits.
    """
    record = config_record(run)
    for key in ("tasks", "suite", "shard_size", "export"):
        record.pop(key)
    record.update(task=as_written(dataclasses.asdict(task)), flac_bits=run.export.flac_bits)
    keyed = {"config": record, "version": __version__, "seed": seed_digest(run)}
    blob = json.dumps(keyed, sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()


def seed_digest(run: RunConfig) -> str | None:
    """SHA-256 of a secret seed (None for a public one): it tells secret-seed runs apart in the
    fingerprint without revealing the seed (128+ bits cannot be searched).

    Parameters
    ----------
    run : RunConfig
        The run; only its ``seed`` and ``seed_secret`` are read.

    Returns
    -------
    str or None
        64 hex digits, or None when the seed is public.
    """
    return hashlib.sha256(f"auralgen/secret-seed/{run.seed:x}".encode()).hexdigest() if run.seed_secret else None


def fingerprint(run: RunConfig) -> str:
    """SHA-256 of the config record and the generator version: equal for runs that write the same bytes.

    Parameters
    ----------
    run : RunConfig
        The run; its :func:`config_record` (and :func:`seed_digest`) are hashed.

    Returns
    -------
    str
        64 hex digits.
    """
    record = {"config": config_record(run), "version": __version__}
    if run.seed_secret:
        record["seed"] = seed_digest(run)
    blob = json.dumps(record, sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()
