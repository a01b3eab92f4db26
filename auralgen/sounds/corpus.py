"""Recorded sounds: a labelled corpus or a user's clips, read from a folder or a local HF dataset.

The ``source`` config group (:class:`SourceConfig`) says where every task that takes a sound
draws it from::

    source=procedural                       today's synthesized sounds (the default)
    source=folder source.dir=DIR            an ``audiofolder``-style labelled corpus
    source=hf source.path=DIR               a local Hugging Face dataset (save_to_disk or parquet)
    source=clips source.dir=DIR             a user's recordings, transformed with measured labels
    source=soundfont [source.soundfont=SF2] notes of sampled instruments (:mod:`auralgen.sounds.soundfont`)

A folder follows the Hugging Face ``audiofolder`` convention, so ``load_dataset("audiofolder",
data_dir=DIR)`` reads the same files: either ``DIR/metadata.csv`` (or ``metadata.jsonl``) with a
``file_name`` column and the label, license and attribution columns, or ``DIR/<label>/*.wav``
(the folder name is the label). Every file needs a license: a ``license`` column, or
``source.license=<name>`` stating one for every file that has none (the explicit override). A
file without either is refused, so the dataset card can list the license of every source file.

A drawn sound is a recipe (:meth:`Corpus.pick`): ``file`` (relative to the corpus root, or
``#<row>`` for an HF dataset), ``label``, ``license``, ``attribution``, ``sha256`` (of the file's
bytes, first 16 hex digits) and ``root``; :func:`read_entry` decodes it again, so an item
re-renders bit for bit and a changed file is caught instead of silently rendering other audio.

Every file is checked when the corpus is read (:func:`bad_audio`): one whose mono mix is silent,
holds NaN or infinite samples, is shorter than :data:`~auralgen.sounds.audio_checks.MIN_SOURCE_S`, or whose channels cancel in
the mix is refused in one line naming it (``source.on_bad=error``, the default), or left out and
counted with the short files (``source.on_bad=skip``).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import stat
from dataclasses import dataclass, replace
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError, reason
from auralgen.sounds.audio_checks import BadSourceFile, bad_audio, check_audio_info

SOURCE_KINDS = ("procedural", "folder", "hf", "clips", "soundfont")
LABELLED = ("folder", "hf", "soundfont")  # sources whose sounds have a class the options can name
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".aif", ".aiff")
METADATA_FILES = ("metadata.csv", "metadata.jsonl")
ON_BAD = ("error", "skip")  # source.on_bad: what a file that bad_audio refuses does to the run
INSTALL_HINT = "source=clips needs librosa (pitch shift, time stretch); install it with: pip install 'auralgen[clips]'"


@dataclass(frozen=True)
class SourceConfig:
    """Where the sounds of every task that takes one come from (``source=<kind>``)."""

    kind: str = "procedural"
    dir: str | None = None  # folder / clips: the corpus root
    path: str | None = None  # hf: a save_to_disk folder, or a folder of parquet files
    label_column: str = "label"
    audio_column: str = "audio"  # hf only
    license_column: str = "license"
    attribution_column: str = "attribution"
    license: str | None = None  # stated license of every file that has none (explicit override)
    classes: tuple | None = None  # keep only these labels (None: all)
    min_duration_s: float = 0.3  # shorter files are left out (and counted)
    soundfont: str | None = None  # soundfont: the .sf2 (None: Debian's Fluid R3 GM, MIT)
    programs: tuple | None = None  # soundfont: General MIDI programs of bank 0 (None: eight instruments)
    notes: tuple = (48, 55, 60, 67, 72)  # soundfont: MIDI keys
    velocities: tuple = (64, 100)  # soundfont: MIDI velocities
    note_s: float = 1.0  # soundfont: how long each note is held (its release follows)
    on_bad: str = "error"  # a silent, NaN, too short or channel-cancelling file: error | skip (left out, counted)

    @property
    def recorded(self) -> bool:
        return self.kind != "procedural"


_RECORDED = ("folder", "hf", "clips", "soundfont")
_FILES = ("folder", "hf", "clips")
_SF = ("soundfont",)
USED_FIELDS = {  # field -> the kinds that read it
    "dir": ("folder", "clips"),
    "path": ("hf",),
    "label_column": _FILES,
    "audio_column": ("hf",),
    "license_column": _FILES,
    "attribution_column": _FILES,
    "license": _RECORDED,
    "classes": _RECORDED,
    "min_duration_s": _RECORDED,
    "on_bad": _FILES,
    "soundfont": _SF,
    "programs": _SF,
    "notes": _SF,
    "velocities": _SF,
    "note_s": _SF,
}


# every key of a recipe (Corpus.pick): the file's, then the extras of an HF row or a SoundFont note
RECIPE_KEYS = ("source", "root", "file", "label", "license", "attribution", "sha256", "offset_s",
               "audio_column", "instrument", "program", "note", "velocity", "hold_s", "synth")  # fmt: skip


@dataclass(frozen=True)
class Entry:
    file: str  # relative to the root; "#<row>" in an HF dataset
    label: str
    license: str
    attribution: str
    sha256: str
    duration_s: float
    extra: tuple = ()  # (name, value) pairs the recipe carries besides the file (hf: audio_column; soundfont: the note)


def check_source(data: Any) -> SourceConfig:
    """The ``source`` group checked (and, for a recorded source, its corpus read) before any work."""
    from auralgen.core.mapping import from_mapping

    cfg = from_mapping(SourceConfig, data or {}, "source")
    if cfg.kind not in SOURCE_KINDS:
        raise ParameterError(f"source.kind={cfg.kind!r} is unsupported; allowed: {', '.join(SOURCE_KINDS)}")
    default = SourceConfig(kind=cfg.kind)
    for name in USED_FIELDS:  # an override the chosen kind never reads is refused, not ignored
        if cfg.kind not in USED_FIELDS[name] and getattr(cfg, name) != getattr(default, name):
            takers, value = "|".join(USED_FIELDS[name]), getattr(cfg, name)
            value = list(value) if isinstance(value, tuple) else value
            raise ParameterError(
                f"source.{name}={value!r} has no effect with source={cfg.kind}; allowed: source={takers}"
            )
    if cfg.on_bad not in ON_BAD:
        raise ParameterError(f"source.on_bad={cfg.on_bad!r} is unknown; allowed: {', '.join(ON_BAD)}")
    cfg = portable(_tupled(cfg))
    if cfg.kind == "soundfont":
        from auralgen.sounds import soundfont

        soundfont.check_installed(str(_root(cfg)))
        load_corpus(cfg)
    elif cfg.recorded:
        key = "source.path" if cfg.kind == "hf" else "source.dir"
        if (cfg.path if cfg.kind == "hf" else cfg.dir) is None:
            raise ParameterError(f"{key} is missing; allowed: {key}=<folder> with source={cfg.kind}")
        if cfg.kind == "clips":
            import importlib.util

            if importlib.util.find_spec("librosa") is None:
                raise ParameterError(INSTALL_HINT)
        load_corpus(cfg)
    return cfg


def _tupled(cfg: SourceConfig) -> SourceConfig:
    """List fields as tuples (the config is an lru_cache key), classes as strings, MIDI values as ints."""
    ints = {
        k: tuple(int(v) for v in getattr(cfg, k))
        for k in ("programs", "notes", "velocities")
        if getattr(cfg, k) is not None
    }
    classes = {"classes": tuple(str(c) for c in cfg.classes)} if cfg.classes is not None else {}
    return SourceConfig(**{**cfg.__dict__, **ints, **classes})


def _root(cfg: SourceConfig) -> Path:
    """The corpus root as the config gives it (relative to the working directory when relative):
    recipes store this string, so the same config writes the same bytes wherever the project lives."""
    if cfg.kind == "soundfont":
        from auralgen.sounds.soundfont import DEFAULT_SF2

        return Path(cfg.soundfont or DEFAULT_SF2)
    return Path(cfg.path if cfg.kind == "hf" else cfg.dir)


def _sha(data: bytes) -> str:
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
            f"source file {name!r} is unreadable ({reason(exc, repr(name))}); allowed: audio files soundfile can read (WAV, FLAC, OGG, AIFF)"
        ) from None
    return x, int(sr)


def regular_file(p: Path, where: str, allowed: str = "regular audio files") -> None:
    """``p`` is a regular file after symlinks, checked without opening it (opening a named pipe
    would wait forever for a writer); else one line naming ``where`` it is and what it is."""
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
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise ParameterError(
                        f"{where} line {n} is not JSON ({exc}); allowed: one JSON object per line"
                    ) from None
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
                f"source.dir {meta[0].name} has no file_name column; allowed: the audiofolder columns file_name, {cfg.label_column}, ..."
            )
        return sorted((str(r["file_name"]), r) for r in rows)
    out = []
    for p in sorted(root.rglob("*")):
        if p.suffix.lower() in AUDIO_SUFFIXES:
            rel = p.relative_to(root)
            label = rel.parts[0] if len(rel.parts) > 1 else None
            out.append((str(rel.as_posix()), {cfg.label_column: label} if label is not None else {}))
    return out


def _entry(cfg: SourceConfig, name: str, row: dict[str, Any], data: bytes, key: str) -> Entry:
    x, sr = _decode(data, name)
    label = row.get(cfg.label_column)
    if cfg.kind in ("folder", "hf") and (label is None or str(label).strip() == ""):
        raise ParameterError(
            f"{key} file {name!r} has no label; allowed: a {cfg.label_column!r} column, or the file inside a <label>/ folder"
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
        sha256=_sha(data),
        duration_s=len(x) / sr,
    )


@dataclass(frozen=True)
class Corpus:
    """The entries of one source, in a stable order, and what was left out (and why)."""

    kind: str
    root: str
    entries: tuple[Entry, ...]
    skipped: tuple[tuple[str, str], ...]  # (file, reason)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(sorted({e.label for e in self.entries}))

    def of_label(self, label: str) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.label == label)

    def pick(
        self, rng: np.random.Generator, *, duration_s: float, label: str | None = None, at_start: bool = False
    ) -> dict[str, Any]:
        """The recipe of a ``duration_s`` piece of one entry (of ``label`` if given): the entry
        uniformly among those long enough (a shorter one is used whole, padded), then the offset
        uniformly inside it (two draws, in that order); ``at_start`` (and every SoundFont note): the
        file's start (one draw), for events whose onset is the recording's own attack."""
        pool = self.of_label(label) if label is not None else self.entries
        long_enough = [e for e in pool if e.duration_s >= duration_s] or list(pool)
        if not long_enough:
            raise ParameterError(f"source has no file of class {label!r}; allowed: {list(self.labels)}")
        e = long_enough[int(rng.integers(len(long_enough)))]
        at_start = at_start or self.kind == "soundfont"  # a note is played from its onset
        spare = 0.0 if at_start else max(0.0, e.duration_s - duration_s)
        offset = float(rng.uniform(0.0, spare)) if spare > 0 else 0.0
        return {
            "source": self.kind,
            "root": self.root,
            "file": e.file,
            "label": e.label,
            "license": e.license,
            "attribution": e.attribution,
            "sha256": e.sha256,
            "offset_s": round(offset, 6),
            **dict(e.extra),
        }

    def card_rows(self) -> list[dict[str, str]]:
        """One row per source file for the dataset card: file, label, license, attribution."""
        return [
            {"file": e.file, "label": e.label, "license": e.license, "attribution": e.attribution} for e in self.entries
        ]


def _drawn(cfg: SourceConfig, root: Path) -> tuple[str, list[Entry], list[tuple[str, str]]]:
    """The config key that names the source, every entry it offers (before the class filter), and the
    files left out by ``source.on_bad=skip`` (``(file, reason)``)."""
    if cfg.kind == "soundfont":
        from auralgen.sounds.soundfont import note_entries

        return "source.soundfont", [Entry(**e) for e in note_entries(cfg, str(root))], []
    if cfg.kind == "hf":  # the recipe names the audio column: read_entry decodes the row from it
        key, items = "source.path", _hf_items(cfg, root)
    else:
        key, items = "source.dir", []
        for name, row in _folder_rows(cfg, root):
            p = root / name
            if not p.exists() and not p.is_symlink():
                raise ParameterError(
                    f"source.dir metadata names {name!r}, which does not exist; allowed: files inside {cfg.dir!r}"
                )
            regular_file(p, f"{key}={cfg.dir!r}")
            items.append((name, row, p.read_bytes()))
    extra = (("audio_column", cfg.audio_column),) if cfg.kind == "hf" else ()
    entries, skipped = [], []
    for name, row, data in items:
        try:
            entries.append(replace(_entry(cfg, name, row, data, key), extra=extra))
        except BadSourceFile as exc:
            if cfg.on_bad != "skip":
                raise
            skipped.append((name, exc.reason))
    return key, entries, skipped


@functools.lru_cache(maxsize=8)
def load_corpus(cfg: SourceConfig) -> Corpus:
    """Read (and check) every file of the source once per process."""
    root = _root(cfg)
    entries = []
    key, drawn, skipped = _drawn(cfg, root)
    for e in drawn:
        if cfg.classes is not None and e.label not in cfg.classes:
            continue
        if e.duration_s < cfg.min_duration_s:
            skipped.append((e.file, f"shorter than source.min_duration_s={cfg.min_duration_s}"))
            continue
        entries.append(e)
    if cfg.classes is not None:
        missing = sorted(set(cfg.classes) - {e.label for e in entries})
        if missing:
            raise ParameterError(
                f"source.classes names {missing}, which have no usable file; allowed: labels of the source"
            )
    if not entries:
        raise ParameterError(
            f"{key}={str(root)!r} has no usable audio file; allowed: a folder of audio files of at least {cfg.min_duration_s} s"
        )
    return Corpus(cfg.kind, root.as_posix(), tuple(entries), tuple(skipped))


PROCEDURAL_LICENSE = "cc-by-4.0"  # sounds the generator computes: no source file's terms to follow
PUBLIC_DOMAIN = frozenset({"cc0", "cc0-1.0", "public-domain", "pddl"})  # add no term to another license


def _license_id(name: str) -> str:
    """A license name as the Hub's cards spell them: lower case, spaces as hyphens (``MIT`` -> ``mit``)."""
    return "-".join(str(name).strip().lower().split())


