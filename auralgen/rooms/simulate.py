"""One pure function from a room, a source and microphones to room impulse responses.

>>> from auralgen.rooms.spec import load_preset
>>> rir = compute_rir(load_preset("booth"), (1.0, 1.0, 1.2), [[1.6, 1.1, 1.2]], sample_rate=16000)
>>> rir.shape[0], rir.dtype
(1, dtype('float64'))

Backends (``backend`` x ``mode``; :data:`auralgen.rooms.backends.BACKENDS`):

- ``fast`` / ``exact``: numba image-source engine (:mod:`auralgen.rooms.fast`); matches
  ``pra`` / ``exact`` to ~1e-5 normalised L2 error, many times faster.
- ``fast`` / ``hybrid``: exact images until the mixing time, then an energy-matched noise
  tail drawn from ``rng`` (:mod:`auralgen.rooms.hybrid`).
- ``pra`` / ``exact``: ``pyroomacoustics.ShoeBox`` image sources (:mod:`auralgen.rooms.pra_backend`);
  the only backend modelling air absorption.
- ``pra`` / ``hybrid``: pyroomacoustics' image sources (order 3) + its ray tracer, seeded from ``rng``.

Lengths: each microphone's response has the length pyroomacoustics would give it (from its
farthest image); the array is zero-padded to the longest. Amplitude: ``gain / dist``
(direct sound at 1 m = 1, pyroomacoustics' convention).
"""

from __future__ import annotations

import numpy as np

from auralgen.core.errors import ParameterError, check_range
from auralgen.rooms.backends import check_backend
from auralgen.rooms.spec import RoomSpec, check_position


def compute_rir(
    room: RoomSpec,
    source_m,
    mics_m,
    *,
    sample_rate: int,
    backend: str = "fast",
    mode: str = "exact",
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Room impulse responses from ``source_m`` to each microphone.

    Parameters
    ----------
    room : RoomSpec
        The room (validated here).
    source_m : array_like, shape (3,)
        Source position in the room frame, metres, >= 0.1 m from every wall.
    mics_m : array_like, shape (n_mics, 3) or (3,)
        Microphone positions in the room frame, metres, >= 0.1 m from every wall and >= 0.01 m from the source.
    sample_rate : int
        Sample rate in Hz, in [1000, 384000].
    backend : {"fast", "pra"}
        A name in :data:`auralgen.rooms.backends.BACKENDS`.
    mode : {"exact", "hybrid"}
        One of the backend's ``modes``.
    rng : numpy.random.Generator or None
        Required for ``mode="hybrid"`` (tail noise / ray tracer); unused in exact mode.

    Returns
    -------
    np.ndarray, shape (n_mics, n_samples), float64
        One response per microphone (direct sound at 1 m has amplitude 1), zero-padded to the longest.

    Raises
    ------
    ParameterError
        If a value is out of range, a position is outside the room or the backend cannot render the room.
    """
    engine, src, mics = _checked_rir_args(
        room, source_m, mics_m, sample_rate=sample_rate, backend=backend, mode=mode, rng=rng
    )
    return engine.rir(room, src, mics, sample_rate=int(sample_rate), mode=mode, rng=rng)


def _checked_rir_args(room: RoomSpec, source_m, mics_m, *, sample_rate: int, backend: str, mode: str, rng):
    """:func:`compute_rir`'s arguments checked: ``(backend, source [3], mics [n_mics, 3])``, or the
    :class:`ParameterError` it raises (same parameters)."""
    room.validate()
    engine = check_backend(backend, mode, room)
    check_range("sample_rate", int(sample_rate), low=1000, high=384000)
    src = check_position(source_m, room, "source_m")
    mics = np.asarray(mics_m, dtype=float)
    if mics.ndim == 1:
        mics = mics[None, :]
    if mics.ndim != 2 or mics.shape[1] != 3 or mics.shape[0] == 0:
        raise ParameterError(f"mics_m has shape {mics.shape}; allowed: [n_mics >= 1, 3]")
    for i, mic in enumerate(mics):
        check_position(mic, room, f"mics_m[{i}]")
        dist = float(np.linalg.norm(mic - src))
        if dist < 0.01:
            raise ParameterError(f"mics_m[{i}]={mic.tolist()!r} is {dist:.4f} m from the source; allowed: >= 0.01 m")
    if mode == "hybrid" and rng is None:
        raise ParameterError("rng=None with mode='hybrid'; allowed: a numpy Generator (from the item's rng)")
    return engine, src, mics
