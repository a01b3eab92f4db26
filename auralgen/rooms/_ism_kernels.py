"""Private numba kernels of the shoebox image-source engine.

Conventions (pyroomacoustics 0.10, written independently here):

- image ``n = (nx, ny, nz)``, order ``|nx| + |ny| + |nz|``; along one axis of length ``L``
  with the source at ``s`` the image coordinate is ``n L + (L - s if n odd else s)``;
  it has reflected ``n // 2`` (n > 0) or ``(|n| + 1) // 2`` (n < 0) times off the low wall
  and ``(n + 1) // 2`` / ``|n| // 2`` times off the high wall;
- arrival in samples ``fs * (dist / c) + fdl2`` (``fdl2`` = half the fractional-delay
  length), rounded through float32 as pyroomacoustics does;
- the Hann-windowed sinc is read from a table of ``granularity`` points per sample with
  linear interpolation; since that interpolation weight is the same for all taps, an
  image's filter is a weighted sum of two of ``granularity + 2`` *phase* kernels. Those
  22 kernels have numerical rank 8 (singular values below 5e-8 after that), so each
  image adds ``amp * ((1 - w) basis[p] + w basis[p + 1])`` (8 numbers, one cache line)
  to the row of its integer delay, and ``images.py`` convolves the 8 rows with the 8
  basis kernels by FFT. O(1) per image instead of 81 taps.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _axis_images(length, src, amp_lo, amp_hi, n_max):
    """Per-axis image coordinates and amplitude products for indices ``-n_max..n_max``."""
    coords = np.empty(2 * n_max + 1)
    gains = np.empty(2 * n_max + 1)
    for i in range(2 * n_max + 1):
        n = i - n_max
        m = abs(n)
        if n > 0:
            p_lo = n // 2
            p_hi = (n + 1) // 2
        else:
            p_lo = (m + 1) // 2
            p_hi = m // 2
        step = length - src if m % 2 == 1 else src
        coords[i] = n * length + step
        gains[i] = amp_lo**p_lo * amp_hi**p_hi
    return coords, gains


@njit(cache=True)
def _count_images(n_max):
    count = 0
    for nz in range(-n_max, n_max + 1):
        ry = n_max - abs(nz)
        for ny in range(-ry, ry + 1):
            count += 2 * (ry - abs(ny)) + 1
    return count


@njit(cache=True)
def _enumerate_images(cx, gx, cy, gy, cz, gz, n_max):
    """All images of order <= n_max: positions ``[n, 3]``, gains ``[n]``, orders ``[n]``."""
    n = _count_images(n_max)
    pos = np.empty((n, 3))
    gains = np.empty(n)
    orders = np.empty(n, dtype=np.int64)
    k = 0
    for nz in range(-n_max, n_max + 1):
        ry = n_max - abs(nz)
        for ny in range(-ry, ry + 1):
            rx = ry - abs(ny)
            gyz = gy[ny + n_max] * gz[nz + n_max]
            for nx in range(-rx, rx + 1):
                pos[k, 0] = cx[nx + n_max]
                pos[k, 1] = cy[ny + n_max]
                pos[k, 2] = cz[nz + n_max]
                gains[k] = gx[nx + n_max] * gyz
                orders[k] = abs(nx) + abs(ny) + abs(nz)
                k += 1
    return pos, gains, orders


@njit(cache=True)
def _max_image_distance(cx, cy, cz, n_max, mic):
    """Largest image-to-mic distance; attained on the outer shell (order == n_max)."""
    best = 0.0
    for nz in range(-n_max, n_max + 1):
        ry = n_max - abs(nz)
        for ny in range(-ry, ry + 1):
            rx = ry - abs(ny)
            dy = cy[ny + n_max] - mic[1]
            dz = cz[nz + n_max] - mic[2]
            for nx in (-rx, rx):
                dx = cx[nx + n_max] - mic[0]
                d2 = dx * dx + dy * dy + dz * dz
                if d2 > best:
                    best = d2
    return np.sqrt(best)


@njit(cache=True, inline="always")
def _arrival(dist, fs32, inv_c, offset_s, fdl2, gran):
    """``(start, table_row, weight)`` of an arrival ``dist`` metres away, as pyroomacoustics
    builds it: the arrival time is rounded through float32, the fractional part selects a row
    of the interpolated-sinc table (and the interpolation weight to the next row), and the
    filter starts ``fdl2`` samples before the integer delay."""
    t32 = np.float32(dist * inv_c + offset_s)
    sample = np.float64(np.float32(fs32 * t32))
    ip = np.floor(sample)
    x = (1.0 - (sample - ip)) * gran
    p = np.floor(x)
    return int(ip) - fdl2, int(p), x - p


@njit(cache=True, inline="always")
def _scatter_one(acc, basis, dist, amp, fs32, inv_c, offset_s, fdl2, gran, n_len):
    start, ip_, w = _arrival(dist, fs32, inv_c, offset_s, fdl2, gran)
    if 0 <= start < n_len:
        a0 = amp * (1.0 - w)
        a1 = amp * w
        for j in range(acc.shape[1]):
            acc[start, j] += a0 * basis[ip_, j] + a1 * basis[ip_ + 1, j]


@njit(cache=True)
def _scatter_list(positions, gains, mic, basis, fs, c, fdl2, gran, n_len, max_dist):
    """Basis-row impulse trains ``[n_len, rank]`` of listed images (skip ``dist > max_dist``)."""
    acc = np.zeros((n_len, basis.shape[1]))
    fs32 = np.float32(fs)
    inv_c = 1.0 / c
    offset_s = fdl2 / fs
    for i in range(positions.shape[0]):
        dx = positions[i, 0] - mic[0]
        dy = positions[i, 1] - mic[1]
        dz = positions[i, 2] - mic[2]
        d = np.sqrt(dx * dx + dy * dy + dz * dz)
        if d <= max_dist and gains[i] != 0.0:
            _scatter_one(acc, basis, d, gains[i] / d, fs32, inv_c, offset_s, fdl2, gran, n_len)
    return acc


@njit(cache=True, boundscheck=False)
def _project_rows(rows, basis):
    """``rows [n, table rows]`` (float32) times ``basis [table rows, rank]`` in float64, one thread.

    Each output element sums its products in table-row order from 0.0 (so a zero row adds exactly
    nothing); at the engine's rank 8 the eight sums are held in registers, which the compiler
    vectorises (about 2.7x faster than the general loop, same sums in the same order).
    """
    n, k = rows.shape
    rank = basis.shape[1]
    out = np.zeros((n, rank))
    if rank == 8:
        for i in range(n):
            o0 = o1 = o2 = o3 = o4 = o5 = o6 = o7 = 0.0
            for j in range(k):
                v = np.float64(rows[i, j])
                o0 += v * basis[j, 0]
                o1 += v * basis[j, 1]
                o2 += v * basis[j, 2]
                o3 += v * basis[j, 3]
                o4 += v * basis[j, 4]
                o5 += v * basis[j, 5]
                o6 += v * basis[j, 6]
                o7 += v * basis[j, 7]
            out[i, 0], out[i, 1], out[i, 2], out[i, 3] = o0, o1, o2, o3
            out[i, 4], out[i, 5], out[i, 6], out[i, 7] = o4, o5, o6, o7
        return out
    for i in range(n):
        for j in range(k):
            v = np.float64(rows[i, j])
            for r in range(rank):
                out[i, r] += v * basis[j, r]
    return out


@njit(cache=True, error_model="numpy", boundscheck=False)
def _scatter_shoebox(cx, gx, cy, gy, cz, gz, n_max, mics, n_rows, fs, c, fdl2, gran, n_lens, max_dist):
    """All shoebox images of order <= n_max, without materialising them, as *sinc-table-row* impulse
    trains: ``[n_mics, max(n_lens), n_rows]`` float32, microphone ``m`` filled up to ``n_lens[m]``
    (images farther than ``max_dist`` skipped). An image adds its two interpolation weights to the two
    table rows of its fractional delay at its start sample -- two writes, where projecting each image
    onto the low-rank basis at once took ``2 x rank`` products and ``rank`` writes; the projection
    is then one dense product per microphone (``fast._project``). Microphones are filled one after the
    other (each accumulator stays in cache), each summed in the same image order as alone.

    Each row of images along x (fixed ``ny, nz``) is done in two passes: the arrival arithmetic
    (square root, float32 rounding, table row and weight) over the whole row into small buffers, which
    the compiler vectorises, then the scatter; the sums and their order are those of one pass.
    """
    n_mics = mics.shape[0]
    acc = np.zeros((n_mics, n_lens.max(), n_rows), dtype=np.float32)
    fs32 = np.float32(fs)
    inv_c = 1.0 / c
    offset_s = fdl2 / fs
    max_d2 = max_dist * max_dist
    n_x = 2 * n_max + 1
    dx2 = np.empty(n_x)
    starts = np.empty(n_x, dtype=np.int64)
    rows = np.empty(n_x, dtype=np.int64)
    weights = np.empty(n_x)
    amps = np.empty(n_x)
    for m in range(n_mics):
        am = acc[m]
        n_len = n_lens[m]
        for i in range(n_x):
            d = cx[i] - mics[m, 0]
            dx2[i] = d * d
        for nz in range(-n_max, n_max + 1):
            ry = n_max - abs(nz)
            dz = cz[nz + n_max] - mics[m, 2]
            for ny in range(-ry, ry + 1):
                rx = ry - abs(ny)
                gyz = gy[ny + n_max] * gz[nz + n_max]
                if gyz == 0.0:
                    continue
                dy = cy[ny + n_max] - mics[m, 1]
                r2 = dy * dy + dz * dz
                lo = n_max - rx
                for j in range(2 * rx + 1):  # pass 1: arrivals
                    i = lo + j
                    d2 = dx2[i] + r2
                    d = np.sqrt(d2)
                    starts[j], rows[j], weights[j] = _arrival(d, fs32, inv_c, offset_s, fdl2, gran)
                    amps[j] = gx[i] * gyz / d if d2 <= max_d2 else 0.0
                _scatter_row(am, starts, rows, weights, amps, 2 * rx + 1, n_len)  # pass 2
    return acc


@njit(cache=True, inline="always", boundscheck=False)
def _scatter_row(am, starts, rows, weights, amps, count, n_len):
    """Pass 2 of ``_scatter_shoebox``: add each of ``count`` arrivals' two weights to its table rows."""
    for j in range(count):
        start, amp = starts[j], amps[j]
        if amp != 0.0 and 0 <= start < n_len:
            row, w = rows[j], weights[j]
            am[start, row] += amp * (1.0 - w)
            am[start, row + 1] += amp * w


