"""Where a run's sounds come from: the ``source`` config group and its registered kinds.

Words, one meaning each: a **source** is where the sounds of every task that takes one come from
(``source=<kind>``; :class:`SourceConfig`); a :class:`SourceKind` is one registered way of
getting them (``procedural``, ``folder``, ``hf``, ``clips``, ``soundfont``); a recorded kind
offers a **corpus** of entries (:mod:`auralgen.sounds.corpus`). The signals a task places are
**sound kinds** of a palette (:mod:`auralgen.sounds.base`), a different registry.

A new source kind is one class carrying its behaviour, registered like every other extension
point::

    from auralgen.sounds.source_kind import SourceKind, register_source_kind

    @register_source_kind
    class Bells(SourceKind):
        name = "bells"
        fields = ("dir", "license", "classes", "min_duration_s")

        def root(self, cfg): ...
        def entries(self, cfg, root): ...   # -> (entries, skipped)
        def read(self, spec, sample_rate, shift_cents): ...

``source=bells`` then works in every task that takes recorded sounds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from auralgen.core.registry import Registry


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
        """Whether the sounds are recordings of a corpus (else the generator computes them)."""
        return source_kind(self.kind).recorded


@dataclass(frozen=True)
class Entry:
    """One sound of a corpus (a file, an HF row, a SoundFont note) before it is drawn."""

    file: str  # relative to the root; "#<row>" in an HF dataset
    label: str
    license: str
    attribution: str
    sha256: str
    duration_s: float
    extra: tuple = ()  # (name, value) pairs the recipe carries besides the file (hf: audio_column; soundfont: the note)


# every key of a recipe (Corpus.pick): the file's, then the extras of an HF row or a SoundFont note
RECIPE_KEYS = (
    "source",
    "root",
    "file",
    "label",
    "license",
    "attribution",
    "sha256",
    "offset_s",
    "audio_column",
    "instrument",
    "program",
    "note",
    "velocity",
    "hold_s",
    "synth",
)


class SourceKind:
    """One way of getting a run's sounds (``source=<name>``); one instance per registered kind.

    Attributes
    ----------
    name : str
        The ``source=`` value, stored as the ``source`` key of every recipe it draws.
    recorded : bool
        The sounds are entries of a corpus (False: the generator computes them; nothing is read).
    labelled : bool
        Every entry has a class the options can name (required of every file).
    from_start : bool
        A piece is read from its entry's start (a note's onset), never at a random offset.
    plays_shifted : bool
        :meth:`read` plays an entry at another pitch (``shift_cents``) instead of the pitch being
        processed afterwards.
    fields : tuple of str
        The :class:`SourceConfig` fields this kind reads; another one set is refused.
    root_key : str
        The config key naming the root, in messages (``source.dir``).
    """

    name: ClassVar[str]
    recorded: ClassVar[bool] = True
    labelled: ClassVar[bool] = False
    from_start: ClassVar[bool] = False
    plays_shifted: ClassVar[bool] = False
    fields: ClassVar[tuple[str, ...]] = ()
    root_key: ClassVar[str] = "source.dir"

    def check(self, cfg: SourceConfig) -> None:
        """What must hold before the corpus is read (a required key, an installed library).

        Parameters
        ----------
        cfg : SourceConfig
            The run's source config.

        Raises
        ------
        ParameterError
            If something the kind needs is missing (the base checks nothing).
        """

    def root(self, cfg: SourceConfig) -> Path:
        """The corpus root as the config gives it (relative to the working directory when relative).

        Recipes store this string, so the same config writes the same bytes wherever the project lives.

        Parameters
        ----------
        cfg : SourceConfig
            The run's source config.

        Returns
        -------
        Path
            The root (a folder, a dataset or a SoundFont file).
        """
        raise NotImplementedError

    def entries(self, cfg: SourceConfig, root: Path) -> tuple[list[Entry], list[tuple[str, str]]]:
        """Every entry the corpus offers (before the class and duration filters), and the files left out as bad.

        Parameters
        ----------
        cfg : SourceConfig
            The run's source config.
        root : Path
            The root from :meth:`root`.

        Returns
        -------
        entries : list of Entry
            The entries, in a stable order.
        skipped : list of tuple of (str, str)
            ``(file, reason)`` of each file left out.
        """
        raise NotImplementedError

    def read(self, spec: dict[str, Any], sample_rate: int, shift_cents: float) -> np.ndarray:
        """The whole entry a recipe names, checked against its hash.

        Parameters
        ----------
        spec : dict of str to Any
            A recording recipe (``root``, ``file``, ``sha256``, ...).
        sample_rate : int
            Output sampling rate, in Hz.
        shift_cents : float
            Pitch shift, in cents, for a kind that :attr:`plays_shifted` (else 0).

        Returns
        -------
        ndarray, shape (samples,), float64
            The entry's mono audio at ``sample_rate``.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"SourceKind({self.name!r})"


def _instance(name: str, obj: Any) -> None:
    if not isinstance(obj, SourceKind):
        from auralgen.core.errors import ParameterError

        raise ParameterError(f"source kind {name!r} is {obj!r}; allowed: a SourceKind (subclass) instance")


BUILT_IN = ("clips", "folder", "hf", "procedural", "soundfont")
SOURCES: Registry[SourceKind] = Registry(
    "source.kind", modules={name: "auralgen.sounds.builtin_sources" for name in BUILT_IN}, validate=_instance
)


def register_source_kind(cls: type[SourceKind]) -> type[SourceKind]:
    """Class decorator: register one instance of ``cls`` under ``cls.name``.

    Returns
    -------
    type of SourceKind
        ``cls`` itself, unchanged.
    """
    SOURCES.register(cls.name)(cls())
    return cls


def source_kind(name: str, *, key: str = "source.kind") -> SourceKind:
    """The registered kind ``name``; an unknown one is one line naming the allowed kinds.

    Parameters
    ----------
    name : str
        A ``source=`` value.
    key : str, optional
        Config path quoted in the error (default ``"source.kind"``).

    Returns
    -------
    SourceKind
        The registered instance.
    """
    return SOURCES.get(name, key=key)


class SourceKinds:
    """The kinds a task takes, chosen by what they are (a live view of :data:`SOURCES`: a kind
    registered later is in it when it qualifies). ``name in view`` and iteration give names."""

    def __init__(self, test: Callable[[SourceKind], bool] = lambda kind: True, *, what: str = "every kind"):
        self.test = test
        self.what = what

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in SOURCES and self.test(SOURCES.get(name))

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in SOURCES.names() if name in self])

    def __repr__(self) -> str:
        return f"SourceKinds({self.what})"