def dataset_license(cfg: SourceConfig, given: str | None) -> str:
    """The dataset card's license: ``given`` (``export.license``, stated explicitly) when set; else the
    one license every source file shares, public-domain files (CC0) taking the others' license;
    procedural sounds: :data:`PROCEDURAL_LICENSE`.

    Raises
    ------
    ParameterError
        When the files carry licenses that no one of them covers and ``given`` is None, naming
        each license with its file count.

    >>> dataset_license(SourceConfig(), None), dataset_license(SourceConfig(), "MIT")
    ('cc-by-4.0', 'MIT')
    """
    if given is not None:
        return given
    if not cfg.recorded:
        return PROCEDURAL_LICENSE
    counts: dict[str, int] = {}
    for e in load_corpus(cfg).entries:
        counts[_license_id(e.license)] = counts.get(_license_id(e.license), 0) + 1
    binding = [lic for lic in counts if lic not in PUBLIC_DOMAIN] or list(counts)
    if len(binding) == 1:
        return binding[0]
    said = ", ".join(f"{lic} ({n} files)" for lic, n in sorted(counts.items()))
    raise ParameterError(
        f"the source's files carry licenses with no common one: {said}; allowed: sources of one license "
        "(public-domain files join any), or export.license=<the dataset's license> stated explicitly"
    )


