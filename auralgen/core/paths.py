"""Safe file paths from dataset values: item ids and task names become file names only when checked.

A dataset's rows are input like any other: whoever crafts a parquet shard can re-hash the
manifest. So an item ``id`` must match :data:`ITEM_ID` (the generator's own ids, 20 lowercase hex
digits) when a dataset is read, every part of a path built from a row is one plain file-name
component (:func:`check_part`), and every file written under an output folder is checked to lie
inside it once symlinks are resolved (:func:`inside`). :func:`create_new` opens a file that must
not exist yet (an export never overwrites a file).

Examples
--------
>>> check_item_id("0123456789abcdef0123", "row 0")
'0123456789abcdef0123'
>>> check_part("task", "../x")  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
auralgen.core.errors.ParameterError: task='../x' is not a plain file name;
allowed: letters, digits, '_', '-', '.', '@' (not '.' or '..' alone)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from auralgen.core.errors import ParameterError

ITEM_ID = re.compile(r"[0-9a-f]{20}")  # generation.plan.item_id: sha256 hex digest, first 20 digits
_PART = re.compile(r"[A-Za-z0-9_.@-]{1,128}")  # '@': adaptive tracks, e.g. audiogram@500Hz


def check_item_id(value, where: str) -> str:
    """``value`` if it is an item id the generator writes, else ParameterError naming ``where``.

    Parameters
    ----------
    value : object
        The ``id`` read from a row.
    where : str
        Which row of which file, quoted in the error.

    Returns
    -------
    str
        ``value`` unchanged: 20 lowercase hex digits.

    Raises
    ------
    ParameterError
        When ``value`` is not such an id.
    """
    if not isinstance(value, str) or not ITEM_ID.fullmatch(value):
        raise ParameterError(
            f"{where} has id={str(value)[:80]!r}; allowed: an id generate.py writes (20 lowercase hex digits)"
        )
    return value


def check_part(key: str, value) -> str:
    """``value`` if it is one plain file-name component (no separator, not ``.`` or ``..``).

    Parameters
    ----------
    key : str
        What the value is (e.g. ``"task"``), quoted in the error.
    value : object
        The would-be file name: 1 to 128 of letters, digits, ``_``, ``-``, ``.``, ``@``.

    Returns
    -------
    str
        ``value`` unchanged.

    Raises
    ------
    ParameterError
        When ``value`` is not such a name.
    """
    if not isinstance(value, str) or not _PART.fullmatch(value) or value in (".", ".."):
        raise ParameterError(
            f"{key}={str(value)[:80]!r} is not a plain file name; "
            "allowed: letters, digits, '_', '-', '.', '@' (not '.' or '..' alone)"
        )
    return value


def inside(out: str | os.PathLike, *parts: str) -> Path:
    """``out/part/...``, refused unless every part is a plain component and the path, with
    symlinks resolved, lies inside ``out`` (so a symlinked folder cannot lead elsewhere).

    Parameters
    ----------
    out : str or os.PathLike
        The output folder.
    *parts : str
        Relative path pieces below ``out``; each may hold ``/`` between plain components.

    Returns
    -------
    Path
        ``out`` resolved, joined with ``parts`` (symlinks below ``out`` are not resolved in it).

    Raises
    ------
    ParameterError
        When a component is not a plain file name or the path leads outside ``out``.
    """
    for part in parts:
        for piece in part.split("/"):
            check_part("path component", piece)
    root = Path(out).resolve()
    path = root.joinpath(*parts)
    if not path.resolve().is_relative_to(root):
        rel = "/".join(parts)
        raise ParameterError(f"{rel!r} leads outside out={str(out)!r}; allowed: files inside out")
    return path


def create_new(path: str | os.PathLike, what: str = "file"):
    """Open ``path`` for binary writing, refusing an existing file (or symlink) with one line.

    Missing parent folders are created.

    Parameters
    ----------
    path : str or os.PathLike
        The file to create.
    what : str, optional
        What the file is, for the error (default ``"file"``).

    Returns
    -------
    io.BufferedWriter
        The open file; the caller closes it.

    Raises
    ------
    ParameterError
        When ``path`` exists already.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return open(path, "xb")  # noqa: SIM115 - the caller closes it
    except FileExistsError:
        raise ParameterError(
            f"{what} {str(path)!r} exists already; "
            "allowed: an out folder without it (an export never overwrites a file)"
        ) from None


def dangling_link(path: str | os.PathLike) -> Path | None:
    """The first part of ``path`` (itself or a folder above it) that is a symlink to nothing, else None.

    Parameters
    ----------
    path : str or os.PathLike
        A path, made absolute against the working directory; it need not exist.

    Returns
    -------
    Path or None
        The dangling symlink nearest to ``path`` (``path`` itself first), or None when there is none.
    """
    p = Path(path).absolute()
    for part in [p, *p.parents]:
        try:
            if part.is_symlink() and not part.exists():
                return part
        except OSError:  # a name the file system refuses (too long, ...): the caller's other checks name it
            continue
    return None


def check_out(key: str, value: str) -> None:
    """Refuse an output folder that is, or lies under, a symlink to nothing (creating it would fail).

    Parameters
    ----------
    key : str
        The config key of the folder (e.g. ``"out"``), quoted in the error.
    value : str
        The output folder.

    Raises
    ------
    ParameterError
        When the folder or one above it is a dangling symlink; the message names its target.
    """
    link = dangling_link(value)
    if link is not None:
        raise ParameterError(
            f"{key}={value!r} is a symlink to {os.readlink(link)!r}, which does not exist"
            + ("" if link == Path(value).absolute() else f" ({str(link)!r})")
            + "; allowed: a directory path, or a symlink to an existing directory"
        )
