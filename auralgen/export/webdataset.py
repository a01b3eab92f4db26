"""WebDataset tar shards beside the parquet shards (``export.format=parquet+webdataset``).

One tar per parquet shard, ``webdataset/<task>/<split>-0000i-of-0000N.tar``, holding the same rows
in the same order: per item ``<id>.json`` (every column but ``audio``, the same values as the
parquet row) and ``<id>.<k>.flac`` for its clips ``k = 0, 1, ...`` (the same FLAC bytes). The bytes
are deterministic: fixed mtime, owner and mode in every header (POSIX ustar), so a rerun writes the
same tar and the manifest's SHA-256 holds.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

from auralgen.export.parquet import COLUMNS, sha256_file

WDS_DIR = "webdataset"
FORMATS = ("parquet", "parquet+webdataset")


def tar_name(shard_path: str) -> str:
    """The tar shard beside parquet shard ``data/<task>/<name>.parquet``: ``webdataset/<task>/<name>.tar``.

    Parameters
    ----------
    shard_path : str
        A parquet shard's path relative to ``out``, under ``data/``.

    Returns
    -------
    str
        The tar shard's path relative to ``out``.

    Examples
    --------
    >>> tar_name("data/pitch_relative/test-00000-of-00001.parquet")
    'webdataset/pitch_relative/test-00000-of-00001.tar'
    """
    rel = Path(shard_path).relative_to("data")
    return f"{WDS_DIR}/{rel.with_suffix('.tar').as_posix()}"


def _member(name: str, data: bytes) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info, io.BytesIO(data)


class TarShardWriter:
    """Stream rows into ``final_path`` via ``final_path + '.tmp'``; :meth:`close` renames."""

    def __init__(self, final_path: str | os.PathLike):
        self.final = Path(final_path)
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.with_name(self.final.name + ".tmp")
        self.tar = tarfile.open(self.tmp, "w", format=tarfile.USTAR_FORMAT)
        self.rows = 0

    def add(self, row: dict) -> None:
        """Append one item: ``<id>.json`` (every column but ``audio``) and ``<id>.<k>.flac`` per clip.

        Parameters
        ----------
        row : dict
            One item row with every column of the item schema; ``audio`` a list of ``{"bytes": ...}``.
        """
        meta = {c: row[c] for c in COLUMNS if c != "audio"}
        self.tar.addfile(*_member(f"{row['id']}.json", json.dumps(meta, sort_keys=True).encode()))
        for k, clip in enumerate(row["audio"]):
            self.tar.addfile(*_member(f"{row['id']}.{k}.flac", clip["bytes"]))
        self.rows += 1

    def close(self) -> tuple[str, int]:
        """Finish the shard and rename it from its ``.tmp`` name to its final path.

        Returns
        -------
        sha256 : str
            SHA-256 of the finished tar file, as hex.
        rows : int
            Number of items written.
        """
        self.tar.close()
        os.replace(self.tmp, self.final)
        return sha256_file(self.final), self.rows

    def abort(self) -> None:
        """Drop the unfinished shard: its ``.tmp`` is removed even when closing the tar fails."""
        try:
            self.tar.close()
        finally:
            self.tmp.unlink(missing_ok=True)
