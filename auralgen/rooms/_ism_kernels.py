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
def _max_image_distance(cx, cy, cz, n_max, mic, lengths):
    """Largest image-to-mic distance; attained on the outer shell (order == n_max).

    ``lengths``: the room's dimensions. An image coordinate is ``n L + offset`` with the offset and the
    microphone both in ``[0, L]``, so ``|coordinate - mic| <= (|n| + 1) L`` per axis; a row of the shell
    (fixed ``nz``) whose bound cannot beat the best distance found is skipped. The rows holding the
    shell's six vertices go first, so the search visits only a few rows near them: the same maximum as
    visiting all, in a fraction of the time.
    """
    best = 0.0
    lx, ly = lengths[0], lengths[1]
    for k in range(2 * n_max + 1):
        nz = 0 if k == 0 else (n_max if k == 1 else (-n_max if k == 2 else k - 3 - n_max))
        if k > 2 and (nz == 0 or abs(nz) == n_max):
            continue  # visited first
        ry = n_max - abs(nz)
        dz = cz[nz + n_max] - mic[2]
        reach = (ry + 1.0) * (ry + 1.0)
        bound = dz * dz + max(reach * lx * lx + ly * ly, lx * lx + reach * ly * ly)
        if bound * (1.0 + 1e-12) < best:
            continue
        for ny in range(-ry, ry + 1):
            rx = ry - abs(ny)
            dy = cy[ny + n_max] - mic[1]
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
    start, p, w = _arrival_float(dist, fs32, inv_c, offset_s, fdl2, gran)
    return int(start), int(p), w


@njit(cache=True, inline="always")
def _arrival_float(dist, fs32, inv_c, offset_s, fdl2, gran):
    """:func:`_arrival` with the start sample and table row as whole floats (one conversion less per
    image where the caller combines them into one index)."""
    t32 = np.float32(dist * inv_c + offset_s)
    sample = np.float64(np.float32(fs32 * t32))
    ip = np.floor(sample)
    x = (1.0 - (sample - ip)) * gran
    p = np.floor(x)
    return ip - fdl2, p, x - p


@njit(cache=True, inline="always")
def _distance(positions, i, point):
    """Distance (m) from row ``i`` of ``positions`` ``[n, 3]`` to ``point`` ``[3]``."""
    dx = positions[i, 0] - point[0]
    dy = positions[i, 1] - point[1]
    dz = positions[i, 2] - point[2]
    return np.sqrt(dx * dx + dy * dy + dz * dz)


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
        d = _distance(positions, i, mic)
        if d <= max_dist and gains[i] != 0.0:
            _scatter_one(acc, basis, d, gains[i] / d, fs32, inv_c, offset_s, fdl2, gran, n_len)
    return acc


