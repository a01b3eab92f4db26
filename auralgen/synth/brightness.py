"""Harmonic complexes of a given spectral centroid: a spectral tilt (dB/octave) solved for the centroid.

A sound here is a harmonic complex whose period is a whole number of samples
(``f0_hz = sample_rate / period_samples``): one period is built by an inverse FFT with the
exact harmonic amplitudes and phases, then repeated, so the spectrum is exactly the recipe's and
rendering costs one short FFT. Harmonic ``k`` (frequency ``k * f0_hz``, all harmonics up to
``max_freq_hz``) has amplitude ``k ** (tilt / 6.0206)``, i.e. ``tilt_db_per_octave`` dB per
octave. The spectral centroid is the amplitude-weighted mean frequency
``sum(f_k a_k) / sum(a_k)`` -- the same magnitude weighting :func:`auralgen.measure.brightness.
spectral_centroid_hz` applies to the audio -- and :func:`tilt_for_centroid` finds the tilt giving
a target centroid (the centroid rises monotonically with the tilt).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from auralgen.core.errors import ParameterError
from auralgen.synth.levels import set_loudness_lufs
from auralgen.synth.signals import apply_ramps, n_samples

DB_PER_OCTAVE = 20.0 * math.log10(2.0)  # amplitude ratio 2 per octave, in dB (6.0206)
TILT_RANGE_DB = (-60.0, 30.0)  # tilts the solver searches (dB/octave)


def period_samples(f0_hz: float, sample_rate: int) -> int:
    """The whole period nearest ``sample_rate / f0_hz``; the sound's F0 is ``sample_rate / period``.

    Parameters
    ----------
    f0_hz : float
        Wanted fundamental frequency, in Hz.
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    int
        The period, in samples (at least 2).
    """
    return max(2, int(round(sample_rate / float(f0_hz))))


def harmonic_numbers(period: int, sample_rate: int, max_freq_hz: float) -> np.ndarray:
    """Harmonic numbers ``1..K`` with ``K * f0`` at most ``max_freq_hz`` and below Nyquist.

    Parameters
    ----------
    period : int
        The fundamental period, in samples (``f0 = sample_rate / period``).
    sample_rate : int
        Sampling rate, in Hz.
    max_freq_hz : float
        Highest harmonic frequency allowed, in Hz.

    Returns
    -------
    ndarray, shape (K,), float64
        The harmonic numbers ``1.0, 2.0, ..., K``.

    Raises
    ------
    ParameterError
        If ``max_freq_hz`` is below the fundamental (no harmonic fits).
    """
    f0 = sample_rate / period
    k_max = min(int(math.floor(max_freq_hz / f0 + 1e-9)), (period - 1) // 2)
    if k_max < 1:
        raise ParameterError(
            f"max_freq_hz={max_freq_hz!r} is below f0 {f0:g} Hz; allowed: max_freq_hz >= f0 (and below Nyquist)"
        )
    return np.arange(1, k_max + 1, dtype=np.float64)


def tilt_amplitudes(k: np.ndarray, tilt_db_per_octave: float) -> np.ndarray:
    """Amplitudes ``k ** (tilt / 6.0206)`` of harmonics ``k`` (harmonic 1 has amplitude 1).

    Parameters
    ----------
    k : ndarray, shape (K,)
        Harmonic numbers (1-based).
    tilt_db_per_octave : float
        Spectral tilt, in dB per octave.

    Returns
    -------
    ndarray, shape (K,), float64
        Linear amplitude of each harmonic.
    """
    return k ** (float(tilt_db_per_octave) / DB_PER_OCTAVE)


def centroid_hz(k: np.ndarray, f0_hz: float, tilt_db_per_octave: float) -> float:
    """Amplitude-weighted mean frequency of harmonics ``k`` of ``f0_hz`` at ``tilt_db_per_octave``.

    Parameters
    ----------
    k : ndarray, shape (K,)
        Harmonic numbers (1-based) of the complex on ``f0_hz``.
    f0_hz : float
        Fundamental frequency, in Hz.
    tilt_db_per_octave : float
        Spectral tilt, as in :func:`tilt_amplitudes`.

    Returns
    -------
    float
        The spectral centroid, in Hz.
    """
    a = tilt_amplitudes(k, tilt_db_per_octave)
    return float(f0_hz * np.sum(k * a) / np.sum(a))


def centroid_range_hz(k: np.ndarray, f0_hz: float) -> tuple[float, float]:
    """The lowest and highest centroid reachable with a tilt in :data:`TILT_RANGE_DB`.

    Parameters
    ----------
    k, f0_hz
        The harmonic complex, as in :func:`centroid_hz`.

    Returns
    -------
    tuple of (float, float)
        The centroids at the lowest and at the highest tilt, in Hz.
    """
    return centroid_hz(k, f0_hz, TILT_RANGE_DB[0]), centroid_hz(k, f0_hz, TILT_RANGE_DB[1])


def tilt_for_centroid(k: np.ndarray, f0_hz: float, target_hz: float) -> float:
    """The tilt whose harmonic complex has centroid ``target_hz`` (Brent's method, to 1e-12 dB/octave).

    Parameters
    ----------
    k, f0_hz
        The harmonic complex, as in :func:`centroid_hz`.
    target_hz : float
        Wanted spectral centroid, in Hz.

    Returns
    -------
    float
        The tilt, in dB per octave, within :data:`TILT_RANGE_DB`.

    Raises
    ------
    ParameterError
        If ``target_hz`` is outside :func:`centroid_range_hz`.

    Examples
    --------
    >>> k = np.arange(1.0, 41.0)
    >>> t = tilt_for_centroid(k, 100.0, 800.0)
    >>> round(centroid_hz(k, 100.0, t), 6)
    800.0
    """
    c_lo, c_hi = centroid_range_hz(k, f0_hz)
    if not c_lo <= target_hz <= c_hi:
        raise ParameterError(
            f"centroid {target_hz!r} Hz with f0 {f0_hz:g} Hz and {len(k)} harmonics is out of reach; "
            f"allowed: {c_lo:.1f}..{c_hi:.1f} Hz"
        )
    return float(brentq(lambda t: centroid_hz(k, f0_hz, t) - target_hz, *TILT_RANGE_DB, xtol=1e-12, rtol=1e-14))


def tilted_period(sound: dict, sample_rate: int, phases: np.ndarray | None = None) -> np.ndarray:
    """One period of a brightness recipe's tilted harmonic complex, ``a_k sin(k w t + phi_k)``.

    Parameters
    ----------
    sound : dict
        The recipe: ``period_samples`` (samples), ``max_freq_hz`` (Hz), ``tilt_db_per_octave``
        (dB/octave) and ``phase_seed`` (int, used when ``phases`` is None).
    sample_rate : int
        Sampling rate, in Hz.
    phases : ndarray or None, optional
        Harmonic phases, in radians, at least as many as harmonics; None (default) draws the
        recipe's own, uniform in [0, 2 pi) from ``phase_seed``.

    Returns
    -------
    ndarray, shape (period_samples,), float64
        One period of the complex (harmonic 1 has amplitude 1).
    """
    period = int(sound["period_samples"])
    k = harmonic_numbers(period, sample_rate, sound["max_freq_hz"])
    a = tilt_amplitudes(k, sound["tilt_db_per_octave"])
    if phases is None:
        phases = np.random.default_rng(int(sound["phase_seed"])).uniform(0.0, 2.0 * math.pi, len(k))
    spec = np.zeros(period // 2 + 1, dtype=np.complex128)
    spec[1 : len(k) + 1] = a * np.exp(1j * (phases[: len(k)] - math.pi / 2))
    return np.fft.irfft(spec, n=period) * period / 2.0


def render_tilted(sound: dict, sample_rate: int, ramp_s: float) -> np.ndarray:
    """One sound of a brightness recipe: the tilted complex, ramps, at its LUFS.

    Parameters
    ----------
    sound : dict
        The recipe: ``period_samples``, ``max_freq_hz``, ``tilt_db_per_octave``, ``phase_seed``
        (harmonic phases, uniform in [0, 2 pi)), ``duration_s`` (seconds) and ``loudness_lufs`` (LUFS).
    sample_rate : int
        Sampling rate, in Hz.
    ramp_s : float
        Length of each raised-cosine onset and offset ramp, in seconds.

    Returns
    -------
    ndarray, shape (samples,), float64
        The sound, ``round(duration_s * sample_rate)`` samples long.
    """
    x = np.resize(tilted_period(sound, sample_rate), n_samples(sound["duration_s"], sample_rate))
    x = apply_ramps(x, sample_rate=sample_rate, ramp_s=ramp_s)
    return set_loudness_lufs(x, sample_rate, sound["loudness_lufs"])


SHELF_RANGE_DB = (-36.0, 36.0)  # shelf gains a recorded sound's brightness is moved within


def high_shelf(x: np.ndarray, sample_rate: int, corner_hz: float, gain_db: float) -> np.ndarray:
    """``x`` through a second-order high shelf: ``gain_db`` above ``corner_hz``, 0 dB below.

    The shelf is that of R. Bristow-Johnson's Audio EQ Cookbook (slope S = 1), with zero initial state.

    Parameters
    ----------
    x : ndarray, shape (samples,)
        The signal.
    sample_rate : int
        Sampling rate, in Hz.
    corner_hz : float
        Corner (midpoint) frequency of the shelf, in Hz.
    gain_db : float
        Gain above the corner, in dB (0 returns ``x`` unfiltered).

    Returns
    -------
    ndarray, shape (samples,), float64
        The filtered signal.
    """
    from scipy.signal import lfilter

    if gain_db == 0.0:
        return np.asarray(x, dtype=np.float64)
    a = 10.0 ** (gain_db / 40.0)
    w0 = 2.0 * math.pi * corner_hz / sample_rate
    cw, alpha = math.cos(w0), math.sin(w0) / 2.0 * math.sqrt(2.0)
    ra = 2.0 * math.sqrt(a) * alpha
    b = [a * ((a + 1) + (a - 1) * cw + ra), -2 * a * ((a - 1) + (a + 1) * cw), a * ((a + 1) + (a - 1) * cw - ra)]
    den = [(a + 1) - (a - 1) * cw + ra, 2 * ((a - 1) - (a + 1) * cw), (a + 1) - (a - 1) * cw - ra]
    return lfilter(b, den, np.asarray(x, dtype=np.float64))


def render_shelved(piece: np.ndarray, sound: dict, sample_rate: int, ramp_s: float) -> np.ndarray:
    """One recorded sound of a brightness pair: ``piece`` through the recipe's high shelf, ramps, at its LUFS.

    Parameters
    ----------
    piece : ndarray, shape (samples,)
        The recorded excerpt.
    sound : dict
        The recipe: ``shelf_hz`` (Hz), ``shelf_db`` (dB) and ``loudness_lufs`` (LUFS).
    sample_rate, ramp_s
        As in :func:`render_tilted`.

    Returns
    -------
    ndarray, shape (samples,), float64
        The sound, as long as ``piece``.
    """
    x = high_shelf(piece, sample_rate, sound["shelf_hz"], sound["shelf_db"])
    x = apply_ramps(x, sample_rate=sample_rate, ramp_s=ramp_s)
    return set_loudness_lufs(x, sample_rate, sound["loudness_lufs"])
