"""Items of an exported dataset, as the evaluator sees them.

:func:`iter_items` reads the parquet shards of a dataset directory (``data/<task>/<split>-*.parquet``)
record batch by record batch into :class:`Item` objects holding the FLAC bytes of every clip
(decoded only when a WAV file is written for a model, every channel kept), so reading a dataset
takes the same memory whatever its size; :func:`load_items` is its list.
"""

from __future__ import annotations

import functools
import glob
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import soundfile as sf

from auralgen.core.errors import ParameterError
from auralgen.core.schema import eval_columns
from auralgen.export.audio import decode_flac
from auralgen.export.parquet import sha256_file
from auralgen.tasks.base import AudioConfig, Task, task_class

_COLUMNS = eval_columns()  # the columns of the item schema the evaluator reads
READ_BATCH_ROWS = 64  # rows decoded from a shard at a time


@functools.cache
def _task(name: str) -> Task:
    """A task object of ``name`` at its default config: what it states of an item comes from the
    item's ``params`` alone (:meth:`~auralgen.tasks.base.Task.eval_fields`), not from the config."""
    cls = task_class(name)
    return cls(cls.Config(name=name), AudioConfig())


@dataclass(frozen=True)
class Item:
    """One multiple-choice item; ``options`` in canonical order, ``clips`` as FLAC bytes."""

    id: str
    task: str
    category: str
    sub_category: str
    attribute: str
    regime: str
    level: int
    level_value: float
    level_unit: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    clips: tuple[bytes, ...] = field(repr=False)
    sample_rate: int = 16000
    num_channels: int = 1
    channel_layout: str = "mono"
    params: dict = field(default_factory=dict, repr=False)
    split: str = "test"

    @property
    def answer(self) -> str:
        return self.options[self.answer_index]

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
        rec.update(_task(self.task).eval_fields(self.params))
        return rec


def dataset_tasks(data: str | os.PathLike, split: str) -> list[str]:
    """Task names with at least one shard of ``split`` under ``data``."""
    return sorted({Path(p).parent.name for p in glob.glob(f"{data}/data/*/{split}-*.parquet")})


def read_manifest(data: str | os.PathLike) -> dict:
    """``<data>/manifest.json`` (written last by ``generate.py``: its presence marks a complete dataset).

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
    """SHA-256 (16 hex digits) of ``<data>/manifest.json``: it names every shard by its hash."""
    return sha256_file(Path(data) / "manifest.json")[:16]


def verify_shards(data: str | os.PathLike, split: str, tasks) -> list[str]:
    """Paths (relative to ``data``) of the shards of ``split`` and ``tasks``, each checked against the manifest.

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


def iter_shard(data: str | os.PathLike, path: str, *, audio: bool = True) -> Iterator[dict]:
    """Rows of one shard (``path`` relative to ``data``) with every column the evaluator reads, read
    :data:`READ_BATCH_ROWS` at a time; ``audio=False`` reads no clip's bytes (each clip is ``b""``: how
    many clips an item has still decides how it is presented)."""
    try:
        shard = pq.ParquetFile(Path(data) / path)
        missing = [c for c in _COLUMNS if c not in shard.schema_arrow.names]
        if missing:
            raise ParameterError(
                f"shard {path!r} in data={str(data)!r} lacks column(s) {', '.join(missing)}; "
                f"allowed: a shard with the columns {', '.join(_COLUMNS)}"
            )
        columns = [c if audio or c != "audio" else _clip_paths_column(shard) for c in _COLUMNS]
        for batch in shard.iter_batches(batch_size=READ_BATCH_ROWS, columns=columns):
            for row in batch.to_pylist():
                if not audio and isinstance(row.get("audio"), list):
                    row["audio"] = [{"bytes": b"", "path": (a or {}).get("path")} for a in row["audio"]]
                yield row
    except (OSError, pa.ArrowException) as exc:
        raise ParameterError(
            f"shard {path!r} in data={str(data)!r} is unreadable ({type(exc).__name__}: {str(exc)[:120]}); "
            "allowed: a parquet file written by generate.py"
        ) from None


def _clip_paths_column(shard: pq.ParquetFile) -> str:
    """The column to read for the clips without their bytes: the paths inside the audio list where the
    shard has generate.py's layout (``list<element: struct<bytes, path>>``), else the whole audio column."""
    kind = shard.schema_arrow.field("audio").type
    if pa.types.is_list(kind) and kind.value_field.name == "element" and pa.types.is_struct(kind.value_type):
        if kind.value_type.get_field_index("path") >= 0:
            return "audio.list.element.path"
    return "audio"


def read_shard(data: str | os.PathLike, path: str) -> list[dict]:
    """Rows of one shard (``path`` relative to ``data``) with every column the evaluator reads."""
    return list(iter_shard(data, path))


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
            f"tasks={missing!r} not in data={str(data)!r} split={split!r}; allowed: {', '.join(present)}"
        )
    return wanted, verify_shards(data, split, wanted)