def _relative(path: str | None) -> str | None:
    """An absolute path relative to the working directory (where a run reads it again), else as given."""
    if path is None or not Path(path).is_absolute():
        return path
    return Path(os.path.relpath(path, Path.cwd())).as_posix()


def portable(cfg: SourceConfig) -> SourceConfig:
    """``cfg`` with ``source.dir`` / ``source.path`` / a user's ``source.soundfont`` given as absolute
    paths made relative to the working directory: the manifest's config, every recipe's ``root`` and
    the card then hold no machine path, and a run from the same directory reads the same files. The
    default SoundFont keeps its path (where the system package installs it)."""
    from auralgen.sounds.soundfont import DEFAULT_SF2

    sf2 = cfg.soundfont if cfg.soundfont in (None, DEFAULT_SF2) else _relative(cfg.soundfont)
    return replace(cfg, dir=_relative(cfg.dir), path=_relative(cfg.path), soundfont=sf2)


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


def _hf_items(cfg: SourceConfig, root: Path) -> list[tuple[str, dict[str, Any], bytes]]:
    """``(#row, row, audio bytes)`` of a local HF dataset: a ``save_to_disk`` folder or parquet files."""

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
    return {n: d for n, _, d in _hf_items(SourceConfig(kind="hf", path=root, audio_column=audio_column), Path(root))}