@njit(cache=True, boundscheck=False)
def _project_rows(rows, basis, out):
    """``rows [n, table rows]`` (float32) times ``basis [table rows, rank]`` in float64 into ``out [n, rank]``
    (zeros; a transposed view of a ``[rank, n]`` array writes rank-major), one thread.

    Each output element sums its products in table-row order from 0.0 (so a zero row adds exactly
    nothing); at the engine's rank 8 the eight sums are held in registers, which the compiler
    vectorises (about 2.7x faster than the general loop, same sums in the same order).
    """
    n, k = rows.shape
    rank = basis.shape[1]
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
def _scatter_shoebox(cx, gx, cy, gy, cz, gz, n_max, mics, n_rows, fs, c, fdl2, gran, n_lens, max_dists):
    """All shoebox images of order <= n_max, without materialising them, as *sinc-table-row* impulse
    trains: ``[n_mics, max(n_lens), n_rows]`` float32, microphone ``m`` filled up to ``n_lens[m]``
    (images farther than ``max_dists[m]`` skipped). An image adds its two interpolation weights to the two
    table rows of its fractional delay at its start sample -- two writes, where projecting each image
    onto the low-rank basis at once took ``2 x rank`` products and ``rank`` writes; the projection
    is then one dense product per microphone (``fast._project``). Microphones are filled one after the
    other (each accumulator stays in cache), each summed in the same image order as alone.

    Each row of images along x (fixed ``ny, nz``) is done in two passes: the arrival arithmetic
    (square root, float32 rounding, flat table index and the two weighted amplitudes) over the whole
    row into small buffers, then the scatter; the sums and their order are those of one pass. Pass 1
    reads the row's x tables through slices (indices known non-negative), so the compiler vectorises it
    with plain loads instead of gathers; pass 2 is two adds per image.
    """
    n_mics = mics.shape[0]
    acc = np.zeros((n_mics, n_lens.max(), n_rows), dtype=np.float32)
    fs32 = np.float32(fs)
    inv_c = 1.0 / c
    offset_s = fdl2 / fs
    n_x = 2 * n_max + 1
    dx2 = np.empty(n_x)
    index = np.empty(n_x, dtype=np.int64)
    a0 = np.empty(n_x)
    a1 = np.empty(n_x)
    for m in range(n_mics):
        flat = acc[m].ravel()
        n_len = n_lens[m]
        max_d2 = max_dists[m] * max_dists[m]
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
                count = 2 * rx + 1
                dx2_row = dx2[n_max - rx : n_max - rx + count]
                gx_row = gx[n_max - rx : n_max - rx + count]
                for j in range(count):  # pass 1: arrivals
                    d2 = dx2_row[j] + r2
                    d = np.sqrt(d2)
                    start, row, w = _arrival_float(d, fs32, inv_c, offset_s, fdl2, gran)
                    amp = gx_row[j] * gyz / d if d2 <= max_d2 else 0.0
                    keep = amp != 0.0 and start >= 0 and start < n_len
                    index[j] = np.int64(start * n_rows + row) if keep else -1
                    a0[j] = amp * (1.0 - w)
                    a1[j] = amp * w
                for j in range(count):  # pass 2: two adds per image
                    k = index[j]
                    if k >= 0:
                        flat[k] += a0[j]
                        flat[k + 1] += a1[j]
    return acc


@njit(cache=True, boundscheck=False)
def _carry8(h, step, j0, nb, n_t):
    """``h[b, i] = step[j0 + b] ** i`` as carried products, for ``b < nb <= 8``; a full block of eight keeps
    the eight chains in registers."""
    if nb < 8:
        for b in range(nb):
            h[b, 0] = 1.0
        for i in range(1, n_t):
            for b in range(nb):
                h[b, i] = h[b, i - 1] * step[j0 + b]
        return
    s0, s1, s2, s3, s4, s5, s6, s7 = (
        step[j0],
        step[j0 + 1],
        step[j0 + 2],
        step[j0 + 3],
        step[j0 + 4],
        step[j0 + 5],
        step[j0 + 6],
        step[j0 + 7],
    )
    h0 = h1 = h2 = h3 = h4 = h5 = h6 = h7 = 1.0
    for i in range(n_t):
        h[0, i], h[1, i], h[2, i], h[3, i], h[4, i], h[5, i], h[6, i], h[7, i] = h0, h1, h2, h3, h4, h5, h6, h7
        h0, h1, h2, h3, h4, h5, h6, h7 = h0 * s0, h1 * s1, h2 * s2, h3 * s3, h4 * s4, h5 * s5, h6 * s6, h7 * s7


@njit(cache=True, boundscheck=False)
def _decay_envelope(dt_s, n_t, rates, t_end_s, weights):
    """Weighted means over directions of ``exp(-rate_u t)`` and ``exp(-rate_u t / 2)`` (times ``[t <= t_end_u]``)
    at ``t = i dt_s``, ``i < n_t``; ``exp(-rate_u t / 2)`` is carried from step to step (one product, no
    ``exp``, per direction and step: relative error ~1e-14 after 1,000 steps).

    ``weights [n_mics, n_dir]`` (energy weights; amplitudes use weight 1). Returns
    ``[n_mics, 2, n_t]``: energy and amplitude decay at those times.

    Directions go eight at a time: their eight carried products advance together (independent chains, where
    one direction's chain is a serial multiply per step), then each direction is added over all times in
    turn, a loop the compiler vectorises. Every sum still runs over directions in index order.
    """
    n_mics = weights.shape[0]
    out = np.zeros((n_mics, 2, n_t))
    m = rates.shape[0]
    step = np.exp(-0.5 * rates * dt_s)
    h = np.empty((8, n_t))
    for j0 in range(0, m, 8):
        nb = min(8, m - j0)
        _carry8(h, step, j0, nb, n_t)
        for b in range(nb):
            j = j0 + b
            # samples i with i * dt_s <= t_end_s[j] (a prefix: i * dt_s grows with i), from an estimate
            n_on = min(n_t, max(0, int(t_end_s[j] / dt_s)))
            while n_on < n_t and n_on * dt_s <= t_end_s[j]:
                n_on += 1
            while n_on > 0 and (n_on - 1) * dt_s > t_end_s[j]:
                n_on -= 1
            hb = h[b]
            for i in range(n_on):
                out[0, 1, i] += hb[i]
            for k in range(n_mics):
                wk = weights[k, j]
                ok = out[k, 0]
                for i in range(n_on):
                    ok[i] += wk * hb[i] * hb[i]
    for i in range(n_t):
        a = out[0, 1, i]
        for k in range(n_mics):
            out[k, 0, i] /= m
            out[k, 1, i] = a / m
    return out