def iter_items(
    data: str | os.PathLike, *, split: str = "test", tasks=None, max_items: int | None = None, audio: bool = True
) -> Iterator[Item]:
    """Items of ``split`` (optionally of some ``tasks``; ``max_items`` per task) in dataset order, read
    a record batch at a time (memory independent of the dataset's size).

    Every shard is first checked against the SHA-256 in ``manifest.json``; every item read is
    checked by :func:`check_item` (its audio decoded), so a damaged dataset ends in one line
    naming the shard or the item. ``audio=False`` reads no audio (the items' ``clips`` are
    empty, unchecked): for a pass that needs the items' other fields only.

    Raises
    ------
    ParameterError
        When ``data`` holds no shard of ``split``, a requested task is absent, a shard or an
        item is damaged, or an id occurs twice.
    """
    wanted, shards = _selected_shards(data, split, tasks)
    seen: set[str] = set()
    for task in wanted:
        count = 0
        for path in (p for p in shards if p.startswith(f"data/{task}/")):
            for n, row in enumerate(iter_shard(data, path, audio=audio)):
                if max_items is not None and count >= max_items:
                    break
                item = check_item(row, f"shard {path!r} row {n}", audio=audio)
                if item.id in seen:
                    raise ParameterError(f"item id={item.id!r} occurs twice in data={str(data)!r}; allowed: unique ids")
                seen.add(item.id)
                yield item
                count += 1


def load_items(data: str | os.PathLike, *, split: str = "test", tasks=None, max_items: int | None = None) -> list[Item]:
    """The list of :func:`iter_items` (every item in memory: for small selections)."""
    return list(iter_items(data, split=split, tasks=tasks, max_items=max_items))


def check_item(row: dict, where: str, *, audio: bool = True) -> Item:
    """The :class:`Item` of ``row``, checked: its answer matches its options and every clip decodes
    (``audio=False``: the clips are not checked).

    Raises
    ------
    ParameterError
        One line naming the item (``where``, its id) and what is wrong.
    """
    name = f"item id={row.get('id')!r} ({where})"
    try:
        item = item_from_row(row)
    except (KeyError, TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} is malformed ({type(exc).__name__}: {exc}); allowed: a row generate.py wrote"
        ) from None
    n = len(item.options)
    if n < 2 or len(set(item.options)) != n:
        raise ParameterError(f"{name} has options={list(item.options)!r}; allowed: at least 2 distinct options")
    if not 0 <= item.answer_index < n:
        raise ParameterError(f"{name} has answer_index={item.answer_index}, out of range; allowed: 0..{n - 1}")
    if row.get("answer") != item.answer:
        raise ParameterError(
            f"{name} has answer={row.get('answer')!r} but options[{item.answer_index}]={item.answer!r}; "
            "allowed: answer == options[answer_index]"
        )
    if not audio:
        return item
    if not item.clips:
        raise ParameterError(f"{name} has no audio clip; allowed: one clip or more")
    for k, data in enumerate(item.clips):
        try:
            clip, rate = decode_flac(data)
        except (sf.LibsndfileError, RuntimeError, TypeError, ValueError) as exc:
            raise ParameterError(f"{name} audio[{k}] does not decode as FLAC ({exc}); allowed: FLAC bytes") from None
        if rate != item.sample_rate or clip.shape[0] != item.num_channels or clip.shape[1] == 0:
            raise ParameterError(
                f"{name} audio[{k}] holds {clip.shape[0]} channel(s) x {clip.shape[1]} samples at {rate} Hz; "
                f"allowed: {item.num_channels} channel(s), > 0 samples, at sampling_rate={item.sample_rate}"
            )
    return item


def item_from_row(row: dict) -> Item:
    """An :class:`Item` from one exported row (see the item schema, auralgen/core/schema.py)."""
    params = row.get("params") or "{}"
    return Item(
        id=row["id"],
        task=row["task"],
        category=row.get("category") or "",
        sub_category=row.get("sub_category") or "",
        attribute=row.get("attribute") or "",
        regime=row.get("regime") or "",
        level=int(row.get("level") or 0),
        level_value=float(row["level_value"]) if row.get("level_value") is not None else float("nan"),
        level_unit=row.get("level_unit") or "",
        question=row["question"],
        options=tuple(row["options"]),
        answer_index=int(row["answer_index"]),
        clips=tuple(a["bytes"] for a in row["audio"]),
        sample_rate=int(row.get("sampling_rate") or 16000),
        num_channels=int(row.get("num_channels") or 1),
        channel_layout=row.get("channel_layout") or "mono",
        params=json.loads(params) if isinstance(params, str) else dict(params),
        split=row.get("split") or "test",
    )


def write_wav(path: str | os.PathLike, clip: np.ndarray, sample_rate: int) -> Path:
    """Write float32 ``[channels, samples]`` as a 24-bit PCM WAV (every channel kept)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    sf.write(tmp, np.asarray(clip, dtype=np.float32).T, int(sample_rate), format="WAV", subtype="PCM_24")
    os.replace(tmp, path)
    return path


def read_wav(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """``(float32 [channels, samples], sample_rate)`` of a WAV file, channels preserved."""
    x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return np.ascontiguousarray(x.T), int(sr)


def export_wav(flac: bytes, path: str | os.PathLike) -> Path:
    """Decode one exported FLAC clip and write it as WAV at ``path`` (every channel kept)."""
    clip, sr = decode_flac(flac)
    return write_wav(path, clip, sr)


def clip_wavs(item: Item, audio_dir: str | os.PathLike) -> list[Path]:
    """WAV files of the item's clips under ``audio_dir`` (written once, reused afterwards)."""
    paths = []
    for k, data in enumerate(item.clips):
        path = Path(audio_dir) / item.task / f"{item.id}-{k}.wav"
        if not path.exists():
            export_wav(data, path)
        paths.append(path.resolve())
    return paths
