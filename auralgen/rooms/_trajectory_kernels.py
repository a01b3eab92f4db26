"""Private numba kernels of the moving-source renderer (see :mod:`auralgen.rooms.trajectory`).

The main kernel (:func:`_render_moving_images`): every image of a moving source, read from the dry
signal with a time-varying fractional delay; the others serve the binaural filtering of those
images (:func:`_live_blocks`, :func:`_accumulate_spectra`, :func:`_overlap_add`). The image of a
moving point in a shoebox is the mirrored moving point, ``image(t) = offset + sign * source(t)`` per
axis, so the images share one sampled path.

For output sample ``n`` (heard at ``t = (n - fdl2) / fs``, the same 40-sample filter offset as
the static renders) the emission time ``tau`` solves ``tau = t - |image(tau) - mic| / c``
by fixed-point iteration started at ``tau = t`` (the distance at the reception time). The
iteration contracts by ``v / c`` (< 0.9 % at 3 m/s), so after ``_ITERATIONS`` steps the
error is below ``(v/c)^3 * r / c``: < 1e-6 sample for any image within 100 m.

The signal is read at ``tau`` with pyroomacoustics' interpolated windowed-sinc table (the
phase kernels of :func:`auralgen.rooms.images._phase_kernels`), indexed exactly as the
static image-source engine places an impulse at delay ``D = n - tau fs`` samples: for a
source at rest the read equals the convolution with the static response (up to the static
engine's float32 rounding of the arrival time and its rank-8 basis, < 1e-6). The taps over a
stretch of silence (between clicks) are skipped: their sum is zero.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from auralgen.rooms.images import FDL2

_ITERATIONS = 3
_FULL_TAPS = 2 * FDL2 + 1  # the fractional-delay filter's length


@njit(cache=True)
def _path_point(path, x, out):
    """Position at fractional sample ``x`` of a path sampled once per sample (clamped), into ``out``."""
    n = path.shape[0]
    if x <= 0.0:
        for d in range(3):
            out[d] = path[0, d]
        return
    if x >= n - 1:
        for d in range(3):
            out[d] = path[n - 1, d]
        return
    k = int(np.floor(x))
    f = x - k
    for d in range(3):
        out[d] = path[k, d] + f * (path[k + 1, d] - path[k, d])


@njit(cache=True)
def _emission_times(path, offsets, signs, i, mic, fs, c, fdl2, tau, dist):
    """Emission time (signal samples) and distance (m) of image ``i`` for every output sample, into
    ``tau`` and ``dist`` ``[n_out]``: the fixed-point steps one pass over all samples at a time (no
    sample waits for another, so the CPU overlaps them), each step as in the per-sample loop."""
    p = np.empty(3)
    for n in range(tau.shape[0]):
        tau[n] = float(n - fdl2)  # start at the reception time
    for _ in range(_ITERATIONS):
        for n in range(tau.shape[0]):
            _path_point(path, tau[n], p)
            dx = offsets[i, 0] + signs[i, 0] * p[0] - mic[0]
            dy = offsets[i, 1] + signs[i, 1] * p[1] - mic[1]
            dz = offsets[i, 2] + signs[i, 2] * p[2] - mic[2]
            dist[n] = np.sqrt(dx * dx + dy * dy + dz * dz)
        for n in range(tau.shape[0]):
            tau[n] = (n - fdl2) - dist[n] * fs / c


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _dot_pair(signal, j0, j1, table, ph, off):
    """``sum_j signal[j] * table[ph, j + off]`` and the same with row ``ph + 1``, ``j0 <= j <= j1``.

    Unsigned indices (no negative-index wraparound) and reassociation let the loop run in SIMD
    lanes; the sum's order differs from a sequential one by float rounding only (~1e-16 relative)."""
    a0 = 0.0
    a1 = 0.0
    m = uint64(j1 + 1 - j0)
    b = uint64(j0)
    o = uint64(j0 + off)
    r0 = uint64(ph)
    r1 = uint64(ph + 1)
    for k in range(m):
        s = signal[b + k]
        a0 += s * table[r0, o + k]
        a1 += s * table[r1, o + k]
    return a0, a1


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _dot_pair_full(signal, j0, table, ph, off):
    """:func:`_dot_pair` over :data:`_FULL_TAPS` taps, a trip count known when compiled (no remainder
    loop: the common case, every tap inside the signal)."""
    a0 = 0.0
    a1 = 0.0
    b = uint64(j0)
    o = uint64(j0 + off)
    r0 = uint64(ph)
    r1 = uint64(ph + 1)
    for k in range(uint64(_FULL_TAPS)):
        s = signal[b + k]
        a0 += s * table[r0, o + k]
        a1 += s * table[r1, o + k]
    return a0, a1


