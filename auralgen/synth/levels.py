"""The one calibration convention of auralgen: digital level <-> dB SPL <-> dB HL, and LUFS.

Digital full scale to dB SPL
----------------------------
A signal whose RMS is 1.0 (digital full scale, float samples in [-1, 1]) is defined to
play at ``DEFAULT_FULL_SCALE_DB_SPL = 136.0`` dB SPL::

    level_db_spl = full_scale_db_spl + 20 * log10(rms)

So a full-scale sine (peak 1.0, RMS 1/sqrt(2)) is ``136 - 3.01 = 132.99`` dB SPL, and a
sine at ``L`` dB SPL has peak ``sqrt(2) * 10 ** ((L - 136) / 20)``
(:func:`peak_for_db_spl_sine`).

Why 136: the loudest cell of the default audiogram grid is 125 Hz at 110 dB HL, i.e.
``110 + 22.1 = 132.1`` dB SPL (ISO 389-7 threshold at 125 Hz is 22.1 dB SPL). Its sine
peak is ``sqrt(2) * 10 ** ((132.1 - 136) / 20) = 0.90``, below 1.0, so it does not clip;
with 135 it would be 1.01 and clip. 136 is the smallest integer with headroom.
Every task passes levels through this module; none hard-codes its own reference.

Presentation level
------------------
136 dB SPL is the *calibrated* full scale, kept by the tasks whose attribute is absolute level (the
audiogram: ``Task.calibrated_level``); a listener must set the playback so that digital RMS 1.0 plays at
that level. Every other task is *presented*: it renders with full scale
``PRESENTATION_FULL_SCALE_DB_SPL = 100`` dB SPL (``Task.presentation_full_scale_db_spl``; loudness_relative
116, for the headroom of its 73 dB range), so its 50-75 dB SPL sounds sit at -50 to -25 dBFS RMS (about
-45 to -27 LUFS, the range of the tasks whose loudness is given in LUFS), well above the floor of a 16-bit
pipeline and below clipping; it is played at any comfortable level. The recipe keeps its dB SPL values and
the full scale it was rendered at (``params["full_scale_db_spl"]``), so its physical level is still stated.
With the calibrated full scale for every task, 18 tasks would sit at -70 to -85 dBFS RMS.

dB HL via ISO 389-7
-------------------
Hearing level is sound pressure level minus the reference threshold of hearing of
ISO 389-7:2005 (*Acoustics — Reference zero for the calibration of audiometric
equipment — Part 7: Reference threshold of hearing under free-field and diffuse-field
listening conditions*), Table 1, **free field, frontal incidence, binaural listening**,
pure tones, SPL measured at the head centre position with the listener absent;
18 kHz from Amendment 1:2016. :data:`ISO389_7_FREE_FIELD_DB_SPL` holds the one-third-octave
frequencies 20 Hz .. 16 kHz (ISO 266) plus the intermediate audiometric frequencies
14 kHz and 18 kHz; between table frequencies the threshold is interpolated linearly
in log-frequency (:func:`reference_threshold_db_spl`).

Loudness
--------
:func:`loudness_lufs` is ITU-R BS.1770 integrated loudness (K-weighting, 400 ms gating
blocks) via pyloudnorm, on digital full scale. BS.1770 specifies -3.01 LUFS for a 997 Hz
full-scale sine; pyloudnorm's own K-weighting filter design reads -3.05 LUFS (0.04 dB off).
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.constants import DEFAULT_FULL_SCALE_DB_SPL  # dB SPL of a digital signal with RMS 1.0
from auralgen.core.errors import ParameterError
from auralgen.synth._checks import check_finite, check_sample_rate

ISO389_7_FREE_FIELD_DB_SPL: dict[float, float] = {
    20.0: 78.5,
    25.0: 68.7,
    31.5: 59.5,
    40.0: 51.1,
    50.0: 44.0,
    63.0: 37.5,
    80.0: 31.5,
    100.0: 26.5,
    125.0: 22.1,
    160.0: 17.9,
    200.0: 14.4,
    250.0: 11.4,
    315.0: 8.6,
    400.0: 6.2,
    500.0: 4.4,
    630.0: 3.0,
    800.0: 2.2,
    1000.0: 2.4,
    1250.0: 3.5,
    1600.0: 1.7,
    2000.0: -1.3,
    2500.0: -4.2,
    3150.0: -6.0,
    4000.0: -5.4,
    5000.0: -1.5,
    6300.0: 6.0,
    8000.0: 12.6,
    10000.0: 13.9,
    12500.0: 12.3,
    14000.0: 18.4,
    16000.0: 40.2,
    18000.0: 73.2,
}
"""ISO 389-7:2005 (+Amd 1:2016) reference threshold of hearing, free field, frontal
incidence, binaural listening: frequency (Hz) -> threshold (dB SPL)."""

_THRESHOLD_FREQS_HZ = np.array(sorted(ISO389_7_FREE_FIELD_DB_SPL))
_THRESHOLD_LOG_FREQS = np.log(_THRESHOLD_FREQS_HZ)
_THRESHOLD_DB_SPL = np.array([ISO389_7_FREE_FIELD_DB_SPL[f] for f in _THRESHOLD_FREQS_HZ])
THRESHOLD_RANGE_HZ = (float(_THRESHOLD_FREQS_HZ[0]), float(_THRESHOLD_FREQS_HZ[-1]))

MIN_LOUDNESS_DURATION_S = 0.4
"""BS.1770 gating block length: pyloudnorm needs at least this much audio."""

MAX_LOUDNESS_CHANNELS = 5


def _check_full_scale(full_scale_db_spl) -> float:
    return check_finite("full_scale_db_spl", full_scale_db_spl)


def _as_levels(key: str, value):
    """A finite level (float) or array of levels."""
    if np.ndim(value) == 0:
        return check_finite(key, value)
    arr = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{key}={value!r} has non-finite values; allowed: finite levels in dB")
    return arr


def rms(x) -> float:
    """Root-mean-square of all samples of ``x`` (any shape, digital units).

    Parameters
    ----------
    x : array_like, any shape
        Samples (digital full scale).

    Returns
    -------
    float
        RMS in digital units.

    Examples
    --------
    >>> rms([1.0, -1.0, 1.0, -1.0])
    1.0
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0:
        raise ParameterError("x has 0 samples; allowed: a non-empty array")
    return float(np.sqrt(np.mean(np.square(arr))))


