"""Attack: the 10-90 % rise time of a sound's amplitude envelope, measured from its audio."""

from __future__ import annotations

import math

import numpy as np
from scipy.fft import next_fast_len
from scipy.signal import hilbert

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_mono, check_rate

PLATEAU_FRACTION = 0.95  # envelope samples within this fraction of the maximum form the steady level


def amplitude_envelope(x) -> np.ndarray:
    """Hilbert envelope ``|x + j H{x}|`` of ``x`` (``[n]``; channels averaged).

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal, at least 2 samples; channels are averaged first.

    Returns
    -------
    ndarray, shape (samples,), float64
        The envelope, linear (same scale as ``x``).
    """
    arr = as_mono(x, min_samples=2)
    n = arr.shape[0]
    return np.abs(hilbert(arr, N=next_fast_len(n)))[:n]


def _crossing(env: np.ndarray, level: float, start: int) -> float:
    """First fractional index at or after ``start`` where ``env`` reaches ``level`` (linear interpolation)."""
    above = np.flatnonzero(env[start:] >= level)
    if above.size == 0:
        return math.nan
    i = start + int(above[0])
    if i == 0 or env[i - 1] >= level:
        return float(i)
    return i - 1 + (level - env[i - 1]) / (env[i] - env[i - 1])


def rise_time_s(x, sample_rate, *, low: float = 0.1, high: float = 0.9) -> float:
    """Seconds the envelope of ``x`` takes from ``low`` to ``high`` of its steady level.

    The envelope is the Hilbert envelope (:func:`amplitude_envelope`); the steady level is the
    median of the envelope samples within :data:`PLATEAU_FRACTION` of its maximum (the sustain,
    which is the peak for an attack-sustain-release sound, without the overshoot a fast ramp
    leaves). ``x`` holds one sound: a little silence before it, then the sound.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The sound; channels are averaged.
    sample_rate : float
        Sample rate of ``x`` in Hz.
    low, high : float, optional
        The start and end of the rise as fractions of the steady level, ``0 < low < high < 1``.

    Returns
    -------
    float
        The rise time in seconds; ``nan`` for silence.

    Examples
    --------
    A 1 kHz tone with a 50 ms linear attack and release, 0.1 s of silence either side (10-90 % of a
    linear ramp: 40 ms; a tone cut off at the end instead makes the Hilbert envelope ring there):

    >>> sr = 16000; t = np.arange(sr) / sr
    >>> x = np.sin(2 * np.pi * 1000 * t) * np.minimum(np.minimum(t, 1 - t) / 0.05, 1.0)
    >>> x = np.concatenate([np.zeros(1600), x, np.zeros(1600)])
    >>> print(round(rise_time_s(x, sr) * 1000, 1))
    40.0
    """
    sr = check_rate(sample_rate)
    if not 0 < low < high < 1:
        raise ParameterError(f"low={low!r}, high={high!r} are out of range; allowed: 0 < low < high < 1")
    env = amplitude_envelope(x)
    peak = float(env.max())
    if peak <= 0:
        return math.nan
    steady = float(np.median(env[env >= PLATEAU_FRACTION * peak]))
    t_low = _crossing(env, low * steady, 0)
    t_high = _crossing(env, high * steady, int(t_low) if math.isfinite(t_low) else 0)
    return (t_high - t_low) / sr
