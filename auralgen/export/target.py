"""Where a run writes: a local directory (``out=<path>``) or a bucket prefix (``out=s3://...``, any
fsspec URL). Both offer the same operations to :mod:`auralgen.generation.run`: write a file in
:attr:`dir` (the directory itself, or the bucket's private staging folder), :meth:`publish` it,
write JSON, check a finished shard, lock the destination for one run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from auralgen.export.manifest import is_done, keep_prior, out_lock, prepare_out, recorded, write_json, write_text
from auralgen.export.storage import Bucket, bucket_lock, is_url, prepare_bucket


class LocalTarget:
    """``out`` is a directory: files are written in place, the journal and manifest via a rename."""

    def __init__(self, out: str):
        self.url = out
        self.dir = Path(out)

    def lock(self):
        return out_lock(self.url)

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        journal = prepare_out(self.url, fp, overwrite=overwrite)
        self.dir.mkdir(parents=True, exist_ok=True)
        return journal

    def publish(self, rel: str) -> None:
        """Nothing to do: the file is already at its place."""

    def write_json(self, rel: str, data: Any) -> None:
        write_json(self.dir / rel, data)

    def write_text(self, rel: str, text: str) -> None:
        write_text(self.dir / rel, text)

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        return is_done(self.dir, rel, journal) and all((self.dir / e).exists() for e in extra)

    def remove(self, rel: str) -> None:
        (self.dir / rel).unlink(missing_ok=True)

    def open(self, rel: str):
        return open(self.dir / rel, "rb")

    def where(self) -> str:
        return str(self.dir.resolve())

    def close(self) -> None:
        """Nothing to release."""


class BucketTarget(Bucket):
    """``out`` is a bucket prefix: each file is written in a private staging folder, then put as one
    object (:meth:`publish`); JSON files are put directly. Resume reads the journal from the bucket
    and checks each recorded shard's SHA-256 there. The staging folder is removed by :meth:`close`."""

    def __init__(self, out: str):
        super().__init__(out, staging=tempfile.mkdtemp(prefix="auralgen-staging-"))
        self.dir = self.staging

    def lock(self):
        return bucket_lock(self)

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        return prepare_bucket(self, fp, overwrite=overwrite, recorded_of=recorded, read_journal=keep_prior)

    def publish(self, rel: str) -> None:
        self.put(rel)

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        rec = journal["shards"].get(rel)
        ok = bool(rec) and self.exists(rel) and self.sha256(rel) == rec["sha256"]
        ok = ok and all(self.exists(e) for e in extra)
        if not ok:
            journal["shards"].pop(rel, None)
        return ok

    def where(self) -> str:
        return self.url

    def close(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def target(out: str) -> LocalTarget | BucketTarget:
    """The run's destination for ``out``: a bucket prefix for a URL, else a local directory."""
    return BucketTarget(out) if is_url(out) else LocalTarget(out)