def rms_to_db_spl(rms_value: float, *, full_scale_db_spl: float = DEFAULT_FULL_SCALE_DB_SPL) -> float:
    """dB SPL of a digital RMS: ``full_scale_db_spl + 20 log10(rms_value)`` (``-inf`` for 0).

    Parameters
    ----------
    rms_value : float >= 0
        RMS in digital units.
    full_scale_db_spl : float
        dB SPL of digital RMS 1.0: the calibration (see the module docstring).

    Returns
    -------
    float
        Level in dB SPL; ``-inf`` for an RMS of 0.

    Examples
    --------
    >>> rms_to_db_spl(1.0)
    136.0
    """
    rms_value = check_finite("rms_value", rms_value)
    if rms_value < 0:
        raise ParameterError(f"rms_value={rms_value!r} is negative; allowed: rms_value >= 0")
    full_scale_db_spl = _check_full_scale(full_scale_db_spl)
    if rms_value == 0:
        return -math.inf
    return full_scale_db_spl + 20.0 * math.log10(rms_value)


def db_spl_to_rms(level_db_spl: float, *, full_scale_db_spl: float = DEFAULT_FULL_SCALE_DB_SPL) -> float:
    """Digital RMS of a signal at ``level_db_spl``: ``10 ** ((level - full_scale) / 20)``.

    Parameters
    ----------
    level_db_spl : float
        Level in dB SPL.
    full_scale_db_spl : float
        The calibration, as in :func:`rms_to_db_spl`.

    Returns
    -------
    float
        The RMS, in digital units, that plays at ``level_db_spl``.

    Examples
    --------
    >>> db_spl_to_rms(116.0)
    0.1
    """
    level_db_spl = check_finite("level_db_spl", level_db_spl)
    full_scale_db_spl = _check_full_scale(full_scale_db_spl)
    return 10.0 ** ((level_db_spl - full_scale_db_spl) / 20.0)