@njit(cache=True)
def _mean_decay(rates, t_end_s, t):
    """``mean_u exp(-rates_u t) [t <= t_end_u]``: the direction-averaged energy decay at time ``t``."""
    s = 0.0
    for j in range(rates.shape[0]):
        if t <= t_end_s[j]:
            s += np.exp(-rates[j] * t)
    return s / rates.shape[0]


@njit(cache=True)
def _decay_end_s(rates, t_end_s, level, t_hi, tol):
    """First time (within ``tol``) at which :func:`_mean_decay` is at most ``level``, by bisection on
    ``[0, t_hi]`` (the decay never rises); ``t_hi`` if it is still above ``level`` there."""
    if _mean_decay(rates, t_end_s, t_hi) > level:
        return t_hi
    lo, hi = 0.0, t_hi
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if _mean_decay(rates, t_end_s, mid) > level:
            lo = mid
        else:
            hi = mid
    return hi


@njit(cache=True, boundscheck=False, error_model="numpy")
def _coherence_sum(ea, eb, u, c_m_s, combos, w, f_max):
    """``1 + 2 sum_r w[c1] w[c2] w[c3] sinc((o1 + o2 + o3) f_max)`` per microphone and direction, ``sinc(x) =
    sin(x) / x``, over the ``combos [r, 3]`` of per-axis offset indices that come before their negation (sinc
    is even, so each such pair is one term counted twice). Axis ``d``'s offsets for microphone ``i`` and
    direction ``j`` are ``(0, a, -a, b, -b)`` with ``a = ea[i, d] * u[j, d] / c_m_s`` and ``b`` the same with
    ``eb`` (``ea, eb [n_mics, 3]``, ``u [n_dir, 3]``), built here per microphone, directions innermost.

    The sines come from the angle-sum formula over the per-axis sines and cosines (12 calls per direction
    instead of one per term, 62); where ``|x| < 1e-3`` the formula's absolute error (~1e-16) would be large
    against ``x``, and there sinc is its Taylor series to ``x^6`` (error < 1e-19; its constant divisors are
    multiplications by their reciprocals, three divisions per term fewer). Both are branch-free, so the loop
    over directions, innermost, vectorises; each direction's sum still runs over the terms in order.
    Relative error of a gain ~1e-13 (tested against the 125-term sum at 1e-12).
    """
    n_mics, n_dir = ea.shape[0], u.shape[0]
    out = np.empty((n_mics, n_dir))
    o = np.zeros((3, 5, n_dir))
    sn = np.empty((3, 5, n_dir))
    cs = np.empty((3, 5, n_dir))
    acc = np.empty(n_dir)
    for i in range(n_mics):
        for d in range(3):
            for j in range(n_dir):
                o[d, 1, j] = ea[i, d] * u[j, d] / c_m_s
                o[d, 2, j] = -o[d, 1, j]
                o[d, 3, j] = eb[i, d] * u[j, d] / c_m_s
                o[d, 4, j] = -o[d, 3, j]
                sn[d, 0, j], cs[d, 0, j] = 0.0, 1.0
                for c in (1, 3):
                    v = o[d, c, j] * f_max
                    sn[d, c, j], cs[d, c, j] = np.sin(v), np.cos(v)
                    sn[d, c + 1, j], cs[d, c + 1, j] = -sn[d, c, j], cs[d, c, j]
        acc[:] = 0.0
        for r in range(combos.shape[0]):
            c1, c2, c3 = combos[r, 0], combos[r, 1], combos[r, 2]
            wr = w[c1] * w[c2] * w[c3]
            o1, o2, o3 = o[0, c1], o[1, c2], o[2, c3]
            s1, k1, s2, k2, s3, k3 = sn[0, c1], cs[0, c1], sn[1, c2], cs[1, c2], sn[2, c3], cs[2, c3]
            for j in range(n_dir):
                x = ((o1[j] + o2[j]) + o3[j]) * f_max
                x2 = x * x
                taylor = 1.0 - x2 * (1.0 / 6.0) * (1.0 - x2 * (1.0 / 20.0) * (1.0 - x2 * (1.0 / 42.0)))
                formula = (s1[j] * (k2[j] * k3[j] - s2[j] * s3[j]) + k1[j] * (s2[j] * k3[j] + k2[j] * s3[j])) / x
                acc[j] += wr * (taylor if abs(x) < 1e-3 else formula)
        for j in range(n_dir):
            out[i, j] = 1.0 + 2.0 * acc[j]
    return out


