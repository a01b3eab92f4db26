"""The files of a dataset directory besides its shards: the resume journal, the manifest, the
error log; and the checks made on ``out`` before anything is written.

The journal (:data:`JOURNAL`) is written after every finished shard and kept when the run
completes; the manifest (``manifest.json``) is written last and marks a complete dataset. Both
record the config's fingerprint, so a rerun with the same config resumes and another config is
refused. ``overwrite=true`` removes only files a previous run recorded.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auralgen import __version__
from auralgen.core.errors import ParameterError
from auralgen.export.parquet import sha256_file

JOURNAL = ".auralgen-journal.json"
ERROR_LOG = ".auralgen-error.log"
FIXED_FILES = ("README.md", "manifest.json", "validation_report.json", JOURNAL, ERROR_LOG)  # besides the shards


def versions() -> dict[str, str]:
    """Versions of Python, auralgen and the libraries that take part in the bytes (for the manifest).

    Returns
    -------
    dict of str to str
        Package name to version string; ``"absent"`` for a library that is not installed.
    """
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": ".".join(map(str, sys.version_info[:3])), "auralgen": __version__}
    for pkg in ("numpy", "scipy", "numba", "soundfile", "pyloudnorm", "pyroomacoustics", "datasets", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as sorted, indented JSON via a temporary file (never a half-written file); an
    interrupt (Ctrl-C) between writing and renaming removes the temporary file too.

    Parameters
    ----------
    path : Path
        The destination file; its folder must exist.
    data : Any
        A JSON-able value (sets and tuples are written as lists).
    """
    write_text(path, json.dumps(data, indent=2, sort_keys=True, default=list) + "\n")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` via a temporary file, as :func:`write_json`.

    Parameters
    ----------
    path : Path
        The destination file; its folder must exist.
    text : str
        The file's content.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class JournalText:
    """The journal's text, exactly as :func:`write_json` writes it, with each shard's record encoded
    once: a run rewrites the journal after every shard, and encoding every record each time would make
    a run of ``n`` shards cost ``n**2`` record encodings (minutes for a million items)."""

    def __init__(self) -> None:
        self._done: dict[str, tuple[Any, str]] = {}

    def __call__(self, journal: dict[str, Any]) -> str:
        parts = []
        for path in sorted(journal["shards"]):
            rec = journal["shards"][path]
            hit = self._done.get(path)
            if hit is None or hit[0] is not rec:
                hit = (rec, json.dumps(rec, indent=2, sort_keys=True, default=list).replace("\n", "\n    "))
                self._done[path] = hit
            parts.append(f"    {json.dumps(path)}: {hit[1]}")
        shards = "{\n" + ",\n".join(parts) + "\n  }" if parts else "{}"
        marker = "\x00shards\x00"
        head = json.dumps({**journal, "shards": marker}, indent=2, sort_keys=True, default=list)
        return head.replace(json.dumps(marker), shards, 1) + "\n"


def recorded(prior: dict[str, Any]) -> set[str]:
    """Paths (relative to ``out``) a previous auralgen run recorded as its own in its journal or manifest.

    Parameters
    ----------
    prior : dict
        The previous run's journal (``shards`` a dict by path) or manifest (``shards`` a list of records).

    Returns
    -------
    set of str
        The fixed files, the listed ``files``, every shard path, and each of these with ``.tmp`` appended.
    """
    files = set(FIXED_FILES)
    files.update(p for p in prior.get("files") or () if isinstance(p, str))
    shards = prior.get("shards") or {}
    files.update(shards if isinstance(shards, dict) else (s.get("path") for s in shards if isinstance(s, dict)))
    files.update([f + ".tmp" for f in files if isinstance(f, str)])
    return {f for f in files if isinstance(f, str)}


def _foreign(out: Path, recorded: set[str]) -> list[str]:
    """Entries under ``out`` that are neither recorded files nor folders holding recorded files."""
    parents = {p.as_posix() for f in recorded for p in Path(f).parents if p != Path(".")}
    found = []
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if rel in recorded and not p.is_dir():
            continue
        if rel in parents and p.is_dir() and not p.is_symlink():
            continue
        found.append(rel)
    return found


def _read_prior(out: Path) -> dict[str, Any] | None:
    """The journal (kept after completion, with per-item stats) or manifest of a previous run, if any."""
    for name in (JOURNAL, "manifest.json"):
        if (out / name).exists():
            try:
                prior = json.loads((out / name).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                return None
            return prior if isinstance(prior, dict) and "fingerprint" in prior else None
    return None


def _remove_recorded(out: Path, recorded: set[str]) -> None:
    """Delete the recorded files, then the folders they leave empty; nothing else."""
    for rel in sorted(recorded):
        target = out / rel
        if target.is_file() or target.is_symlink():
            target.unlink()
    folders = {p for rel in recorded for p in Path(rel).parents if p != Path(".")}
    for folder in sorted(folders, key=lambda f: -len(f.parts)):
        if (out / folder).is_dir() and not any((out / folder).iterdir()):
            (out / folder).rmdir()


@contextmanager
def out_lock(out_dir: str, *, create: bool = True) -> Iterator[None]:
    """Hold an exclusive lock on the directory ``out_dir`` (created if absent) for one run: a second run
    into the same directory while the first is writing would remove or replace the first's shards, so it
    is refused at once. The lock is the kernel's (``flock`` on the directory itself): it leaves no file,
    and it is released when the run ends, however it ends. A path that is a file is left to
    :func:`prepare_out` to refuse; with ``create=False`` (a run that only reads an earlier ``out``) an
    absent directory is left to the run to refuse.

    Parameters
    ----------
    out_dir : str
        The run's output directory.
    create : bool, optional
        Create ``out_dir`` if absent (default True); False leaves an absent directory unlocked.

    Yields
    ------
    None
        While the lock is held.

    Raises
    ------
    ParameterError
        If another process holds the lock.
    """
    out = Path(out_dir)
    if (out.exists() and not out.is_dir()) or (not create and not out.exists()):
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    import fcntl

    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ParameterError(
                f"out={out_dir!r} is being written by another auralgen run; allowed: one run per out directory "
                "(wait for that run to end, or choose another out)"
            ) from None
        except OSError:  # a filesystem without flock (some network mounts): the run goes on unlocked
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def prepare_out(out_dir: str, fp: str, *, overwrite: bool) -> dict[str, Any]:
    """Check ``out_dir`` and load the resume journal. Raises before anything is written.

    ``overwrite=True`` removes only the files a previous auralgen run recorded in its journal or
    manifest; a folder holding anything else is refused.

    Parameters
    ----------
    out_dir : str
        The run's output directory (absent, empty, or a previous auralgen run's).
    fp : str
        The run config's fingerprint.
    overwrite : bool
        Remove a previous run's recorded files instead of resuming it.

    Returns
    -------
    dict
        The journal: ``fingerprint``, ``shards`` (path to record, a resumed run's kept) and, when
        resuming a secret-seed run, ``seed_salt``.

    Raises
    ------
    ParameterError
        If ``out_dir`` is a file, holds something that is not an auralgen dataset, holds files no run
        recorded (with ``overwrite``), or holds a dataset of another config (without ``overwrite``).
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ParameterError(f"out={out_dir!r} is a file; allowed: a directory path")
    journal: dict[str, Any] = {"fingerprint": fp, "shards": {}}
    if not out.exists() or not any(out.iterdir()):
        return journal
    prior = _read_prior(out)
    if prior is None:
        first = sorted(p.name for p in out.iterdir())[0]
        raise ParameterError(
            f"out={out_dir!r} exists and is not an auralgen dataset (it holds {first!r}); "
            "allowed: an empty or new directory"
        )
    if overwrite:
        own = recorded(prior)
        foreign = _foreign(out, own)
        refuse_foreign(out_dir, foreign, place="directory", entries="entries")
        _remove_recorded(out, own)
        return journal
    refuse_other_config(out_dir, prior, fp, place="directory")
    keep_prior(prior, journal)
    return journal


def refuse_foreign(out: str, foreign: list[str], *, place: str, entries: str) -> None:
    """With ``overwrite=true``: refuse the ``out`` ``place`` ("directory", "prefix") when it holds
    ``foreign`` ``entries`` ("entries", "keys") no auralgen run recorded.

    Parameters
    ----------
    out : str
        The ``out`` value, quoted in the message.
    foreign : list of str
        The entries no run recorded; nothing is refused when empty.
    place : str
        What ``out`` is, for the message: ``"directory"`` or ``"prefix"``.
    entries : str
        What the entries are called, for the message: ``"entries"`` or ``"keys"``.

    Raises
    ------
    ParameterError
        If ``foreign`` is not empty.
    """
    if foreign:
        raise ParameterError(
            f"out={out!r} overwrite=true: it holds {foreign[0]!r}, which no auralgen run recorded "
            f"({len(foreign)} such {entries}); allowed: a {place} holding only an auralgen dataset, or a new out"
        )


def refuse_other_config(out: str, prior: dict[str, Any], fp: str, *, place: str) -> None:
    """To resume: refuse the ``out`` ``place`` ("directory", "prefix") when its journal or manifest
    ``prior`` was made from another config than the fingerprint ``fp``.

    Parameters
    ----------
    out : str
        The ``out`` value, quoted in the message.
    prior : dict
        The previous run's journal or manifest.
    fp : str
        This run's config fingerprint.
    place : str
        What ``out`` is, for the message: ``"directory"`` or ``"prefix"``.

    Raises
    ------
    ParameterError
        If ``prior``'s fingerprint differs from ``fp``.
    """
    if prior.get("fingerprint") != fp:
        raise ParameterError(
            f"out={out!r} holds a dataset made from another config; "
            f"allowed: the same config (to resume), a new out {place}, or overwrite=true"
        )


def keep_prior(prior: dict[str, Any], journal: dict[str, Any]) -> None:
    """What a resumed run keeps of a previous run's journal or manifest ``prior``: its shard records
    and a secret seed's commitment salt.

    Parameters
    ----------
    prior : dict
        The previous run's journal (``shards`` by path) or manifest (``shards`` a list of records).
    journal : dict
        The new run's journal, updated in place (``shards`` and, if any, ``seed_salt``).
    """
    if isinstance(prior.get("shards"), dict):
        journal["shards"] = prior["shards"]
    elif isinstance(prior.get("shards"), list):  # a finished manifest: list of shard records
        journal["shards"] = {s["path"]: s for s in prior["shards"]}
    commitment = prior.get("seed_commitment")
    salt = prior.get("seed_salt") or (commitment.get("salt") if isinstance(commitment, dict) else None)
    if isinstance(salt, str):  # a secret seed's commitment salt: a resumed run keeps it
        journal["seed_salt"] = salt


def is_done(out: Path, path: str, journal: dict[str, Any]) -> bool:
    """Whether shard ``path`` is finished: recorded in the journal, and its bytes match the record.
    A shard that is not is dropped from the journal (it will be written again).

    Parameters
    ----------
    out : Path
        The output directory.
    path : str
        The shard's path relative to ``out``.
    journal : dict
        The run's journal; an unfinished shard's record is removed from ``journal["shards"]``.

    Returns
    -------
    bool
        True if the shard exists and its SHA-256 matches its record.
    """
    rec = journal["shards"].get(path)
    if rec and (out / path).exists() and sha256_file(out / path) == rec["sha256"]:
        return True
    journal["shards"].pop(path, None)
    return False


def _nearest_existing(path: Path) -> Path:
    while path != path.parent:
        try:
            if path.exists():
                return path
        except OSError:  # a name too long to even look up
            pass
        path = path.parent
    return path


def check_out_path(out_dir: str, paths: Iterable[str]) -> None:
    """Refuse an ``out_dir`` that cannot be written or whose longest file path (of ``paths``, the
    shards relative to it) the system cannot hold.

    Parameters
    ----------
    out_dir : str
        The run's output directory (need not exist yet).
    paths : iterable of str
        The files the run will write, relative to ``out_dir``.

    Raises
    ------
    ParameterError
        If ``out_dir`` is or lies under a dangling symlink, a path under it would exceed the
        filesystem's name or path length limit, or its nearest existing folder cannot be written.
    """
    import tempfile

    from auralgen.core.paths import check_out

    check_out("out", out_dir)
    out = Path(out_dir).absolute()
    base = _nearest_existing(out)
    longest = max([p + ".tmp" for p in paths] + [JOURNAL + ".tmp"], key=len)
    name_max, path_max = 255, 4096
    try:
        name_max, path_max = os.pathconf(base, "PC_NAME_MAX"), os.pathconf(base, "PC_PATH_MAX")
    except (OSError, ValueError):
        pass
    full = out / longest
    long_part = max(full.parts, key=len)
    if len(os.fsencode(long_part)) > name_max or len(os.fsencode(str(full))) >= path_max:
        raise ParameterError(
            f"out={out_dir!r} is too long: it would hold {str(full)!r} ({len(str(full))} characters, a name of "
            f"{len(long_part)}); allowed: paths under {path_max} bytes with names under {name_max + 1}"
        )
    try:
        tempfile.TemporaryDirectory(prefix=".auralgen-probe-", dir=base).cleanup()
    except OSError as exc:
        raise ParameterError(
            f"out={out_dir!r} cannot be written ({base} refuses: {exc.strerror or exc}); "
            "allowed: a writable directory path"
        ) from None


def log_error(out_dir: str, trace: str) -> str:
    """Write ``trace`` to the error log in ``out_dir`` (when it exists); returns a hint naming it.

    Parameters
    ----------
    out_dir : str
        The run's output directory.
    trace : str
        The traceback text.

    Returns
    -------
    str
        `` (traceback in <path>)`` to append to the error message, or ``""`` if nothing was written.
    """
    path = Path(out_dir) / ERROR_LOG
    try:
        if path.parent.is_dir():
            path.write_text(trace, encoding="utf-8")
            return f" (traceback in {path})"
    except OSError:
        pass
    return ""
