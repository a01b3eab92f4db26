"""BS.1770 integrated loudness of one mono signal, the same number as pyloudnorm's meter, faster.

pyloudnorm's ``Meter.integrated_loudness`` recomputes its K-weighting coefficients four times per
call, filters with one ``scipy.signal.lfilter`` pass per stage and gates with Python lists of numpy
scalars; the mixer measures every component twice per item, so that is a large part of a mixture
item. :func:`lufs_mono` runs the same steps with the same arithmetic in the same order (the meter's
own filter coefficients, taken once per sample rate; both filter stages in one pass of a numba
kernel that does lfilter's per-sample operations; the same per-block sums; the same gating), so it
returns the identical float (tested bit for bit against pyloudnorm).
"""

from __future__ import annotations

import functools
import warnings

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
    y = _k_weighted(np.ascontiguousarray(x, dtype=np.float64), *_k_weighting(int(sample_rate)))
    rate = sample_rate
    n_blocks = int(np.round((len(x) / rate - BLOCK_S) / (BLOCK_S * _STEP))) + 1
    z = np.zeros(n_blocks)
    for j in range(n_blocks):
        lo, hi = int(BLOCK_S * (j * _STEP) * rate), int(BLOCK_S * (j * _STEP + 1) * rate)
        z[j] = (1.0 / (BLOCK_S * rate)) * np.sum(np.square(y[lo:hi]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        # per block as the meter does it (one scalar log10 each); a one-item sum of ``1.0 * v`` is ``v``
        blocks = [_OFFSET + 10.0 * np.log10(z[j]) for j in range(n_blocks)]
        above = [j for j, lj in enumerate(blocks) if lj >= _ABSOLUTE_GATE]
        relative = _OFFSET + 10.0 * np.log10(np.mean(z[above])) - 10.0
        gated = [j for j, lj in enumerate(blocks) if lj > relative and lj > _ABSOLUTE_GATE]
        mean = np.mean(z[gated])
    if np.isnan(mean):  # no block passed the gates (what the meter's nan_to_num does; z is finite, never inf)
        mean = np.float64(0.0)
    with np.errstate(divide="ignore"):
        return float(_OFFSET + 10.0 * np.log10(mean))
