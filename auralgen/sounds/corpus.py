"""Recorded sounds: a labelled corpus or a user's clips, read from a folder or a local HF dataset.

The ``source`` config group (:class:`~auralgen.sounds.source_kind.SourceConfig`) says where every
task that takes a sound draws it from; each ``source=<kind>`` is a registered
:class:`~auralgen.sounds.source_kind.SourceKind` (:mod:`auralgen.sounds.builtin_sources`)::

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
holds NaN or infinite samples, is shorter than :data:`~auralgen.sounds.audio_checks.MIN_SOURCE_S`,
or whose channels cancel in the mix is refused in one line naming it (``source.on_bad=error``, the
default), or left out and counted with the short files (``source.on_bad=skip``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.sounds.corpus_files import regular_file
from auralgen.sounds.source_kind import (
    RECIPE_KEYS,
    SOURCES,
    Entry,
    SourceConfig,
    SourceKinds,
    source_kind,
)

__all__ = [
    "NAMEABLE",
    "RECIPE_KEYS",
    "SOURCE_KINDS",
    "Corpus",
    "Entry",
    "RecordingKind",
    "SourceConfig",
    "check_source",
    "dataset_license",
    "load_corpus",
    "plays_shifted",
    "portable",
    "read_entry",
    "regular_file",
    "sound_name",
]

SOURCE_KINDS = SourceKinds()  # every registered kind (a live view: a kind registered later is in it)
# kinds whose sounds the options can name: the procedural ones by their kind, a recorded one by its class
NAMEABLE = SourceKinds(lambda kind: not kind.recorded or kind.labelled, what="named sounds")
ON_BAD = ("error", "skip")  # source.on_bad: what a file that bad_audio refuses does to the run


def check_source(data: Any) -> SourceConfig:
    """The ``source`` group checked (and, for a recorded source, its corpus read) before any work.

    Parameters
    ----------
    data : Mapping or None
        The ``source`` config group as given (None or empty: ``source=procedural``).

    Returns
    -------
    SourceConfig
        The checked config, list fields as tuples and paths made relative (:func:`portable`).

    Raises
    ------
    ParameterError
        If a field is unknown or has no effect with the kind, ``on_bad`` is not one of ``error|skip``,
        or a recorded corpus cannot be read or has no usable file.
    """
    from auralgen.core.mapping import from_mapping

    cfg = from_mapping(SourceConfig, data or {}, "source")
    kind = source_kind(cfg.kind)
    default = SourceConfig(kind=cfg.kind)
    for name in (f.name for f in fields(SourceConfig) if f.name != "kind"):  # set but never read: refused
        if name not in kind.fields and getattr(cfg, name) != getattr(default, name):
            takers = "|".join(n for n, k in SOURCES.load_all().items() if name in k.fields)
            value = getattr(cfg, name)
            value = list(value) if isinstance(value, tuple) else value
            raise ParameterError(
                f"source.{name}={value!r} has no effect with source={cfg.kind}; allowed: source={takers}"
            )
    if cfg.on_bad not in ON_BAD:
        raise ParameterError(f"source.on_bad={cfg.on_bad!r} is unknown; allowed: {', '.join(ON_BAD)}")
    cfg = portable(_tupled(cfg))
    if kind.recorded:
        kind.check(cfg)
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


@dataclass(frozen=True)
class Corpus:
    """The entries of one source, in a stable order, and what was left out (and why)."""

    kind: str
    root: str
    entries: tuple[Entry, ...]
    skipped: tuple[tuple[str, str], ...]  # (file, reason)

    @property
    def labels(self) -> tuple[str, ...]:
        """The class labels of the entries, sorted."""
        return tuple(sorted({e.label for e in self.entries}))

    def of_label(self, label: str) -> tuple[Entry, ...]:
        """The entries of one class.

        Parameters
        ----------
        label : str
            A class label.

        Returns
        -------
        tuple of Entry
            Its entries, in corpus order (empty for an unknown label).
        """
        return tuple(e for e in self.entries if e.label == label)

    def pick(
        self, rng: np.random.Generator, *, duration_s: float, label: str | None = None, at_start: bool = False
    ) -> dict[str, Any]:
        """The recipe of a ``duration_s`` piece of one entry (of ``label`` if given).

        The entry is drawn uniformly among those long enough (a shorter one is used whole, padded),
        then the offset uniformly inside it (two draws, in that order). With ``at_start`` (and for every
        SoundFont note) the piece starts at the file's start (one draw), for events whose onset is the
        recording's own attack.

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's generator.
        duration_s : float
            Length of the piece, in seconds.
        label : str or None, optional
            Draw only among entries of this class; None (default) draws among all.
        at_start : bool, optional
            Start the piece at the entry's start (no offset draw).

        Returns
        -------
        dict of str to Any
            The recipe: ``source``, ``root``, ``file``, ``label``, ``license``, ``attribution``,
            ``sha256``, ``offset_s`` (seconds, rounded to 1 us) and the entry's extra pairs.

        Raises
        ------
        ParameterError
            If no entry has class ``label``.
        """
        pool = self.of_label(label) if label is not None else self.entries
        long_enough = [e for e in pool if e.duration_s >= duration_s] or list(pool)
        if not long_enough:
            raise ParameterError(f"source has no file of class {label!r}; allowed: {list(self.labels)}")
        e = long_enough[int(rng.integers(len(long_enough)))]
        at_start = at_start or source_kind(self.kind).from_start  # e.g. a note is played from its onset
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
        """One row per source file for the dataset card: file, label, license, attribution.

        Returns
        -------
        list of dict of str to str
            The rows, in corpus order.
        """
        return [
            {"file": e.file, "label": e.label, "license": e.license, "attribution": e.attribution} for e in self.entries
        ]


@functools.lru_cache(maxsize=8)
def load_corpus(cfg: SourceConfig) -> Corpus:
    """Read (and check) every file of the source once per process.

    Parameters
    ----------
    cfg : SourceConfig
        A checked, recorded source config (hashable: the cache key).

    Returns
    -------
    Corpus
        The entries kept by ``classes`` and ``min_duration_s``, and the files left out with why.

    Raises
    ------
    ParameterError
        If a file is refused, a named class has no usable file or no file is usable.
    """
    kind = source_kind(cfg.kind)
    root = kind.root(cfg)
    entries = []
    drawn, skipped = kind.entries(cfg, root)
    key = kind.root_key
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
            f"{key}={str(root)!r} has no usable audio file; "
            f"allowed: a folder of audio files of at least {cfg.min_duration_s} s"
        )
    return Corpus(cfg.kind, root.as_posix(), tuple(entries), tuple(skipped))


PROCEDURAL_LICENSE = "cc-by-4.0"  # sounds the generator computes: no source file's terms to follow
PUBLIC_DOMAIN = frozenset({"cc0", "cc0-1.0", "public-domain", "pddl"})  # add no term to another license


def _license_id(name: str) -> str:
    """A license name as the Hub's cards spell them: lower case, spaces as hyphens (``MIT`` -> ``mit``)."""
    return "-".join(str(name).strip().lower().split())