@functools.lru_cache(maxsize=256)
def _decoded(root: str, file: str, sha256: str, sample_rate: int, audio_column: str) -> np.ndarray:
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
    if _sha(data) != sha256:
        raise ParameterError(
            f"source file {file!r} changed since the item was drawn (sha256 {_sha(data)} != {sha256}); allowed: the file the recipe names"
        )
    x, sr = _decode(data, file)
    if sr != sample_rate:
        from scipy.signal import resample_poly

        g = gcd(sr, sample_rate)
        x = resample_poly(x, sample_rate // g, sr // g)
    x.setflags(write=False)
    return x


def read_entry(spec: dict[str, Any], sample_rate: int, duration_s: float, *, shift_cents: float = 0.0) -> np.ndarray:
    """The ``duration_s`` piece of the recipe's file at ``offset_s`` (mono float64 at ``sample_rate``;
    zero-padded past the file's end). ``shift_cents`` only for a soundfont note (played at that pitch)."""
    from auralgen.synth import n_samples

    if spec.get("source") == "soundfont":
        from auralgen.sounds.soundfont import render

        x = render(spec, int(sample_rate), shift_cents)
    elif shift_cents:
        raise ParameterError(f"a {spec.get('source')} recording cannot be played shifted; allowed: source=soundfont")
    else:
        x = _decoded(spec["root"], spec["file"], spec["sha256"], int(sample_rate), spec.get("audio_column", "audio"))
    a = n_samples(spec.get("offset_s", 0.0), sample_rate)
    n = n_samples(duration_s, sample_rate)
    piece = x[a : a + n]
    return np.pad(piece, (0, max(0, n - len(piece))))


class RecordedSource:
    """Mixin of the ``recording`` kind of a palette: a piece of a file of the run's corpus (the
    recipe of :meth:`Corpus.pick`, plus ``kind`` and ``duration_s``)."""

    kind = "recording"
    label = "the recording"
    tags = frozenset({"file"})

    def draw(
        self, rng: np.random.Generator, *, duration_s: float, corpus=None, label: str | None = None, **_: Any
    ) -> dict[str, Any]:
        if corpus is None:
            raise ParameterError("kind='recording' needs a recorded source; allowed: source=folder|hf|clips")
        return {
            "kind": self.kind,
            "duration_s": float(duration_s),
            **corpus.pick(rng, duration_s=duration_s, label=label),
        }

    def piece(self, spec: dict[str, Any], sample_rate: int) -> np.ndarray:
        return read_entry(spec, sample_rate, spec["duration_s"])


def sound_name(label: str) -> str:
    """The option text of a class label: ``snare_drum`` -> ``the snare drum``."""
    return "the " + label.replace("_", " ").strip()
