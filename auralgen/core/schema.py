"""The item schema: one :class:`Row` per dataset item, the only place a column is written.

Everything that names columns derives from :func:`columns`: the Arrow schema and Hugging Face
features of the shards (:mod:`auralgen.export.parquet`), the column table of the dataset card
(:mod:`auralgen.export.card`), the evaluator's item (:mod:`auralgen.evaluation.items`, one field per
``eval`` column) and the audit's rows (:mod:`auralgen.validation.read`). Adding a column here adds
it everywhere; the order of the fields is the order of the columns.

:func:`iter_items` is the one reader of shard rows: evaluation, the audit and the exports all read
through it, record batch by record batch (a shard is never held whole).

Arrow types are strings: ``string``, ``int32``, ``int64``, ``float64``, ``bool``,
``list<string>`` and ``list<audio>`` (a list of ``{"bytes": FLAC bytes, "path": str}``).

Examples
--------
>>> [c.name for c in columns()][:3]
['id', 'task', 'category']
>>> next(c for c in columns() if c.name == "sampling_rate").unit
'Hz'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from auralgen.core.errors import ParameterError

ARROW_TYPES = ("string", "int32", "int64", "float64", "bool", "list<string>", "list<audio>")


class Column(NamedTuple):
    """One column: its name, Arrow type string, card documentation and whether the evaluator reads it.

    ``doc`` may hold ``{units}`` (the level units of the dataset) and ``{bits}`` (the FLAC bit depth),
    which the dataset card fills in; ``unit`` is the column's unit as the card states it.
    """

    name: str
    arrow: str
    doc: str
    eval: bool
    unit: str
    public: bool = False


def column(arrow: str, doc: str, *, eval: bool = True, unit: str = "", public: bool = False) -> Any:
    """A :class:`Row` field carrying its column metadata.

    Parameters
    ----------
    arrow : str
        The Arrow type, one of :data:`ARROW_TYPES`.
    doc : str
        The dataset card's description; may hold ``{units}`` and ``{bits}``.
    eval : bool, optional
        Whether the evaluator reads the column (default True).
    unit : str, optional
        The column's unit as the card states it (e.g. ``"Hz"``; default none).
    public : bool, optional
        Whether a model may see it: only public columns go to the public export (default False).

    Returns
    -------
    dataclasses.Field
        The field, its metadata holding these five values.

    Raises
    ------
    ValueError
        When ``arrow`` is not a known type (a programming error, not user input).
    """
    if arrow not in ARROW_TYPES:
        raise ValueError(f"column type {arrow!r} is unknown; allowed: {', '.join(ARROW_TYPES)}")
    return dataclasses.field(metadata={"arrow": arrow, "doc": doc, "eval": eval, "unit": unit, "public": public})


@dataclass(frozen=True)
class Row:
    """One item of the dataset, as written to a parquet shard (see the module docstring)."""

    id: str = column("string", "opaque id, unique across configs; carries no parameter value or answer", public=True)
    task: str = column("string", "task name (the config of the same name holds its rows)", public=True)
    category: str = column("string", "e.g. `foundational_perception`", public=True)
    sub_category: str = column("string", "e.g. `relative_discrimination`", public=True)
    attribute: str = column("string", "probed attribute: `pitch`, `loudness`, `duration`, `azimuth`, ...")
    regime: str = column("string", "`absolute`, `relative` or `mixture`")
    level: int = column("int32", "difficulty index within the task (0 = first level of the task's list)")
    level_value: float = column("float64", "the physical value of the difficulty", unit="`level_unit`")
    level_unit: str = column("string", "the unit of `level_value` in this row: {units}")
    question: str = column("string", "the question text", public=True)
    options: list[str] = column("list<string>", "options in canonical order (the evaluator rotates them)", public=True)
    answer: str = column("string", "the correct option's text")
    answer_index: int = column("int32", "index of the answer in `options`")
    audio: list[dict[str, Any]] = column(
        "list<audio>", "1..k clips: FLAC bytes ({bits}-bit), every channel preserved", public=True
    )
    sampling_rate: int = column("int32", "sample rate of every clip of the row", unit="Hz", public=True)
    num_channels: int = column("int32", "channels per clip", public=True)
    channel_layout: str = column(
        "string", "`mono`, `stereo`, `binaural`, `foa_acn_sn3d`, `tetra`, `circular_<n>`", public=True
    )
    params: str = column(
        "string",
        "JSON: the full recipe; rendering it reproduces the audio bit for bit (keys carry units: `*_hz`, `*_s`, ...)",
    )
    measured: str = column("string", "JSON: validation measurements of the rendered audio", eval=False)
    valid: bool = column("bool", "whether the measurements support the label", eval=False)
    seed: int = column(
        "int64", "generation seed (-1: a secret seed, see `seed_commitment` in manifest.json)", eval=False
    )
    split: str = column("string", "split name", public=True)
    generator_version: str = column("string", "auralgen version", eval=False, public=True)

    def to_record(self) -> dict[str, Any]:
        """The row as a ``{column: value}`` dict in column order (values not copied).

        Returns
        -------
        dict of str to object
            One entry per column of :func:`columns`.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def columns() -> list[Column]:
    """Every column of :class:`Row`, in order.

    Returns
    -------
    list of Column
        One per field of :class:`Row`, in field order.
    """
    return [
        Column(
            f.name, f.metadata["arrow"], f.metadata["doc"], f.metadata["eval"], f.metadata["unit"], f.metadata["public"]
        )
        for f in dataclasses.fields(Row)
    ]


