"""Sound kinds and palettes: every signal a task can place, one class per kind.

A :class:`SoundKind` draws the recipe of one sound (a JSON-able dict, the ``params`` entry
rendering needs) from the item's generator and renders the signal from that dict alone. A
:class:`Palette` is the set of sources one family of tasks chooses from, keyed by ``kind`` —
the string stored in ``params``. The same ``kind`` may mean different signals in different
palettes (``harmonic`` is a configurable complex in ``tones``, 6 partials in ``events``, up
to 30 in ``spatial``), so a source belongs to the palettes it declares and nothing else.

A task asks its palette instead of an if/elif chain::

    from auralgen.sounds import palette

    spec = palette("events").draw(rng, "sweep", duration_s=0.8)
    x = palette("events").render(spec, 16000)

An unknown kind is a :class:`~auralgen.core.errors.ParameterError` naming the allowed ones.
A new sound kind is one new class with ``@register_sound_kind``; a new palette one
``PALETTES.register(Palette(...))``.

Where the sounds come from (synthesized, or recordings of ``source=folder|hf|clips|soundfont``)
is the run's *source* (:mod:`auralgen.sounds.source_kind`), a different registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.registry import Registry


class SoundKind:
    """One kind of sound in one or more palettes (``tones``' pure tone, ``events``' sweep, ...).

    Attributes
    ----------
    kind : str
        The string stored in ``params`` (``spec["kind"]``); unique within a palette.
    label : str
        Option text naming the sound in a question ("the rising sweep").
    palettes : tuple of str
        The palettes the source belongs to.
    tags : frozenset of str
        Properties tasks select by: ``pitched``, ``continuous``, ``impulsive``, ``file``.
    """

    kind: ClassVar[str]
    label: ClassVar[str] = ""
    palettes: ClassVar[tuple[str, ...]] = ()
    tags: ClassVar[frozenset[str]] = frozenset()

    def draw(self, rng: np.random.Generator, **constraints: Any) -> dict[str, Any]:
        """The recipe of one sound, drawn from ``rng``.

        The bytes of a dataset depend on the number and order of its draws: keep them fixed.

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's generator.
        **constraints : Any
            What the task fixes (e.g. ``duration_s`` in seconds, a frequency range in Hz); each kind
            documents the ones it reads.

        Returns
        -------
        dict of str to Any
            The JSON-able recipe, holding ``kind`` and everything :meth:`render` needs.
        """
        raise NotImplementedError

    def render(self, spec: Mapping[str, Any], sample_rate: int, **options: Any) -> np.ndarray:
        """The signal of recipe ``spec`` at ``sample_rate`` Hz.

        Parameters
        ----------
        spec : Mapping of str to Any
            A recipe made by :meth:`draw`.
        sample_rate : int
            Sampling rate, in Hz.
        **options : Any
            Rendering options a kind accepts (e.g. a ramp length in seconds); others ignore them.

        Returns
        -------
        ndarray, shape (samples,), float64
            The sound.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, palettes={self.palettes!r})"


