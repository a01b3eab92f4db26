"""BS.1770 integrated loudness of one mono signal, the same number as pyloudnorm's meter, faster.

pyloudnorm's ``Meter.integrated_loudness`` recomputes its K-weighting coefficients four times per
call, filters with one ``scipy.signal.lfilter`` pass per stage and gates with Python lists of numpy
scalars; the mixer measures every component twice per item, so that is a large part of a mixture
item. :func:`lufs_mono` runs the same steps with the same arithmetic in the same order (the meter's
own filter coefficients, taken once per sample rate; both filter stages in one pass of a numba
kernel that does lfilter's per-sample operations; the same per-block sums, numpy's pairwise summation
in the kernel; the same gating), so it
returns the identical float (tested bit for bit against pyloudnorm).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

BLOCK_S = 0.4  # BS.1770 gating block (the meter's block_size)
_STEP = 1.0 - 0.75  # the meter's 75 % block overlap, written as it computes it
_ABSOLUTE_GATE = -70.0  # LUFS
_OFFSET = -0.691  # BS.1770 loudness offset


@functools.lru_cache(maxsize=16)
def _k_weighting(sample_rate: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The meter's two K-weighting stages at ``sample_rate``, in the order it applies them: ``b`` and ``a``
    of shape (2, 3), normalised by ``a[:, 0]`` as lfilter normalises them, and the passband gains (2,)."""
    import pyloudnorm

    meter = pyloudnorm.Meter(sample_rate, block_size=BLOCK_S)
    stages = list(meter._filters.values())
    if len(stages) != 2 or any(len(st.b) != 3 or len(st.a) != 3 for st in stages):
        raise RuntimeError(f"pyloudnorm's K-weighting has {len(stages)} stages; lufs_mono filters two biquads")
    a0 = np.array([[float(st.a[0])] for st in stages])
    b = np.array([st.b for st in stages], dtype=np.float64) / a0
    a = np.array([st.a for st in stages], dtype=np.float64) / a0
    return b, a, np.array([st.passband_gain for st in stages], dtype=np.float64)


@njit(cache=True)
def _k_weighted(x, b, a, gains):  # pragma: no cover - compiled
    """Both biquad stages of ``x``, each ``gains[s] * lfilter(b[s], a[s], .)``, in one pass: per sample the
    operations of scipy's direct form II transposed filter, in its order (so the same floats)."""
    y = np.empty(x.shape[0])
    z10 = z11 = z20 = z21 = 0.0
    for t in range(x.shape[0]):
        xt = x[t]
        u = z10 + b[0, 0] * xt
        z10 = z11 + xt * b[0, 1] - u * a[0, 1]
        z11 = xt * b[0, 2] - u * a[0, 2]
        v = gains[0] * u
        w = z20 + b[1, 0] * v
        z20 = z21 + v * b[1, 1] - w * a[1, 1]
        z21 = v * b[1, 2] - w * a[1, 2]
        y[t] = gains[1] * w
    return y


