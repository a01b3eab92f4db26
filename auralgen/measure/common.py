"""Input checks shared by the ``measure_*`` modules.

Every public measurement validates its arrays through :func:`as_signal` so that a bad
input fails with one :class:`~auralgen.core.errors.ParameterError` line naming the argument.
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.errors import ParameterError


def as_signal(x, name: str = "x", *, ndim: tuple[int, ...] = (1, 2), min_samples: int = 1) -> np.ndarray:
    """Return ``x`` as a finite float64 array ``[n]`` or ``[channels, n]``.

    Parameters
    ----------
    x : array_like
        The signal: real numbers, shape ``(samples,)`` or ``(channels, samples)``.
    name : str, optional
        The argument's name, quoted in the error message.
    ndim : tuple of int, optional
        The allowed numbers of dimensions.
    min_samples : int, optional
        The fewest samples allowed per channel.

    Returns
    -------
    ndarray, float64
        ``x`` with its shape unchanged (no copy when it already is float64).

    Raises
    ------
    ParameterError
        If ``x`` is not real numeric, has the wrong number of dimensions, fewer than
        ``min_samples`` samples, no channels, or non-finite values.
    """
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ParameterError(f"{name} must be a real float array; got dtype {arr.dtype}")
    if arr.ndim not in ndim:
        allowed = " or ".join(f"{d}-D" for d in ndim)
        raise ParameterError(f"{name} must be {allowed}; got shape {arr.shape}")
    if arr.size == 0 or arr.shape[-1] < min_samples:
        raise ParameterError(f"{name} must hold at least {min_samples} sample(s) per channel; got shape {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} must be finite; got {int(np.sum(~np.isfinite(arr)))} non-finite value(s)")
    return arr


def as_mono(x, name: str = "x", *, min_samples: int = 1) -> np.ndarray:
    """Validate ``x`` and average channels-first input ``[channels, n]`` to ``[n]``.

    Parameters
    ----------
    x, name, min_samples
        As in :func:`as_signal` (``x`` 1-D or 2-D).

    Returns
    -------
    ndarray, shape (samples,), float64
        ``x`` itself when mono, else the mean over channels.
    """
    arr = as_signal(x, name, min_samples=min_samples)
    return arr.mean(axis=0) if arr.ndim == 2 else arr


def as_channels(x, name: str = "x", *, min_samples: int = 1) -> np.ndarray:
    """Validate ``x`` and return it channels-first ``[channels, n]`` (mono becomes one channel).

    Parameters
    ----------
    x, name, min_samples
        As in :func:`as_signal`.

    Returns
    -------
    ndarray, shape (channels, samples), float64
        ``x``, with a leading axis of length 1 added to mono input.
    """
    arr = as_signal(x, name, min_samples=min_samples)
    return arr[np.newaxis] if arr.ndim == 1 else arr


def check_rate(sample_rate) -> float:
    """Return ``sample_rate`` as float after checking it is finite and > 0 (:func:`check_positive`).

    Parameters
    ----------
    sample_rate : float
        The sample rate in Hz.

    Returns
    -------
    float
        ``sample_rate`` in Hz.
    """
    return check_positive("sample_rate", sample_rate)


def check_positive(key: str, value) -> float:
    """Return ``value`` as float after checking it is finite and > 0.

    Parameters
    ----------
    key : str
        The parameter's name, quoted in the error message.
    value : float
        The value to check (anything :class:`float` accepts).

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ParameterError
        If ``value`` is not a number, not finite or not > 0.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{key}={value!r} must be a number > 0") from None
    if not math.isfinite(v) or v <= 0:
        raise ParameterError(f"{key}={value!r} is out of range; allowed: finite and > 0")
    return v


def check_band(key: str, low, high, sample_rate: float) -> tuple[float, float]:
    """Check ``0 <= low < high <= sample_rate / 2`` and return the pair as floats.

    Parameters
    ----------
    key : str
        The parameter's name, quoted in the error message.
    low, high : float
        The band edges in Hz.
    sample_rate : float
        The sample rate in Hz (the upper edge may reach its half, the Nyquist frequency).

    Returns
    -------
    tuple of (float, float)
        ``(low, high)`` in Hz.

    Raises
    ------
    ParameterError
        If an edge is not finite or the band is empty or outside ``[0, sample_rate / 2]``.
    """
    lo, hi = float(low), float(high)
    nyq = sample_rate / 2.0
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 <= lo < hi <= nyq):
        raise ParameterError(f"{key}=({low!r}, {high!r}) is out of range; allowed: 0 <= low < high <= {nyq:g} Hz")
    return lo, hi


def db_power(power: float) -> float:
    """``10 log10(power)``, ``-inf`` for zero power.

    Parameters
    ----------
    power : float
        A power (mean square), linear.

    Returns
    -------
    float
        The power in dB; ``-inf`` when ``power <= 0``.
    """
    return 10.0 * math.log10(power) if power > 0 else -math.inf


def moving_average(x: np.ndarray, width: int) -> np.ndarray:
    """Centred moving average of ``x`` over ``width`` samples, same length, zero padded.

    Parameters
    ----------
    x : ndarray, shape (samples,)
        The signal (1-D: the padding and the running sum treat the array as flat).
    width : int
        The window length in samples; values below 1 count as 1.

    Returns
    -------
    ndarray, shape (samples,), float64
        The mean of the ``width`` samples around each sample (samples beyond the ends count as 0).
    """
    width = max(int(width), 1)
    c = np.cumsum(np.pad(x, (width // 2 + 1, width - width // 2 - 1)))
    return (c[width:] - c[:-width]) / width


def parabolic_offset(y_m1: float, y_0: float, y_p1: float) -> float:
    """Vertex offset in [-0.5, 0.5] of the parabola through three equally spaced points.

    Parameters
    ----------
    y_m1, y_0, y_p1 : float
        The values at offsets -1, 0 and +1 (e.g. three neighbouring spectrum bins).

    Returns
    -------
    float
        The vertex's offset from the middle point, in steps, clipped to [-0.5, 0.5]; 0 for a line.
    """
    den = y_m1 - 2.0 * y_0 + y_p1
    if den == 0:
        return 0.0
    return float(np.clip(0.5 * (y_m1 - y_p1) / den, -0.5, 0.5))


def sounding(x: np.ndarray, floor_db: float = -60.0) -> np.ndarray:
    """``x`` from its first to its last sample within ``floor_db`` of its peak (the segment without the silence
    around it).

    Parameters
    ----------
    x : ndarray, shape (samples,)
        A clip.
    floor_db : float
        The threshold, dB re the clip's peak.

    Returns
    -------
    ndarray, shape (samples,)
        The sounding stretch (``x`` itself when it is silent).
    """
    loud = np.flatnonzero(np.abs(x) >= np.max(np.abs(x), initial=0.0) * 10 ** (floor_db / 20))
    return x[loud[0] : loud[-1] + 1] if loud.size and np.any(x) else x