@njit(cache=True, boundscheck=False)
def _biquad_lanes(sos, zi, sig, lens, reverse):
    """One ``scipy.signal.sosfilt`` pass of a single section (direct form II transposed, scipy's operation
    order), in place, over each lane ``j`` of ``sig [n, 4]`` up to ``lens[j]`` samples, from the initial
    state ``zi * first sample``; read and written back to front when ``reverse`` (then a lane's first sample
    is its last). The four lanes advance together: the recursion is latency-bound, and four independent
    chains in one loop body overlap in the processor; sample-major storage keeps them in one cache line."""
    b0, b1, b2, a1, a2 = sos[0, 0], sos[0, 1], sos[0, 2], sos[0, 4], sos[0, 5]
    z0 = np.zeros(4)
    z1 = np.zeros(4)
    for j in range(4):
        if lens[j] > 0:
            first = sig[lens[j] - 1, j] if reverse else sig[0, j]
            z0[j], z1[j] = zi[0, 0] * first, zi[0, 1] * first
    z0a, z0b, z0c, z0d = z0[0], z0[1], z0[2], z0[3]
    z1a, z1b, z1c, z1d = z1[0], z1[1], z1[2], z1[3]
    n_max = max(lens[0], lens[1], lens[2], lens[3])
    for t in range(n_max):
        if t < lens[0]:
            i = lens[0] - 1 - t if reverse else t
            sig[i, 0], z0a, z1a = _df2t(sig[i, 0], z0a, z1a, b0, b1, b2, a1, a2)
        if t < lens[1]:
            i = lens[1] - 1 - t if reverse else t
            sig[i, 1], z0b, z1b = _df2t(sig[i, 1], z0b, z1b, b0, b1, b2, a1, a2)
        if t < lens[2]:
            i = lens[2] - 1 - t if reverse else t
            sig[i, 2], z0c, z1c = _df2t(sig[i, 2], z0c, z1c, b0, b1, b2, a1, a2)
        if t < lens[3]:
            i = lens[3] - 1 - t if reverse else t
            sig[i, 3], z0d, z1d = _df2t(sig[i, 3], z0d, z1d, b0, b1, b2, a1, a2)


@njit(cache=True, inline="always")
def _df2t(x_cur, z0, z1, b0, b1, b2, a1, a2):
    """One sample through one second-order section, direct form II transposed, in scipy's ``_sosfilt``
    order: ``(output, new z0, new z1)``."""
    y = b0 * x_cur + z0
    return y, b1 * x_cur - a1 * y + z1, b2 * x_cur - a2 * y


