"""A sound at a point in a room, heard through a receiver: the multichannel RIR and the clip.

:func:`spatial_rir` is the one pure function the spatial tasks use::

    (room, source position, receiver, sample rate, mode, rng) -> RIR [channels, n]

- omni arrays (mono, stereo, tetra, circular): :func:`auralgen.rooms.simulate.compute_rir`
  per microphone (``fast`` backend, exact or hybrid);
- directional receivers (binaural, FOA): the image sources that arrive before the mixing
  time go through the receiver (HRIR / spherical-harmonic gains per image direction); in
  ``hybrid`` mode the late part is the energy-matched diffuse tail of the fast engine,
  rendered at points around the receiver (independent per channel), crossfaded in at the
  mixing time. In ``exact`` mode every image goes through the receiver.

Amplitudes follow pyroomacoustics: the direct sound at 1 m has gain 1, so a source signal
at L dB SPL is heard at ``L - 20 log10(r)`` dB SPL (plus the room) at ``r`` metres.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import oaconvolve

from auralgen.rooms.backends import check_backend
from auralgen.rooms.hybrid import XFADE_S, _hybrid_before_highpass, mixing_time_s
from auralgen.rooms.images import FDL2, ImageSources, _highpass, image_sources, max_order_for, rir_length
from auralgen.rooms.receivers import TAIL_POINT_OFFSET_M, Binaural, Receiver
from auralgen.rooms.simulate import _checked_rir_args, compute_rir
from auralgen.rooms.spec import RoomSpec, check_position, wall_absorption, wall_areas_m2

__all__ = ["TAIL_POINT_OFFSET_M", "convolve", "critical_distance_m", "expected_drr_db", "spatial_rir"]


def _subset(images: ImageSources, keep: np.ndarray) -> ImageSources:
    return ImageSources(images.positions_m[keep], images.gains[keep], images.orders[keep])


def spatial_rir(
    room: RoomSpec,
    source_m,
    receiver: Receiver,
    *,
    sample_rate: int,
    mode: str = "hybrid",
    rng: np.random.Generator | None = None,
    backend: str = "fast",
) -> np.ndarray:
    """Multichannel RIR ``[receiver.num_channels, n]`` float64 from ``source_m`` to ``receiver``.

    Parameters
    ----------
    room : RoomSpec
        The room.
    source_m : array_like [3], room frame (m)
        The source position, >= 0.1 m from every wall.
    receiver : Receiver
        The receiver; its ``position_m`` is >= 0.1 m from every wall.
    sample_rate : int (Hz)
        Sample rate of the response.
    mode : {"exact", "hybrid"}
        One of the backend's ``modes``.
    rng : np.random.Generator or None
        Draws the tail noise; required for ``hybrid``.
    backend : {"fast", "pra"}
        A name in :data:`auralgen.rooms.backends.BACKENDS`. Omni arrays go to the backend mic by
        mic; directional receivers need every image's direction, which only ``fast`` provides.

    Returns
    -------
    np.ndarray, shape (receiver.num_channels, n), float64
        The response (direct sound at 1 m has amplitude 1 in an omni channel).
    """
    src = check_position(source_m, room, "source_m")
    check_position(receiver.position_m, room, "receiver.position_m")
    check_backend(backend, mode, room, receiver)
    mics = receiver.mic_positions_m()
    if mics is not None:
        return compute_rir(room, src, mics, sample_rate=sample_rate, backend=backend, mode=mode, rng=rng)
    order = max_order_for(room, sample_rate)
    head = np.asarray(receiver.position_m, dtype=float)
    if mode == "exact" or order == 0:
        images = image_sources(room, src, max_order=order)
        n = rir_length(
            room, sample_rate, max_distance_m=float(np.max(np.linalg.norm(images.positions_m - head, axis=1)))
        )
        return receiver.render(images, sample_rate=sample_rate, c_m_s=room.c_m_s, n_samples=n)
    return _early_and_tail(room, src, receiver, order, sample_rate=sample_rate, rng=rng)


def _early_and_tail(
    room: RoomSpec, src: np.ndarray, receiver: Receiver, order: int, *, sample_rate: int, rng, early_samples=None
):
    """A directional receiver's hybrid response: the early images through the receiver, crossfaded at the
    mixing time into the fast engine's omni tails at :meth:`Receiver.tail_points_m`. ``early_samples``: a head's
    early images rendered (and high-passed) only that long, for a caller that keeps no sample of the response
    before the crossfade and from ``early_samples`` on reads the tail alone (at least the crossfade's end)."""
    head = np.asarray(receiver.position_m, dtype=float)
    c = room.c_m_s
    t_dir = float(np.linalg.norm(src - head)) / c
    t_mix = mixing_time_s(room)
    reach = c * (t_dir + t_mix + 2 * XFADE_S) + 0.2
    early_order = min(order, int(math.ceil(reach / min(room.dims_m))) + 1)
    images = image_sources(room, src, max_order=early_order)
    images = _subset(images, np.linalg.norm(images.positions_m - head, axis=1) <= reach)
    tail, early = _tail_and_early(
        room, src, receiver, images, sample_rate=sample_rate, rng=rng, early_samples=early_samples
    )
    n = tail.shape[1]
    n0 = int(round((t_dir + t_mix) * sample_rate)) + FDL2
    n_x = max(1, int(round(XFADE_S * sample_rate)))
    out = tail * receiver.diffuse_gains()[:, None]  # e.g. FOA: X, Y, Z carry a third of W's energy
    # early * (1 - w) + tail * w with w = 0 before n0, a raised-sine ramp over n_x samples, 1 after: only the
    # ramp's samples mix both (early + tail * 0 is early, early * 0 + tail is tail)
    a, b = min(n0, n), min(n0 + n_x, n)
    w = np.sin(0.5 * np.pi * (np.arange(a, b) - n0 + 0.5) / n_x) ** 2
    out[:, a:b] = early[:, a:b] * (1.0 - w) + out[:, a:b] * w
    out[:, :a] = early[:, :a]
    return out


def _tail_and_early(
    room: RoomSpec,
    src: np.ndarray,
    receiver: Receiver,
    images: ImageSources,
    *,
    sample_rate: int,
    rng,
    early_samples=None,
):
    """The fast engine's hybrid responses at :meth:`Receiver.tail_points_m` (``[points, n]``) and the receiver's
    render of ``images`` as long; a binaural head's four responses go through one high-pass call (it filters four
    rows at once), the same numbers as one call each. ``early_samples``: the head's render only that long (at
    most ``n``; zeros after its high-pass margin)."""
    if not isinstance(receiver, Binaural):
        tail = compute_rir(
            room, src, receiver.tail_points_m(), sample_rate=sample_rate, backend="fast", mode="hybrid", rng=rng
        )
        return tail, receiver.render(images, sample_rate=sample_rate, c_m_s=room.c_m_s, n_samples=tail.shape[1])
    _, src, points = _checked_rir_args(
        room, src, receiver.tail_points_m(), sample_rate=sample_rate, backend="fast", mode="hybrid", rng=rng
    )
    tail = _hybrid_before_highpass(room, src, points, sample_rate=sample_rate, rng=rng)
    n = tail.shape[1]
    n_head = n if early_samples is None else min(n, int(early_samples))
    early = receiver._render_before_highpass(images, sample_rate=sample_rate, c_m_s=room.c_m_s, n_samples=n_head)
    rows = np.zeros((early.shape[0] + tail.shape[0], max(n, early.shape[1])))
    rows[: early.shape[0], : early.shape[1]] = early
    rows[early.shape[0] :, :n] = tail
    lengths = [early.shape[1]] * early.shape[0] + [n] * tail.shape[0]
    rows = _highpass(rows, sample_rate, lengths=lengths)
    return rows[early.shape[0] :, :n], rows[: early.shape[0], :n]


def convolve(signal: np.ndarray, rir: np.ndarray) -> np.ndarray:
    """``signal`` through every channel of ``rir``.

    Parameters
    ----------
    signal : np.ndarray, shape (n,)
        The dry signal.
    rir : np.ndarray, shape (ch, m)
        The multichannel impulse response (same sample rate).

    Returns
    -------
    np.ndarray, shape (ch, n + m - 1)
        float64.
    """
    return oaconvolve(np.asarray(signal, float)[None, :], rir, axes=1)


def critical_distance_m(room: RoomSpec) -> float:
    """Distance where direct and reverberant energy are equal (Sabine): ``sqrt(A / (16 pi))``.

    The absorption area ``A`` is ``0.161 V / RT60`` for a room given by its ``rt60_s``, and the
    walls' areas weighted by their absorption for a room given by ``materials``.

    Parameters
    ----------
    room : RoomSpec
        The room; its ``volume_m3`` and ``rt60_s``, or its walls' areas and ``materials``, are read.

    Returns
    -------
    float
        Distance (m); ``inf`` without reverberation (no RT60 and no materials, or every wall absorbing all).
    """
    if room.rt60_s is not None:
        if room.rt60_s <= 0:
            return math.inf
        absorption_area = 0.161 * room.volume_m3 / room.rt60_s
    elif room.materials is not None:
        alpha = wall_absorption(room)
        if np.all(alpha >= 1.0):
            return math.inf
        absorption_area = float(np.sum(wall_areas_m2(room) * alpha))
    else:
        return math.inf
    return math.sqrt(absorption_area / (16 * math.pi))


def expected_drr_db(room: RoomSpec, distance_m: float) -> float:
    """Statistical direct-to-reverberant ratio at ``distance_m``: ``20 log10(r_c / r)``.

    Parameters
    ----------
    room : RoomSpec
        The room; its ``volume_m3`` and ``rt60_s`` are read.
    distance_m : float > 0
        Source-receiver distance (m).

    Returns
    -------
    float
        DRR (dB); ``inf`` without reverberation.
    """
    rc = critical_distance_m(room)
    return math.inf if math.isinf(rc) else 20 * math.log10(rc / distance_m)
