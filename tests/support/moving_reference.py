"""The moving-image kernel as first written, one output sample at a time with a sequential tap sum: the
reference that :func:`auralgen.rooms._trajectory_kernels._render_moving_images` (per-pass emission
times, SIMD tap sums, silence skipped) must reproduce."""

from __future__ import annotations

import numpy as np
from numba import njit

ITERATIONS = 3


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
def _render_moving_images(signal, path, offsets, signs, gains, mic, fs, c, fdl2, gran, kernels, n_out):
    """Per-image received signals and emission times of a moving source.

    Parameters
    ----------
    signal : float64 [n_sig], dry source signal; sample ``k`` is emitted at ``k / fs``
    path : float64 [n_path, 3], source position at ``k / fs`` (room frame, m)
    offsets, signs : float64 [n_images, 3], image position = ``offsets + signs * source``
    gains : float64 [n_images], wall reflection gains (without 1/r)
    mic : float64 [3], receiving point (m)
    fs, c : sample rate (Hz), speed of sound (m/s)
    fdl2, gran : half fractional-delay length (samples), table points per sample
    kernels : float64 [gran + 2, 2 fdl2 + 1], phase kernels of the fractional delay
    n_out : output length (samples)

    Returns
    -------
    y : float64 [n_images, n_out], ``gain / r * signal(tau)`` per image
    tau : float64 [n_images, n_out], emission time in signal samples (``tau * fs``)
    """
    n_img = offsets.shape[0]
    n_sig = signal.shape[0]
    n_taps = kernels.shape[1]
    y = np.zeros((n_img, n_out))
    tau = np.zeros((n_img, n_out))
    p = np.empty(3)
    for i in range(n_img):
        if gains[i] == 0.0:
            continue
        for n in range(n_out):
            ts = n - fdl2  # reception time in samples
            x = float(ts)
            r = 0.0
            for _ in range(ITERATIONS):
                _path_point(path, x, p)
                dx = offsets[i, 0] + signs[i, 0] * p[0] - mic[0]
                dy = offsets[i, 1] + signs[i, 1] * p[1] - mic[1]
                dz = offsets[i, 2] + signs[i, 2] * p[2] - mic[2]
                r = np.sqrt(dx * dx + dy * dy + dz * dz)
                x = ts - r * fs / c
            tau[i, n] = x
            delay = n - x  # samples, incl. the fdl2 offset
            ip = np.floor(delay)
            xg = (1.0 - (delay - ip)) * gran
            ph = int(np.floor(xg))
            w = xg - ph
            base = n - int(ip) + fdl2  # signal index met by tap 0
            k_lo = max(0, base - n_sig + 1)
            k_hi = min(n_taps - 1, base)
            if k_lo > k_hi:
                continue
            acc = 0.0
            for k in range(k_lo, k_hi + 1):
                acc += signal[base - k] * ((1.0 - w) * kernels[ph, k] + w * kernels[ph + 1, k])
            y[i, n] = gains[i] / r * acc
    return y, tau
