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
        """The directory's lock for one run (:func:`~auralgen.export.manifest.out_lock`).

        Returns
        -------
        contextlib.AbstractContextManager
            Holds the lock while entered.
        """
        return out_lock(self.url)

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        """Check the destination and load the resume journal (the directory is created).

        Parameters
        ----------
        fp : str
            The run config's fingerprint.
        overwrite : bool
            Remove a previous run's recorded files instead of resuming it.

        Returns
        -------
        dict
            The journal, as :func:`~auralgen.export.manifest.prepare_out` returns it.
        """
        journal = prepare_out(self.url, fp, overwrite=overwrite)
        self.dir.mkdir(parents=True, exist_ok=True)
        return journal

    def publish(self, rel: str) -> None:
        """Nothing to do: the file is already at its place.

        Parameters
        ----------
        rel : str
            The file's path relative to the directory.
        """

    def write_json(self, rel: str, data: Any) -> None:
        """Write ``data`` as JSON in the directory via a temporary file.

        Parameters
        ----------
        rel : str
            The file's path relative to the directory.
        data : Any
            A JSON-able value.
        """
        write_json(self.dir / rel, data)

    def write_text(self, rel: str, text: str) -> None:
        """Write ``text`` in the directory via a temporary file.

        Parameters
        ----------
        rel : str
            The file's path relative to the directory.
        text : str
            The file's content.
        """
        write_text(self.dir / rel, text)

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        """Whether shard ``rel`` is finished (on disk); one failing its hash check is dropped from the journal.

        Parameters
        ----------
        rel : str
            The shard's path relative to the destination.
        journal : dict
            The run's journal; the record of a shard missing or not matching its SHA-256 is removed
            from ``journal["shards"]`` (a missing ``extra`` file leaves it).
        extra : tuple of str, optional
            Files that must exist beside it (e.g. its WebDataset tar).

        Returns
        -------
        bool
            True if the shard matches its record's SHA-256 and every ``extra`` file exists.
        """
        return is_done(self.dir, rel, journal) and all((self.dir / e).exists() for e in extra)

    def remove(self, rel: str) -> None:
        """Delete the file ``rel`` if it exists.

        Parameters
        ----------
        rel : str
            The file's path relative to the directory.
        """
        (self.dir / rel).unlink(missing_ok=True)

    def open(self, rel: str):
        """Open the file ``rel`` for binary reading.

        Parameters
        ----------
        rel : str
            The file's path relative to the directory.

        Returns
        -------
        file object
            A binary file object.
        """
        return open(self.dir / rel, "rb")

    def where(self) -> str:
        """The destination, for messages.

        Returns
        -------
        str
            The directory's absolute path.
        """
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
        """The prefix's lock object for one run (:func:`~auralgen.export.storage.bucket_lock`).

        Returns
        -------
        contextlib.AbstractContextManager
            Holds the lock (and renews its lease) while entered.
        """
        return bucket_lock(self)

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        """Check the destination and load the resume journal (from the bucket).

        Parameters
        ----------
        fp : str
            The run config's fingerprint.
        overwrite : bool
            Remove a previous run's recorded files instead of resuming it.

        Returns
        -------
        dict
            The journal, as :func:`~auralgen.export.storage.prepare_bucket` returns it.
        """
        return prepare_bucket(self, fp, overwrite=overwrite, recorded_of=recorded, read_journal=keep_prior)

    def publish(self, rel: str) -> None:
        """Put the staged file ``rel`` into the bucket as one object and delete the local copy.

        Parameters
        ----------
        rel : str
            The file's path relative to the staging folder and the prefix.
        """
        self.put(rel)

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        """Whether shard ``rel`` is finished (in the bucket); an unfinished one is dropped from the journal.

        Parameters
        ----------
        rel : str
            The shard's path relative to the destination.
        journal : dict
            The run's journal; an unfinished shard's record is removed from ``journal["shards"]``.
        extra : tuple of str, optional
            Files that must exist beside it (e.g. its WebDataset tar).

        Returns
        -------
        bool
            True if the shard matches its record's SHA-256 and every ``extra`` file exists.
        """
        rec = journal["shards"].get(rel)
        ok = bool(rec) and self.exists(rel) and self.sha256(rel) == rec["sha256"]
        ok = ok and all(self.exists(e) for e in extra)
        if not ok:
            journal["shards"].pop(rel, None)
        return ok

    def where(self) -> str:
        """The destination, for messages.

        Returns
        -------
        str
            The bucket URL, without a trailing slash.
        """
        return self.url

    def close(self) -> None:
        """Remove the staging folder and whatever is left in it."""
        shutil.rmtree(self.staging, ignore_errors=True)


def target(out: str) -> LocalTarget | BucketTarget:
    """The run's destination for ``out``: a bucket prefix for a URL, else a local directory.

    Parameters
    ----------
    out : str
        The ``out`` value: a local path or a URL (``s3://bucket/prefix``, any fsspec URL).

    Returns
    -------
    LocalTarget or BucketTarget
        The destination; a bucket target has its staging folder created.

    Raises
    ------
    ParameterError
        If ``out`` is a URL that no installed filesystem serves or that names no bucket.
    """
    return BucketTarget(out) if is_url(out) else LocalTarget(out)
