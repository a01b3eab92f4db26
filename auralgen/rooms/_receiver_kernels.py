"""Private numba kernels of the directional receivers (see :mod:`auralgen.rooms.receivers`).

Binaural rendering without grouping: every image is placed at its fractional delay and
filtered by the HRIR pair of its nearest measured direction in one step. The image's
fractional-delay filter is ``(1 - w) kernel[p] + w kernel[p + 1]`` of pyroomacoustics'
interpolated sinc table (see :mod:`auralgen.rooms._ism_kernels`), which is
``sum_r coef[p, r] basis[r]`` for the rank-8 basis of :func:`auralgen.rooms.images._phase_basis`.
So with ``combined[d, ear, r] = basis[r] * hrir[d, ear]`` (full convolution, precomputed once
per HRTF and rate), an image adds ``amp * sum_r c_r combined[d, ear, r]`` at its integer
delay: ``2 * rank * (taps + fdl - 1)`` multiply-adds per image, no FFT per direction.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from auralgen.rooms._ism_kernels import _arrival, _distance


@njit(cache=True)
def _render_binaural(positions, gains, directions, centre, coef, combined, fs, c, fdl2, gran, n_first, n_len, max_dist):
    """Unfiltered binaural response ``[n_ears, n_len]`` of listed images.

    Parameters
    ----------
    positions : float64 [n_images, 3], room frame (m)
    gains : float64 [n_images], reflection gains (without 1/r)
    directions : intp [n_images], index of each image's nearest HRIR direction
    centre : float64 [3], head centre (m)
    coef : float64 [granularity + 2, rank], phase-table coefficients on the basis
    combined : float64 [n_directions, n_ears, rank, n_taps], basis kernels * HRIRs
    fs, c : sample rate (Hz), speed of sound (m/s)
    fdl2, gran : half fractional-delay length (samples), sinc-table points per sample
    n_first : images whose first tap is at or after this sample are skipped
    n_len : output length (samples), ``>= n_first``; later taps are cut
    max_dist : images farther than this (m) are skipped (they start after ``n_first``)

    Delay and phase come from ``_ism_kernels._arrival`` (the same arrival arithmetic as the
    omni engine: arrival time rounded through float32 as pyroomacoustics does).
    """
    n_ears = combined.shape[1]
    rank = combined.shape[2]
    n_taps = combined.shape[3]
    out = np.zeros((n_ears, n_len))
    fs32 = np.float32(fs)
    inv_c = 1.0 / c
    offset_s = fdl2 / fs
    for i in range(positions.shape[0]):
        d = _distance(positions, i, centre)
        if d > max_dist or gains[i] == 0.0:
            continue
        amp = gains[i] / d
        start, ip_, w = _arrival(d, fs32, inv_c, offset_s, fdl2, gran)
        if start < 0 or start >= n_first:
            continue
        a0 = amp * (1.0 - w)
        a1 = amp * w
        m = min(n_taps, n_len - start)
        b = directions[i]
        for r in range(rank):
            cr = a0 * coef[ip_, r] + a1 * coef[ip_ + 1, r]
            for e in range(n_ears):
                for t in range(m):
                    out[e, start + t] += cr * combined[b, e, r, t]
    return out