class Palette(Mapping[str, SoundKind]):
    """The sound kinds of one family of tasks, ``kind -> SoundKind`` in registration order.

    Parameters
    ----------
    name : str
        The palette's name (``tones``, ``events``, ``spatial``, ``reorder``).
    modules : tuple of str
        Modules whose sound kinds declare this palette; imported on first use.
    """

    def __init__(self, name: str, modules: tuple[str, ...] = ()):
        self.name = name
        self.modules = modules
        self._kinds: Registry[SoundKind] = Registry(f"{name} sound kind", attr="kind", sort=False)
        self._loaded = not modules

    def add(self, sound: SoundKind) -> SoundKind:
        """Register one sound kind instance under its ``kind``.

        Parameters
        ----------
        sound : SoundKind
            The instance to add.

        Returns
        -------
        SoundKind
            ``sound`` itself.

        Raises
        ------
        ParameterError
            If another sound kind is already registered under the same ``kind``.
        """
        self._kinds.register(sound.kind)(sound)
        return sound

    def remove(self, kind: str) -> None:
        """Take ``kind`` out (tests that add a throw-away sound kind).

        Parameters
        ----------
        kind : str
            A registered kind.

        Raises
        ------
        ParameterError
            If ``kind`` is not registered.
        """
        self._kinds.unregister(kind)

    def _load(self) -> Registry[SoundKind]:
        if not self._loaded:
            for module in self.modules:  # a module importing itself here gets its partial self: no loop
                importlib.import_module(module)
            self._loaded = True
        return self._kinds

    # -- lookup ---------------------------------------------------------------------------------
    def sound_kind(self, kind: str, *, key: str = "kind") -> SoundKind:
        """The sound kind ``kind``; ``key`` names the config path in the error.

        Parameters
        ----------
        kind : str
            The kind to look up.
        key : str, optional
            Config path quoted when ``kind`` is unknown (default ``"kind"``).

        Returns
        -------
        SoundKind
            The registered instance.

        Raises
        ------
        ParameterError
            If ``kind`` is not in the palette (the message lists the allowed kinds).
        """
        return self._load().get(kind, key=key)

    def kinds(self, tag: str | None = None) -> tuple[str, ...]:
        """Every kind in registration order (only those tagged ``tag`` if given).

        Parameters
        ----------
        tag : str or None, optional
            A tag such as ``"pitched"`` or ``"impulsive"``; None (default) keeps every kind.

        Returns
        -------
        tuple of str
            The kinds.
        """
        return tuple(k for k, s in self.items() if tag is None or tag in s.tags)

    def labels(self) -> dict[str, str]:
        """The option text of every kind.

        Returns
        -------
        dict of str to str
            ``{kind: option text}``, in registration order.
        """
        return {k: s.label for k, s in self.items()}

    def __getitem__(self, kind: str) -> SoundKind:
        return self.sound_kind(kind)

    def __iter__(self) -> Iterator[str]:
        return iter(self._load().names())

    def __len__(self) -> int:
        return len(self._load().names())

    def __repr__(self) -> str:
        return f"Palette({self.name!r}, kinds={list(self)!r})"

    # -- the two things a task does -------------------------------------------------------------
    def draw(self, rng: np.random.Generator, kind: str, *, key: str = "kind", **constraints: Any) -> dict[str, Any]:
        """The recipe of a ``kind`` sound (see :meth:`SoundKind.draw`).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's generator.
        kind : str
            The sound kind to draw.
        key : str, optional
            Config path quoted when ``kind`` is unknown (default ``"kind"``).
        **constraints : Any
            Passed to the sound kind's ``draw``.

        Returns
        -------
        dict of str to Any
            The JSON-able recipe.
        """
        return self.sound_kind(kind, key=key).draw(rng, **constraints)

    def render(
        self,
        spec: Mapping[str, Any],
        sample_rate: int,
        *,
        kind: str | None = None,
        key: str = "sound.kind",
        **options: Any,
    ) -> np.ndarray:
        """The signal of ``spec`` (its ``kind`` unless given), rendered by that sound kind.

        Parameters
        ----------
        spec, sample_rate
            As in :meth:`SoundKind.render`.
        kind : str or None, optional
            The sound kind to render with; None (default) reads ``spec["kind"]``.
        key : str, optional
            Config path quoted when the kind is unknown (default ``"sound.kind"``).
        **options : Any
            Passed to the sound kind's ``render``.

        Returns
        -------
        ndarray, shape (samples,), float64
            The sound.
        """
        return self.sound_kind(spec.get("kind") if kind is None else kind, key=key).render(spec, sample_rate, **options)


PALETTES: Registry[Palette] = Registry("sound palette")
for _name, _modules in (
    ("tones", ("auralgen.sounds.tones",)),
    ("events", ("auralgen.sounds.events",)),
    ("spatial", ("auralgen.sounds.spatial", "auralgen.sounds.files")),
    ("reorder", ("auralgen.sounds.processes",)),
):
    PALETTES.register(_name)(Palette(_name, _modules))


def palette(name: str) -> Palette:
    """The palette ``name``; unknown names raise ``sound palette='x' is unknown; allowed: ...``.

    Parameters
    ----------
    name : str
        One of ``tones``, ``events``, ``spatial``, ``reorder`` (or a palette registered later).

    Returns
    -------
    Palette
        The registered palette.
    """
    return PALETTES.get(name)


def register_sound_kind(cls: type[SoundKind]) -> type[SoundKind]:
    """Class decorator: add one instance of ``cls`` to every palette it declares.

    Returns
    -------
    type of SoundKind
        ``cls`` itself, unchanged.

    Raises
    ------
    ParameterError
        If ``cls`` lacks ``kind`` or ``palettes``, or a palette already holds its ``kind``.
    """
    if not isinstance(getattr(cls, "kind", None), str) or not cls.palettes:
        raise ParameterError(f"sound kind {cls.__qualname__} lacks kind or palettes; allowed: a class setting both")
    sound = cls()
    for name in cls.palettes:
        palette(name).add(sound)
    return cls
