"""The moving-image kernel as first written, one output sample at a time with a sequential tap sum over the
full phase kernels and three fixed-point steps per sample: the reference that
:func:`auralgen.rooms._trajectory_kernels._render_moving_images` (emission times solved on a grid, cubic in
between; the rank-8 basis of the phase kernels; silence skipped) must reproduce; and the binaural filtering of
those images as first written, image by image (:func:`binaural_early`), the reference of
:func:`auralgen.rooms._moving._binaural_early` (one batched FFT, spectra summed over the images). The path's
interpolation (``_path_point``) and the number of fixed-point steps are the kernel module's own."""

from __future__ import annotations

import numpy as np
import scipy.fft
from numba import njit

from auralgen.rooms._moving import BLOCK_S, _emitted_positions, _hrir_spectra
from auralgen.rooms._trajectory_kernels import _ITERATIONS, _overlap_add, _path_point


@njit(cache=True)
def _render_moving_images(signal, path, offsets, signs, gains, mic, fs, c, fdl2, gran, kernels, n_out):
    """Per-image received signals and emission times of a moving source: the arguments and results of
    :func:`auralgen.rooms._trajectory_kernels._render_moving_images`, without ``nonzero`` and with the phase
    ``kernels`` in tap order (not flipped)."""
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
            for _ in range(_ITERATIONS):
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


def binaural_early(receiver, y, tau, path, affine, sample_rate) -> np.ndarray:
    """Block-wise HRIR filtering of the per-image signals ``y [n_images, n]``, image by image."""
    n_img, n = y.shape
    hr = receiver.hrtf_at(sample_rate)
    b = max(1, int(round(BLOCK_S * sample_rate)))
    n_fft = scipy.fft.next_fast_len(2 * b + hr.num_taps - 1, real=True)
    spectra = _hrir_spectra(receiver.hrtf, int(sample_rate), n_fft)
    centres = np.arange(0, n + b, b)
    k = np.arange(2 * b)
    window = np.sin(0.5 * np.pi * k / b) ** 2  # window of block j covers [c_j - b, c_j + b)
    idx = centres[:, None] - b + k[None, :]
    inside = (idx >= 0) & (idx < n)
    idx_c = np.clip(idx, 0, n - 1)
    out = np.zeros((2, n + n_fft))
    for i in range(n_img):
        seg = np.where(inside, y[i][idx_c], 0.0) * window
        live = np.flatnonzero(np.any(seg != 0.0, axis=1))
        if live.size == 0:
            continue
        pos = _emitted_positions(
            path, tau[i : i + 1, np.minimum(centres[live], n - 1)], tuple(a[i : i + 1] for a in affine)
        )[0]
        az, el, _ = receiver.directions_of(pos)
        dirs = hr.nearest(az, el)
        spec = scipy.fft.rfft(seg[live], n_fft, axis=-1)[:, None, :] * spectra[dirs]
        segs = np.ascontiguousarray(scipy.fft.irfft(spec, n_fft, axis=-1))
        _overlap_add(out, segs, (centres[live] - b).astype(np.int64))
    return out[:, :n]
