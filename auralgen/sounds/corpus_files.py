"""Reading the files of a recorded corpus: an ``audiofolder``-style folder, a local Hugging Face
dataset, and the audio a recipe names (decoded again and checked against its hash).

Every file is checked when it is read (:func:`~auralgen.sounds.audio_checks.bad_audio`); the
source kinds of :mod:`auralgen.sounds.builtin_sources` decide which of these readers they use.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import stat
from dataclasses import replace
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError, reason
from auralgen.core.jsonl import jsonl_rows
from auralgen.sounds.audio_checks import BadSourceFile, bad_audio, check_audio_info
from auralgen.sounds.source_kind import Entry, SourceConfig

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".aif", ".aiff")
METADATA_FILES = ("metadata.csv", "metadata.jsonl")


def sha16(data: bytes) -> str:
    """The first 16 hex digits of the SHA-256 of ``data`` (the hash a recipe stores).

    Parameters
    ----------
    data : bytes
        A file's bytes.

    Returns
    -------
    str
        16 lower-case hex digits.
    """
    return hashlib.sha256(data).hexdigest()[:16]


def _decode(data: bytes, name: str) -> tuple[np.ndarray, int]:
    """The mono mix of a file's bytes and its rate; a file :func:`bad_audio` refuses is an error naming it."""
    x, sr = _decode_channels(data, name)
    reason = bad_audio(x, sr)
    if reason is not None:
        raise BadSourceFile(name, reason)
    return x.mean(axis=1), sr


def _decode_channels(data: bytes, name: str) -> tuple[np.ndarray, int]:
    import soundfile as sf

    try:
        check_audio_info(sf.info(io.BytesIO(data)), name, "source")
        x, sr = sf.read(io.BytesIO(data), dtype="float64", always_2d=True)
    except ParameterError:
        raise
    except Exception as exc:
        raise ParameterError(
            f"source file {name!r} is unreadable ({reason(exc, repr(name))}); "
            "allowed: audio files soundfile can read (WAV, FLAC, OGG, AIFF)"
        ) from None
    return x, int(sr)


def regular_file(p: Path, where: str, allowed: str = "regular audio files") -> None:
    """Check that ``p`` is a regular file after symlinks, without opening it.

    Opening a named pipe would wait forever for a writer; anything else is one line naming
    ``where`` it is and what it is.

    Parameters
    ----------
    p : Path
        The file to check.
    where : str
        Where it was found (e.g. ``source.dir='sounds'``), quoted in the error.
    allowed : str, optional
        What is allowed, quoted in the error (default ``"regular audio files"``).

    Raises
    ------
    ParameterError
        If ``p`` is a directory, a named pipe, a broken or looping symlink or cannot be read.
    """
    try:
        mode = p.stat().st_mode
    except OSError as exc:
        import errno

        why = {errno.ELOOP: "a symlink loop", errno.ENOENT: "a symlink to nothing"}.get(exc.errno)
        if why is None or not p.is_symlink():
            why = f"which cannot be read ({exc.strerror})"
        raise ParameterError(f"{where} holds {p.name!r}, {why}; allowed: {allowed}") from None
    if not stat.S_ISREG(mode):
        kind = "a named pipe" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise ParameterError(f"{where} holds {p.name!r}, {kind}; allowed: {allowed} (or symlinks to them)")


def _metadata_rows(path: Path, cfg: SourceConfig) -> list[dict[str, Any]]:
    """The rows of ``metadata.csv`` / ``metadata.jsonl`` (UTF-8), each a mapping with a ``file_name``;
    else one line naming the file, the line and what is wrong."""
    where = f"source.dir={cfg.dir!r} {path.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ParameterError(f"{where} line {line} is not UTF-8 ({exc.reason}); allowed: a UTF-8 text file") from None
    if path.suffix == ".csv":
        try:
            rows = list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise ParameterError(f"{where} is not valid CSV ({exc}); allowed: an audiofolder metadata.csv") from None
    else:
        rows = jsonl_rows(text, where)
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not isinstance(row.get("file_name"), str):
            raise ParameterError(
                f"{where} row {n} is {str(row)[:80]!r}; allowed: an object with a file_name string "
                f"(and {cfg.label_column}, ...)"
            )
    return rows


