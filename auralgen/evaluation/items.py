"""Items of an exported dataset, as the evaluator sees them.

:func:`iter_items` reads the parquet shards of a dataset directory (``data/<task>/<split>-*.parquet``)
record batch by record batch (through the schema's one reader, :func:`auralgen.core.schema.iter_items`)
into :class:`Item` objects holding the FLAC bytes of every clip (decoded only when a WAV file is
written for a model, every channel kept), so reading a dataset takes the same memory whatever its
size; :func:`load_items` is its list. :class:`Item` has one field per column the evaluator reads
(``eval`` in auralgen/core/schema.py), named as there.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import soundfile as sf

from auralgen.core import schema
from auralgen.core.errors import ParameterError, reason
from auralgen.core.paths import check_item_id, create_new, inside
from auralgen.core.schema import eval_columns, python_type
from auralgen.export.audio import decode_flac
from auralgen.export.parquet import sha256_file
from auralgen.tasks.base import TASKS, AudioConfig, Task, task_class

_COLUMNS = eval_columns()  # the columns of the item schema the evaluator reads
READ_BATCH_ROWS = 64  # rows decoded from a shard at a time

MAX_OPTIONS = 26  # an option is named by a letter A..Z


@functools.cache
def _task(name: str) -> Task:
    """A task object of ``name`` at its default config: what it states of an item comes from the
    item's ``params`` alone (:meth:`~auralgen.tasks.base.Task.eval_fields`), not from the config."""
    cls = task_class(name)
    return cls(cls.Config(name=name), AudioConfig())


class _ItemViews:
    """What the evaluator derives from an item's columns (no column is copied or renamed)."""

    @property
    def clips(self) -> tuple[bytes, ...]:
        """The FLAC bytes of every clip of ``audio``, in order."""
        return tuple(a["bytes"] for a in self.audio)

    @functools.cached_property
    def recipe(self) -> dict:
        """``params`` (the JSON recipe) as a dict."""
        return json.loads(self.params) if self.params else {}

    def record_fields(self) -> dict:
        """Metadata copied into every scoring record of this item, with the fields its task adds
        (:meth:`~auralgen.tasks.base.Task.eval_fields`)."""
        rec = {
            "id": self.id,
            "task": self.task,
            "category": self.category,
            "sub_category": self.sub_category,
            "level": self.level,
            "level_value": self.level_value,
            "level_unit": self.level_unit,
            "regime": self.regime,
            "n_options": len(self.options),
        }
        # what the task states of this item: its stimulus difference (larger = easier), a tone's frequency ...
        rec.update(_task(self.task).eval_fields(self.recipe))
        return rec

    @classmethod
    def from_record(cls, record: dict):
        """The item of one shard record (the ``eval`` columns of auralgen/core/schema.py); lists become tuples.

        Raises ``KeyError`` for a missing column, ``TypeError``/``ValueError`` for a value of the wrong type.
        """
        values = {}
        for name in _COLUMNS:
            kind, value = python_type(name), record[name]
            if kind is tuple:
                value = tuple(value)
            elif kind is float:
                value = float("nan") if value is None else float(value)
            elif not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
                raise TypeError(f"column {name} holds {value!r}, not {kind.__name__}")
            values[name] = value
        return cls(**values)


# One field per column the evaluator reads, in schema order, named as the schema names it.
Item = dataclasses.make_dataclass(
    "Item",
    [(name, python_type(name)) for name in _COLUMNS],
    bases=(_ItemViews,),
    frozen=True,
)
Item.__module__ = __name__
Item.__doc__ = (
    "One multiple-choice item: the evaluator's columns of the item schema (auralgen/core/schema.py), "
    "``options`` in canonical order, ``audio`` as FLAC bytes; see :class:`_ItemViews` for what is derived."
)


def dataset_tasks(data: str | os.PathLike, split: str) -> list[str]:
    """Task names with at least one shard of ``split`` under ``data``.

    Parameters
    ----------
    data : str or PathLike
        As in :func:`read_manifest`.
    split : str
        A split name, e.g. ``test``.

    Returns
    -------
    list of str
        The task names, sorted; empty when there is no such shard.
    """
    return sorted({Path(p).parent.name for p in glob.glob(f"{data}/data/*/{split}-*.parquet")})


