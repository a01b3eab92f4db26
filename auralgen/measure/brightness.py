"""Brightness: the spectral centroid of a sound, measured from its audio."""

from __future__ import annotations

import numpy as np
from scipy.fft import next_fast_len

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_mono, check_rate

ZERO_PAD = 4  # FFT length / window length: the magnitude sum of a partial then hardly depends on its
# place between bins (no scalloping bias of the centroid)
MIN_CENTROID_FREQ_HZ = 20.0  # bins below this (DC, rumble) are left out of the centroid


def spectral_centroid_hz(x, sample_rate, *, fmin_hz: float = MIN_CENTROID_FREQ_HZ) -> float:
    """Amplitude-weighted mean frequency (Hz) of ``x``'s magnitude spectrum.

    ``x`` is Hann-windowed and transformed whole (zero-padded :data:`ZERO_PAD` times); the centroid is
    ``sum(f |X(f)|) / sum(|X(f)|)`` over bins ``f >= fmin_hz`` (magnitude weighting, as
    librosa's ``spectral_centroid``, here over one long frame). Pass the steady part of one sound.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The sound, at least 16 samples; channels are averaged.
    sample_rate : float
        Sample rate of ``x`` in Hz.
    fmin_hz : float, optional
        Bins below this frequency (Hz) are left out; ``0 <= fmin_hz < sample_rate / 2``.

    Returns
    -------
    float
        The centroid in Hz; ``nan`` for silence.

    Examples
    --------
    >>> sr = 16000; t = np.arange(sr) / sr
    >>> x = np.sin(2 * np.pi * 500 * t) + np.sin(2 * np.pi * 1500 * t)
    >>> round(spectral_centroid_hz(x, sr))
    1000
    """
    sr = check_rate(sample_rate)
    arr = as_mono(x, min_samples=16)
    if not 0 <= fmin_hz < sr / 2:
        raise ParameterError(f"fmin_hz={fmin_hz!r} is out of range; allowed: 0 <= fmin_hz < {sr / 2:g}")
    nfft = next_fast_len(ZERO_PAD * arr.shape[0], real=True)
    mag = np.abs(np.fft.rfft(arr * np.hanning(arr.shape[0]), n=nfft))
    f = np.fft.rfftfreq(nfft, d=1.0 / sr)
    keep = f >= fmin_hz
    total = float(np.sum(mag[keep]))
    return float(np.sum(f[keep] * mag[keep]) / total) if total > 0 else float("nan")
