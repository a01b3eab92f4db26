"""Room impulse response measurements: reverberation time (Schroeder) and direct-to-reverberant ratio."""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.errors import ParameterError, check_range
from auralgen.measure.common import as_channels, check_positive, check_rate, db_power, moving_average

_FIT_START_DB = -5.0
_MARGIN_DB = 10.0


def energy_decay_db(rir) -> np.ndarray:
    """Schroeder backward-integrated energy decay curve (dB, 0 at the start) of ``rir`` ``[n]`` or ``[ch, n]``.

    Channels' energies are summed.

    Parameters
    ----------
    rir : array_like, shape (samples,) or (channels, samples)
        The impulse response.

    Returns
    -------
    ndarray, shape (samples,), float64
        The decay curve in dB re its start (0 at sample 0, ``-inf`` after the last non-zero sample).

    Raises
    ------
    ParameterError
        If ``rir`` is all zeros.
    """
    energy = np.sum(as_channels(rir, "rir") ** 2, axis=0)
    edc = np.cumsum(energy[::-1])[::-1]
    if edc[0] <= 0:
        raise ParameterError("rir is all zeros")
    with np.errstate(divide="ignore"):
        return 10.0 * np.log10(edc / edc[0])


def rt60_schroeder(rir, sample_rate, *, decay_db: float = 20.0, start_db: float = _FIT_START_DB) -> float:
    """Reverberation time (s) from the Schroeder decay curve.

    A least-squares line is fitted to the energy decay curve between ``start_db`` (-5 dB) and
    ``start_db - decay_db`` dB (T20 for 20, T30 for 30; the early decay time EDT is
    ``start_db=0, decay_db=10``, ISO 3382-1) and extrapolated to a 60 dB decay.

    Parameters
    ----------
    rir : np.ndarray [shape=(n,) or (channels, n)]
        Impulse response; channel energies are summed.
    sample_rate : float > 0
        Sample rate of ``rir`` in Hz.
    decay_db : float in [10, 50]
        Evaluation range in dB.
    start_db : float in [-10, 0]
        Where the fit starts on the decay curve, dB re its start.

    Returns
    -------
    float
        The reverberation time in seconds (the fitted slope extrapolated to a 60 dB decay).

    Raises
    ------
    ParameterError
        If the 10 ms energy envelope does not fall ``decay_db - start_db + 10`` dB (35 dB for T20) below
        its maximum (the decay curve bends near a noise floor or a truncation).

    Examples
    --------
    >>> sr = 8000; t = np.arange(sr) / sr
    >>> rir = np.random.default_rng(0).standard_normal(sr) * 10 ** (-3 * t / 0.5)
    >>> round(rt60_schroeder(rir, sr), 1)
    0.5
    """
    sr = check_rate(sample_rate)
    check_range("decay_db", float(decay_db), low=10.0, high=50.0)
    check_range("start_db", float(start_db), low=-10.0, high=0.0)
    edc = energy_decay_db(rir)
    end_db = float(start_db) - float(decay_db)
    # the curve is only trustworthy well above where the response stops decaying
    # (noise floor or truncation): require the 10 ms energy envelope to fall 10 dB past the fit range
    energy = np.sum(as_channels(rir, "rir") ** 2, axis=0)
    envelope = moving_average(energy, max(int(0.01 * sr), 1))
    tail = envelope[-max(int(0.01 * sr), 1) :].mean()
    span_db = db_power(envelope.max()) - db_power(tail)
    if span_db < -end_db + _MARGIN_DB:
        raise ParameterError(
            f"rir decays only {span_db:.1f} dB; decay_db={decay_db!r} needs {-end_db + _MARGIN_DB:g} dB"
        )
    i0 = int(np.argmax(edc <= float(start_db)))
    i1 = int(np.argmax(edc <= end_db))
    if i1 - i0 < 2:
        raise ParameterError(f"rir decay from -5 to {end_db:g} dB spans < 2 samples; cannot fit a slope")
    t = np.arange(i0, i1 + 1) / sr
    slope_db_s = np.polyfit(t, edc[i0 : i1 + 1], 1)[0]
    if slope_db_s >= 0:
        raise ParameterError("rir energy decay curve has no negative slope")
    return float(-60.0 / slope_db_s)


def _direct_peak(h2: np.ndarray, win: int) -> int:
    """Index of the first arrival: first sample within 6 dB of the maximum, moved to its local peak."""
    first = int(np.argmax(h2 >= h2.max() * 10 ** (-6.0 / 10)))
    return first + int(np.argmax(h2[first : first + win + 1]))


def drr_db(rir, sample_rate, *, direct_window_s: float = 0.0025) -> float:
    """Direct-to-reverberant ratio (dB) of an impulse response.

    Direct energy = energy within ``direct_window_s`` either side of the first peak (the
    first sample within 6 dB of the maximum, moved to its local maximum); reverberant
    energy = all the rest. Channels contribute their own direct and reverberant energies.

    Parameters
    ----------
    rir : array_like, shape (samples,) or (channels, samples)
        The impulse response.
    sample_rate : float
        Sample rate of ``rir`` in Hz.
    direct_window_s : float, optional
        Half-width in seconds of the window around the first peak counted as direct sound; > 0.

    Returns
    -------
    float
        The ratio in dB; ``inf`` when all the energy is direct.

    Raises
    ------
    ParameterError
        If ``rir`` is all zeros.

    Examples
    --------
    >>> rir = np.zeros(1000); rir[100] = 1.0; rir[500:600] = 0.05
    >>> round(drr_db(rir, 8000), 2)
    6.02
    """
    sr = check_rate(sample_rate)
    hc = as_channels(rir, "rir")
    win = int(round(check_positive("direct_window_s", direct_window_s) * sr))
    direct = total = 0.0
    for h in hc:
        h2 = h**2
        if h2.max() <= 0:
            continue
        p = _direct_peak(h2, win)
        direct += float(np.sum(h2[max(p - win, 0) : p + win + 1]))
        total += float(np.sum(h2))
    if total <= 0:
        raise ParameterError("rir is all zeros")
    rest = total - direct
    if rest <= 0:
        return math.inf
    return db_power(direct) - db_power(rest)
