"""Private numba kernels of the moving-source renderer (see :mod:`auralgen.rooms.trajectory`).

The main kernel (:func:`_render_moving_images`): every image of a moving source, read from the dry
signal with a time-varying fractional delay; the others serve the binaural filtering of those
images (:func:`_live_windows`, :func:`_direction_pieces`, :func:`_accumulate_spectra`,
:func:`_overlap_add`). The image of a moving point in a shoebox is the mirrored moving point,
``image(t) = offset + sign * source(t)`` per axis, so the images share one sampled path.

For output sample ``n`` (heard at ``t = (n - fdl2) / fs``, the same 40-sample filter offset as
the static renders) the emission time ``tau`` solves ``tau = t - |image(tau) - mic| / c``
by fixed-point iteration, which contracts by ``v / c`` (< 0.9 % at 3 m/s). Every ``_GRID`` output
samples it is solved to convergence: steps from the cubic extrapolation of the previous four
solutions (from ``tau = t``, the distance at the reception time, for the first four) until a step
moves it by at most ``_STEP_TOL`` = 1e-8 sample (error below ``v / c`` of that), one or two steps on
a smooth path; a cubic through four of those in between (the times are smooth: ~1e-9 sample from
the converged ones); where a stencil
meets the path's start or end (the source starts or stops, a kink in the times) every sample
takes ``_ITERATIONS`` steps from ``tau = t`` instead (error below ``(v/c)^3 r / c``). The
distance of the solution is ``r = c (t - tau)``.

The signal is read at ``tau`` with pyroomacoustics' interpolated windowed-sinc table (the
phase kernels of :func:`auralgen.rooms.images._phase_kernels`), indexed exactly as the
static image-source engine places an impulse at delay ``D = n - tau fs`` samples, through the
static engine's rank-8 basis of those kernels (< 5e-8 of the largest singular value): the dry
signal is convolved once with each basis kernel, and each image's read at a fractional delay is
the 8 convolutions at its sample, weighted by the phase's basis coefficients. For a source at
rest the read equals the convolution with the static response (up to the static engine's float32
rounding of the arrival time, < 1e-6). A read whose taps meet only silence (between clicks) is 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from auralgen.rooms.images import _BASIS_RANK as _RANK  # the static engine's phase-kernel basis rank

_ITERATIONS = 3
_GRID = 16  # output samples between two solved emission times (cubic in between)
_GRID_ITERATIONS = 12  # at most this many fixed-point steps at those (error < (v/c)^12 r/c from t) ...
_STEP_TOL = 1e-8  # ... stopping after a step of at most this (samples): error < (v/c) _STEP_TOL


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
def _distance_at(path, ox, oy, oz, sx, sy, sz, x):
    """Distance (m) of an image ``(ox, oy, oz) + (sx, sy, sz) * source`` (offsets relative to the receiving
    point) when the source is at fractional path sample ``x``; the interpolation of :func:`_path_point`."""
    n = path.shape[0]
    if x <= 0.0:
        px, py, pz = path[0, 0], path[0, 1], path[0, 2]
    elif x >= n - 1:
        px, py, pz = path[n - 1, 0], path[n - 1, 1], path[n - 1, 2]
    else:
        k = int(np.floor(x))
        f = x - k
        px = path[k, 0] + f * (path[k + 1, 0] - path[k, 0])
        py = path[k, 1] + f * (path[k + 1, 1] - path[k, 1])
        pz = path[k, 2] + f * (path[k + 1, 2] - path[k, 2])
    dx = ox + sx * px
    dy = oy + sy * py
    dz = oz + sz * pz
    return np.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True)
def _solve(path, ox, oy, oz, sx, sy, sz, t, k_fc, steps):
    """Emission time (signal samples) for reception time ``t``: ``steps`` fixed-point steps from ``tau = t``."""
    x = t
    for _ in range(steps):
        x = t - _distance_at(path, ox, oy, oz, sx, sy, sz, x) * k_fc
    return x


@njit(cache=True)
def _converge(path, ox, oy, oz, sx, sy, sz, t, x, k_fc):
    """Emission time (signal samples) for reception time ``t``: fixed-point steps from the guess ``x`` until a
    step moves it by at most ``_STEP_TOL`` (then within ``v / c`` of that of the solution), at most
    ``_GRID_ITERATIONS``."""
    for _ in range(_GRID_ITERATIONS):
        x_new = t - _distance_at(path, ox, oy, oz, sx, sy, sz, x) * k_fc
        if abs(x_new - x) <= _STEP_TOL:
            return x_new
        x = x_new
    return x


@njit(cache=True)
def _cubic_weights(k):
    """Lagrange weights ``[k, 4]`` of the grid values at ``-1, 0, 1, 2`` for the points ``u = j / k``."""
    out = np.empty((k, 4))
    for j in range(k):
        u = j / k
        out[j, 0] = -u * (u - 1.0) * (u - 2.0) / 6.0
        out[j, 1] = (u + 1.0) * (u - 1.0) * (u - 2.0) / 2.0
        out[j, 2] = -(u + 1.0) * u * (u - 2.0) / 2.0
        out[j, 3] = (u + 1.0) * u * (u - 1.0) / 6.0
    return out


@njit(cache=True)
def _emission_times(path, offsets, signs, i, mic, fs, c, fdl2, tau, dist):
    """Emission time (signal samples) and distance (m) of image ``i`` for every output sample, into ``tau`` and
    ``dist`` ``[n_out]`` (module doc): solved every :data:`_GRID` samples, cubic in between; solved at every
    sample of a stretch whose stencil meets the path's start or end (where the source starts or stops)."""
    n_out = tau.shape[0]
    last = path.shape[0] - 1.0
    ox, oy, oz = offsets[i, 0] - mic[0], offsets[i, 1] - mic[1], offsets[i, 2] - mic[2]
    sx, sy, sz = signs[i, 0], signs[i, 1], signs[i, 2]
    k_fc = fs / c
    k_cf = c / fs
    weights = _cubic_weights(_GRID)
    grid = np.empty((n_out - 1) // _GRID + 4)  # grid[g] at output sample (g - 1) * _GRID
    for g in range(grid.shape[0]):
        t = float((g - 1) * _GRID - fdl2)
        x = t if g < 4 else 4.0 * grid[g - 1] - 6.0 * grid[g - 2] + 4.0 * grid[g - 3] - grid[g - 4]  # cubic guess
        grid[g] = _converge(path, ox, oy, oz, sx, sy, sz, t, x, k_fc)
    for g in range(1, grid.shape[0] - 2):
        a = (g - 1) * _GRID
        if a >= n_out:
            break
        p0, p1, p2, p3 = grid[g - 1], grid[g], grid[g + 1], grid[g + 2]
        m = min(_GRID, n_out - a)
        if (p0 <= 0.0) == (p3 <= 0.0) and (p0 >= last) == (p3 >= last):  # smooth (tau rises with n): the cubic
            for j in range(m):  # a loop without branches (vectorised)
                x = p0 * weights[j, 0] + p1 * weights[j, 1] + p2 * weights[j, 2] + p3 * weights[j, 3]
                tau[a + j] = x
                dist[a + j] = (float(a + j - fdl2) - x) * k_cf  # the distance the solution stands for: c (t - tau)
        else:
            for j in range(m):
                t = float(a + j - fdl2)
                x = _solve(path, ox, oy, oz, sx, sy, sz, t, k_fc, _ITERATIONS)
                tau[a + j] = x
                dist[a + j] = (t - x) * k_cf


@njit(cache=True)
def _sparse_convolution(signal, kernels_t):
    """``out[j + k, r] += signal[j] * kernels_t[k, r]`` over the non-zero samples ``j`` only: the full
    convolution ``[n_sig + taps - 1, rank]`` of a mostly silent signal (a click train) with each column."""
    n_taps, rank = kernels_t.shape
    out = np.zeros((signal.shape[0] + n_taps - 1, rank))
    for j in range(signal.shape[0]):
        s = signal[j]
        if s == 0.0:
            continue
        for k in range(n_taps):
            for r in range(rank):
                out[j + k, r] += s * kernels_t[k, r]
    return out


@njit(cache=True)
def _read_image(conv, nonzero, n_sig, tau, dist, gain, coef, fdl2, gran, y):
    """``y[n] = gain / dist[n] * signal(tau[n])`` for one image (see :func:`_render_moving_images`), read from
    the signal's basis convolutions ``conv``."""
    n_taps = conv.shape[0] - n_sig + 1
    rank = conv.shape[1]
    for n in range(y.shape[0]):
        delay = n - tau[n]  # samples, incl. the fdl2 offset
        ip = np.floor(delay)
        xg = (1.0 - (delay - ip)) * gran
        ph = int(np.floor(xg))
        w = xg - ph
        base = n - int(ip) + fdl2  # signal index met by tap 0
        j0 = max(0, base - n_taps + 1)  # taps k = base - j read signal[j], j0 <= j <= j1
        j1 = min(n_sig - 1, base)
        if j0 > j1 or nonzero[j1 + 1] == nonzero[j0]:  # outside the signal, or only silence
            continue
        acc = 0.0
        if rank == _RANK:  # the static engine's rank: a loop of known length, unrolled (same sum, same order)
            for r in range(_RANK):
                acc += ((1.0 - w) * coef[ph, r] + w * coef[ph + 1, r]) * conv[base, r]
        else:
            for r in range(rank):
                acc += ((1.0 - w) * coef[ph, r] + w * coef[ph + 1, r]) * conv[base, r]
        y[n] = gain / dist[n] * acc


@njit(cache=True)
def _render_moving_images(conv, nonzero, path, offsets, signs, gains, mic, fs, c, fdl2, gran, coef, n_out):
    """Per-image received signals and emission times of a moving source.

    Parameters
    ----------
    conv : float64 [n_sig + 2 fdl2, rank], the dry signal (sample ``k`` emitted at ``k / fs``) convolved with each
        basis kernel of the fractional-delay phase kernels (full length): the kernel of table phase ``p`` is
        ``coef[p] @ kernels`` to < 5e-8 (:func:`auralgen.rooms.images._phase_basis`), so the read of
        ``signal`` at a fractional delay is ``coef[p] @ conv[base]`` (interpolated between two phases)
    nonzero : int64 [n_sig + 1], ``nonzero[j]`` = number of non-zero samples in ``signal[:j]``
    path : float64 [n_path, 3], source position at ``k / fs`` (room frame, m)
    offsets, signs : float64 [n_images, 3], image position = ``offsets + signs * source``
    gains : float64 [n_images], wall reflection gains (without 1/r)
    mic : float64 [3], receiving point (m)
    fs, c : sample rate (Hz), speed of sound (m/s)
    fdl2, gran : half fractional-delay length (samples), table points per sample
    coef : float64 [gran + 2, rank], the basis coefficients of each table phase
    n_out : output length (samples)

    Returns
    -------
    y : float64 [n_images, n_out], ``gain / r * signal(tau)`` per image
    tau : float64 [n_images, n_out], emission time in signal samples (``tau * fs``)
    """
    n_img = offsets.shape[0]
    y = np.zeros((n_img, n_out))
    tau = np.zeros((n_img, n_out))
    dist = np.empty(n_out)
    n_sig = nonzero.shape[0] - 1
    for i in range(n_img):
        if gains[i] == 0.0:
            continue
        _emission_times(path, offsets, signs, i, mic, fs, c, fdl2, tau[i], dist)
        _read_image(conv, nonzero, n_sig, tau[i], dist, gains[i], coef, fdl2, gran, y[i])
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


@njit(cache=True)
def _live_windows(y, starts, window):
    """``live [n_img, n_win]``: whether the windowed block ``y[i, a : a + len(window)] * window`` (zero
    outside ``y``) of image ``i`` and start ``a = starts[j]`` holds a non-zero sample."""
    n_img, n = y.shape
    live = np.zeros((n_img, starts.shape[0]), dtype=np.bool_)
    for i in range(n_img):
        for j in range(starts.shape[0]):
            for k in range(window.shape[0]):
                t = starts[j] + k
                if 0 <= t < n and y[i, t] * window[k] != 0.0:
                    live[i, j] = True
                    break
    return live


@njit(cache=True)
def _window_range(p, part, step, n_win):
    """The windows ``j`` (start ``(j - 1) * step``, ``2 * step`` long) that may meet partition ``p``."""
    return max(0, (p * part) // step - 1), min(n_win - 1, ((p + 1) * part) // step + 1)


@njit(cache=True)
def _distinct(dirs, i, j_lo, j_hi, out):
    """The distinct directions ``>= 0`` of ``dirs[i, j_lo : j_hi + 1]`` into ``out``; their number."""
    m = 0
    for j in range(j_lo, j_hi + 1):
        d = dirs[i, j]
        if d < 0:
            continue
        seen = False
        for q in range(m):
            seen = seen or out[q] == d
        if not seen:
            out[m] = d
            m += 1
    return m


@njit(cache=True)
def _direction_pieces(y, window, step, dirs, part, width):
    """Each image's windowed blocks summed per HRIR direction over partitions of ``part`` samples.

    Window ``j`` (``len(window) = 2 * step``) covers samples ``[(j - 1) step, (j + 1) step)`` with direction
    ``dirs[i, j]`` (-1: not heard). For image ``i``, partition ``p`` (samples ``[p part, (p + 1) part)``) and
    each direction ``d`` among the windows meeting it, the piece is ``y[i, t]`` times the sum of the windows of
    direction ``d`` at ``t``: the blocks of one direction filtered together, the same sum of filtered blocks.
    Returns ``(pieces [m, width], partition [m], direction [m])``, all-zero pieces left out, each zero-padded
    to ``width`` (>= ``part``) for its FFT."""
    n_img, n = y.shape
    n_win = dirs.shape[1]
    n_part = (n + part - 1) // part
    ds = np.empty(part // step + 4, dtype=np.int64)
    count = 0
    for i in range(n_img):
        for p in range(n_part):
            j_lo, j_hi = _window_range(p, part, step, n_win)
            count += _distinct(dirs, i, j_lo, j_hi, ds)
    pieces = np.empty((count, width))
    where = np.empty(count, dtype=np.int64)
    which = np.empty(count, dtype=np.int64)
    m = 0
    for i in range(n_img):
        for p in range(n_part):
            j_lo, j_hi = _window_range(p, part, step, n_win)
            a0, a1 = p * part, min(n, (p + 1) * part)
            n_d = _distinct(dirs, i, j_lo, j_hi, ds)
            for q in range(n_d):
                row = pieces[m]
                row[:] = 0.0
                if n_d == 1:  # one direction: the windows sum to one, the piece is the signal
                    row[: a1 - a0] = y[i, a0:a1]
                    j_hi = j_lo - 1
                for j in range(j_lo, j_hi + 1):
                    if dirs[i, j] == ds[q]:
                        s = (j - 1) * step
                        for t in range(max(a0, s), min(a1, s + 2 * step)):  # no branch: vectorised
                            row[t - a0] += y[i, t] * window[t - s]
                for t in range(a1 - a0):
                    if row[t] != 0.0:  # heard: kept
                        where[m], which[m] = p, ds[q]
                        m += 1
                        break
    return pieces[:m], where[:m], which[:m]
