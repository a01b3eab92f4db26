"""Level, loudness, activity segments and narrowband tone presence."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from auralgen.core.errors import ParameterError
from auralgen.measure.common import (
    as_channels,
    as_signal,
    check_positive,
    check_rate,
    db_power,
)
from auralgen.synth.levels import loudness_lufs  # noqa: F401  (one BS.1770 implementation, re-exported)

_REFINE_DROP_DB = 20.0  # edges are placed where the one-sided envelope falls this far below the detection threshold
_FLOOR_MARGIN_DB = 10.0  # ... but at least this far above the clip's noise floor


def level_db_rms(x) -> float:
    """Level in dBFS of the RMS over all samples (and channels); ``-inf`` for silence.

    Convention: RMS 1.0 is 0 dBFS, so a full-scale sine reads -3.01 dBFS.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal, full scale 1.0.

    Returns
    -------
    float
        The level in dB FS (RMS convention); ``-inf`` for silence.

    Examples
    --------
    >>> round(level_db_rms(np.full(100, 0.1)), 6)
    -20.0
    """
    arr = as_signal(x)
    return db_power(float(np.mean(arr**2)))


def level_db_spl(x, *, full_scale_db_spl: float) -> float:
    """Level in dB SPL, with the convention RMS 1.0 = ``full_scale_db_spl`` dB SPL.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal, full scale 1.0.
    full_scale_db_spl : float
        The calibration: dB SPL of a signal with RMS 1.0.

    Returns
    -------
    float
        The level in dB SPL; ``-inf`` for silence.

    Raises
    ------
    ParameterError
        If ``full_scale_db_spl`` is not finite.

    Examples
    --------
    >>> round(level_db_spl(np.full(100, 0.1), full_scale_db_spl=100.0), 6)
    80.0
    """
    fs = float(full_scale_db_spl)
    if not math.isfinite(fs):
        raise ParameterError(f"full_scale_db_spl={full_scale_db_spl!r} must be finite")
    return level_db_rms(x) + fs


@dataclass(frozen=True)
class Segment:
    """A stretch of active sound, ``onset_s`` to ``offset_s``; ``duration_s`` is derived."""

    onset_s: float
    offset_s: float
    duration_s: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "duration_s", self.offset_s - self.onset_s)


def segments(
    x,
    sample_rate,
    *,
    threshold_db: float = -30.0,
    min_gap_s: float = 0.05,
    frame_s: float = 0.005,
) -> list[Segment]:
    """Active-sound segments from the short-time energy envelope.

    The energy (summed over channels) is smoothed over ``frame_s``; samples within ``threshold_db``
    of the envelope's peak are active, and gaps shorter than ``min_gap_s`` are bridged. Each edge is
    then placed where a one-sided ``frame_s`` mean (trailing for onsets, leading for offsets) crosses
    a level 20 dB lower (but 10 dB above the clip's noise floor): abrupt edges land within a few
    samples, 10 ms raised-cosine ramps within ~1 ms of the ramp's start / end.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal.
    sample_rate : float
        Sample rate of ``x`` in Hz.
    threshold_db : float, optional
        Activity threshold in dB relative to the envelope's peak; < 0.
    min_gap_s : float, optional
        Gaps shorter than this (seconds) are bridged; >= 0.
    frame_s : float, optional
        Smoothing and edge-refinement window in seconds; > 0.

    Returns
    -------
    list of Segment
        Onset and offset (seconds) of each segment, in time order; empty for silence.

    Examples
    --------
    >>> sr = 8000; x = np.zeros(sr); x[2000:6000] = 0.5
    >>> [round(s.onset_s, 3) for s in segments(x, sr)]
    [0.25]
    """
    sr = check_rate(sample_rate)
    xc = as_channels(x)
    thr = float(threshold_db)
    if not (math.isfinite(thr) and thr < 0):
        raise ParameterError(f"threshold_db={threshold_db!r} is out of range; allowed: < 0")
    if not (isinstance(min_gap_s, (int, float)) and math.isfinite(min_gap_s) and min_gap_s >= 0):
        raise ParameterError(f"min_gap_s={min_gap_s!r} is out of range; allowed: finite and >= 0")
    gap = int(round(min_gap_s * sr))
    frame = int(round(check_positive("frame_s", frame_s) * sr))
    csum, coarse = _envelope(np.ascontiguousarray(xc, dtype=np.float64), max(frame, 1))
    peak = coarse.max()
    if peak <= 0:
        return []
    level = peak * 10 ** (thr / 10)
    starts, stops = _runs_above(coarse, level)
    if starts.size == 0:
        return []
    keep = np.concatenate([[True], starts[1:] - stops[:-1] >= gap])
    starts, stops = starts[keep], stops[np.append(keep[1:], True)]
    return _refined(csum, coarse, starts, stops, level, frame, sr)


@njit(cache=True)
def _runs_above(x, level):  # pragma: no cover - compiled
    """Start (inclusive) and stop (exclusive) indices of the runs where ``x >= level``, in one pass."""
    starts, stops = [], []
    inside = False
    for i in range(x.size):
        if (x[i] >= level) != inside:
            (stops if inside else starts).append(i)
            inside = not inside
    if inside:
        stops.append(x.size)
    return np.array(starts, dtype=np.int64), np.array(stops, dtype=np.int64)


@njit(cache=True)
def _envelope(xc, width):  # pragma: no cover - compiled
    """``(csum, coarse)`` of the power summed over channels, in one pass over the samples:
    ``csum[j]`` is the sum of the first ``j`` power values (in order, as ``np.cumsum``) and
    ``coarse`` the centred moving average of :func:`~auralgen.measure.common.moving_average`, bit for
    bit (its zero padding adds nothing to the running sums, so they are ``csum`` indexed)."""
    n_ch, n = xc.shape
    csum = np.empty(n + 1)
    csum[0] = 0.0
    for i in range(n):
        p = xc[0, i] * xc[0, i]
        for ch in range(1, n_ch):
            p += xc[ch, i] * xc[ch, i]
        csum[i + 1] = csum[i] + p
    half = width // 2
    coarse = np.empty(n)
    for i in range(n):
        hi = min(max(i + width - half, 0), n)
        lo = min(max(i - half, 0), n)
        coarse[i] = (csum[hi] - csum[lo]) / width
    return csum, coarse


def _refined(csum, coarse, starts, stops, level: float, frame: int, sr: int) -> list[Segment]:
    """Segments whose edges are placed where one-sided ``frame`` means cross the edge level."""
    # Edges: one-sided means (trailing for onsets, leading for offsets) are exact at abrupt
    # edges and monotone inside ramps; a lower level reaches further into ramps.
    # the noise floor from a decimated envelope (it is smooth over ``frame`` samples anyway)
    floor = float(np.percentile(coarse[:: max(1, frame // 4)], 10)) * 10 ** (_FLOOR_MARGIN_DB / 10)
    edge_level = min(max(level * 10 ** (-_REFINE_DROP_DB / 10), floor), level)
    n = csum.size - 1

    def trailing(i0: int, i1: int) -> np.ndarray:  # mean of power[i-frame+1 .. i] for i in [i0, i1)
        idx = np.arange(i0, i1)
        return (csum[idx + 1] - csum[np.maximum(idx + 1 - frame, 0)]) / frame

    def leading(i0: int, i1: int) -> np.ndarray:  # mean of power[i .. i+frame-1] for i in [i0, i1)
        idx = np.arange(i0, i1)
        return (csum[np.minimum(idx + frame, n)] - csum[idx]) / frame

    out = []
    for a, b in zip(starts, stops, strict=True):
        lo = max(a - 2 * frame, 0)
        quiet = np.flatnonzero(trailing(lo, min(a + frame, b)) < edge_level)
        onset = lo + int(quiet[-1]) + 1 if quiet.size else lo
        hi = min(b + 2 * frame, n)
        start = max(b - frame, onset)
        quiet = np.flatnonzero(leading(start, hi) < edge_level)
        offset = start + int(quiet[0]) if quiet.size else hi
        out.append(Segment(int(onset) / sr, int(max(offset, onset)) / sr))
    return out


@dataclass(frozen=True)
class TonePresence:
    """Narrowband measurement of one tone in each half of a clip.

    ``*_level_db``: tone RMS estimate (dBFS) at ``freq_hz``; ``*_snr_db``: power at
    ``freq_hz`` over the neighbouring-bin noise floor in the same bandwidth; ``verdict``:
    ``'first'``, ``'second'``, ``'both'`` or ``'absent'``.
    """

    freq_hz: float
    first_level_db: float
    second_level_db: float
    first_snr_db: float
    second_snr_db: float
    verdict: str


@functools.lru_cache(maxsize=64)
def _window_and_phasors(n: int, freq_hz: float, sr: float) -> tuple[np.ndarray, np.ndarray]:
    """Hann window and the windowed cos/sin of ``freq_hz`` (cached: clips repeat lengths and frequencies)."""
    w = np.hanning(n + 2)[1:-1]
    arg = 2 * np.pi * freq_hz / sr * np.arange(n)
    return w, np.stack([np.cos(arg), np.sin(arg)]) * w


def _narrowband(xc: np.ndarray, freq_hz: float, sr: float) -> tuple[float, float, float]:
    """(tone power, noise power in the same bin bandwidth, tone RMS^2 estimate) of ``xc`` ``[ch, n]``."""
    n = xc.shape[1]
    w, cs = _window_and_phasors(n, float(freq_hz), float(sr))
    xw = xc * w
    tone = float(np.sum((xc.astype(np.float64) @ cs.T) ** 2))  # single-frequency DFT (Goertzel-style)
    spec = np.sum(np.abs(np.fft.rfft(xw, axis=-1)) ** 2, axis=0)
    k0 = freq_hz * n / sr
    k = np.arange(len(spec))
    dist = np.abs(k - k0)
    near = spec[(dist >= 6) & (dist <= 64)]
    # median of exponential (chi^2, 2 dof) bin powers is ln 2 times their mean
    noise = float(np.median(near) / math.log(2)) if near.size else 0.0
    amp2 = tone * 4.0 / np.sum(w) ** 2 / xc.shape[0]  # squared amplitude per channel
    return tone, noise, amp2 / 2.0


def tone_presence(x, sample_rate, freq_hz, *, snr_threshold_db: float = 13.0) -> TonePresence:
    """Is a tone at ``freq_hz`` in the first half, the second half, both or neither?

    Each half is Hann windowed; the power at exactly ``freq_hz`` (a Goertzel-style
    single-frequency DFT) is compared with the median power of bins 6..64 bins away,
    which estimates the noise in the same bandwidth. A half holds the tone when that ratio
    exceeds ``snr_threshold_db`` (13 dB: a false alarm on white noise has probability
    ~e^-20). With 2 s halves at 48 kHz this finds tones ~40 dB below the broadband noise,
    e.g. below one 24-bit LSB after TPDF dither.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The clip, at least 256 samples; its two halves are measured separately (channels summed in power).
    sample_rate : float
        Sample rate of ``x`` in Hz.
    freq_hz : float
        The tone's frequency in Hz; ``0 < freq_hz < sample_rate / 2``.
    snr_threshold_db : float, optional
        A half holds the tone when its narrowband SNR exceeds this (dB).

    Returns
    -------
    TonePresence
        Level (dB FS) and SNR (dB) of each half, and the verdict.

    Examples
    --------
    >>> sr = 8000; t = np.arange(sr) / sr
    >>> x = np.where(t < 0.5, np.sin(2 * np.pi * 1000 * t), 0.0)
    >>> tone_presence(x, sr, 1000.0).verdict
    'first'
    """
    sr = check_rate(sample_rate)
    f = check_positive("freq_hz", freq_hz)
    if f >= sr / 2:
        raise ParameterError(f"freq_hz={freq_hz!r} is out of range; allowed: < {sr / 2:g}")
    xc = as_channels(x, min_samples=256)
    half = xc.shape[1] // 2
    res = [_narrowband(part, f, sr) for part in (xc[:, :half], xc[:, half : 2 * half])]
    thr = float(snr_threshold_db)
    snr = [db_power(t / n) if n > 0 else (math.inf if t > 0 else -math.inf) for t, n, _ in res]
    present = [s > thr for s in snr]
    verdict = {(True, False): "first", (False, True): "second", (True, True): "both"}.get(tuple(present), "absent")
    return TonePresence(f, db_power(res[0][2]), db_power(res[1][2]), snr[0], snr[1], verdict)


AUDIBLE_SPREAD_DB = 30.0  # a clip's loudest 50 ms at most this far below the item's loudest clip's
AUDIBLE_FLOOR_DB_SPL = 20.0  # ... and at least this loud (calibrated items); uncalibrated: AUDIBLE_FLOOR_DBFS
AUDIBLE_FLOOR_DBFS = -100.0


def loudest_frame_db(x, sample_rate: int, *, frame_s: float = 0.05) -> float:
    """Level in dBFS of the loudest ``frame_s`` frame (non-overlapping, channels averaged); ``-inf`` for silence.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The signal, full scale 1.0.
    sample_rate : int
        Sample rate of ``x`` in Hz.
    frame_s : float, optional
        Frame length in seconds (a trailing partial frame is left out unless ``x`` is shorter than one frame).

    Returns
    -------
    float
        The loudest frame's mean power in dB FS (RMS convention); ``-inf`` for silence.

    Examples
    --------
    >>> x = np.zeros(16000); x[8000:8800] = 0.1
    >>> round(loudest_frame_db(x, 16000), 6)
    -20.0
    """
    arr = as_channels(x).astype(np.float64)
    if not (isinstance(frame_s, (int, float)) and math.isfinite(frame_s) and frame_s > 0):
        raise ParameterError(f"frame_s={frame_s!r} is invalid; allowed: a duration > 0 s")
    frame = max(1, int(round(frame_s * check_rate(sample_rate))))
    n = arr.shape[-1] // frame * frame
    power = (arr**2).mean(axis=0)
    frames = power[:n].reshape(-1, frame).mean(axis=1) if n else power[None, :].mean(axis=1)
    return db_power(float(frames.max()))


def clip_audibility(clips, sample_rate: int, *, full_scale_db_spl: float | None = None) -> dict:
    """Whether every clip of an item can be heard, as the item's ``measured`` record.

    A clip is audible when its loudest 50 ms is not digital silence, at most :data:`AUDIBLE_SPREAD_DB`
    below the loudest clip's and above :data:`AUDIBLE_FLOOR_DB_SPL` (:data:`AUDIBLE_FLOOR_DBFS`
    without a calibration).

    Parameters
    ----------
    clips : sequence of array_like
        The item's clips, each shape ``(samples,)`` or ``(channels, samples)``, full scale 1.0.
    sample_rate : int
        Sample rate of the clips in Hz.
    full_scale_db_spl : float or None, optional
        The calibration (dB SPL of RMS 1.0); ``None`` for an uncalibrated item.

    Returns
    -------
    dict
        ``loudest_50ms_dbfs`` (list of float or None, per clip, dB FS), ``floor_dbfs`` (float), ``spread_db``
        (float) and ``ok`` (bool).

    Examples
    --------
    >>> quiet = np.zeros(8000); quiet[:800] = 1e-4
    >>> clip_audibility([np.full(8000, 0.1), quiet], 16000)["ok"]  # 60 dB below the other clip
    False
    """
    levels = [loudest_frame_db(c, sample_rate) for c in clips]
    floor = AUDIBLE_FLOOR_DBFS if full_scale_db_spl is None else AUDIBLE_FLOOR_DB_SPL - float(full_scale_db_spl)
    top = max(levels)
    ok = all(math.isfinite(v) and v >= floor and v >= top - AUDIBLE_SPREAD_DB for v in levels)
    shown = [round(v, 2) if math.isfinite(v) else None for v in levels]
    return {"loudest_50ms_dbfs": shown, "floor_dbfs": round(floor, 2), "spread_db": AUDIBLE_SPREAD_DB, "ok": bool(ok)}