def set_level_db_spl(x, level_db_spl: float, *, full_scale_db_spl: float = DEFAULT_FULL_SCALE_DB_SPL) -> np.ndarray:
    """Return ``x`` scaled so that its RMS (over all samples) plays at ``level_db_spl``.

    Parameters
    ----------
    x : np.ndarray [shape=(n,) or (channels, n)]
        Signal with non-zero RMS (not modified).
    level_db_spl : float
        Target level in dB SPL.
    full_scale_db_spl : float
        The calibration, as in :func:`rms_to_db_spl`.

    Returns
    -------
    np.ndarray, same shape as ``x``, float64
        A scaled copy of ``x`` whose RMS is ``level_db_spl`` dB SPL.

    Raises
    ------
    ParameterError
        If ``x`` is empty or its RMS is zero or not finite.

    Examples
    --------
    >>> y = set_level_db_spl(np.ones(8), 116.0)
    >>> round(rms(y), 12)
    0.1
    """
    arr = np.asarray(x, dtype=np.float64)
    current = rms(arr)
    if current == 0 or not math.isfinite(current):
        raise ParameterError(f"x has RMS {current!r}; allowed: a finite, non-zero RMS to scale")
    return arr * (db_spl_to_rms(level_db_spl, full_scale_db_spl=full_scale_db_spl) / current)


def peak_for_db_spl_sine(level_db_spl: float, *, full_scale_db_spl: float = DEFAULT_FULL_SCALE_DB_SPL) -> float:
    """Peak amplitude of a sine at ``level_db_spl`` (> 1.0 means it would clip).

    Parameters
    ----------
    level_db_spl : float
        Level of the sine in dB SPL.
    full_scale_db_spl : float
        The calibration, as in :func:`rms_to_db_spl`.

    Returns
    -------
    float
        Peak amplitude in digital units.

    Examples
    --------
    >>> round(peak_for_db_spl_sine(136.0 - 20 * math.log10(math.sqrt(2))), 12)
    1.0
    """
    return math.sqrt(2.0) * db_spl_to_rms(level_db_spl, full_scale_db_spl=full_scale_db_spl)


def reference_threshold_db_spl(freq_hz):
    """ISO 389-7 free-field reference threshold (dB SPL) at ``freq_hz``.

    Linear interpolation in log-frequency between the table frequencies of
    :data:`ISO389_7_FREE_FIELD_DB_SPL`.

    Parameters
    ----------
    freq_hz : float or array-like, 20 <= freq_hz <= 18000
        Frequency in Hz.

    Returns
    -------
    float, or np.ndarray of the shape of ``freq_hz``
        Threshold in dB SPL (a float for a scalar ``freq_hz``).

    Raises
    ------
    ParameterError
        If a frequency is not finite or lies outside :data:`THRESHOLD_RANGE_HZ`.

    Examples
    --------
    >>> reference_threshold_db_spl(1000.0)
    2.4
    """
    f = np.asarray(freq_hz, dtype=np.float64)
    low, high = THRESHOLD_RANGE_HZ
    if not np.all(np.isfinite(f)) or np.any(f < low) or np.any(f > high):
        raise ParameterError(
            f"freq_hz={freq_hz!r} is out of range; allowed: {low:g} <= freq_hz <= {high:g} Hz (ISO 389-7 table)"
        )
    out = np.interp(np.log(f), _THRESHOLD_LOG_FREQS, _THRESHOLD_DB_SPL)
    return float(out) if out.ndim == 0 else out


def db_hl_to_db_spl(level_db_hl, freq_hz):
    """dB SPL of a tone at ``level_db_hl`` dB HL: level plus the ISO 389-7 threshold.

    Parameters
    ----------
    level_db_hl : float or array_like
        Hearing level (dB HL).
    freq_hz : float or array_like, 20 <= freq_hz <= 18000
        Tone frequency (Hz), broadcast against ``level_db_hl``.

    Returns
    -------
    float or np.ndarray
        Level in dB SPL.

    Examples
    --------
    >>> round(db_hl_to_db_spl(110.0, 125.0), 6)
    132.1
    """
    return _as_levels("level_db_hl", level_db_hl) + reference_threshold_db_spl(freq_hz)


def db_spl_to_db_hl(level_db_spl, freq_hz):
    """dB HL of a tone at ``level_db_spl`` dB SPL: level minus the ISO 389-7 threshold.

    Parameters
    ----------
    level_db_spl : float or array_like
        Sound pressure level (dB SPL).
    freq_hz : float or array_like, 20 <= freq_hz <= 18000
        Tone frequency (Hz), broadcast against ``level_db_spl``.

    Returns
    -------
    float or np.ndarray
        Hearing level in dB HL.

    Examples
    --------
    >>> round(db_spl_to_db_hl(2.4, 1000.0), 6)
    0.0
    """
    return _as_levels("level_db_spl", level_db_spl) - reference_threshold_db_spl(freq_hz)