def _folder_rows(cfg: SourceConfig, root: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(relative file, metadata row)`` of a folder corpus, in file order."""
    if not root.is_dir():
        raise ParameterError(f"source.dir={cfg.dir!r} is not a directory; allowed: a folder of audio files")
    meta = [root / m for m in METADATA_FILES if (root / m).is_file()]
    if len(meta) > 1:
        raise ParameterError(
            f"source.dir={cfg.dir!r} has both {METADATA_FILES[0]} and {METADATA_FILES[1]}; allowed: one of them"
        )
    if meta:
        rows = _metadata_rows(meta[0], cfg)
        if rows and "file_name" not in rows[0]:
            raise ParameterError(
                f"source.dir {meta[0].name} has no file_name column; "
                f"allowed: the audiofolder columns file_name, {cfg.label_column}, ..."
            )
        return sorted((str(r["file_name"]), r) for r in rows)
    out = []
    for p in sorted(root.rglob("*")):
        if p.suffix.lower() in AUDIO_SUFFIXES:
            rel = p.relative_to(root)
            label = rel.parts[0] if len(rel.parts) > 1 else None
            out.append((str(rel.as_posix()), {cfg.label_column: label} if label is not None else {}))
    return out


def _entry(cfg: SourceConfig, name: str, row: dict[str, Any], data: bytes, key: str, *, labelled: bool) -> Entry:
    x, sr = _decode(data, name)
    label = row.get(cfg.label_column)
    if labelled and (label is None or str(label).strip() == ""):
        raise ParameterError(
            f"{key} file {name!r} has no label; "
            f"allowed: a {cfg.label_column!r} column, or the file inside a <label>/ folder"
        )
    lic = row.get(cfg.license_column) or cfg.license
    if lic is None or not str(lic).strip():
        raise ParameterError(
            f"{key} file {name!r} has no license; allowed: a {cfg.license_column!r} column in the metadata, "
            f"or source.license=<name> to state the license of every file without one"
        )
    return Entry(
        file=name,
        label=str(label) if label is not None else "",
        license=str(lic),
        attribution=str(row.get(cfg.attribution_column) or ""),
        sha256=sha16(data),
        duration_s=len(x) / sr,
    )


def folder_items(cfg: SourceConfig, root: Path) -> list[tuple[str, dict[str, Any], bytes]]:
    """``(relative file, metadata row, bytes)`` of a folder corpus, in file order.

    Parameters
    ----------
    cfg : SourceConfig
        The source config (``dir`` and the column names).
    root : Path
        The corpus folder.

    Returns
    -------
    list of tuple of (str, dict, bytes)
        The file relative to ``root`` (POSIX), its metadata row (or ``{label_column: folder}``)
        and the file's bytes.

    Raises
    ------
    ParameterError
        If the folder or its metadata is invalid, or a file it names is missing or not a regular file.
    """
    key, items = "source.dir", []
    for name, row in _folder_rows(cfg, root):
        p = root / name
        if not p.exists() and not p.is_symlink():
            raise ParameterError(
                f"source.dir metadata names {name!r}, which does not exist; allowed: files inside {cfg.dir!r}"
            )
        regular_file(p, f"{key}={cfg.dir!r}")
        items.append((name, row, p.read_bytes()))
    return items


def file_entries(
    cfg: SourceConfig, items, key: str, *, labelled: bool, extra: tuple = ()
) -> tuple[list[Entry], list[tuple[str, str]]]:
    """The entries of ``items`` and the files left out by ``source.on_bad=skip``.

    Parameters
    ----------
    cfg : SourceConfig
        The source config (column names, ``license``, ``on_bad``).
    items : iterable of tuple of (str, dict, bytes)
        ``(file, metadata row, bytes)`` as :func:`folder_items` or :func:`hf_items` give them.
    key : str
        Names the source in messages (e.g. ``source.dir``).
    labelled : bool
        If true, a file without a label is refused.
    extra : tuple, optional
        ``(name, value)`` pairs every entry's recipe carries.

    Returns
    -------
    entries : list of Entry
        The decoded entries (duration in seconds), in ``items`` order.
    skipped : list of tuple of (str, str)
        ``(file, reason)`` of each file left out as bad.

    Raises
    ------
    ParameterError
        If a file lacks a label (when ``labelled``) or a license, or is bad and ``on_bad`` is ``error``.
    """
    entries, skipped = [], []
    for name, row, data in items:
        try:
            entries.append(replace(_entry(cfg, name, row, data, key, labelled=labelled), extra=extra))
        except BadSourceFile as exc:
            if cfg.on_bad != "skip":
                raise
            skipped.append((name, exc.reason))
    return entries, skipped


def _parquet_rows(path: Path, cfg: SourceConfig) -> list[dict[str, Any]]:
    """The rows of one parquet file of a ``source=hf`` dataset, or one line naming a damaged file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise ParameterError(
            f"source.path={cfg.path!r}: {path.name!r} is not a readable parquet file ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:240]}); allowed: parquet files (truncated or damaged?)"
        ) from None


def hf_items(cfg: SourceConfig, root: Path) -> list[tuple[str, dict[str, Any], bytes]]:
    """``(#row, row, audio bytes)`` of a local HF dataset: a ``save_to_disk`` folder or parquet files.

    Parameters
    ----------
    cfg : SourceConfig
        The source config (``path``, ``audio_column``).
    root : Path
        The dataset folder or parquet file.

    Returns
    -------
    list of tuple of (str, dict, bytes)
        ``"#<row>"``, the row without its audio column, and the audio file's bytes.

    Raises
    ------
    ParameterError
        If ``root`` is missing, not a dataset, a parquet file is damaged or a row has no audio.
    """

    if not root.exists():
        raise ParameterError(
            f"source.path={cfg.path!r} does not exist; allowed: a save_to_disk folder or parquet files"
        )
    files = sorted(root.rglob("*.parquet")) if root.is_dir() else [root]
    if files and files[0].suffix == ".parquet":
        rows = [row for f in files for row in _parquet_rows(f, cfg)]
    else:
        import datasets

        try:
            ds = datasets.load_from_disk(str(root))
        except Exception as exc:
            raise ParameterError(
                f"source.path={cfg.path!r} is not a dataset ({exc}); allowed: a save_to_disk folder or parquet files"
            ) from None
        ds = ds.cast_column(cfg.audio_column, datasets.Audio(decode=False))
        rows = list(ds)
    out = []
    for i, row in enumerate(rows):
        audio = row.get(cfg.audio_column)
        if not isinstance(audio, dict) or not (audio.get("bytes") or audio.get("path")):
            raise ParameterError(
                f"source.path row {i} has no {cfg.audio_column!r} audio; allowed: an audio column with bytes or a path"
            )
        data = audio.get("bytes") or Path(audio["path"]).read_bytes()
        out.append((f"#{i}", {k: v for k, v in row.items() if k != cfg.audio_column}, data))
    return out


@functools.lru_cache(maxsize=4)
def _hf_bytes(root: str, audio_column: str) -> dict[str, bytes]:
    """``#row -> audio bytes`` of a local HF dataset, read once per process."""
    return {n: d for n, _, d in hf_items(SourceConfig(kind="hf", path=root, audio_column=audio_column), Path(root))}


@functools.lru_cache(maxsize=256)
def decoded(root: str, file: str, sha256: str, sample_rate: int, audio_column: str) -> np.ndarray:
    """The mono audio a recipe names, checked against its hash and resampled (cached, read-only).

    Parameters
    ----------
    root : str
        The corpus root (a folder, or an HF dataset).
    file : str
        The file relative to ``root``, or ``"#<row>"`` of an HF dataset.
    sha256 : str
        The 16 hex digits the recipe stores (:func:`sha16`).
    sample_rate : int
        Output sampling rate, in Hz.
    audio_column : str
        The HF dataset's audio column.

    Returns
    -------
    ndarray, shape (samples,), float64
        The whole file's mono mix at ``sample_rate`` (read-only).

    Raises
    ------
    ParameterError
        If the file or row is missing, changed since the draw, or is bad audio.
    """
    if file.startswith("#"):
        data = _hf_bytes(root, audio_column).get(file)
        if data is None:
            raise ParameterError(
                f"source file {file!r} is not a row of {root!r}; allowed: the dataset the recipe names"
            )
    else:
        p = Path(root) / file
        regular_file(p, f"source.dir={root!r}")
        data = p.read_bytes()
    if sha16(data) != sha256:
        raise ParameterError(
            f"source file {file!r} changed since the item was drawn (sha256 {sha16(data)} != {sha256}); "
            "allowed: the file the recipe names"
        )
    x, sr = _decode(data, file)
    if sr != sample_rate:
        from scipy.signal import resample_poly

        g = gcd(sr, sample_rate)
        x = resample_poly(x, sample_rate // g, sr // g)
    x.setflags(write=False)
    return x
