"""The rendering helpers of :func:`auralgen.rooms.trajectory.render_moving` (see its module
docstring): moving image sources read at their retarded times, per receiving point, and the
static tail of the path's midpoint.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.fft
import scipy.signal

from auralgen.core.errors import ParameterError
from auralgen.rooms import _trajectory_kernels as _k
from auralgen.rooms import images as _images
from auralgen.rooms.hybrid import XFADE_S, mixing_time_s
from auralgen.rooms.images import FDL2, FRAC_DELAY_LENGTH, SINC_LUT_GRANULARITY, image_sources, max_order_for
from auralgen.rooms.receivers import Binaural, Receiver, foa_weights
from auralgen.rooms.spec import RoomSpec

#: closest the path may come to a receiving point (m)
MIN_RECEIVER_DISTANCE_M = 0.2
#: binaural HRIR update interval (s); windows are twice as long
BLOCK_S = 0.008
#: a signal with fewer non-zero samples is convolved sample by sample (~0.6 us each), else by FFT (~1.7 ms)
SPARSE_SAMPLES = 2000
#: the late part renders a head's early images this long past the crossfade: the 10 Hz high-pass's ringing
#: (poles decaying at 2 pi 10 / sqrt(2) per s) falls by e^-22 over it, twice (forward and backward)
HP_SETTLE_S = 0.5
#: binaural filtering: blocks per partition filtered by one FFT (the blocks of one direction summed)
PARTITION_BLOCKS = 4


def _image_affine(room: RoomSpec, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(offsets [n, 3], signs [n, 3], gains [n])``: image = offsets + signs * source."""
    at0 = image_sources(room, (0.0, 0.0, 0.0), max_order=order)
    at1 = image_sources(room, (1.0, 1.0, 1.0), max_order=order)
    signs = np.rint(at1.positions_m - at0.positions_m)
    return np.ascontiguousarray(at0.positions_m), np.ascontiguousarray(signs), np.ascontiguousarray(at0.gains)