def _loudness_input(x, sample_rate) -> tuple[np.ndarray, int]:
    sample_rate = check_sample_rate(sample_rate)
    if np.iscomplexobj(x):
        raise ParameterError("x is complex; allowed: real float samples")
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise ParameterError(f"x has shape {arr.shape}; allowed: [n] or [channels, n]")
    if arr.ndim == 2 and not 1 <= arr.shape[0] <= MAX_LOUDNESS_CHANNELS:
        raise ParameterError(
            f"x has {arr.shape[0]} channels (shape {arr.shape}); allowed: 1..{MAX_LOUDNESS_CHANNELS} "
            "channels as [channels, n] (BS.1770 / pyloudnorm)"
        )
    n = arr.shape[-1]
    if n < MIN_LOUDNESS_DURATION_S * sample_rate:
        raise ParameterError(
            f"x is {n / sample_rate:g} s long ({n} samples at {sample_rate} Hz); "
            f"allowed: >= {MIN_LOUDNESS_DURATION_S} s (one BS.1770 gating block)"
        )
    if not np.all(np.isfinite(arr)):
        raise ParameterError("x has non-finite samples; allowed: finite samples")
    return arr, sample_rate


def loudness_lufs(x, sample_rate: int) -> float:
    """Integrated loudness (LUFS, ITU-R BS.1770, via pyloudnorm) of ``x``.

    Parameters
    ----------
    x : np.ndarray [shape=(n,) or (channels, n)]
        Digital signal, at least 0.4 s, 1..5 channels (BS.1770 channel weights:
        1, 1, 1, 1.41, 1.41).
    sample_rate : int > 0
        Sampling rate in Hz.

    Returns
    -------
    float
        Loudness in LUFS; ``-inf`` when every block is gated out (e.g. silence).

    Examples
    --------
    >>> from auralgen.synth.signals import tone
    >>> round(loudness_lufs(tone(997.0, 1.0, sample_rate=48000), 48000), 2)
    -3.05
    """
    import pyloudnorm

    arr, sample_rate = _loudness_input(x, sample_rate)
    meter = pyloudnorm.Meter(sample_rate, block_size=MIN_LOUDNESS_DURATION_S)
    return float(meter.integrated_loudness(arr.T if arr.ndim == 2 else arr))


def set_loudness_lufs(x, sample_rate: int, target_lufs: float) -> np.ndarray:
    """Return ``x`` scaled so that :func:`loudness_lufs` reads ``target_lufs``.

    Parameters
    ----------
    x : np.ndarray [shape=(n,) or (channels, n)]
        Signal (not modified), at least 0.4 s and not silent.
    sample_rate : int > 0
        Sampling rate in Hz.
    target_lufs : float
        Target integrated loudness in LUFS.

    Returns
    -------
    np.ndarray, same shape as ``x``, float64
        A scaled copy of ``x`` whose integrated loudness is ``target_lufs`` LUFS.

    Raises
    ------
    ParameterError
        If ``x`` is too short, has the wrong shape or is silent after gating.

    Examples
    --------
    >>> from auralgen.synth.signals import tone
    >>> y = set_loudness_lufs(tone(997.0, 1.0, sample_rate=48000), 48000, -23.0)
    >>> round(loudness_lufs(y, 48000), 6)
    -23.0
    """
    target_lufs = check_finite("target_lufs", target_lufs)
    current = loudness_lufs(x, sample_rate)
    if not math.isfinite(current):
        raise ParameterError(f"x has loudness {current!r} LUFS (silent after gating); allowed: an audible signal")
    return np.asarray(x, dtype=np.float64) * 10.0 ** ((target_lufs - current) / 20.0)


__all__ = [
    "DEFAULT_FULL_SCALE_DB_SPL",
    "ISO389_7_FREE_FIELD_DB_SPL",
    "db_hl_to_db_spl",
    "db_spl_to_db_hl",
    "db_spl_to_rms",
    "loudness_lufs",
    "peak_for_db_spl_sine",
    "reference_threshold_db_spl",
    "rms",
    "rms_to_db_spl",
    "set_level_db_spl",
    "set_loudness_lufs",
]