def read_manifest(data: str | os.PathLike) -> dict:
    """``<data>/manifest.json`` (written last by ``generate.py``: its presence marks a complete dataset).

    Parameters
    ----------
    data : str or PathLike
        A dataset directory, as ``generate.py`` writes it: ``manifest.json`` and the shards
        ``data/<task>/<split>-*.parquet``.

    Returns
    -------
    dict
        The parsed manifest; its ``shards`` is a list of records with ``path`` and ``sha256`` (and ``task``,
        ``split``).

    Raises
    ------
    ParameterError
        When it is absent or holds no ``shards`` list.
    """
    path = Path(data) / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        shards = manifest["shards"]
        for rec in shards:
            rec["path"], rec["sha256"]
    except FileNotFoundError:
        raise ParameterError(
            f"data={str(data)!r} holds no manifest.json (generation unfinished, or not a generate.py output); "
            "allowed: a dataset directory written by generate.py"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ParameterError(
            f"data={str(data)!r}: manifest.json is unreadable ({type(exc).__name__}: {exc}); "
            "allowed: the manifest written by generate.py"
        ) from None
    return manifest


def dataset_fingerprint(data: str | os.PathLike) -> str:
    """SHA-256 (16 hex digits) of ``<data>/manifest.json``: it names every shard by its hash.

    Parameters
    ----------
    data : str or PathLike
        As in :func:`read_manifest`.

    Returns
    -------
    str
        16 hex digits, e.g. a run's ``dataset.manifest_sha256``.
    """
    return sha256_file(Path(data) / "manifest.json")[:16]


def verify_shards(data: str | os.PathLike, split: str, tasks) -> list[str]:
    """Paths (relative to ``data``) of the shards of ``split`` and ``tasks``, each checked against the manifest.

    Parameters
    ----------
    data, split
        As in :func:`dataset_tasks`.
    tasks : collection of str
        The task names whose shards are wanted.

    Returns
    -------
    list of str
        The manifest's shard paths of that selection, sorted, e.g. ``data/pitch_relative/test-00000.parquet``.

    Raises
    ------
    ParameterError
        Naming the first shard that is missing, unlisted, or whose SHA-256 differs from the
        manifest's (a truncated or edited file).
    """
    listed = {rec["path"]: rec for rec in read_manifest(data)["shards"]}
    on_disk = {str(Path(p).relative_to(data)) for t in tasks for p in glob.glob(f"{data}/data/{t}/{split}-*.parquet")}
    wanted = sorted(p for p, rec in listed.items() if rec.get("split") == split and rec.get("task") in tasks)
    extra = sorted(on_disk - set(wanted))
    if extra:
        raise ParameterError(
            f"shard {extra[0]!r} in data={str(data)!r} is not listed in manifest.json; "
            "allowed: the shards generate.py wrote"
        )
    for path in wanted:
        if not (Path(data) / path).is_file():
            raise ParameterError(f"shard {path!r} listed in data={str(data)!r}/manifest.json is missing")
        digest = sha256_file(Path(data) / path)
        if digest != listed[path]["sha256"]:
            raise ParameterError(
                f"shard {path!r} in data={str(data)!r} has sha256={digest[:16]}..., the manifest says "
                f"{listed[path]['sha256'][:16]}... (truncated or modified); allowed: the file generate.py wrote "
                "(run generate.py again with the same config to restore it)"
            )
    return wanted


def iter_checked(
    data: str | os.PathLike, shards: list[str], *, max_items: int | None = None, audio: bool = True
) -> Iterator[Item]:
    """The items of ``shards`` (paths relative to ``data``), each checked by :func:`check_item`, read
    :data:`READ_BATCH_ROWS` at a time through :func:`auralgen.core.schema.iter_items`; at most
    ``max_items`` per task. ``audio=False`` reads no clip's bytes (each clip is ``b""``, unchecked:
    how many clips an item has still decides how it is presented).

    Parameters
    ----------
    data : str or PathLike
        As in :func:`read_manifest`.
    shards : list of str
        Shard paths relative to ``data``, read in this order.
    max_items, audio : optional
        As in :func:`iter_items`.

    Yields
    ------
    Item
        Each checked item, in shard order.
    """
    count: dict[str, int] = {}
    rows = schema.iter_items(data, shards, names=_COLUMNS, batch_rows=READ_BATCH_ROWS, audio_bytes=audio)
    for row in rows:
        task = row.shard.split("/")[1] if row.shard.startswith("data/") else ""
        if max_items is not None and count.get(task, 0) >= max_items:
            continue
        count[task] = count.get(task, 0) + 1
        yield check_item(row.record, f"shard {row.shard!r} row {row.index}", task=task, audio=audio)


def _selected_shards(data: str | os.PathLike, split: str, tasks) -> tuple[list[str], list[str]]:
    """``(tasks, shard paths)`` of the selection, the shards checked against the manifest."""
    present = dataset_tasks(data, split)
    if not present:
        found = sorted({Path(p).name.split("-")[0] for p in glob.glob(f"{data}/data/*/*.parquet")})
        raise ParameterError(
            f"data={str(data)!r} holds no parquet shard of split={split!r}; allowed: an exported dataset directory"
            + (f" (splits found: {', '.join(found)})" if found else "")
        )
    wanted = list(tasks) if tasks else present
    missing = [t for t in wanted if t not in present]
    if missing:
        raise ParameterError(
            f"task={missing!r} not in data={str(data)!r} split={split!r}; allowed: {', '.join(present)}"
        )
    return wanted, verify_shards(data, split, wanted)


def iter_items(
    data: str | os.PathLike, *, split: str = "test", tasks=None, max_items: int | None = None, audio: bool = True
) -> Iterator[Item]:
    """Items of ``split`` (optionally of some ``tasks``; ``max_items`` per task) in dataset order, read
    a record batch at a time (memory independent of the dataset's size).

    Every shard is first checked against the SHA-256 in ``manifest.json``; every item read is
    checked by :func:`check_item` (its audio decoded), so a damaged dataset ends in one line
    naming the shard or the item. ``audio=False`` reads no audio (the items' clips are empty,
    unchecked): for a pass that needs the items' other fields only.

    Parameters
    ----------
    data : str or PathLike
        As in :func:`read_manifest`.
    split : str, optional
        The split to read, e.g. ``test``.
    tasks : sequence of str or None, optional
        The tasks to read, in this order; None reads every task of the split (sorted by name).
    max_items : int or None, optional
        At most this many items per task; None reads every item.
    audio : bool, optional
        Read and check the clips' FLAC bytes.

    Yields
    ------
    Item
        Each checked item, task by task in dataset order.

    Raises
    ------
    ParameterError
        When ``data`` holds no shard of ``split``, a requested task is absent, a shard or an
        item is damaged, or an id occurs twice.
    """
    wanted, shards = _selected_shards(data, split, tasks)
    ordered = [p for task in wanted for p in shards if p.startswith(f"data/{task}/")]
    seen: set[str] = set()
    for item in iter_checked(data, ordered, max_items=max_items, audio=audio):
        if item.id in seen:
            raise ParameterError(f"item id={item.id!r} occurs twice in data={str(data)!r}; allowed: unique ids")
        seen.add(item.id)
        yield item


def load_items(data: str | os.PathLike, *, split: str = "test", tasks=None, max_items: int | None = None) -> list[Item]:
    """The list of :func:`iter_items` (every item in memory: for small selections).

    Parameters
    ----------
    data, split, tasks, max_items
        As in :func:`iter_items` (the audio is always read).

    Returns
    -------
    list of Item
        The checked items with their audio, in :func:`iter_items` order.
    """
    return list(iter_items(data, split=split, tasks=tasks, max_items=max_items))


def check_item(row: dict, where: str, *, task: str | None = None, audio: bool = True) -> Item:
    """The :class:`Item` of ``row``, checked: its id is one the generator writes, its task a
    registered one (``task``, the shard's, when given), its answer matches its options and every
    clip decodes (``audio=False``: the clips are not checked). Ids and task names become file names
    (WAVs for a model, exports): nothing else gets that far.

    Parameters
    ----------
    row : dict
        One shard record: column name to value.
    where : str
        Where the row was read, for error messages (e.g. ``shard 'data/...' row 3``).
    task : str or None, optional
        The task of the shard the row came from; None accepts any registered task.
    audio : bool, optional
        Decode every clip and check its sample rate (Hz), channel count and length.

    Returns
    -------
    Item
        The checked item.

    Raises
    ------
    ParameterError
        One line naming the item (``where``, its id) and what is wrong.
    """
    check_item_id(row.get("id"), f"item ({where})")
    name = f"item id={row.get('id')!r} ({where})"
    if row.get("task") not in TASKS or (task is not None and row.get("task") != task):
        allowed = f"{task!r} (the shard's task)" if task in TASKS else "a registered task"
        raise ParameterError(f"{name} has task={str(row.get('task'))[:80]!r}; allowed: {allowed}")
    try:
        item = Item.from_record(row)
    except (KeyError, TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} is malformed ({type(exc).__name__}: {exc}); allowed: a row generate.py wrote"
        ) from None
    n = len(item.options)
    if not 2 <= n <= MAX_OPTIONS or len(set(item.options)) != n:
        raise ParameterError(
            f"{name} has options={list(item.options)[:30]!r}; allowed: 2 to {MAX_OPTIONS} distinct options "
            "(one letter each)"
        )
    if not 0 <= item.answer_index < n:
        raise ParameterError(f"{name} has answer_index={item.answer_index}, out of range; allowed: 0..{n - 1}")
    if item.answer != item.options[item.answer_index]:
        raise ParameterError(
            f"{name} has answer={item.answer!r} but options[{item.answer_index}]={item.options[item.answer_index]!r}; "
            "allowed: answer == options[answer_index]"
        )
    if audio:
        _check_clips(item, name)
    return item


