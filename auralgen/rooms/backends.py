"""Room simulation backends: one :class:`Backend` per engine, registered in :data:`BACKENDS`.

A backend renders room impulse responses at omnidirectional points and says which rooms,
receivers and modes it serves (:meth:`Backend.supports`). Its ``modes`` are the one list of
allowed ``mode`` values; ``BACKENDS.names()`` the one list of allowed ``backend`` values.

- ``fast`` (:class:`FastBackend`): the numba image-source engine (:mod:`auralgen.rooms.fast`);
  ``hybrid`` adds an energy-matched noise tail (:mod:`auralgen.rooms.hybrid`). Serves every
  receiver (directional ones through its image sources, :func:`auralgen.rooms.scene.spatial_rir`);
  does not model air absorption.
- ``pra`` (:class:`PraBackend`): ``pyroomacoustics.ShoeBox`` (:mod:`auralgen.rooms.pra_backend`),
  the reference; serves omni arrays only.

:data:`BACKENDS` (defined in :mod:`auralgen.rooms.spec`, so its names are known without
importing this module) loads this module when a backend is first asked for. A backend imports
its engine when first asked for a response: a run on one backend never loads the other.

Examples
--------
>>> from auralgen.rooms.spec import RoomSpec
>>> check_backend("fast", "exact", RoomSpec((4.0, 3.0, 2.5), rt60_s=0.3)).name
'fast'
>>> check_backend("gpu", "exact", RoomSpec((4.0, 3.0, 2.5)))
Traceback (most recent call last):
...
auralgen.core.registry.UnknownNameError: backend='gpu' is unknown; allowed: fast, pra
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError
from auralgen.rooms.spec import BACKENDS, RoomSpec

if TYPE_CHECKING:
    from auralgen.rooms.receivers import Receiver

__all__ = ["BACKENDS", "Backend", "FastBackend", "PraBackend", "check_backend"]

#: the sections of every backend's :meth:`Backend.supports`
_SUPPORTS = """
Parameters
----------
room : RoomSpec
    The room.
receiver : Receiver or None
    The receiver; ``None`` for bare omni points.
mode : str
    One of :attr:`modes`.

Returns
-------
str or None
    ``None`` when supported, else the reason.
"""

#: the sections of every backend's :meth:`Backend.rir`; ``{rng}`` says what ``rng`` draws
_RIR = """
Parameters
----------
room, src, mics, sample_rate
    As ``room, source_m, mics_m, sample_rate`` of :func:`~auralgen.rooms.simulate.compute_rir`
    (validated by the caller); ``src`` shape (3,), ``mics`` shape (n_mics, 3).
mode : str
    One of :attr:`modes`.
rng : numpy.random.Generator or None
    {rng}; ``None`` in exact mode.

Returns
-------
ndarray, shape (n_mics, n_samples), float64
    One response per microphone, zero-padded to the longest.
"""


class Backend(Protocol):
    """What a room backend provides (a class registered in :data:`BACKENDS`)."""

    name: ClassVar[str]
    #: every ``mode`` this backend renders (the one list of allowed modes)
    modes: ClassVar[tuple[str, ...]]

    @sections(_SUPPORTS)
    def supports(self, room: RoomSpec, receiver: Receiver | None, mode: str) -> str | None:
        """None if this backend renders ``receiver`` (None: bare omni points) in ``room`` in ``mode``;
        else why not, as the allowed-values part of a one-line error.
        """
        ...

    @sections(_RIR, rng="Draws the random part of ``hybrid`` responses")
    def rir(
        self,
        room: RoomSpec,
        src: np.ndarray,
        mics: np.ndarray,
        *,
        sample_rate: int,
        mode: str,
        rng: np.random.Generator | None,
    ) -> np.ndarray:
        """RIRs ``[n_mics, n]`` float64 from ``src [3]`` to ``mics [n_mics, 3]``."""
        ...


class FastBackend:
    """The numba image-source engine; ``hybrid`` = exact images, then a noise tail drawn from ``rng``."""

    name: ClassVar[str] = "fast"
    modes: ClassVar[tuple[str, ...]] = ("exact", "hybrid")

    @sections(_SUPPORTS)
    def supports(self, room: RoomSpec, receiver: Receiver | None, mode: str) -> str | None:
        """:meth:`Backend.supports`: every receiver, but no air absorption."""
        if room.air_absorption:
            return (
                "air_absorption=True is not modelled by backend='fast'; allowed: air_absorption=false or backend='pra'"
            )
        return None

    @sections(_RIR, rng="Draws the hybrid noise tail")
    def rir(self, room, src, mics, *, sample_rate: int, mode: str, rng) -> np.ndarray:
        """:meth:`Backend.rir` by the image-source engine (``hybrid``: then an energy-matched noise tail)."""
        if mode == "hybrid":
            from auralgen.rooms.hybrid import compute_rir_hybrid

            return compute_rir_hybrid(room, src, mics, sample_rate=sample_rate, rng=rng)
        from auralgen.rooms.fast import compute_rir_fast

        return compute_rir_fast(room, src, mics, sample_rate=sample_rate)


class PraBackend:
    """pyroomacoustics (the reference): omni arrays only; ``hybrid`` = order-3 images + its ray tracer."""

    name: ClassVar[str] = "pra"
    modes: ClassVar[tuple[str, ...]] = ("exact", "hybrid")

    @sections(_SUPPORTS)
    def supports(self, room: RoomSpec, receiver: Receiver | None, mode: str) -> str | None:
        """:meth:`Backend.supports`: any room, omni arrays only."""
        if receiver is not None and receiver.mic_positions_m() is None:
            return (
                f"backend='pra' cannot render a {receiver.layout} receiver; allowed: fast (or an omni array with pra)"
            )
        return None

    @sections(_RIR, rng="Draws the ray tracer's seed in hybrid mode")
    def rir(self, room, src, mics, *, sample_rate: int, mode: str, rng) -> np.ndarray:
        """:meth:`Backend.rir` by :func:`~auralgen.rooms.pra_backend.compute_rir_pra`."""
        from auralgen.rooms.pra_backend import compute_rir_pra

        return compute_rir_pra(room, src, mics, sample_rate=sample_rate, mode=mode, rng=rng)


# the backends are stateless: one instance each serves every call
BACKENDS.register(FastBackend())
BACKENDS.register(PraBackend())


def check_backend(
    backend: str, mode: str, room: RoomSpec, receiver: Receiver | None = None, *, key: str = ""
) -> Backend:
    """The backend ``backend``, after checking that it renders ``mode`` (and ``receiver`` in ``room``).

    ``key`` prefixes the config keys in errors (``"task.azimuth_absolute."``). Raises
    :class:`ParameterError`: ``<key>backend='gpu' is unknown; allowed: fast, pra``,
    ``<key>mode='x' is unknown; allowed: exact, hybrid`` or the backend's own reason.

    Parameters
    ----------
    backend : str
        A name in :data:`BACKENDS`.
    mode : str
        A mode of that backend.
    room : RoomSpec
        The room to render.
    receiver : Receiver or None, optional
        The receiver to render (``None``: bare omni points).
    key : str, optional
        Prefix of the config keys named in errors.

    Returns
    -------
    Backend
        The registered backend instance.
    """
    b = BACKENDS.get(backend, key=f"{key}backend")
    if mode not in b.modes:
        raise ParameterError(f"{key}mode={mode!r} is unknown; allowed: {', '.join(b.modes)}")
    why = b.supports(room, receiver, mode)
    if why is not None:
        raise ParameterError(why)
    return b