def dataset_license(cfg: SourceConfig, given: str | None) -> str:
    """The dataset card's license.

    ``given`` (``export.license``, stated explicitly) when set; else the one license every source
    file shares, public-domain files (CC0) taking the others' license; procedural sounds:
    :data:`PROCEDURAL_LICENSE`.

    Parameters
    ----------
    cfg : SourceConfig
        The run's source.
    given : str or None
        The license stated in the export config, or None.

    Returns
    -------
    str
        The license id (as the Hub's cards spell it, unless ``given``).

    Raises
    ------
    ParameterError
        When the files carry licenses that no one of them covers and ``given`` is None, naming
        each license with its file count.

    Examples
    --------
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
    """``cfg`` with its absolute paths made relative to the working directory.

    Applies to ``source.dir``, ``source.path`` and a user's ``source.soundfont``: the manifest's
    config, every recipe's ``root`` and the card then hold no machine path, and a run from the same
    directory reads the same files. The default SoundFont keeps its path (where the system package
    installs it).

    Parameters
    ----------
    cfg : SourceConfig
        A source config.

    Returns
    -------
    SourceConfig
        A copy with those paths relative (relative paths are kept as given).
    """
    from auralgen.sounds.soundfont import DEFAULT_SF2

    sf2 = cfg.soundfont if cfg.soundfont in (None, DEFAULT_SF2) else _relative(cfg.soundfont)
    return replace(cfg, dir=_relative(cfg.dir), path=_relative(cfg.path), soundfont=sf2)


def _kind_of(spec: dict[str, Any]):
    """The source kind of a recipe (a recipe without ``source`` names a file of a folder)."""
    return source_kind(spec.get("source", "folder"), key="source")


def plays_shifted(spec: dict[str, Any]) -> bool:
    """Whether the recipe's kind plays its entry at a shifted pitch itself.

    A SoundFont note is played at the shifted pitch; other recordings have the pitch processed afterwards.

    Parameters
    ----------
    spec : dict of str to Any
        A recording recipe (:meth:`Corpus.pick`); without ``source`` it names a folder file.

    Returns
    -------
    bool
        True when :func:`read_entry` accepts a ``shift_cents``.
    """
    return _kind_of(spec).plays_shifted


def read_entry(spec: dict[str, Any], sample_rate: int, duration_s: float, *, shift_cents: float = 0.0) -> np.ndarray:
    """The ``duration_s`` piece of the recipe's file at ``offset_s``, zero-padded past the file's end.

    Parameters
    ----------
    spec : dict of str to Any
        A recording recipe (:meth:`Corpus.pick`).
    sample_rate : int
        Output sampling rate, in Hz (the file is resampled).
    duration_s : float
        Length of the piece, in seconds.
    shift_cents : float, optional
        Pitch shift in cents, only for a kind that plays it (:func:`plays_shifted`, a SoundFont note).

    Returns
    -------
    ndarray, shape (samples,), float64
        The mono piece, ``round(duration_s * sample_rate)`` samples.

    Raises
    ------
    ParameterError
        If ``shift_cents`` is set for a kind that cannot play it, or the file changed since the draw.
    """
    from auralgen.synth import n_samples

    if shift_cents and not plays_shifted(spec):
        shifters = "|".join(n for n, k in SOURCES.load_all().items() if k.plays_shifted)
        raise ParameterError(f"a {spec.get('source')} recording cannot be played shifted; allowed: source={shifters}")
    x = _kind_of(spec).read(spec, int(sample_rate), shift_cents)
    a = n_samples(spec.get("offset_s", 0.0), sample_rate)
    n = n_samples(duration_s, sample_rate)
    piece = x[a : a + n]
    return np.pad(piece, (0, max(0, n - len(piece))))


class RecordingKind:
    """Mixin of the ``recording`` kind of a palette: a piece of a file of the run's corpus (the
    recipe of :meth:`Corpus.pick`, plus ``kind`` and ``duration_s``)."""

    kind = "recording"
    label = "the recording"
    tags = frozenset({"file"})

    def draw(
        self, rng: np.random.Generator, *, duration_s: float, corpus=None, label: str | None = None, **_: Any
    ) -> dict[str, Any]:
        """The recipe of a piece of a corpus file: :meth:`Corpus.pick` plus ``kind`` and ``duration_s``.

        Parameters
        ----------
        rng, duration_s
            As in :meth:`Corpus.pick`.
        corpus : Corpus or None, optional
            The run's corpus (required).
        label : str or None, optional
            Draw only among entries of this class.
        **_ : Any
            Other constraints, ignored.

        Returns
        -------
        dict of str to Any
            The recipe.

        Raises
        ------
        ParameterError
            If ``corpus`` is None (the run has no recorded source).
        """
        if corpus is None:
            raise ParameterError("kind='recording' needs a recorded source; allowed: source=folder|hf|clips")
        return {
            "kind": self.kind,
            "duration_s": float(duration_s),
            **corpus.pick(rng, duration_s=duration_s, label=label),
        }

    def piece(self, spec: dict[str, Any], sample_rate: int) -> np.ndarray:
        """The recipe's piece of its file (:func:`read_entry`).

        Parameters
        ----------
        spec : dict of str to Any
            A recipe of :meth:`draw`.
        sample_rate : int
            Sampling rate, in Hz.

        Returns
        -------
        ndarray, shape (samples,), float64
            The mono piece, ``round(spec["duration_s"] * sample_rate)`` samples.
        """
        return read_entry(spec, sample_rate, spec["duration_s"])


def sound_name(label: str) -> str:
    """The option text of a class label: ``snare_drum`` -> ``the snare drum``.

    Parameters
    ----------
    label : str
        A class label, words joined by ``_``.

    Returns
    -------
    str
        The option text.
    """
    return "the " + label.replace("_", " ").strip()
