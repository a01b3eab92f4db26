"""Pitch and frequency measurements: YIN f0, cents, dominant frequency, frequency tracks."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from auralgen.core.errors import ParameterError
from auralgen.measure.common import (
    as_channels,
    as_mono,
    check_positive,
    check_rate,
    parabolic_offset,
)

_YIN_THRESHOLD = 0.1  # absolute threshold on the cumulative mean normalised difference (de Cheveigne & Kawahara 2002)
_VOICED_FLOOR_DB = -30.0  # frames quieter than the loudest frame by more than this are unvoiced


def cents(f_a_hz, f_b_hz) -> float:
    """Interval from ``f_a_hz`` to ``f_b_hz`` in cents, ``1200 log2(f_b / f_a)``.

    Parameters
    ----------
    f_a_hz : float
        The lower reference frequency in Hz; > 0.
    f_b_hz : float
        The other frequency in Hz; > 0.

    Returns
    -------
    float
        The interval in cents (positive when ``f_b_hz`` is higher).

    Examples
    --------
    >>> round(cents(440.0, 880.0), 6)
    1200.0
    """
    a = check_positive("f_a_hz", f_a_hz)
    b = check_positive("f_b_hz", f_b_hz)
    return 1200.0 * math.log2(b / a)


def _yin_frames(x: np.ndarray, tau_min: int, tau_max: int, window: int, hop: int):
    """Per-frame coarse period (samples, nan when unvoiced)."""
    frame_len = window + tau_max
    n_frames = 1 + (len(x) - frame_len) // hop
    frames = np.lib.stride_tricks.sliding_window_view(x, frame_len)[::hop][:n_frames]
    nfft = 1 << int(math.ceil(math.log2(frame_len)))
    a = np.fft.rfft(frames[:, :window], nfft)
    b = np.fft.rfft(frames, nfft)
    r = np.fft.irfft(np.conj(a) * b, nfft)[:, : tau_max + 1]
    return _yin_periods(
        np.ascontiguousarray(frames), r, tau_min, tau_max, window, 10 ** (_VOICED_FLOOR_DB / 10), _YIN_THRESHOLD
    )


@njit(cache=True, inline="always")
def _vertex(y_m1, y_0, y_p1):  # pragma: no cover - compiled
    """:func:`~auralgen.measure.common.parabolic_offset` for the kernels below (same arithmetic; a nan
    stays nan, as under ``np.clip``)."""
    den = y_m1 - 2.0 * y_0 + y_p1
    if den == 0:
        return 0.0
    off = 0.5 * (y_m1 - y_p1) / den
    return -0.5 if off < -0.5 else (0.5 if off > 0.5 else off)


@njit(cache=True, error_model="numpy")  # 0 / 0 is nan, as in numpy
def _yin_periods(frames, r, tau_min, tau_max, window, floor, threshold):  # pragma: no cover - compiled
    """YIN after the autocorrelation ``r``: the difference function ``d``, its cumulative mean
    normalised form, the first dip under ``threshold`` in each frame within ``floor`` of the loudest
    frame's energy, refined by a parabola through ``d`` -- element by element the arithmetic of the
    numpy version it replaced (cumulative sums in order), so the periods are the same numbers."""
    n_frames, frame_len = frames.shape
    d = np.empty((n_frames, tau_max + 1))
    cmndf = np.empty((n_frames, tau_max + 1))
    energy = np.empty(n_frames)
    sq = np.empty(frame_len + 1)
    for f in range(n_frames):
        sq[0] = 0.0
        for i in range(frame_len):
            sq[i + 1] = sq[i] + frames[f, i] * frames[f, i]
        e0 = sq[window] - sq[0]
        energy[f] = e0
        for t in range(tau_max + 1):
            v = e0 + (sq[window + t] - sq[t]) - 2.0 * r[f, t]
            d[f, t] = v if v > 0.0 else 0.0
        cmndf[f, 0] = 1.0
        run = 0.0
        for t in range(1, tau_max + 1):
            run += d[f, t]
            cmndf[f, t] = d[f, t] * t / run
    periods = np.full(n_frames, np.nan)
    top = energy.max()
    lo, hi = max(tau_min, 1), tau_max - 1
    for f in range(n_frames):
        if not (top > 0 and energy[f] > top * floor):
            continue
        for t in range(lo, hi + 1):
            cm1, c0, cp1 = cmndf[f, t - 1], cmndf[f, t], cmndf[f, t + 1]
            if not (c0 <= cm1 and c0 <= cp1):
                continue
            curv = cm1 - 2.0 * c0 + cp1
            depth = c0 - (cm1 - cp1) ** 2 / (8.0 * curv) if curv > 0 else c0
            if depth < threshold:
                periods[f] = t + _vertex(d[f, t - 1], d[f, t], d[f, t + 1])
                break
    return periods


def _refine_period(y: np.ndarray, period: float, max_lag: int) -> float:
    """Refine ``period`` with the difference function at growing multiples of it."""
    return float(_refine_period_kernel(np.ascontiguousarray(y, dtype=np.float64), float(period), int(max_lag)))


@njit(cache=True)
def _refine_period_kernel(y, period, max_lag):  # pragma: no cover - compiled
    """:func:`_refine_period`'s loop: at multiples ``m = 2, 4, 8, ...`` of the period, the difference
    function at the five lags around ``m * period`` (summed in order) and a parabolic vertex."""
    m = 2
    d = np.empty(5)
    while m * period + 3 <= max_lag:
        centre = int(math.floor(m * period + 0.5))
        length = y.size - (centre + 2)
        for j in range(5):
            lag = centre - 2 + j
            acc = 0.0
            for i in range(length):
                e = y[i] - y[lag + i]
                acc += e * e
            d[j] = acc
        k = 1
        for j in (2, 3):
            if d[j] < d[k]:
                k = j
        if d[k] > 0 and (d[k] > d[k - 1] or d[k] > d[k + 1]):
            break
        period = (centre - 2 + k + _vertex(d[k - 1], d[k], d[k + 1])) / m
        m *= 2
    return period


def f0_hz(x, sample_rate, *, fmin_hz: float = 50.0, fmax_hz: float | None = None) -> float:
    """Fundamental frequency (Hz) over the voiced region, by YIN.

    Frames are analysed with the cumulative mean normalised difference function (absolute
    threshold 0.1, parabolic interpolation of the raw difference); the longest run of
    voiced frames is the voiced region. Its median period is then refined with the
    difference function at growing multiples of the period, which brings the error on
    stationary tones and harmonic complexes well below one cent.

    Parameters
    ----------
    x : np.ndarray [shape=(n,) or (channels, n)]
        Signal; channels are averaged.
    sample_rate : float > 0
        Sample rate of ``x`` in Hz.
    fmin_hz, fmax_hz : float
        Search range in Hz; ``fmax_hz`` defaults to ``sample_rate / 4``.

    Returns
    -------
    float
        f0 in Hz, or ``nan`` when no frame is voiced.

    Examples
    --------
    >>> sr = 16000; t = np.arange(sr) / sr
    >>> round(f0_hz(np.sin(2 * np.pi * 220.0 * t), sr), 2)
    220.0
    """
    sr = check_rate(sample_rate)
    fmin = check_positive("fmin_hz", fmin_hz)
    fmax = sr / 4.0 if fmax_hz is None else check_positive("fmax_hz", fmax_hz)
    if not fmin < fmax <= sr / 2:
        raise ParameterError(
            f"(fmin_hz, fmax_hz)=({fmin_hz!r}, {fmax_hz!r}) invalid; allowed: fmin < fmax <= {sr / 2:g}"
        )
    tau_min = max(2, int(math.floor(sr / fmax)) - 1)
    tau_max = int(math.ceil(sr / fmin)) + 1
    window = tau_max
    y = as_mono(x, min_samples=window + tau_max)
    hop = max(window // 2, 1)
    periods = _yin_frames(y, tau_min, tau_max, window, hop)
    voiced = ~np.isnan(periods)
    if not voiced.any():
        return math.nan
    # longest run of consecutive voiced frames
    edges = np.diff(np.concatenate([[0], voiced.astype(int), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    j = int(np.argmax(stops - starts))
    run = periods[starts[j] : stops[j]]
    segment = y[starts[j] * hop : (stops[j] - 1) * hop + window + tau_max]
    period = _refine_period(segment, float(np.median(run)), max_lag=len(segment) // 2)
    return float(sr / period)


def _peak_freq(power: np.ndarray, k_lo: int, k_hi: int, bin_hz: float) -> float:
    """Sub-bin peak frequency of ``power`` (last axis) within bins ``[k_lo, k_hi]``."""
    band = power[k_lo : k_hi + 1]
    if not np.any(band > 0):
        return math.nan
    k = k_lo + int(np.argmax(band))
    offset = 0.0
    if 0 < k < len(power) - 1 and power[k - 1] > 0 and power[k + 1] > 0:
        offset = parabolic_offset(*np.log(power[k - 1 : k + 2]))
    return (k + offset) * bin_hz


def _band_bins(fmin_hz, fmax_hz, sr: float, nfft: int) -> tuple[int, int]:
    fmin = 0.0 if fmin_hz is None else float(fmin_hz)
    fmax = sr / 2 if fmax_hz is None else float(fmax_hz)
    if not (math.isfinite(fmin) and math.isfinite(fmax) and 0 <= fmin < fmax <= sr / 2):
        raise ParameterError(
            f"(fmin_hz, fmax_hz)=({fmin_hz!r}, {fmax_hz!r}) invalid; allowed: 0 <= fmin < fmax <= {sr / 2:g}"
        )
    return int(math.ceil(fmin * nfft / sr)), int(math.floor(fmax * nfft / sr))


def dominant_freq_hz(x, sample_rate, *, fmin_hz: float = 20.0, fmax_hz: float | None = None) -> float:
    """Frequency (Hz) of the strongest spectral peak in ``[fmin_hz, fmax_hz]``, sub-bin precise.

    Hann window, 4x zero-padded FFT, parabolic interpolation of the log power spectrum;
    channels' power spectra are summed. Relative error on a 1 s tone is ~1e-5.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal, at least 4 samples.
    sample_rate : float
        Sample rate of ``x`` in Hz.
    fmin_hz : float, optional
        Lower edge of the search band in Hz.
    fmax_hz : float or None, optional
        Upper edge in Hz; ``None`` for ``sample_rate / 2``.

    Returns
    -------
    float
        The peak frequency in Hz; ``nan`` when the band holds no power.

    Examples
    --------
    >>> sr = 8000; t = np.arange(sr) / sr
    >>> round(dominant_freq_hz(np.sin(2 * np.pi * 1234.5 * t), sr), 1)
    1234.5
    """
    sr = check_rate(sample_rate)
    xc = as_channels(x, min_samples=4)
    n = xc.shape[1]
    nfft = 1 << int(math.ceil(math.log2(4 * n)))
    k_lo, k_hi = _band_bins(fmin_hz, fmax_hz, sr, nfft)
    power = np.sum(np.abs(np.fft.rfft(xc * np.hanning(n + 2)[1:-1], nfft)) ** 2, axis=0)
    return _peak_freq(power, k_lo, k_hi, sr / nfft)


@dataclass(frozen=True)
class FreqTrack:
    """Dominant frequency per frame: ``times_s`` (frame centres) and ``freqs_hz`` (nan when silent)."""

    times_s: tuple[float, ...]
    freqs_hz: tuple[float, ...]


def freq_track(
    x,
    sample_rate,
    *,
    frame_s: float = 0.05,
    hop_s: float | None = None,
    fmin_hz: float = 20.0,
    fmax_hz: float | None = None,
    floor_db: float = -40.0,
) -> FreqTrack:
    """Instantaneous frequency over time (STFT peak with sub-bin interpolation).

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal, at least one frame long; channels' power spectra are summed.
    sample_rate : float
        Sample rate of ``x`` in Hz.
    frame_s : float > 0
        Analysis frame length (s); the frequency precision grows with it, the time resolution shrinks.
    hop_s : float > 0, optional
        Frame step (s); default ``frame_s / 2``.
    fmin_hz, fmax_hz : float, optional
        Search band in Hz; ``fmax_hz=None`` for ``sample_rate / 2``.
    floor_db : float
        Frames whose energy is more than this (dB) below the loudest frame get ``nan``.

    Returns
    -------
    FreqTrack
        Frame centres (seconds) and the peak frequency of each frame (Hz).

    Examples
    --------
    >>> sr = 8000; t = np.arange(sr) / sr
    >>> tr = freq_track(np.sin(2 * np.pi * 500.0 * t), sr, frame_s=0.1)
    >>> round(tr.freqs_hz[3])
    500
    """
    sr = check_rate(sample_rate)
    frame = int(round(check_positive("frame_s", frame_s) * sr))
    hop = int(round((frame_s / 2 if hop_s is None else check_positive("hop_s", hop_s)) * sr))
    if frame < 4 or hop < 1:
        raise ParameterError(f"frame_s={frame_s!r} / hop_s={hop_s!r} too short at {sr:g} Hz")
    xc = as_channels(x, min_samples=frame)
    n_frames = 1 + (xc.shape[1] - frame) // hop
    idx = np.arange(n_frames)[:, None] * hop + np.arange(frame)[None, :]
    frames = xc[:, idx] * np.hanning(frame + 2)[1:-1]  # [channels, frames, frame]
    nfft = 1 << int(math.ceil(math.log2(4 * frame)))
    k_lo, k_hi = _band_bins(fmin_hz, fmax_hz, sr, nfft)
    power = np.sum(np.abs(np.fft.rfft(frames, nfft, axis=-1)) ** 2, axis=0)
    energy = np.sum(frames**2, axis=(0, 2))
    floor = energy.max() * 10 ** (float(floor_db) / 10)
    freqs = [
        _peak_freq(power[i], k_lo, k_hi, sr / nfft) if energy[i] > floor and energy[i] > 0 else math.nan
        for i in range(n_frames)
    ]
    times = (np.arange(n_frames) * hop + frame / 2) / sr
    return FreqTrack(tuple(float(t) for t in times), tuple(float(f) for f in freqs))


SHIFT_BINS_PER_OCTAVE = 240  # 5-cent resolution of spectral_shift_cents
SHIFT_FLOOR = 1e-3  # log-spectra floored 60 dB below their peak (silence carries no shift)


def spectral_shift_cents(reference, x, sample_rate, *, max_cents: float = 1200.0, fmin_hz: float = 60.0) -> float:
    """How far (cents) ``x``'s spectrum sits above ``reference``'s (:func:`spectral_shift`).

    Parameters
    ----------
    reference, x, sample_rate, max_cents, fmin_hz
        As in :func:`spectral_shift`.

    Returns
    -------
    float
        The shift in cents: the first value :func:`spectral_shift` returns.
    """
    return spectral_shift(reference, x, sample_rate, max_cents=max_cents, fmin_hz=fmin_hz)[0]


def spectral_shift(
    reference, x, sample_rate, *, max_cents: float = 1200.0, fmin_hz: float = 60.0
) -> tuple[float, float]:
    """How far (cents) ``x``'s spectrum sits above ``reference``'s, and how well the shifted spectra match.

    The shift is the lag of the largest cross-correlation of their log-frequency, log-magnitude
    spectra, searched within ``+-max_cents``. Works for any sound a pitch shifter moved (a drum as
    well as a note), where an f0 tracker needs a pitch; 5-cent resolution.

    Parameters
    ----------
    reference : array_like, shape (samples,) or (channels, samples)
        The unshifted sound, at least 64 samples; channels are averaged.
    x : array_like, shape (samples,) or (channels, samples)
        The shifted sound, at least 64 samples; channels are averaged.
    sample_rate : float
        Sample rate of both in Hz.
    max_cents : float, optional
        The search range, +- cents.
    fmin_hz : float, optional
        Lowest frequency (Hz) of the compared spectra; the highest is ``0.45 * sample_rate``.

    Returns
    -------
    cents : float
        The shift in cents, a multiple of 5 (positive: ``x`` is higher).
    match : float
        Correlation coefficient of the two log-spectra at that shift (1: one is the other, shifted).
    """
    from auralgen.measure.common import as_mono, check_rate

    sr = check_rate(sample_rate)
    a, b = as_mono(reference, "reference", min_samples=64), as_mono(x, "x", min_samples=64)
    n_fft = max(1 << 16, 1 << (max(a.size, b.size) - 1).bit_length())  # every sample of a longer clip analysed
    grid = np.arange(np.log2(fmin_hz), np.log2(0.45 * sr), 1.0 / SHIFT_BINS_PER_OCTAVE)
    logs = []
    for s in (a, b):
        mag = np.abs(np.fft.rfft(s * np.hanning(len(s)), n=n_fft))
        f = np.fft.rfftfreq(n_fft, 1.0 / sr)
        v = np.interp(grid, np.log2(f[1:]), mag[1:])
        v = np.log(np.maximum(v, max(float(v.max()), 1e-30) * SHIFT_FLOOR))
        logs.append(v - v.mean())
    xc = np.correlate(logs[1], logs[0], "full")
    mid, w = len(grid) - 1, int(round(max_cents / 1200.0 * SHIFT_BINS_PER_OCTAVE))
    lag = int(np.argmax(xc[mid - w : mid + w + 1])) - w
    norm = float(np.sqrt(np.sum(logs[0] ** 2) * np.sum(logs[1] ** 2))) or 1.0
    return lag * 1200.0 / SHIFT_BINS_PER_OCTAVE, float(xc[mid + lag]) / norm
