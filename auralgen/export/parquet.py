"""Parquet shards in the Hub layout: ``data/<task>/<split>-00000-of-0000N.parquet``.

Rows are streamed into a shard in fixed-size row groups (the dataset is never held in
memory); the shard is written under a temporary name and renamed when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from auralgen.core.schema import columns

ROW_GROUP = 64

# The item schema (auralgen/core/schema.py) as Hugging Face features. The Arrow schema carries
# them in its "huggingface" metadata, so `load_dataset("parquet", ...)` sees `audio` as a list of
# Audio(decode=False). Built with pyarrow alone (importing `datasets` costs ~140 MB per
# worker); tests/export pins it to `datasets.Features(...).arrow_schema`.
_VALUE = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
_AUDIO = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _feature(kind: str) -> tuple[dict, pa.DataType]:
    if kind == "list<string>":
        return {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"}, pa.list_(pa.string())
    if kind == "list<audio>":
        return {"feature": {"decode": False, "_type": "Audio"}, "_type": "List"}, pa.list_(_AUDIO)
    return {"dtype": kind, "_type": "Value"}, _VALUE[kind]


FEATURES = {c.name: _feature(c.arrow)[0] for c in columns()}  # Hugging Face features dict
SCHEMA = pa.schema(
    [pa.field(c.name, _feature(c.arrow)[1]) for c in columns()],
    metadata={"huggingface": json.dumps({"info": {"features": FEATURES}})},
)
COLUMNS = [c.name for c in columns()]


def shard_name(task: str, split: str, i: int, n: int) -> str:
    """Relative path of shard ``i`` of ``n`` of one task's split, in the Hub layout.

    Parameters
    ----------
    task : str
        Task name, e.g. ``pitch_relative``.
    split : str
        Split name, e.g. ``test``.
    i : int
        Zero-based shard index.
    n : int
        Number of shards of this task's split.

    Returns
    -------
    str
        ``data/<task>/<split>-<i>-of-<n>.parquet`` with five-digit zero-padded numbers.

    Examples
    --------
    >>> shard_name("pitch_relative", "test", 0, 2)
    'data/pitch_relative/test-00000-of-00002.parquet'
    """
    return f"data/{task}/{split}-{i:05d}-of-{n:05d}.parquet"


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks.

    Parameters
    ----------
    path : str or PathLike
        The file.

    Returns
    -------
    str
        The digest as 64 lowercase hex characters.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ShardWriter:
    """Stream rows into ``final_path`` via ``final_path + '.tmp'``; :meth:`close` renames."""

    def __init__(self, final_path: str | os.PathLike):
        self.final = Path(final_path)
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.with_name(self.final.name + ".tmp")
        try:
            self.writer = pq.ParquetWriter(
                self.tmp, SCHEMA, compression="zstd", use_dictionary=False, write_statistics=False
            )
        except BaseException:  # an interrupt while the file is being opened leaves no .tmp behind
            self.tmp.unlink(missing_ok=True)
            raise
        self.buffer: list[dict] = []
        self.rows = 0

    def add(self, row: dict) -> None:
        """Append one row; a full row group (:data:`ROW_GROUP` rows) is written out.

        Parameters
        ----------
        row : dict
            One item row with every column of :data:`COLUMNS` (the item schema).
        """
        self.buffer.append(row)
        self.rows += 1
        if len(self.buffer) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self.buffer:
            cols = {c: [r[c] for r in self.buffer] for c in COLUMNS}
            self.writer.write_table(pa.Table.from_pydict(cols, schema=SCHEMA), row_group_size=ROW_GROUP)
            self.buffer = []

    def close(self) -> tuple[str, int]:
        """Finish the shard and rename it from its ``.tmp`` name to its final path.

        Returns
        -------
        sha256 : str
            SHA-256 of the finished shard file, as hex.
        rows : int
            Number of rows written.
        """
        self._flush()
        self.writer.close()
        os.replace(self.tmp, self.final)
        return sha256_file(self.final), self.rows

    def abort(self) -> None:
        """Drop the unfinished shard: its ``.tmp`` is removed even when closing the writer fails."""
        try:
            self.writer.close()
        finally:
            self.tmp.unlink(missing_ok=True)