@njit(cache=True)
def _decay_envelope(dt_s, n_t, rates, t_end_s, weights):
    """Weighted means over directions of ``exp(-rate_u t)`` and ``exp(-rate_u t / 2)`` (times ``[t <= t_end_u]``)
    at ``t = i dt_s``, ``i < n_t``; ``exp(-rate_u t / 2)`` is carried from step to step (one product, no
    ``exp``, per direction and step: relative error ~1e-14 after 1,000 steps).

    ``weights [n_mics, n_dir]`` (energy weights; amplitudes use weight 1). Returns
    ``[n_mics, 2, n_t]``: energy and amplitude decay at those times.
    """
    n_mics = weights.shape[0]
    out = np.zeros((n_mics, 2, n_t))
    m = rates.shape[0]
    step = np.exp(-0.5 * rates * dt_s)
    h = np.ones(m)
    for i in range(n_t):
        t = i * dt_s
        a = 0.0
        for j in range(m):
            if t <= t_end_s[j]:
                hj = h[j]
                a += hj
                for k in range(n_mics):
                    out[k, 0, i] += weights[k, j] * hj * hj
            h[j] *= step[j]
        for k in range(n_mics):
            out[k, 0, i] /= m
            out[k, 1, i] = a / m
    return out


@njit(cache=True)
def _coherence_sum(offsets, combos, w, f_max):
    """``1 + 2 sum_r w[c1] w[c2] w[c3] sinc((o1 + o2 + o3) f_max)`` per microphone and direction, ``sinc(x) =
    sin(x) / x``, over the ``combos [r, 3]`` of per-axis offset indices (``offsets [n_mics, n_dir, 3, 5]``)
    that come before their negation: sinc is even, so each such pair is one term counted twice."""
    n_mics, n_dir = offsets.shape[0], offsets.shape[1]
    out = np.empty((n_mics, n_dir))
    for i in range(n_mics):
        for j in range(n_dir):
            acc = 0.0
            for r in range(combos.shape[0]):
                c1, c2, c3 = combos[r, 0], combos[r, 1], combos[r, 2]
                x = ((offsets[i, j, 0, c1] + offsets[i, j, 1, c2]) + offsets[i, j, 2, c3]) * f_max
                acc += w[c1] * w[c2] * w[c3] * (1.0 if x == 0.0 else np.sin(x) / x)
            out[i, j] = 1.0 + 2.0 * acc
    return out