def _check_clips(item: Item, name: str) -> None:
    """Every clip of ``item`` decodes as FLAC at its ``sampling_rate`` with ``num_channels`` and > 0 samples."""
    if not item.clips:
        raise ParameterError(f"{name} has no audio clip; allowed: one clip or more")
    for k, data in enumerate(item.clips):
        try:
            clip, rate = decode_flac(data)
        except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
            why = reason(exc, f"audio[{k}]")
            raise ParameterError(f"{name} audio[{k}] does not decode as FLAC ({why}); allowed: FLAC bytes") from None
        if rate != item.sampling_rate or clip.shape[0] != item.num_channels or clip.shape[1] == 0:
            raise ParameterError(
                f"{name} audio[{k}] holds {clip.shape[0]} channel(s) x {clip.shape[1]} samples at {rate} Hz; "
                f"allowed: {item.num_channels} channel(s), > 0 samples, at sampling_rate={item.sampling_rate}"
            )


def write_wav(path: str | os.PathLike, clip: np.ndarray, sample_rate: int, *, new: bool = False) -> Path:
    """Write float32 ``[channels, samples]`` as a 24-bit PCM WAV (every channel kept); with
    ``new``, an existing file is refused (:func:`~auralgen.core.paths.create_new`), never replaced.

    Parameters
    ----------
    path : str or PathLike
        The WAV file to write; its folder is created (without ``new``).
    clip : ndarray, shape (channels, samples)
        Samples, full scale +-1.0 (cast to float32).
    sample_rate : int
        Hz.
    new : bool, optional
        Refuse a file that exists; without it the file is written to a temporary name and renamed.

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    if new:
        with create_new(path) as f:
            try:
                sf.write(f, np.asarray(clip, dtype=np.float32).T, int(sample_rate), format="WAV", subtype="PCM_24")
            except BaseException:
                path.unlink(missing_ok=True)
                raise
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    sf.write(tmp, np.asarray(clip, dtype=np.float32).T, int(sample_rate), format="WAV", subtype="PCM_24")
    os.replace(tmp, path)
    return path


def read_wav(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """``(float32 [channels, samples], sample_rate)`` of a WAV file, channels preserved.

    Parameters
    ----------
    path : str or PathLike
        A WAV file.

    Returns
    -------
    clip : ndarray, shape (channels, samples), float32
        The samples, full scale +-1.0.
    sample_rate : int
        Hz.
    """
    x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return np.ascontiguousarray(x.T), int(sr)


def export_wav(flac: bytes, path: str | os.PathLike, *, new: bool = False) -> Path:
    """Decode one exported FLAC clip and write it as WAV at ``path`` (every channel kept; ``new``:
    refuse an existing file).

    Parameters
    ----------
    flac : bytes
        One clip's FLAC file, as stored in the ``audio`` column.
    path : str or PathLike
        The WAV file to write.
    new : bool, optional
        Refuse a file that exists.

    Returns
    -------
    Path
        ``path``.
    """
    clip, sr = decode_flac(flac)
    return write_wav(path, clip, sr, new=new)


def clip_wavs(item: Item, audio_dir: str | os.PathLike) -> list[Path]:
    """WAV files of the item's clips, ``<audio_dir>/<task>/<id>-<k>.wav`` (written once, reused
    afterwards), each checked to lie inside ``audio_dir``.

    Parameters
    ----------
    item : Item
        The item whose clips are written.
    audio_dir : str or PathLike
        The folder of the WAV files for the model.

    Returns
    -------
    list of Path
        The WAV files' resolved paths, one per clip in order.
    """
    paths = []
    for k, data in enumerate(item.clips):
        path = inside(Path(audio_dir).parent, Path(audio_dir).name, item.task, f"{item.id}-{k}.wav")
        if not path.exists():
            export_wav(data, path)
        paths.append(path.resolve())
    return paths