@njit(cache=True)
def _render_moving_images(signal, nonzero, path, offsets, signs, gains, mic, fs, c, fdl2, gran, flipped, n_out):
    """Per-image received signals and emission times of a moving source.

    Parameters
    ----------
    signal : float64 [n_sig], dry source signal; sample ``k`` is emitted at ``k / fs``
    nonzero : int64 [n_sig + 1], ``nonzero[j]`` = number of non-zero samples in ``signal[:j]``
    path : float64 [n_path, 3], source position at ``k / fs`` (room frame, m)
    offsets, signs : float64 [n_images, 3], image position = ``offsets + signs * source``
    gains : float64 [n_images], wall reflection gains (without 1/r)
    mic : float64 [3], receiving point (m)
    fs, c : sample rate (Hz), speed of sound (m/s)
    fdl2, gran : half fractional-delay length (samples), table points per sample
    flipped : float64 [gran + 2, 2 fdl2 + 1], phase kernels of the fractional delay, taps reversed
    n_out : output length (samples)

    Returns
    -------
    y : float64 [n_images, n_out], ``gain / r * signal(tau)`` per image
    tau : float64 [n_images, n_out], emission time in signal samples (``tau * fs``)
    """
    n_img = offsets.shape[0]
    n_sig = signal.shape[0]
    n_taps = flipped.shape[1]
    y = np.zeros((n_img, n_out))
    tau = np.zeros((n_img, n_out))
    dist = np.empty(n_out)
    for i in range(n_img):
        if gains[i] == 0.0:
            continue
        _emission_times(path, offsets, signs, i, mic, fs, c, fdl2, tau[i], dist)
        for n in range(n_out):
            delay = n - tau[i, n]  # samples, incl. the fdl2 offset
            ip = np.floor(delay)
            xg = (1.0 - (delay - ip)) * gran
            ph = int(np.floor(xg))
            w = xg - ph
            base = n - int(ip) + fdl2  # signal index met by tap 0
            j0 = max(0, base - n_taps + 1)  # taps k = base - j read signal[j], j0 <= j <= j1
            j1 = min(n_sig - 1, base)
            if j0 > j1 or nonzero[j1 + 1] == nonzero[j0]:  # outside the signal, or only silence
                continue
            if j1 - j0 + 1 == _FULL_TAPS:
                a0, a1 = _dot_pair_full(signal, j0, flipped, ph, n_taps - 1 - base)
            else:
                a0, a1 = _dot_pair(signal, j0, j1, flipped, ph, n_taps - 1 - base)
            y[i, n] = gains[i] / dist[n] * ((1.0 - w) * a0 + w * a1)
    return y, tau


@njit(cache=True)
def _overlap_add(out, segments, starts):
    """Add ``segments [n_seg, ch, m]`` into ``out [ch, n]`` at ``starts`` (cut at both ends)."""
    n = out.shape[1]
    for s in range(segments.shape[0]):
        a = starts[s]
        for ch in range(segments.shape[1]):
            for k in range(segments.shape[2]):
                j = a + k
                if 0 <= j < n:
                    out[ch, j] += segments[s, ch, k]


@njit(cache=True)
def _accumulate_spectra(acc, spec, hrirs, blocks, dirs):
    """``acc[blocks[l], ear] += spec[l] * hrirs[dirs[l], ear]`` for every row ``l`` of ``spec [m, f]``:
    blocks filtered by their HRIR pair (``hrirs [n_dirs, 2, f]``) and summed per block position."""
    for m in range(spec.shape[0]):
        j = blocks[m]
        d = dirs[m]
        for ear in range(2):
            for f in range(spec.shape[1]):
                acc[j, ear, f] += spec[m, f] * hrirs[d, ear, f]


@njit(cache=True)
def _live_blocks(y, starts, window, width):
    """The windowed blocks ``y[i, a : a + len(window)] * window`` (zero outside ``y``) that are not all
    zero, over every image ``i`` and start ``a`` in ``starts``: ``(blocks [m, width], image [m],
    block [m])``, image-major, each block zero-padded to ``width`` (>= ``len(window)``) for its FFT."""
    n_img, n = y.shape
    w = window.shape[0]
    live = np.zeros((n_img, starts.shape[0]), dtype=np.bool_)
    for i in range(n_img):
        for j in range(starts.shape[0]):
            for k in range(w):
                t = starts[j] + k
                if 0 <= t < n and y[i, t] * window[k] != 0.0:
                    live[i, j] = True
                    break
    img, blk = np.nonzero(live)
    out = np.zeros((img.shape[0], width))
    for m in range(img.shape[0]):
        for k in range(w):
            t = starts[blk[m]] + k
            if 0 <= t < n:
                out[m, k] = y[img[m], t] * window[k]
    return out, img, blk


@njit(cache=True)
def _min_distance_sq(path, points):
    """Smallest squared distance (m^2) between any sample of ``path [n, 3]`` and any of ``points [k, 3]``."""
    best = np.inf
    for p in range(points.shape[0]):
        for n in range(path.shape[0]):
            dx = path[n, 0] - points[p, 0]
            dy = path[n, 1] - points[p, 1]
            dz = path[n, 2] - points[p, 2]
            best = min(best, dx * dx + dy * dy + dz * dz)
    return best