@njit(cache=True, boundscheck=False)
def _odd_extend(row, n, edge, ext):
    """``scipy.signal._arraytools.odd_ext(row[:n], edge)`` into ``ext[:n + 2 edge]``."""
    for k in range(edge):
        ext[k] = 2.0 * row[0] - row[edge - k]
        ext[edge + n + k] = 2.0 * row[n - 1] - row[n - 2 - k]
    ext[edge : edge + n] = row[:n]


@njit(cache=True, boundscheck=False)
def _biquad_lanes(sos, zi, sig, lens, reverse):
    """One ``scipy.signal.sosfilt`` pass of a single section (direct form II transposed, scipy's operation
    order) over each row ``c`` of ``sig [n_ch, n]`` up to ``lens[c]``, in place, from the initial state
    ``zi * first sample``; read and written back to front when ``reverse`` (so the first sample is the
    last). Four rows advance together: the recursion is latency-bound, and four independent chains in
    one loop body overlap in the processor where one chain waits on each multiply and add."""
    b0, b1, b2, a1, a2 = sos[0, 0], sos[0, 1], sos[0, 2], sos[0, 4], sos[0, 5]
    n_ch = sig.shape[0]
    for g in range(0, n_ch, 4):
        za = np.zeros(4)
        zb = np.zeros(4)
        rows = min(4, n_ch - g)
        n_max = 0
        for j in range(rows):
            n = lens[g + j]
            n_max = max(n_max, n)
            first = sig[g + j, n - 1] if reverse else sig[g + j, 0]
            za[j], zb[j] = zi[0, 0] * first, zi[0, 1] * first
        z0a, z0b, z0c, z0d = za[0], za[1], za[2], za[3]
        z1a, z1b, z1c, z1d = zb[0], zb[1], zb[2], zb[3]
        for t in range(n_max):
            for j in range(rows):
                n = lens[g + j]
                if t < n:
                    i = n - 1 - t if reverse else t
                    x_cur = sig[g + j, i]
                    if j == 0:
                        y = b0 * x_cur + z0a
                        z0a, z1a = b1 * x_cur - a1 * y + z1a, b2 * x_cur - a2 * y
                    elif j == 1:
                        y = b0 * x_cur + z0b
                        z0b, z1b = b1 * x_cur - a1 * y + z1b, b2 * x_cur - a2 * y
                    elif j == 2:
                        y = b0 * x_cur + z0c
                        z0c, z1c = b1 * x_cur - a1 * y + z1c, b2 * x_cur - a2 * y
                    else:
                        y = b0 * x_cur + z0d
                        z0d, z1d = b1 * x_cur - a1 * y + z1d, b2 * x_cur - a2 * y
                    sig[g + j, i] = y


@njit(cache=True, boundscheck=False)
def _sosfiltfilt(sos, zi, x, lens, edge):
    """``scipy.signal.sosfiltfilt(sos, x[c, :lens[c]])`` (odd padding of ``edge`` samples, ``zi`` from
    ``sosfilt_zi``) for each row ``c`` of ``x [n_ch, n]``, zero beyond ``lens[c]``; a single second-order
    section (``sos [1, 6]``). Bit-identical to scipy's: the same extension, initial states and per-sample
    arithmetic in the same order, without scipy's copies and reversals."""
    n_ch = x.shape[0]
    ext = np.zeros((n_ch, x.shape[1] + 2 * edge))
    ext_lens = lens + 2 * edge
    for c in range(n_ch):
        _odd_extend(x[c], lens[c], edge, ext[c])
    _biquad_lanes(sos, zi, ext, ext_lens, False)
    _biquad_lanes(sos, zi, ext, ext_lens, True)
    out = np.zeros(x.shape)
    for c in range(n_ch):
        out[c, : lens[c]] = ext[c, edge : edge + lens[c]]
    return out
