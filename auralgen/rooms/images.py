"""Shoebox image sources and their rendering to one omnidirectional microphone.

The conventions are pyroomacoustics' (0.10), so that :func:`render_omni` lines up
sample by sample with ``pra.ShoeBox(...).compute_rir()`` on the same images:

- amplitude of an image: ``gain / dist`` (pyroomacoustics >= 0.8 dropped the ``1/(4 pi)``
  factor, so the direct sound at 1 m has amplitude 1; :func:`spreading_gain`);
- ``gain``: product over bounces of the wall's amplitude reflection coefficient
  ``sqrt(1 - absorption)``;
- delay: ``dist / c`` plus a constant offset of ``FRAC_DELAY_LENGTH // 2`` samples
  (the half-length of the fractional-delay filter, so that no tap is acausal);
- fractional delay: ``FRAC_DELAY_LENGTH`` (81) taps of Hann-windowed sinc, read from a
  table with ``SINC_LUT_GRANULARITY`` (20) points per sample and linear interpolation;
- length: ``ceil(fs * t_max + fdl2 + 1) + 1`` samples, ``t_max`` = last arrival incl. the offset;
- a zero-phase (``sosfiltfilt``) 2nd-order Butterworth high-pass at ``RIR_HPF_FC_HZ`` (10 Hz)
  over the whole response.

Examples
--------
>>> from auralgen.rooms.spec import RoomSpec
>>> room = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.3).validate()
>>> imgs = image_sources(room, (2.0, 3.0, 1.5), max_order=1)
>>> imgs.positions_m.shape, int(imgs.orders.max())
((7, 3), 1)
>>> rir = render_omni(imgs, (4.0, 2.0, 1.2), sample_rate=16000, c_m_s=343.0)
>>> rir.dtype, rir.ndim
(dtype('float64'), 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.fft
from scipy.signal import iirfilter, sosfilt_zi

from auralgen.core.errors import ParameterError, check_range
from auralgen.rooms import _ism_kernels as _k
from auralgen.rooms.spec import RoomSpec, reverberation_time_s, wall_absorption

#: pyroomacoustics ``constants`` defaults these conventions mirror (tested against the package).
FRAC_DELAY_LENGTH = 81
SINC_LUT_GRANULARITY = 20
RIR_HPF_FC_HZ = 10.0
RIR_HPF_ORDER = 2
FDL2 = FRAC_DELAY_LENGTH // 2


@dataclass(frozen=True)
class ImageSources:
    """Image sources of one source in a room.

    positions_m : np.ndarray [n_images, 3] float64, room frame
    gains : np.ndarray [n_images], product of wall amplitude reflection coefficients, no 1/r
    orders : np.ndarray [n_images] int, number of reflections
    """

    positions_m: np.ndarray
    gains: np.ndarray
    orders: np.ndarray


def spreading_gain(dist_m):
    """Free-field amplitude of a unit source at ``dist_m`` (m): ``1 / dist`` (pyroomacoustics convention).

    Parameters
    ----------
    dist_m : float or array_like
        Distance(s) from the source in metres, > 0.

    Returns
    -------
    ndarray, float64
        ``1 / dist_m``, same shape as ``dist_m`` (a numpy float for a scalar).
    """
    return 1.0 / np.asarray(dist_m, dtype=float)


def _axis_tables(room: RoomSpec, source_m, n_max: int):
    amp = np.sqrt(np.clip(1.0 - wall_absorption(room), 0.0, 1.0))
    src = np.asarray(source_m, dtype=float)
    tables = []
    for d in range(3):
        tables.extend(_k._axis_images(float(room.dims_m[d]), float(src[d]), amp[2 * d], amp[2 * d + 1], int(n_max)))
    return tables  # cx, gx, cy, gy, cz, gz


def image_sources(room: RoomSpec, source_m, *, max_order: int) -> ImageSources:
    """All image sources of order ``<= max_order`` (order 0 = the source itself).

    Parameters
    ----------
    room : RoomSpec
        The room; its ``dims_m`` and wall absorption are read.
    source_m : array_like [3], room frame (m)
        The source position.
    max_order : int >= 0
        Highest number of reflections, at most 1000.

    Returns
    -------
    ImageSources
        Positions (m), gains and orders of the ``(2/3)(2N^3 + 3N^2 + 4N) + 1`` images for ``N = max_order``.
    """
    check_range("max_order", int(max_order), low=0, high=1000)
    pos, gains, orders = _k._enumerate_images(*_axis_tables(room, source_m, int(max_order)), int(max_order))
    return ImageSources(positions_m=pos, gains=gains, orders=orders)


def _inscribed_radius_m(room: RoomSpec) -> float:
    # radius of the largest sphere inside the diamond of rooms of order N is N+1 times this
    lx, ly, lz = (float(v) for v in room.dims_m)
    return min(a * b / math.hypot(a, b) for a, b in ((lx, ly), (lx, lz), (ly, lz)))


def max_order_for(room: RoomSpec, sample_rate: int) -> int:
    """Image-source order whose images cover the room's reverberation time.

    ``room.max_order`` if set; 0 for an anechoic room; otherwise pyroomacoustics'
    ``inverse_sabine`` rule ``ceil(c * RT60 / R - 1)`` with ``R`` the smallest
    ``Li Lj / hypot(Li, Lj)``, so that every reflection arriving within RT60
    (:func:`rir_length` samples at ``sample_rate``) is present.

    Parameters
    ----------
    room : RoomSpec
        The room; its ``max_order``, else its reverberation time, decides.
    sample_rate : int
        Sample rate in Hz, in [1000, 384000] (checked only; the order does not depend on it).

    Returns
    -------
    int
        The image-source order, >= 0.
    """
    check_range("sample_rate", int(sample_rate), low=1000, high=384000)
    if room.max_order is not None:
        return int(room.max_order)
    rt60 = reverberation_time_s(room)
    if rt60 <= 0:
        return 0
    return max(0, int(math.ceil(room.c_m_s * rt60 / _inscribed_radius_m(room) - 1)))


def rir_length(room: RoomSpec, sample_rate: int, *, max_distance_m=None) -> int:
    """Samples pyroomacoustics uses for a response whose farthest image is ``max_distance_m`` away.

    ``N = ceil(fs * (d / c + fdl2 / fs) + fdl2 + 1) + 1``. Without ``max_distance_m``,
    ``d = c * RT60`` (the room's reverberation time; the room diagonal if anechoic).

    Parameters
    ----------
    room : RoomSpec
        The room; its ``c_m_s`` (and, without ``max_distance_m``, its reverberation time) are read.
    sample_rate : int
        Sample rate in Hz.
    max_distance_m : float or None, optional
        Distance of the farthest image in metres; ``None`` for ``c * RT60``.

    Returns
    -------
    int
        The response length in samples.
    """
    if max_distance_m is None:
        rt60 = reverberation_time_s(room)
        d = room.c_m_s * rt60 if rt60 > 0 else float(np.linalg.norm(room.dims_m))
    else:
        d = float(max_distance_m)
    return _natural_length(d, room.c_m_s, int(sample_rate))


def _natural_length(max_distance_m: float, c_m_s: float, sample_rate: int) -> int:
    t_max = max_distance_m / c_m_s + FDL2 / sample_rate
    return int(math.ceil(t_max * sample_rate + FDL2 + 1)) + 1


@lru_cache(maxsize=8)
def _phase_kernels() -> np.ndarray:
    """Windowed-sinc taps ``[granularity + 2, fdl]`` for each table phase.

    Phase ``p`` tap ``k`` is ``hann[k] * sinc(k - fdl2 - 1 + p / granularity)``. The sinc
    abscissae are accumulated in float32 steps of ``1 / granularity`` as in pyroomacoustics'
    table (they drift by up to ~5e-4 sample); reproducing that drift brings renders within
    ~1e-5 (normalised L2) of pyroomacoustics instead of ~1e-3.
    """
    fdl, gran = FRAC_DELAY_LENGTH, SINC_LUT_GRANULARITY
    steps = np.full((fdl + 2) * gran, 1.0 / gran, dtype=np.float32)
    steps[0] = -FDL2 - 1
    x = np.cumsum(steps, dtype=np.float32)  # sequential float32 accumulation
    px = np.float32(np.pi) * x
    with np.errstate(invalid="ignore", divide="ignore"):
        table = np.where(x == 0, np.float32(1.0), np.sin(px) / px).astype(np.float64)
    k = np.arange(fdl)
    hann = 0.5 - 0.5 * np.cos(2.0 * np.pi * k / (fdl - 1))
    idx = np.arange(gran + 2)[:, None] + gran * k[None, :]
    return hann[None, :] * table[idx]


#: rank kept of the phase kernels (singular values beyond it are < 5e-8 of the first)
_BASIS_RANK = 8


@lru_cache(maxsize=1)
def _phase_basis() -> tuple[np.ndarray, np.ndarray]:
    """``(coef [granularity + 2, rank], kernels [rank, fdl])`` with phase kernels ~= coef @ kernels."""
    u, s, vt = np.linalg.svd(_phase_kernels(), full_matrices=False)
    r = _BASIS_RANK
    return np.ascontiguousarray(u[:, :r]), s[:r, None] * vt[:r]


@lru_cache(maxsize=32)
def _basis_kernels_rows(n_fft: int) -> np.ndarray:
    """Spectra of the basis kernels, ``[rank, n_freq]`` (read-only)."""
    spec = scipy.fft.rfft(_phase_basis()[1], n=n_fft, axis=1)
    spec.flags.writeable = False
    return spec


@lru_cache(maxsize=8)
def _hpf_sos(sample_rate: int) -> np.ndarray:
    return iirfilter(RIR_HPF_ORDER, 2.0 * RIR_HPF_FC_HZ / sample_rate, btype="highpass", ftype="butter", output="sos")


@lru_cache(maxsize=8)
def _hpf_state(sample_rate: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(sos, sosfilt_zi, edge)`` of the high-pass, ``edge`` = sosfiltfilt's default odd padding."""
    sos = _hpf_sos(sample_rate)
    taps = 2 * sos.shape[0] + 1 - min(int(np.sum(sos[:, 2] == 0)), int(np.sum(sos[:, 5] == 0)))
    return sos, sosfilt_zi(sos), 3 * taps


def _highpass(rir: np.ndarray, sample_rate: int, lengths=None) -> np.ndarray:
    """pyroomacoustics' default RIR high-pass (zero phase) along the last axis.

    ``lengths`` (one per row of a 2-D ``rir``): filter row ``c`` over its first ``lengths[c]`` samples only,
    as if it were that long, and leave zeros after. Bit-identical to ``scipy.signal.sosfiltfilt`` (tested);
    a numba kernel that runs four rows at once (:func:`~auralgen.rooms._ism_kernels._sosfiltfilt`).
    """
    rir = np.asarray(rir, dtype=np.float64)
    if rir.shape[-1] <= 3 * (2 * RIR_HPF_ORDER + 1):
        return rir
    rows = np.ascontiguousarray(rir.reshape(-1, rir.shape[-1]))
    lens = np.full(rows.shape[0], rows.shape[1], dtype=np.int64) if lengths is None else np.asarray(lengths, np.int64)
    sos, zi, edge = _hpf_state(int(sample_rate))
    return _k._sosfiltfilt(sos, zi, rows, lens, edge).reshape(rir.shape)


def _synthesise(acc: np.ndarray) -> np.ndarray:
    """Sum over basis rows of (impulse train) * (basis kernel): ``[n_len]`` from ``[n_len, rank]``."""
    return _synthesise_batch(acc[None])[0]


def _synthesise_batch(acc: np.ndarray, *, rank_major: bool = False) -> np.ndarray:
    """:func:`_synthesise` of each ``acc[k]`` in one call: ``[k, n_len]`` from ``[k, n_len, rank]``, or from
    ``[k, rank, n_len]`` with ``rank_major`` (then the FFTs run along contiguous rows, ~25 % faster).

    The rank terms are added in the order numpy's pairwise sum adds eight contiguous values,
    ``((0 + 4) + (1 + 5)) + ((2 + 6) + (3 + 7))``, so both layouts give the same bits.
    """
    acc = np.asarray(acc, dtype=np.float64)  # float64 FFT whatever the accumulator
    acc = acc if rank_major else acc.transpose(0, 2, 1)
    n_len = acc.shape[2]
    n_fft = scipy.fft.next_fast_len(n_len + FRAC_DELAY_LENGTH - 1, real=True)
    spec = scipy.fft.rfft(acc, n=n_fft, axis=2)
    spec *= _basis_kernels_rows(n_fft)  # [rank, n_freq]
    if spec.shape[1] == 8:
        s = spec
        total = ((s[:, 0] + s[:, 4]) + (s[:, 1] + s[:, 5])) + ((s[:, 2] + s[:, 6]) + (s[:, 3] + s[:, 7]))
    else:
        total = spec.sum(axis=1)
    return scipy.fft.irfft(total, n=n_fft, axis=1)[:, :n_len]


def _check_render_args(mic_m, sample_rate, c_m_s, n_samples):
    mic = np.asarray(mic_m, dtype=float)
    if mic.shape != (3,) or not np.all(np.isfinite(mic)):
        raise ParameterError(f"mic_m={mic_m!r} is invalid; allowed: three finite coordinates (m)")
    check_range("sample_rate", int(sample_rate), low=1000, high=384000)
    check_range("c_m_s", float(c_m_s), low=200.0, high=500.0)
    if n_samples is not None:
        check_range("n_samples", int(n_samples), low=1)
    return mic


def render_omni(
    images: ImageSources, mic_m, *, sample_rate: int, c_m_s: float, n_samples: int | None = None
) -> np.ndarray:
    """Impulse response ``[n]`` float64 of ``images`` at one omni microphone.

    Each image lands at ``dist / c`` (+ the 40-sample filter offset) with amplitude
    ``gain / dist`` through pyroomacoustics' fractional delay; then the 10 Hz high-pass.

    Parameters
    ----------
    images : ImageSources
        The images to render.
    mic_m : array_like [3], room frame (m)
        The microphone position, >= 1 mm from every image.
    sample_rate : int (Hz)
        Sample rate, in [1000, 384000].
    c_m_s : float (m/s)
        Speed of sound, in [200, 500].
    n_samples : int or None
        Output length. None = pyroomacoustics' length for the farthest image. When given,
        later arrivals are cut and the high-pass runs over exactly ``n_samples`` (so the
        renders of disjoint image subsets add up to the render of their union).

    Returns
    -------
    np.ndarray, shape (n_samples,), float64
        The impulse response (direct sound at 1 m has amplitude 1).
    """
    mic = _check_render_args(mic_m, sample_rate, c_m_s, n_samples)
    pos = np.ascontiguousarray(np.asarray(images.positions_m, dtype=float).reshape(-1, 3))
    gains = np.ascontiguousarray(np.asarray(images.gains, dtype=float).ravel())
    if pos.shape[0] != gains.shape[0]:
        raise ParameterError(f"images.gains has {gains.shape[0]} entries for {pos.shape[0]} positions; allowed: equal")
    dist = np.linalg.norm(pos - mic, axis=1)
    if dist.size and dist.min() < 1e-3:
        raise ParameterError(f"mic_m={mic.tolist()!r} coincides with an image source; allowed: distance >= 1 mm")
    if n_samples is None:
        n_len = _natural_length(float(dist.max(initial=0.0)), float(c_m_s), int(sample_rate))
    else:
        n_len = int(n_samples)
    # an image whose first tap starts at or beyond n_len cannot reach the output
    max_dist = (n_len + 1) * c_m_s / sample_rate
    acc = _k._scatter_list(
        pos, gains, mic, _phase_basis()[0], int(sample_rate), float(c_m_s), FDL2, SINC_LUT_GRANULARITY, n_len, max_dist
    )
    return _highpass(_synthesise(acc), sample_rate)
