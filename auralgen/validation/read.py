"""Reading an exported dataset for the audit: its shards, its rows (audio decoded), its task
objects (:func:`tasks_for`), each row as the checks observe it (:class:`Observed`), and the
:class:`Check` interface of the audit's fold.

Tasks are rebuilt from ``manifest.json``: its ``config`` record (``dataclasses.asdict`` of the
run config) is mapped back onto the composed-config shape and passed through
:func:`auralgen.config.validate`, so the audit sees exactly the task objects that generated
the data (the fingerprint is compared to prove it). Without a manifest the tasks' default
configs are used and a note says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.config import RunConfig, build_tasks, fingerprint, validate
from auralgen.core.errors import AuralgenError, ParameterError, reason
from auralgen.core.schema import iter_items
from auralgen.export.audio import decode_flac
from auralgen.tasks.base import AudioConfig, Task, load_tasks


@dataclass
class Decoded:
    """One row as the audit reads it: its columns as the schema names them (``audio`` dropped),
    its decoded clips and where it came from."""

    row: dict[str, Any]
    shard: str
    clips: list[np.ndarray] | None
    sample_rate: int
    flac_bytes: int
    paths: list[str]
    error: str | None = None
    clip_bytes: list[int] = field(default_factory=list)  # FLAC bytes of each clip (``flac_bytes``: their sum)


def dataset_shards(path) -> list[Path]:
    """The parquet shards of a dataset directory.

    Parameters
    ----------
    path : str or os.PathLike
        An exported dataset directory.

    Returns
    -------
    list of Path
        ``data/<task>/*.parquet``, sorted.

    Raises
    ------
    ParameterError
        If ``path`` is not a directory or holds no shard.
    """
    root = Path(path)
    if not root.is_dir():
        raise ParameterError(f"dataset={str(path)!r} is not a directory; allowed: an exported dataset directory")
    shards = sorted(root.glob("data/*/*.parquet"))
    if not shards:
        raise ParameterError(
            f"dataset={str(path)!r} holds no data/<task>/*.parquet shards; allowed: an exported dataset directory"
        )
    return shards


def iter_decoded(path, *, batch_rows: int = 16) -> Iterator[Decoded]:
    """Every row of the dataset, shard by shard, ``batch_rows`` at a time (through the schema's one
    reader, :func:`auralgen.core.schema.iter_items`), audio decoded.

    Parameters
    ----------
    path : str or os.PathLike
        As in :func:`dataset_shards`.
    batch_rows : int > 0
        Rows read at a time.

    Yields
    ------
    Decoded
        One row with its clips ``[channels, n]``; a row whose audio does not decode carries the ``error``.
    """
    root = Path(path)
    shards = [s.relative_to(root).as_posix() for s in dataset_shards(root)]
    for shard, _, row in iter_items(root, shards, batch_rows=batch_rows):
        audio = row.pop("audio") or []
        clips, rate, err = [], int(row.get("sampling_rate") or 0), None
        try:
            for entry in audio:
                x, rate = decode_flac(entry["bytes"])
                clips.append(x)
            if not clips:
                err = "no audio clips"
        except Exception as exc:  # noqa: BLE001 - any decoder failure is a bad row
            err = f"audio does not decode: {reason(exc, 'the clip')}"
        sizes = [len(e["bytes"] or b"") for e in audio]
        yield Decoded(
            row, shard, None if err else clips, rate, sum(sizes), [e.get("path") or "" for e in audio], err, sizes
        )