def public_columns() -> tuple[str, ...]:
    """Names of the columns a model may see (``public=True``), in order: the public export holds only these.

    Returns
    -------
    tuple of str
        Column names in :func:`columns` order.
    """
    return tuple(c.name for c in columns() if c.public)


def eval_columns() -> tuple[str, ...]:
    """Names of the columns the evaluator reads (``eval=True``), in order.

    Returns
    -------
    tuple of str
        Column names in :func:`columns` order.
    """
    return tuple(c.name for c in columns() if c.eval)


PYTHON_TYPES = {
    "string": str,
    "int32": int,
    "int64": int,
    "float64": float,
    "bool": bool,
    "list<string>": tuple,
    "list<audio>": tuple,
}


def python_type(name: str) -> type:
    """The Python type a column's values are read as (lists as tuples).

    Parameters
    ----------
    name : str
        A column name of :class:`Row`.

    Returns
    -------
    type
        ``str``, ``int``, ``float``, ``bool`` or ``tuple``.

    Raises
    ------
    ParameterError
        When ``name`` is not a column.
    """
    found = [c.arrow for c in columns() if c.name == name]
    if not found:
        raise ParameterError(f"column {name!r} is not in the item schema; allowed: {[c.name for c in columns()]}")
    return PYTHON_TYPES[found[0]]


class ShardRow(NamedTuple):
    """One row read by :func:`iter_items`: its shard (relative to the dataset root), its index in
    the shard, and the ``{column: value}`` record."""

    shard: str
    index: int
    record: dict[str, Any]


def iter_items(
    root, shards: Iterable[str], *, names: Iterable[str] | None = None, batch_rows: int = 64, audio_bytes: bool = True
) -> Iterator[ShardRow]:
    """Every row of ``shards`` (paths relative to ``root``), in order, ``batch_rows`` at a time.

    Parameters
    ----------
    root : str or Path
        The dataset folder.
    shards : iterable of str
        Parquet shard paths relative to ``root``, read in this order.
    names : iterable of str, optional
        Columns to read, checked against each shard's schema before it is read (default: every
        column of :class:`Row` the shard holds).
    batch_rows : int, optional
        Rows per record batch read (default 64); a shard is never held whole.
    audio_bytes : bool, optional
        False reads the clips' paths but not their bytes (each clip of ``audio`` is
        ``{"bytes": b"", "path": ...}``) where the shard has generate.py's layout.

    Yields
    ------
    ShardRow
        The shard (as given), the row's index in it and its ``{column: value}`` record.

    Raises
    ------
    ParameterError
        Naming the shard that is unreadable or lacks a requested column.
    """
    for rel in shards:
        path = Path(root) / rel
        try:
            pf = pq.ParquetFile(path)
            present = pf.schema_arrow.names
            wanted = list(names) if names is not None else [c.name for c in columns() if c.name in present]
            missing = [c for c in wanted if c not in present]
            if missing:
                raise ParameterError(
                    f"shard {rel!r} in {str(root)!r} lacks column(s) {', '.join(missing)}; "
                    f"allowed: a shard with the columns {', '.join(wanted)}"
                )
            paths_only = not audio_bytes and "audio" in wanted and _clip_paths_column(pf) != "audio"
            read = [_clip_paths_column(pf) if c == "audio" and paths_only else c for c in wanted]
            index = 0
            for batch in pf.iter_batches(batch_size=batch_rows, columns=read):
                for record in batch.to_pylist():
                    if paths_only and isinstance(record.get("audio"), list):
                        record["audio"] = [{"bytes": b"", "path": (a or {}).get("path")} for a in record["audio"]]
                    yield ShardRow(str(rel), index, record)
                    index += 1
        except (OSError, pa.ArrowException) as exc:
            raise ParameterError(
                f"shard {rel!r} in {str(root)!r} is unreadable ({type(exc).__name__}: {str(exc)[:120]}); "
                "allowed: a parquet file written by generate.py"
            ) from None


def _clip_paths_column(pf: pq.ParquetFile) -> str:
    """The column that holds the clips' paths without their bytes where the shard has generate.py's
    layout (``list<element: struct<bytes, path>>``), else the whole ``audio`` column."""
    kind = pf.schema_arrow.field("audio").type
    if pa.types.is_list(kind) and kind.value_field.name == "element" and pa.types.is_struct(kind.value_type):
        if kind.value_type.get_field_index("path") >= 0:
            return "audio.list.element.path"
    return "audio"