@njit(cache=True, boundscheck=False)
def _sosfiltfilt(sos, zi, x, lens, edge):
    """``scipy.signal.sosfiltfilt(sos, x[c, :lens[c]])`` (odd padding of ``edge`` samples, ``zi`` from
    ``sosfilt_zi``) for each row ``c`` of ``x [n_ch, n]``, zero beyond ``lens[c]``; a single second-order
    section (``sos [1, 6]``). Bit-identical to scipy's: the same extension
    (``scipy.signal._arraytools.odd_ext``), initial states and per-sample arithmetic in the same order,
    without scipy's copies and reversals. Rows go four at a time through :func:`_biquad_lanes`."""
    n_ch, n = x.shape
    out = np.zeros((n_ch, n))
    buf = np.empty((n + 2 * edge, 4))
    for g in range(0, n_ch, 4):
        ext_lens = np.zeros(4, dtype=np.int64)
        for j in range(min(4, n_ch - g)):
            row, m = x[g + j], lens[g + j]
            ext_lens[j] = m + 2 * edge
            for k in range(edge):
                buf[k, j] = 2.0 * row[0] - row[edge - k]
                buf[edge + m + k, j] = 2.0 * row[m - 1] - row[m - 2 - k]
            for k in range(m):
                buf[edge + k, j] = row[k]
        _biquad_lanes(sos, zi, buf, ext_lens, False)
        _biquad_lanes(sos, zi, buf, ext_lens, True)
        for j in range(min(4, n_ch - g)):
            for k in range(lens[g + j]):
                out[g + j, k] = buf[edge + k, j]
    return out


@njit(cache=True, boundscheck=False)
def _hybrid_tail(out, noise, grid, env, s_mean, vfs, s_var, fs, fdl2, n0s, n_ends, ramp, fade):
    """The hybrid engine's noise tail, written into ``out [n_mics, n]`` that holds the early parts: from
    sample ``n0s[m]`` of microphone ``m``, ``mean + noise * sqrt(var)`` at ``t = (n - fdl2) / fs`` (clipped
    at 0), crossfaded with the early part up to ``n_ends[m]`` (``early * ramp + fade * tail``), the tail alone
    after. ``mean = s_mean * t / vfs * amplitude envelope``, ``var = s_var * energy envelope``, both read
    from ``env [n_mics, 2, len(grid)]`` as ``np.interp`` reads them (same bracket ``grid[j] <= t <
    grid[j + 1]``, slopes and arithmetic): the arithmetic, in the same order, of ``hybrid.tail_statistics``
    and the crossfade, without their sample-sized temporaries. The times, the mean's factor and the samples
    where each grid interval starts are the same for every microphone and worked out once; then samples go
    one grid interval at a time, a loop without branches that the compiler vectorises. ``t`` must stay
    below ``grid[-1]``."""
    n, n_g = out.shape[1], grid.shape[0]
    ts = np.empty(n)
    ms = np.empty(n)
    kf = np.float64(-fdl2)
    for k in range(n):
        ts[k] = max(kf / fs, 0.0)
        ms[k] = s_mean * ts[k] / vfs
        kf += 1.0
    starts = np.empty(n_g + 1, dtype=np.int64)  # starts[j]: first sample with t >= grid[j]
    k = 0
    for j in range(n_g):
        while k < n and ts[k] < grid[j]:
            k += 1
        starts[j] = k
    starts[n_g] = n
    for m in range(out.shape[0]):
        e_var, e_amp = env[m, 0], env[m, 1]
        n0, n_end = n0s[m], n_ends[m]
        for j in range(n_g - 1):
            lo, hi = max(starts[j], n0), starts[j + 1]
            if lo >= hi:
                continue
            g = grid[j]
            a_amp = (e_amp[j + 1] - e_amp[j]) / (grid[j + 1] - g)
            a_var = (e_var[j + 1] - e_var[j]) / (grid[j + 1] - g)
            b_amp, b_var = e_amp[j], e_var[j]
            for k in range(lo, min(hi, n_end)):  # the crossfade: a few samples
                tail = ms[k] * (a_amp * (ts[k] - g) + b_amp) + noise[m, k] * np.sqrt(
                    s_var * (a_var * (ts[k] - g) + b_var)
                )
                out[m, k] = out[m, k] * ramp[k - n0] + fade[k - n0] * tail
            for k in range(max(lo, n_end), hi):
                out[m, k] = ms[k] * (a_amp * (ts[k] - g) + b_amp) + noise[m, k] * np.sqrt(
                    s_var * (a_var * (ts[k] - g) + b_var)
                )
