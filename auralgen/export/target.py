"""Where a run writes: a local directory (``out=<path>``) or a bucket prefix (``out=s3://...``, any
fsspec URL). Both offer the same operations to :mod:`auralgen.generation.run`: write a file in
:attr:`dir` (the directory itself, or the bucket's private staging folder), :meth:`publish` it,
write JSON, check a finished shard, lock the destination for one run.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from auralgen.export.manifest import is_done, keep_prior, out_lock, prepare_out, recorded, write_json, write_text
from auralgen.export.storage import Bucket, bucket_lock, is_url, prepare_bucket


class Target(Protocol):
    """What :mod:`auralgen.generation.run` needs of a destination; :class:`LocalTarget` and
    :class:`BucketTarget` implement it. ``url`` is the ``out`` value; ``dir`` is the local directory
    files are written in before :meth:`publish`. Every method's ``rel`` names a file by its path
    relative to ``dir`` and to the destination (``data/<task>/<split>-....parquet``)."""

    url: str
    dir: Path

    def lock(self) -> AbstractContextManager:
        """The destination's lock for one run.

        Returns
        -------
        contextlib.AbstractContextManager
            Holds the lock while entered; a destination another run holds is refused.
        """
        ...

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        """Check the destination and load the resume journal, before anything is written.

        Parameters
        ----------
        fp : str
            The run config's fingerprint; a destination holding a run of another config is refused.
        overwrite : bool
            Delete what a previous run (of any config) recorded and start anew, instead of resuming.

        Returns
        -------
        dict
            The journal, as :func:`~auralgen.export.manifest.prepare_out` describes it.
        """
        ...

    def publish(self, rel: str) -> None:
        """Make the finished file ``rel`` in :attr:`dir` visible at the destination, whole.

        Parameters
        ----------
        rel : str
            The finished file.
        """
        ...

    def write_json(self, rel: str, data: Any) -> None:
        """Write ``data`` as sorted, indented JSON at the destination; a reader sees it whole or not at all.

        Parameters
        ----------
        rel : str
            The file to write.
        data : Any
            A JSON-able value.
        """
        ...

    def write_text(self, rel: str, text: str) -> None:
        """Write ``text`` (UTF-8) at the destination; a reader sees it whole or not at all.

        Parameters
        ----------
        rel : str
            The file to write.
        text : str
            The file's content.
        """
        ...

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        """Whether shard ``rel`` is finished; one that is not is dropped from the journal.

        Parameters
        ----------
        rel : str
            The shard to check.
        journal : dict
            The run's journal; the record of a shard missing or not matching its SHA-256 is removed
            from ``journal["shards"]``.
        extra : tuple of str, optional
            Files that must exist beside it (e.g. its WebDataset tar).

        Returns
        -------
        bool
            True if the shard matches its record's SHA-256 and every ``extra`` file exists.
        """
        ...

    def remove(self, rel: str) -> None:
        """Delete the file ``rel`` at the destination if it exists.

        Parameters
        ----------
        rel : str
            The file to delete.
        """
        ...

    def open(self, rel: str) -> BinaryIO:
        """Open the file ``rel`` at the destination for binary reading.

        Parameters
        ----------
        rel : str
            The file to open.

        Returns
        -------
        file object
            A binary, seekable file object.
        """
        ...

    def where(self) -> str:
        """The destination, for messages.

        Returns
        -------
        str
            The directory (relative to the working directory when inside it) or the bucket URL.
        """
        ...

    def close(self) -> None:
        """Release what the target holds (a bucket's staging folder)."""
        ...


class LocalTarget(Target):
    """``out`` is a directory: files are written in place, the journal and manifest via a rename."""

    def __init__(self, out: str):
        self.url = out
        self.dir = Path(out)

    def lock(self):
        """The directory's lock (:func:`~auralgen.export.manifest.out_lock`)."""
        return out_lock(self.url)

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        """:func:`~auralgen.export.manifest.prepare_out`, then the directory is created."""
        journal = prepare_out(self.url, fp, overwrite=overwrite)
        self.dir.mkdir(parents=True, exist_ok=True)
        return journal

    def publish(self, rel: str) -> None:
        """Nothing to do: the file is already at its place."""

    def write_json(self, rel: str, data: Any) -> None:
        """:func:`~auralgen.export.manifest.write_json` in the directory (a temporary file, renamed)."""
        write_json(self.dir / rel, data)

    def write_text(self, rel: str, text: str) -> None:
        """:func:`~auralgen.export.manifest.write_text` in the directory (a temporary file, renamed)."""
        write_text(self.dir / rel, text)

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        """:func:`~auralgen.export.manifest.is_done` on disk; a missing ``extra`` file leaves the record."""
        return is_done(self.dir, rel, journal) and all((self.dir / e).exists() for e in extra)

    def remove(self, rel: str) -> None:
        """Unlink the file, if it exists."""
        (self.dir / rel).unlink(missing_ok=True)

    def open(self, rel: str):
        """The file opened from the directory."""
        return open(self.dir / rel, "rb")

    def where(self) -> str:
        """The directory: relative to the working directory when inside it (as the user typed it), else absolute."""
        path = self.dir.resolve()
        try:
            return str(path.relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(path)

    def close(self) -> None:
        """Nothing to release."""


class BucketTarget(Bucket, Target):
    """``out`` is a bucket prefix: each file is written in a private staging folder, then put as one
    object (:meth:`publish`); JSON files are put directly. Resume reads the journal from the bucket
    and checks each recorded shard's SHA-256 there. The staging folder is removed by :meth:`close`."""

    def __init__(self, out: str):
        super().__init__(out, staging=tempfile.mkdtemp(prefix="auralgen-staging-"))
        self.dir = self.staging

    def lock(self):
        """The prefix's lock object, its lease renewed (:func:`~auralgen.export.storage.bucket_lock`)."""
        return bucket_lock(self)

    def prepare(self, fp: str, *, overwrite: bool) -> dict[str, Any]:
        """:func:`~auralgen.export.storage.prepare_bucket`, reading the journal from the bucket."""
        return prepare_bucket(self, fp, overwrite=overwrite, recorded_of=recorded, read_journal=keep_prior)

    def publish(self, rel: str) -> None:
        """Put the staged file into the bucket as one object and delete the local copy."""
        self.put(rel)

    def is_done(self, rel: str, journal: dict[str, Any], extra: tuple[str, ...] = ()) -> bool:
        """The shard's object hashed in the bucket; a missing ``extra`` object drops the record too."""
        rec = journal["shards"].get(rel)
        ok = bool(rec) and self.exists(rel) and self.sha256(rel) == rec["sha256"]
        ok = ok and all(self.exists(e) for e in extra)
        if not ok:
            journal["shards"].pop(rel, None)
        return ok

    def where(self) -> str:
        """The bucket URL, without a trailing slash."""
        return self.url

    def close(self) -> None:
        """Remove the staging folder and whatever is left in it."""
        shutil.rmtree(self.staging, ignore_errors=True)


def target(out: str) -> Target:
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
