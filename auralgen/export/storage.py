"""Datasets in object storage: ``out=s3://bucket/prefix`` (or any URL an fsspec filesystem serves:
``gs://``, ``az://``, ``memory://`` ...) for generation, ``data=<url>`` for evaluation.

A run into a bucket writes each file on this machine first (a private staging folder, see
:class:`Bucket`), then puts it in the bucket as one object under its final key: a reader never
sees a half-written object. The journal is put after every finished shard (resume reads it from
the bucket), the manifest last. Credentials come from the filesystem's own chain (for S3: the
``AWS_*`` environment variables, ``~/.aws/config`` and ``credentials``, instance roles; an endpoint
from ``AWS_ENDPOINT_URL``); auralgen never reads, writes or logs them.

A bucket has no ``flock``: one run per prefix is kept by a lock object with a lease
(:func:`bucket_lock`), renewed while the run lives and removed when it ends.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auralgen.core.errors import ParameterError
from auralgen.export.manifest import refuse_foreign, refuse_other_config

LOCK = ".auralgen-lock.json"
LEASE_S = 120.0  # a lock object not renewed for this long is stale (its run died without removing it)
RENEW_S = 20.0  # the live run renews its lease this often
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(path: str | os.PathLike) -> bool:
    """Whether ``path`` names object storage (``scheme://...``), not a local path (``file://`` is local).

    Parameters
    ----------
    path : str or PathLike
        An ``out`` or ``data`` value.

    Returns
    -------
    bool
        True for a URL with a scheme other than ``file``.

    Examples
    --------
    >>> is_url("s3://bucket/prefix"), is_url("file:///tmp/x"), is_url("runs/tones")
    (True, False, False)
    """
    m = _URL.match(str(path))
    return bool(m) and m.group(1).lower() != "file"


def filesystem(url: str):
    """The fsspec filesystem serving ``url`` and the root path in it (no trailing slash).

    Parameters
    ----------
    url : str
        A URL, ``scheme://bucket/prefix``.

    Returns
    -------
    fs : fsspec.AbstractFileSystem
        The filesystem serving the scheme.
    root : str
        ``bucket/prefix`` as the filesystem names it, without a trailing slash.

    Raises
    ------
    ParameterError
        When no installed filesystem serves the scheme (e.g. ``s3://`` without ``s3fs``), or the URL
        names no bucket.
    """
    scheme = _URL.match(url).group(1).lower()
    try:
        import fsspec

        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        hint = " (pip install 'auralgen[s3]')" if scheme in ("s3", "s3a") else ""
        raise ParameterError(
            f"{url!r}: no filesystem for {scheme}:// is installed{hint} ({str(exc).splitlines()[0][:100]}); "
            "allowed: a local path or a URL of an installed fsspec filesystem"
        ) from None
    root = root.rstrip("/")
    if not root:
        raise ParameterError(f"{url!r} names no bucket; allowed: {scheme}://<bucket>/<prefix>")
    return fs, root


class Bucket:
    """A dataset prefix in object storage, with a local staging folder for files being written.

    Every method's ``rel`` names an object by its path relative to the prefix
    (``data/<task>/<split>-....parquet``); :meth:`key` gives its full key."""

    def __init__(self, url: str, staging: str | os.PathLike):
        self.url = url.rstrip("/")
        self.fs, self.root = filesystem(url)
        self.staging = Path(staging)

    def key(self, rel: str) -> str:
        """The object key of ``rel`` in the filesystem.

        Parameters
        ----------
        rel : str
            A path relative to the prefix.

        Returns
        -------
        str
            ``<root>/<rel>``.
        """
        return f"{self.root}/{rel}"

    def exists(self, rel: str) -> bool:
        """Whether the object ``rel`` exists in the bucket.

        Parameters
        ----------
        rel : str
            The object to look for.

        Returns
        -------
        bool
            True if the object exists.
        """
        return self.fs.exists(self.key(rel))

    def read_text(self, rel: str) -> str:
        """The object ``rel`` decoded as UTF-8.

        Parameters
        ----------
        rel : str
            The object to read.

        Returns
        -------
        str
            The object's text.
        """
        with self.fs.open(self.key(rel), "rb") as fh:
            return fh.read().decode("utf-8")

    def write_text(self, rel: str, text: str) -> None:
        """One PUT: the object appears whole or not at all.

        Parameters
        ----------
        rel : str
            The object to write.
        text : str
            The object's content, written as UTF-8.
        """
        self.fs.pipe_file(self.key(rel), text.encode("utf-8"))

    def write_json(self, rel: str, data: Any) -> None:
        """Put ``data`` as sorted, indented JSON (the layout of the local files), in one PUT.

        Parameters
        ----------
        rel : str
            The object to write.
        data : Any
            A JSON-able value (sets and tuples are written as lists).
        """
        self.write_text(rel, json.dumps(data, indent=2, sort_keys=True, default=list) + "\n")

    def put(self, rel: str) -> None:
        """Move the staged file ``rel`` into the bucket, then delete the local copy.

        Parameters
        ----------
        rel : str
            The file's path relative to the staging folder, and its key relative to the prefix.
        """
        local = self.staging / rel
        self.fs.put_file(str(local), self.key(rel))
        local.unlink()

    def remove(self, rel: str) -> None:
        """Delete the object ``rel`` if it exists.

        Parameters
        ----------
        rel : str
            The object to delete.
        """
        if self.fs.exists(self.key(rel)):
            self.fs.rm_file(self.key(rel))

    def sha256(self, rel: str) -> str:
        """SHA-256 of the object ``rel``, read in 4 MiB blocks.

        Parameters
        ----------
        rel : str
            The object to hash.

        Returns
        -------
        str
            The digest as 64 lowercase hex characters.
        """
        h = hashlib.sha256()
        with self.fs.open(self.key(rel), "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        return h.hexdigest()

    def open(self, rel: str):
        """Open the object ``rel`` for binary reading.

        Parameters
        ----------
        rel : str
            The object to open.

        Returns
        -------
        file object
            A binary, seekable file object of the filesystem.
        """
        return self.fs.open(self.key(rel), "rb")

    def keys(self) -> list[str]:
        """Every object under the prefix, relative to it.

        Returns
        -------
        list of str
            The relative keys, sorted; empty when the prefix does not exist.
        """
        if not self.fs.exists(self.root):
            return []
        self.fs.invalidate_cache()
        found = self.fs.find(self.root)
        return sorted(k[len(self.root) + 1 :] for k in found if k.startswith(self.root + "/"))


def prepare_bucket(bucket: Bucket, fp: str, *, overwrite: bool, recorded_of, read_journal) -> dict[str, Any]:
    """:func:`auralgen.export.manifest.prepare_out` for a bucket prefix: an empty prefix starts a run,
    one holding this config's journal resumes it, ``overwrite=True`` deletes only the keys a previous
    run recorded (refusing a prefix holding any other key). ``recorded_of(prior)`` gives the recorded
    paths, ``read_journal(prior, journal)`` copies what a resumed run keeps.

    Parameters
    ----------
    bucket : Bucket
        The run's destination prefix.
    fp : str
        The run config's fingerprint.
    overwrite : bool
        Remove a previous run's recorded keys instead of resuming it.
    recorded_of : callable
        ``recorded_of(prior)`` returns the set of paths a previous run recorded.
    read_journal : callable
        ``read_journal(prior, journal)`` copies into ``journal`` what a resumed run keeps.

    Returns
    -------
    dict
        The journal: ``fingerprint`` and ``shards`` (a resumed run's kept records).

    Raises
    ------
    ParameterError
        If the prefix holds something that is not an auralgen dataset, holds keys no run recorded (with
        ``overwrite``), or holds a dataset of another config (without ``overwrite``).
    """
    journal: dict[str, Any] = {"fingerprint": fp, "shards": {}}
    keys = [k for k in bucket.keys() if k != LOCK]
    if not keys:
        return journal
    prior = None
    for name in (".auralgen-journal.json", "manifest.json"):
        if name in keys:
            try:
                prior = json.loads(bucket.read_text(name))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                prior = None
            break
    if not isinstance(prior, dict) or "fingerprint" not in prior:
        raise ParameterError(
            f"out={bucket.url!r} exists and is not an auralgen dataset (it holds {keys[0]!r}); "
            "allowed: an empty or new prefix"
        )
    if overwrite:
        recorded = recorded_of(prior)
        foreign = [k for k in keys if k not in recorded]
        refuse_foreign(bucket.url, foreign, place="prefix", entries="keys")
        for k in keys:
            bucket.remove(k)
        return journal
    refuse_other_config(bucket.url, prior, fp, place="prefix")
    read_journal(prior, journal)
    return journal


def _holder() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid(), "token": uuid.uuid4().hex}


def _stale(lock: dict[str, Any], now: float) -> bool:
    """A lock whose lease ran out, or held by a process of this host that no longer exists."""
    if now > float(lock.get("expires", 0)):
        return True
    if lock.get("host") == socket.gethostname() and isinstance(lock.get("pid"), int):
        try:
            os.kill(lock["pid"], 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
    return False


def _refuse_live_lock(bucket: Bucket) -> None:
    """Refuse the run when the prefix's lock object names a live run (an unreadable or stale one is taken over)."""
    if bucket.exists(LOCK):
        try:
            lock = json.loads(bucket.read_text(LOCK))
        except (OSError, ValueError):
            lock = {}
        if isinstance(lock, dict) and not _stale(lock, time.time()):
            until = time.strftime("%H:%M:%S", time.gmtime(float(lock.get("expires", 0))))
            raise ParameterError(
                f"out={bucket.url!r} is being written by another auralgen run ({lock.get('host')}, "
                f"pid {lock.get('pid')}, lease until {until} UTC); allowed: one run "
                f"per out prefix (wait for that run to end, or, if it is dead, delete {LOCK} there)"
            )


@contextmanager
def bucket_lock(bucket: Bucket) -> Iterator[None]:
    """One run per prefix: the lock object ``.auralgen-lock.json`` names its run (host, pid, a token)
    and a lease (``expires``, :data:`LEASE_S` ahead), renewed every :data:`RENEW_S` by a thread while
    the run lives and deleted when it ends. A live lock refuses the run at once; a stale one (lease
    run out, or its process gone on this host: a killed run) is taken over. Object stores have no
    compare-and-swap for every provider, so two runs starting within the same second could both
    pass; the lock is re-read after writing and the loser refused.

    Parameters
    ----------
    bucket : Bucket
        The run's destination prefix.

    Yields
    ------
    None
        While the lock is held (and its lease renewed).

    Raises
    ------
    ParameterError
        If a live run holds the lock, or another run took it at the same time.
    """
    me = _holder()
    _refuse_live_lock(bucket)

    def write() -> None:
        bucket.write_json(LOCK, {**me, "expires": time.time() + LEASE_S})

    write()
    time.sleep(0.05)
    if json.loads(bucket.read_text(LOCK)).get("token") != me["token"]:
        raise ParameterError(
            f"out={bucket.url!r} was taken by another auralgen run starting at the same time; "
            "allowed: one run per out prefix"
        )
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(RENEW_S):
            try:
                write()
            except Exception:  # a failed renewal is retried; the lease leaves slack for several
                pass

    thread = threading.Thread(target=renew, name="auralgen-lock-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)
        try:
            bucket.remove(LOCK)
        except Exception:
            pass


def local_dataset(data: str, cache_root: str | os.PathLike | None = None) -> str:
    """A local folder holding the dataset at ``data``: ``data`` itself when local; for a URL, a copy of
    its ``manifest.json`` and the shards the manifest lists (each checked by SHA-256 when it is
    evaluated) in ``<cache_root>/<hash of the URL and manifest>`` (default ``$AURALGEN_CACHE`` or
    ``~/.cache/auralgen/datasets``). A copy already complete is reused.

    Parameters
    ----------
    data : str
        A local dataset folder or a bucket URL.
    cache_root : str or PathLike or None, optional
        Where URL datasets are copied; None uses ``$AURALGEN_CACHE`` or ``~/.cache/auralgen/datasets``.

    Returns
    -------
    str
        ``data`` when local, else the path of the local copy.

    Raises
    ------
    ParameterError
        If the URL holds no ``manifest.json`` or it cannot be read.
    """
    if not is_url(data):
        return data
    bucket = Bucket(data, staging=".")
    try:
        text = bucket.read_text("manifest.json")
    except FileNotFoundError:
        raise ParameterError(
            f"data={data!r} holds no manifest.json (generation unfinished, or not a generate.py output); "
            "allowed: a dataset prefix written by auralgen generate"
        ) from None
    root = Path(cache_root or os.environ.get("AURALGEN_CACHE") or Path.home() / ".cache" / "auralgen" / "datasets")
    dest = root / hashlib.sha256(f"{bucket.url}\n{text}".encode()).hexdigest()[:16]
    if not (dest / "manifest.json").exists():
        try:
            shards = [s["path"] for s in json.loads(text)["shards"]]
        except (ValueError, KeyError, TypeError):
            raise ParameterError(
                f"data={data!r}: manifest.json is unreadable; allowed: the manifest written by auralgen generate"
            ) from None
        for rel in shards:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            bucket.fs.get_file(bucket.key(rel), str(dest / rel))
        (dest / "manifest.json").write_text(text, encoding="utf-8")  # last: marks a complete copy
    return str(dest)


def data_files(data: str | os.PathLike, task: str | None = None) -> dict[str, list[str]]:
    """``data_files`` for ``datasets.load_dataset("parquet", data_files=...)`` of the dataset at ``data``
    (a local folder or a bucket URL): per split, in plan order, the full path or URL of every shard
    its ``manifest.json`` lists (``task``: that task's shards only). The manifest is written last, so
    a run still writing is refused instead of read in part, as a glob over the prefix would.
    (``datasets`` opens a local folder by its bare path, ``load_dataset(out)``, but not a bucket URL.)

    Parameters
    ----------
    data : str or PathLike
        A local dataset folder or a bucket URL.
    task : str or None, optional
        Keep only this task's shards; None keeps every task.

    Returns
    -------
    dict of str to list of str
        Split name to the shards' paths or URLs, in plan order.

    Raises
    ------
    ParameterError
        If ``data`` holds no readable ``manifest.json``, or ``task`` is not in it.

    Examples
    --------
    >>> from datasets import load_dataset  # doctest: +SKIP
    >>> files = data_files("s3://my-bucket/tones-v1")  # doctest: +SKIP
    >>> ds = load_dataset("parquet", data_files=files, streaming=True)  # doctest: +SKIP
    """
    where = str(data).rstrip("/")
    try:
        text = (
            Bucket(where, staging=".").read_text("manifest.json")
            if is_url(where)
            else (Path(where, "manifest.json").read_text(encoding="utf-8"))
        )
        shards = json.loads(text)["shards"]
    except FileNotFoundError:
        raise ParameterError(
            f"data={where!r} holds no manifest.json (generation unfinished, or not a generate.py output); "
            "allowed: a dataset written by auralgen generate"
        ) from None
    except (ValueError, KeyError, TypeError):
        raise ParameterError(
            f"data={where!r}: manifest.json is unreadable; allowed: the manifest written by auralgen generate"
        ) from None
    files: dict[str, list[str]] = {}
    for shard in shards:
        if task is None or shard["task"] == task:
            files.setdefault(shard["split"], []).append(f"{where}/{shard['path']}")
    if not files:
        tasks = sorted({sh["task"] for sh in shards})
        raise ParameterError(f"task={task!r} is not in data={where!r}; allowed: {', '.join(tasks)}")
    return files
