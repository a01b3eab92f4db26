"""Private helpers of :mod:`auralgen.listeners.multisource`: HRIR convolution and lag search, the click train's spikes.

The click train's clicks are found as spikes of the short-time power over its running median
(:data:`CLICK_SPIKE_S` over :data:`CLICK_MEDIAN_S`); its period is the spikes' strongest
autocorrelation lag in the palette's rate range, and the clicks are averaged after re-alignment.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.ndimage

from auralgen.measure.common import moving_average
from auralgen.synth.palette import SPATIAL_CLICK_RATE_HZ

CLICK_SPIKE_S, CLICK_MEDIAN_S = 0.0005, 0.02  # click spikes: 0.5 ms power over its 20 ms running median
CLICK_MIN_SPIKE = 1.0  # ... a click position counts while its spike (log ratio) exceeds this
CLICK_WINDOW_PRE = 40  # averaged click windows start this many samples before the spike


def _span(x: np.ndarray, start: int, span_s: tuple[float, float], sample_rate: int) -> np.ndarray:
    """``x[:, start + span_s[0] : start + span_s[1]]`` (seconds to samples)."""
    return x[:, start + int(span_s[0] * sample_rate) : start + int(span_s[1] * sample_rate)]


def _hrir(hrtf, direction: tuple[float, float]) -> np.ndarray:
    """The set's HRIR pair [2, taps] nearest to ``direction``."""
    return hrtf.hrirs[int(hrtf.nearest(*direction))]


def _through(signal: np.ndarray, hrir: np.ndarray) -> np.ndarray:
    """``signal`` at both ears: [2, n + taps - 1]."""
    return np.stack([np.convolve(signal, hrir[0]), np.convolve(signal, hrir[1])])


def _best_lag(y: np.ndarray, ref: np.ndarray, lags: range, n: int) -> int:
    """The lag in ``lags`` where ``y[:, lag : lag + n]`` correlates best (normalised) with ``ref[:, :n]``."""
    r = ref[:, :n]
    valid = [k for k in lags if k >= 0 and k + n <= y.shape[1]]
    if not valid:
        return -1
    scores = [
        float(np.sum(y[:, k : k + n] * r)) / math.sqrt(max(float(np.sum(y[:, k : k + n] ** 2)), 1e-300)) for k in valid
    ]
    return valid[int(np.argmax(scores))]


def _spikes(x: np.ndarray, sample_rate: int, after: int) -> np.ndarray:
    """Log ratio (>= 0) of the 0.5 ms power to its running median, zero before ``after``."""
    p = np.sum(x**2, axis=0)
    env = moving_average(p, int(CLICK_SPIKE_S * sample_rate))
    base = scipy.ndimage.median_filter(env, size=int(CLICK_MEDIAN_S * sample_rate))
    s = np.log(np.maximum(env, 1e-300) / np.maximum(base, 1e-300))
    s[:after] = 0.0
    return np.clip(s, 0.0, None)


def _click_period(spikes: np.ndarray, sample_rate: int, after: int) -> int:
    """The click period (samples) in the palette's rate range: the spikes' strongest autocorrelation lag."""
    lo, hi = int(sample_rate / SPATIAL_CLICK_RATE_HZ[1]) - 1, int(sample_rate / SPATIAL_CLICK_RATE_HZ[0]) + 1
    seg = spikes[after:]
    n = 1 << int(np.ceil(np.log2(2 * seg.size)))
    f = np.fft.rfft(seg, n)
    ac = np.fft.irfft(f * np.conj(f), n)[: seg.size]
    return lo + int(np.argmax(ac[lo : hi + 1]))


def _first_click(spikes: np.ndarray, period: int, after: int) -> int:
    """The first click: the comb of ``period`` through the strongest spikes, walked back while a spike is there."""
    n = spikes.size
    comb = [spikes[t0:n:period][:40].sum() for t0 in range(after, min(after + period, n))]
    t0 = after + int(np.argmax(comb))
    while (
        t0 - period - 3 >= after
        and spikes[t0 - period - 3 : t0 - period + 4].max() > 0.5 * spikes[t0 - 3 : t0 + 4].max()
    ):
        t0 -= period
    return t0


def _positions(spikes: np.ndarray, first: int, period: float, last: int) -> list[int]:
    """Click positions ``first + round(k period)`` up to ``last`` where a spike stands."""
    pos = first + np.rint(np.arange(int((last - first) / period) + 1) * period).astype(int)
    return [int(q) for q in pos if q >= CLICK_WINDOW_PRE and spikes[q - 3 : q + 4].max() > CLICK_MIN_SPIKE]


def _aligned_mean(x: np.ndarray, pos: list[int], length: int) -> np.ndarray:
    """Mean of the click windows, each shifted within 2 samples to match the running mean (two passes)."""
    win = lambda q: x[:, q - CLICK_WINDOW_PRE : q - CLICK_WINDOW_PRE + length]  # noqa: E731
    avg = np.mean([win(q) for q in pos], axis=0)
    for _ in range(2):
        shifted = []
        for q in pos:
            lag = int(np.argmax([np.sum(win(q + d) * avg) for d in range(-2, 3)])) - 2
            shifted.append(win(q + lag))
        avg = np.mean(shifted, axis=0)
    return avg