@njit(cache=True)
def _sum_of_squares(y, lo, n):  # pragma: no cover - compiled
    """``np.sum(np.square(y[lo : lo + n]))`` with numpy's own pairwise summation (8 partial sums over
    blocks of up to 128 values, halves above), so the same float."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += y[lo + i] * y[lo + i]
        return res
    if n <= 128:
        r0, r1, r2, r3 = y[lo] * y[lo], y[lo + 1] * y[lo + 1], y[lo + 2] * y[lo + 2], y[lo + 3] * y[lo + 3]
        r4, r5, r6, r7 = y[lo + 4] * y[lo + 4], y[lo + 5] * y[lo + 5], y[lo + 6] * y[lo + 6], y[lo + 7] * y[lo + 7]
        i = lo + 8
        while i < lo + n - (n % 8):
            r0 += y[i] * y[i]
            r1 += y[i + 1] * y[i + 1]
            r2 += y[i + 2] * y[i + 2]
            r3 += y[i + 3] * y[i + 3]
            r4 += y[i + 4] * y[i + 4]
            r5 += y[i + 5] * y[i + 5]
            r6 += y[i + 6] * y[i + 6]
            r7 += y[i + 7] * y[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < lo + n:
            res += y[i] * y[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _sum_of_squares(y, lo, half) + _sum_of_squares(y, lo + half, n - half)


@njit(cache=True)
def _block_powers(x, b, a, gains, n_blocks, rate):  # pragma: no cover - compiled
    """The meter's mean square of each gating block of the K-weighted ``x``: block ``j`` covers samples
    ``int(BLOCK_S * (j * _STEP) * rate) .. int(BLOCK_S * (j * _STEP + 1) * rate)`` (cut at the end)."""
    y = _k_weighted(x, b, a, gains)
    z = np.zeros(n_blocks)
    scale = 1.0 / (BLOCK_S * rate)
    for j in range(n_blocks):
        lo = min(int(BLOCK_S * (j * _STEP) * rate), y.shape[0])
        hi = min(int(BLOCK_S * (j * _STEP + 1) * rate), y.shape[0])
        z[j] = scale * _sum_of_squares(y, lo, max(hi - lo, 0))
    return z


def lufs_mono(x: np.ndarray, sample_rate: int) -> float:
    """Integrated loudness (LUFS) of a mono float64 signal, equal to pyloudnorm's ``integrated_loudness``.

    Parameters
    ----------
    x : ndarray, shape (samples,), float64
        Finite samples, at least :data:`BLOCK_S` long (the caller checks both).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    float
        Loudness in LUFS; ``-inf`` when every block is gated out.

    Examples
    --------
    >>> t = np.arange(16000) / 16000
    >>> round(lufs_mono(0.5 * np.sin(2 * np.pi * 997 * t), 16000), 2)
    -9.1
    """
    rate = sample_rate
    n_blocks = round((len(x) / rate - BLOCK_S) / (BLOCK_S * _STEP)) + 1  # half to even, as np.round
    b, a, gains = _k_weighting(int(sample_rate))
    z = _block_powers(np.ascontiguousarray(x, dtype=np.float64), b, a, gains, n_blocks, float(rate)).tolist()
    # per block as the meter does it (one scalar log10 each; a silent block is -inf); a one-item sum of
    # ``1.0 * v`` is ``v``
    blocks = [_OFFSET + 10.0 * np.log10(v) if v > 0 else -math.inf for v in z]
    above = [v for v, lj in zip(z, blocks, strict=True) if lj >= _ABSOLUTE_GATE]
    if not above:  # the meter's mean of no block is NaN, its nan_to_num 0, its loudness -inf
        return -math.inf
    relative = _OFFSET + 10.0 * np.log10(_mean(above)) - 10.0
    gated = [v for v, lj in zip(z, blocks, strict=True) if lj > relative and lj > _ABSOLUTE_GATE]
    if not gated:
        return -math.inf
    return float(_OFFSET + 10.0 * np.log10(_mean(gated)))


def _mean(values: list[float]) -> float:
    """``np.mean(values)``, the same float: numpy's pairwise sum (:func:`_sum_of_squares`' order) over the count."""
    return _pairwise_sum(values, 0, len(values)) / len(values)


def _pairwise_sum(v: list[float], lo: int, n: int) -> float:
    """``np.sum(v[lo : lo + n])`` in numpy's pairwise order, on Python floats (a few gating blocks)."""
    if n < 8:
        res = 0.0
        for k in range(lo, lo + n):
            res += v[k]
        return res
    if n <= 128:
        r = v[lo : lo + 8]
        i = lo + 8
        while i < lo + n - (n % 8):
            for j in range(8):
                r[j] += v[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, lo + n):
            res += v[k]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(v, lo, half) + _pairwise_sum(v, lo + half, n - half)