def on_segment(pts: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Points ``[n, 3]`` at fractions ``u [n]`` (in [0, 1]) of the segment ``pts [2, 3]``: ``np.interp`` over
    ``[0, 1]`` (slope ``p1 - p0`` times ``u - 0`` plus ``p0``, ``p1`` from ``u = 1``), the same arithmetic
    without its search, a column at a time."""
    out = np.empty((u.size, 3))
    for d in range(3):
        out[:, d] = (pts[1, d] - pts[0, d]) * u + pts[0, d]
    out[u >= 1.0] = pts[1]
    return out


def sampled_path(trajectory, n: int, sample_rate: int) -> np.ndarray:
    """The source position at every sample ``[n, 3]`` (m) of a :class:`~auralgen.rooms.trajectory.Trajectory`."""
    return np.ascontiguousarray(trajectory.position_at(np.arange(n) / sample_rate))


@functools.lru_cache(maxsize=1)
def _basis_kernels_t() -> np.ndarray:
    """The basis kernels of :func:`auralgen.rooms.images._phase_basis` tap-major, ``[taps, rank]`` (read-only)."""
    out = np.ascontiguousarray(_images._phase_basis()[1].T)
    out.flags.writeable = False
    return out


def basis_convolution(signal: np.ndarray) -> np.ndarray:
    """The dry signal through each basis kernel of the fractional-delay phase kernels (the static engine's
    rank-8 basis, :func:`auralgen.rooms.images._phase_basis`), full length, one FFT pair:
    ``[n_sig + 2 fdl2, rank]``, what the moving-image kernel reads at each image's fractional delay."""
    if np.count_nonzero(signal) < SPARSE_SAMPLES:  # a click train: the few non-zero samples directly
        return _k._sparse_convolution(signal, _basis_kernels_t())
    n_conv = signal.size + FRAC_DELAY_LENGTH - 1
    n_fft = scipy.fft.next_fast_len(n_conv, real=True)
    spec = scipy.fft.rfft(signal, n_fft) * _images._basis_kernels_rows(n_fft)
    return np.ascontiguousarray(scipy.fft.irfft(spec, n_fft, axis=-1)[:, :n_conv].T)


def _read(signal, path, affine, point, room, sample_rate, n_out, conv=None):
    """Every image of ``affine`` heard at ``point``: ``(y [n_images, n_out], tau [n_images, n_out])`` of
    :func:`~auralgen.rooms._trajectory_kernels._render_moving_images`; ``conv``: the signal's
    :func:`basis_convolution` if the caller has it."""
    offsets, signs, gains = affine
    nonzero = np.concatenate([[0], np.cumsum(signal != 0.0)]).astype(np.int64)
    return _k._render_moving_images(
        basis_convolution(signal) if conv is None else conv,
        nonzero,
        path,
        offsets,
        signs,
        gains,
        np.asarray(point, dtype=float),
        float(sample_rate),
        float(room.c_m_s),
        FDL2,
        SINC_LUT_GRANULARITY,
        _images._phase_basis()[0],
        int(n_out),
    )


def _emitted_positions(path, tau, affine) -> np.ndarray:
    """Image positions ``[n_images, m, 3]`` at emission times ``tau [n_images, m]`` (signal samples)."""
    offsets, signs, _ = affine
    k = np.clip(tau, 0.0, path.shape[0] - 1.0)
    i0 = np.minimum(np.floor(k).astype(np.intp), path.shape[0] - 2) if path.shape[0] > 1 else np.zeros(k.shape, np.intp)
    f = (k - i0)[..., None]
    p = path[i0] + f * (path[np.minimum(i0 + 1, path.shape[0] - 1)] - path[i0])
    return offsets[:, None, :] + signs[:, None, :] * p


@functools.lru_cache(maxsize=8)
def _hrir_spectra(hrtf: str, sample_rate: int, n_fft: int) -> np.ndarray:
    from auralgen.rooms.receivers import _binaural_hrtf

    out = scipy.fft.rfft(_binaural_hrtf(hrtf, sample_rate).hrirs, n_fft, axis=-1)
    out.flags.writeable = False
    return out


def _binaural_early(receiver: Binaural, y, tau, path, affine, sample_rate) -> np.ndarray:
    """Block-wise HRIR filtering of the per-image signals ``y [n_images, n]`` (see module doc).

    Each image's windowed blocks that share an HRIR direction are summed over partitions of
    ``PARTITION_BLOCKS`` blocks (the windows sum to one, so a partition heard from one direction is the
    image's signal itself): every such piece goes through one batched FFT, is multiplied by its direction's
    HRIR pair and summed over images and directions in the frequency domain; each partition then takes one
    inverse FFT per ear. The same sum of filtered blocks as filtering every block on its own."""
    n = y.shape[1]
    hr = receiver.hrtf_at(sample_rate)
    b = max(1, int(round(BLOCK_S * sample_rate)))
    part = PARTITION_BLOCKS * b
    n_fft = scipy.fft.next_fast_len(part + hr.num_taps - 1, real=True)
    centres = np.arange(0, n + b, b)
    k = np.arange(2 * b)
    window = np.sin(0.5 * np.pi * k / b) ** 2  # window of block j covers [c_j - b, c_j + b)
    img, blk = np.nonzero(_k._live_windows(y, (centres - b).astype(np.int64), window))  # blocks heard
    out = np.zeros((2, n + n_fft))
    if img.size == 0:
        return out[:, :n]
    at = tau[img, np.minimum(centres[blk], n - 1)][:, None]
    pos = _emitted_positions(path, at, tuple(a[img] for a in affine))[:, 0]
    az, el, _ = receiver.directions_of(pos)
    dirs = np.full((y.shape[0], centres.size), -1, dtype=np.int64)
    dirs[img, blk] = hr.nearest(az, el)
    pieces, where, which = _k._direction_pieces(y, window, b, dirs, part, n_fft)
    spectra = _hrir_spectra(receiver.hrtf, int(sample_rate), n_fft)
    acc = np.zeros(((n + part - 1) // part, 2, n_fft // 2 + 1), dtype=complex)
    _k._accumulate_spectra(acc, scipy.fft.rfft(pieces, axis=-1), spectra, where, which)
    live = np.unique(where)
    segs = np.ascontiguousarray(scipy.fft.irfft(acc[live], n_fft, axis=-1))
    _k._overlap_add(out, segs, (live * part).astype(np.int64))
    return out[:, :n]


def _fade_in(m: int, n0: int, n_x: int) -> np.ndarray:
    """``[m]``: 0 before ``n0``, a raised-cosine (sin^2) rise over ``n_x`` samples, 1 after."""
    w = np.zeros(m)
    kk = np.arange(n0, min(n0 + n_x, m))
    w[kk] = np.sin(0.5 * np.pi * (kk - n0 + 0.5) / n_x) ** 2
    w[n0 + n_x :] = 1.0
    return w


def _late_rir(room: RoomSpec, trajectory, receiver: Receiver, sample_rate: int, rng) -> np.ndarray:
    """Static hybrid response at the path's midpoint, faded in at the mixing time (``[ch, m]``): the
    :func:`~auralgen.rooms.scene.spatial_rir` times :func:`_fade_in` from ``n0`` (direct sound + mixing time).
    A head's early images are rendered only :data:`HP_SETTLE_S` past the crossfade: the fade keeps them on the
    crossfade alone, where the high-pass of a longer render differs by its ringing decayed over that time
    (< 1e-18 of the early part)."""
    from auralgen.rooms.backends import check_backend
    from auralgen.rooms.scene import _early_and_tail, spatial_rir
    from auralgen.rooms.spec import check_position

    mid = trajectory.position_at(0.5 * trajectory.duration_s)[0]
    t_dir = float(np.linalg.norm(mid - np.asarray(receiver.position_m))) / room.c_m_s
    n0 = int(round((t_dir + mixing_time_s(room)) * sample_rate)) + FDL2
    n_x = max(1, int(round(XFADE_S * sample_rate)))
    order = max_order_for(room, sample_rate)
    if not (isinstance(receiver, Binaural) and order > 0):
        rir = spatial_rir(room, mid, receiver, sample_rate=sample_rate, mode="hybrid", rng=rng)
        return rir * _fade_in(rir.shape[1], n0, n_x)
    src = check_position(mid, room, "source_m")  # spatial_rir's checks, then its hybrid path
    check_position(receiver.position_m, room, "receiver.position_m")
    check_backend("fast", "hybrid", room, receiver)
    early_samples = n0 + n_x + int(math.ceil(HP_SETTLE_S * sample_rate))
    rir = _early_and_tail(room, src, receiver, order, sample_rate=sample_rate, rng=rng, early_samples=early_samples)
    a, b = min(n0, rir.shape[1]), min(n0 + n_x, rir.shape[1])
    rir[:, :a] = 0.0  # the fade in place (a fresh array): 0 before n0, its rise over the crossfade, 1 after
    rir[:, a:b] *= _fade_in(rir.shape[1], n0, n_x)[a:b]
    return rir


def receiving_points(receiver: Receiver, room: RoomSpec, path: np.ndarray) -> np.ndarray:
    """The omni mics, or the centre of a directional receiver (``[k, 3]``), checked against the path."""
    mics = receiver.mic_positions_m()
    points = mics if mics is not None else np.asarray([receiver.position_m], float)
    for p in points:
        if np.any(p < 0) or np.any(p > np.asarray(room.dims_m)):
            raise ParameterError(
                f"receiver.position_m={list(receiver.position_m)!r} is outside the room; "
                f"allowed: inside {list(room.dims_m)}"
            )
    closest = math.sqrt(_k._min_distance_sq(path, np.ascontiguousarray(points, dtype=float)))  # nearest sample
    if closest < MIN_RECEIVER_DISTANCE_M:
        raise ParameterError(
            f"trajectory passes {closest:.3f} m from the receiver; allowed: >= {MIN_RECEIVER_DISTANCE_M} m"
        )
    return points


def early_moving(sig, path, trajectory, room, receiver, points, early_order, fs) -> tuple[np.ndarray, int]:
    """The moving images up to ``early_order`` at every receiving point, high-passed: ``(early [ch, n], n)``."""
    order = min(early_order, max_order_for(room, fs))
    affine = _image_affine(room, order)
    keep = affine[2] != 0.0
    affine = tuple(np.ascontiguousarray(a[keep]) for a in affine)
    c = float(room.c_m_s)
    img_far = affine[0][:, None, :] + affine[1][:, None, :] * path[None, [0, -1], :]
    r_max = float(np.max(np.linalg.norm(img_far[:, :, None, :] - points[None, None, :, :], axis=-1)))
    # an image's distance along a straight or arc path is bounded by its end points' plus the
    # path length (triangle inequality)
    n_early = sig.size + int(math.ceil(fs * (r_max + trajectory.length_m) / c)) + 2 * FDL2 + 1
    conv = basis_convolution(sig)
    if receiver.mic_positions_m() is not None:
        rows = []
        for p in points:
            y, _ = _read(sig, path, affine, p, room, fs, n_early, conv)
            rows.append(y.sum(axis=0))
        early = np.stack(rows)
    else:
        y, tau = _read(sig, path, affine, points[0], room, fs, n_early, conv)
        if receiver.ambisonic_order() == 1:
            pos = _emitted_positions(path, tau, affine)
            az, el, _ = receiver.directions_of(pos)
            early = np.einsum("cin,in->cn", foa_weights(az, el), y)
        elif receiver.ear_positions_m() is not None:  # a head: its HRTF filters each image
            early = _binaural_early(receiver, y, tau, path, affine, fs)
        else:
            raise ParameterError(f"receiver={receiver!r} is not supported; allowed: omni arrays, FOA, binaural")
    return _images._highpass(early, fs), n_early


def add_late(early, n_early: int, sig, trajectory, room: RoomSpec, receiver: Receiver, fs: int, rng, *, n_out=None):
    """``early [ch, n_early]`` plus the static hybrid tail of the path's midpoint, convolved with ``sig``; only the
    first ``n_out`` samples if given (the response past them is not convolved: it reaches no earlier sample)."""
    if rng is None:
        raise ParameterError(
            "rng=None with late=True in a reverberant room; allowed: a numpy Generator (draws the tail)"
        )
    rir = _late_rir(room, trajectory, receiver, fs, rng)
    late = scipy.signal.oaconvolve(sig[None, :], rir[:, :n_out], axes=1)[:, :n_out]
    early, n_early = early[:, :n_out], early[:, :n_out].shape[1]
    if late.shape[1] < n_early:
        late = np.concatenate([late, np.zeros((late.shape[0], n_early - late.shape[1]))], axis=1)
    late[:, :n_early] += early  # the same sums as early + late, in place
    return late