def run_config_of(manifest: dict, path) -> RunConfig:
    """The run config recorded in a manifest (its ``config`` record), validated again; ``out`` is ``path``.

    Parameters
    ----------
    manifest : dict
        The dataset's parsed ``manifest.json``.
    path : str or os.PathLike
        The dataset directory.

    Returns
    -------
    RunConfig
        The config that generated the dataset, with one worker and no progress bar.

    Raises
    ------
    KeyError
        When the manifest lacks a key of the config record.
    ParameterError
        When the recorded config does not validate (e.g. written by another version).
    """
    c = manifest["config"]
    mapping = {
        "seed": c["seed"],
        "split": list(c["splits"]),
        "sample_rate": c["audio"]["sample_rate"],
        "full_scale_db_spl": c["audio"]["full_scale_db_spl"],
        "shard_size": c["shard_size"],
        "max_resample": c["max_resample"],
        "validate": c["validate"],
        "export": c["export"],
        "suite_name": c["suite"],
        "tasks": {t["name"]: t for t in c["tasks"]},
        "workers": 1,
        "progress": False,
        "out": str(path),
    }
    if c["audio"].get("source"):  # a recorded source (its root as the run gave it)
        mapping["source"] = c["audio"]["source"]
    return validate(mapping)


def tasks_for(path) -> tuple[dict[str, Task], list[str]]:
    """Task objects of the dataset (from its manifest's config) and notes on how they were built.

    Parameters
    ----------
    path : str or os.PathLike
        The dataset directory.

    Returns
    -------
    tasks : dict of str to Task
        The run's tasks by name; every registered task at its default config when the manifest is
        missing or unusable.
    notes : list of str
        Empty when the rebuilt config's fingerprint matches the manifest's; else why it may differ.
    """
    mf = Path(path) / "manifest.json"
    try:
        manifest = json.loads(mf.read_text(encoding="utf-8"))
        run = run_config_of(manifest, path)
        same = fingerprint(run) == manifest.get("fingerprint")
        return build_tasks(run), [] if same else ["manifest fingerprint differs from the rebuilt config"]
    except (OSError, KeyError, TypeError, ValueError, AuralgenError) as exc:
        registry = load_tasks()
        reason = "no manifest.json" if not mf.exists() else f"manifest config not usable ({exc})"
        tasks = {name: cls(cls.Config(name=name), AudioConfig()) for name, cls in registry.items()}
        return tasks, [f"{reason}: tasks built from their default configs"]


@dataclass
class Observed:
    """One row as the audit's checks see it: the item, its task (None: unknown), its ``params``
    (None: unreadable) and the problems found so far, ``(reason, detail)`` in the order found."""

    item: Decoded
    task: Task | None
    params: dict | None
    problems: list[tuple[str, str]]

    @property
    def row(self) -> dict[str, Any]:
        return self.item.row

    @property
    def audible(self) -> bool:
        """Decoded clips and readable ``params``: the audio checks can run."""
        return self.item.clips is not None and self.params is not None


def observe(item: Decoded, tasks: dict[str, Task]) -> Observed:
    """Parse one row's ``params`` and look up its task; problems of the row itself are ``bad_row``.

    Parameters
    ----------
    item : Decoded
        The row as read.
    tasks : dict of str to Task
        The dataset's tasks by name (:func:`tasks_for`).

    Returns
    -------
    Observed
        The row with its task (None: unknown), ``params`` (None: not JSON) and ``bad_row`` problems.
    """
    task = tasks.get(item.row["task"])
    problems = [("bad_row", item.error)] if item.error else []
    if task is None:
        problems.append(("bad_row", f"unknown task {item.row['task']!r}"))
    try:
        params = json.loads(item.row["params"])
    except (TypeError, ValueError) as exc:
        params = None
        problems.append(("bad_row", f"params is not JSON ({exc})"))
    return Observed(item, task, params, problems)


class Check:
    """One audit of the dataset: :meth:`observe` sees every row once (in shard order), appending
    the row's problems to ``seen.problems``; :meth:`finish` adds what it found to the report."""

    def observe(self, seen: Observed) -> None:
        """Look at one row (default: nothing).

        Parameters
        ----------
        seen : Observed
            The row; append ``(reason, detail)`` to ``seen.problems`` to fail it.
        """

    def finish(self, report) -> None:
        """Add the dataset-wide result to ``report`` (default: nothing).

        Parameters
        ----------
        report : AuditReport
            The audit's report, after every row was observed.
        """
