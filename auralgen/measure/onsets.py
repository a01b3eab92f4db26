"""Onsets of discrete sound events: onset times, event counts, inter-onset intervals and tempo.

The tempo and counting tasks label their clips with these measurements. Events are sounds
separated by silence (or by a dip at least ``threshold_db`` below the loudest event); each onset
is the start of an active stretch of the energy envelope, refined to the sample where the
power rises, so raised-cosine onsets land within ~1 ms of the ramp's start. (The counting task
measures the silences between events with :func:`auralgen.measure.level.segments`.)

- :func:`onset_times`: onsets (s) of every event of a clip;
- :func:`event_groups`: the onsets split into groups at silences longer than ``split_gap_s``
  (the two sequences of a two-interval item);
- :func:`ioi_tempo_bpm`: tempo (events per minute) of an isochronous sequence from its onsets,
  the slope of a least-squares line through ``(k, onset_k)``;
- :func:`autocorr_tempo_bpm`: tempo from the autocorrelation of the onset-strength envelope
  (a check independent of the event segmentation).

Examples
--------
>>> sr = 8000; x = np.zeros(2 * sr)
>>> for k in range(4): x[int((0.1 + 0.5 * k) * sr):int((0.2 + 0.5 * k) * sr)] = 0.5
>>> onset_times(x, sr).round(3).tolist()
[0.1, 0.6, 1.1, 1.6]
>>> round(ioi_tempo_bpm(onset_times(x, sr)), 2)
120.0
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_mono, check_positive, check_rate, moving_average, parabolic_offset

THRESHOLD_DB = -30.0  # an event is active within this of the loudest event's envelope peak
MIN_GAP_S = 0.004  # silences shorter than this do not separate two events
FRAME_S = 0.002  # envelope smoothing (s): a 2 ms frame resolves 10 ms gaps between 5 ms ramps
ENVELOPE_HOP_S = 0.001  # hop of the onset-strength envelope of :func:`autocorr_tempo_bpm`


def onset_times(
    x, sample_rate, *, threshold_db: float = THRESHOLD_DB, min_gap_s: float = MIN_GAP_S, frame_s: float = FRAME_S
) -> np.ndarray:
    """Onset times (s, increasing) of the events of ``x``.

    The energy envelope is taken in blocks of half a frame and smoothed over a frame; blocks
    within ``threshold_db`` of its peak are active, silences shorter than ``min_gap_s`` are
    bridged, and each onset is placed at the first sample of its rise whose power over the
    following ``frame_s / 8`` exceeds a level 20 dB below the activity threshold (ramped onsets
    land within ~1 ms of the ramp's start, the same place for every event of a sequence).

    Parameters
    ----------
    x : np.ndarray [shape=(n,) or (channels, n)]
        The clip (channels are averaged).
    sample_rate : float > 0
        Sample rate of ``x`` in Hz.
    threshold_db : float < 0
        Activity threshold in dB relative to the envelope peak.
    min_gap_s : float >= 0
        Shortest silence (seconds) that separates two events.
    frame_s : float > 0
        Envelope smoothing in seconds.

    Returns
    -------
    np.ndarray [shape=(events,), dtype=float64]
        Onset times in seconds from the start of ``x``; empty for silence.
    """
    sr = check_rate(sample_rate)
    y = as_mono(x)
    if not (math.isfinite(threshold_db) and threshold_db < 0):
        raise ParameterError(f"threshold_db={threshold_db!r} is out of range; allowed: < 0")
    if not (math.isfinite(min_gap_s) and min_gap_s >= 0):
        raise ParameterError(f"min_gap_s={min_gap_s!r} is out of range; allowed: finite and >= 0")
    hop = max(int(round(check_positive("frame_s", frame_s) * sr / 2)), 1)
    power = y * y
    n_blocks = power.size // hop
    if n_blocks < 2:
        return np.zeros(0)
    block = power[: n_blocks * hop].reshape(n_blocks, hop).mean(axis=1)
    env = 0.5 * (block + np.concatenate([[0.0], block[:-1]]))
    peak = float(env.max())
    if peak <= 0:
        return np.zeros(0)
    level = peak * 10 ** (threshold_db / 10)
    active = np.concatenate([[0], (env >= level).astype(np.int8), [0]])
    edges = np.diff(active)
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    keep = np.concatenate([[True], (starts[1:] - stops[:-1]) * hop >= min_gap_s * sr])
    return _refined_onsets(power, starts[keep], hop, level * 0.01) / sr


def _refined_onsets(power: np.ndarray, starts: np.ndarray, hop: int, edge: float) -> np.ndarray:
    """Sample index of each rise: the first sample from two blocks before the active block
    ``starts[i]`` whose mean power over the next ``hop // 4`` samples exceeds ``edge``."""
    width = max(hop // 4, 1)
    out = []
    for b in starts:
        lo = max((int(b) - 2) * hop, 0)
        c = np.concatenate([[0.0], np.cumsum(power[lo : (int(b) + 1) * hop + width])])
        above = np.flatnonzero((c[width:] - c[:-width]) / width > edge)
        out.append(lo + (int(above[0]) if above.size else 2 * hop))
    return np.asarray(out, dtype=np.float64)


def event_groups(onsets_s, *, split_gap_s: float) -> list[np.ndarray]:
    """``onsets_s`` split where consecutive onsets are more than ``split_gap_s`` apart.

    Parameters
    ----------
    onsets_s : array_like, shape (events,)
        Onset times in seconds, increasing.
    split_gap_s : float
        A gap (seconds) longer than this between consecutive onsets starts a new group; > 0.

    Returns
    -------
    list of ndarray
        The groups of onset times (seconds, float64), in order; empty for no onsets.

    Examples
    --------
    >>> [g.tolist() for g in event_groups([0.0, 0.2, 0.4, 2.0, 2.1], split_gap_s=1.0)]
    [[0.0, 0.2, 0.4], [2.0, 2.1]]
    """
    split = check_positive("split_gap_s", split_gap_s)
    t = np.asarray(onsets_s, dtype=np.float64)
    if t.size == 0:
        return []
    cuts = np.flatnonzero(np.diff(t) > split) + 1
    return [g for g in np.split(t, cuts)]


def ioi_tempo_bpm(onsets_s) -> float:
    """Tempo (events per minute) of an isochronous sequence: ``60 / IOI`` with the IOI the
    least-squares slope of onset time against onset number; NaN with fewer than 2 onsets.

    Parameters
    ----------
    onsets_s : array_like, shape (events,)
        Onset times in seconds, increasing.

    Returns
    -------
    float
        Tempo in events per minute; NaN with fewer than 2 onsets or a non-increasing fit.

    Examples
    --------
    >>> round(ioi_tempo_bpm([0.25, 0.75, 1.25]), 3)
    120.0
    """
    t = np.asarray(onsets_s, dtype=np.float64)
    if t.ndim != 1:
        raise ParameterError(f"onsets_s has shape {t.shape}; allowed: a 1-D list of onset times")
    if t.size < 2:
        return math.nan
    k = np.arange(t.size, dtype=np.float64)
    slope = float(np.polyfit(k, t, 1)[0])
    return 60.0 / slope if slope > 0 else math.nan


def ioi_regularity(onsets_s) -> float:
    """Largest deviation (s) of an onset from the least-squares isochronous grid (0 with < 3 onsets).

    Parameters
    ----------
    onsets_s : array_like, shape (events,)
        As in :func:`ioi_tempo_bpm`.

    Returns
    -------
    float
        The largest absolute deviation in seconds; 0 with fewer than 3 onsets.
    """
    t = np.asarray(onsets_s, dtype=np.float64)
    if t.size < 3:
        return 0.0
    k = np.arange(t.size, dtype=np.float64)
    fit = np.polyval(np.polyfit(k, t, 1), k)
    return float(np.max(np.abs(t - fit)))


def hop_samples(hop_s: float, sample_rate: int) -> int:
    """A hop of ``hop_s`` seconds in whole samples (at least one).

    Parameters
    ----------
    hop_s : float > 0
        The hop (s).
    sample_rate : int
        Samples per second.

    Returns
    -------
    int
        ``round(hop_s * sample_rate)``, at least 1.
    """
    return max(int(round(check_positive("hop_s", hop_s) * sample_rate)), 1)


def onset_strength(x, sample_rate, *, hop_s: float = ENVELOPE_HOP_S) -> np.ndarray:
    """Half-wave rectified rise of the log energy envelope (dB per hop), one value per hop.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The clip; channels are averaged.
    sample_rate : float
        Sample rate of ``x`` in Hz.
    hop_s : float, optional
        Hop in seconds (rounded to whole samples); the energy is averaged over two hops.

    Returns
    -------
    ndarray, shape (ceil(samples / hop),), float64
        The rise in dB from the previous hop, floored at 0.
    """
    sr = check_rate(sample_rate)
    y = as_mono(x)
    hop = hop_samples(hop_s, sr)
    env = moving_average(y * y, 2 * hop)[::hop]
    db = 10.0 * np.log10(env + env.max() * 1e-6 + 1e-30)
    return np.maximum(np.diff(db, prepend=db[:1]), 0.0)


def autocorr_tempo_bpm(x, sample_rate, *, min_bpm: float, max_bpm: float, hop_s: float = ENVELOPE_HOP_S) -> float:
    """Tempo (events per minute) at the largest autocorrelation peak of :func:`onset_strength`
    between the lags of ``max_bpm`` and ``min_bpm`` (parabolic interpolation); NaN without a peak.

    The autocorrelation of a pulse train also peaks at multiples of its period; a lag range
    narrower than an octave (``max_bpm < 2 * min_bpm``) keeps only the fundamental.

    Parameters
    ----------
    x, sample_rate, hop_s
        As in :func:`onset_strength`.
    min_bpm, max_bpm : float
        The tempo range searched, events per minute; ``0 < min_bpm < max_bpm``.

    Returns
    -------
    float
        Tempo in events per minute; NaN when the clip is too short for ``min_bpm`` or has no positive peak.
    """
    lo, hi = check_positive("min_bpm", min_bpm), check_positive("max_bpm", max_bpm)
    if hi <= lo:
        raise ParameterError(f"max_bpm={max_bpm!r} <= min_bpm={min_bpm!r}; allowed: min_bpm < max_bpm")
    s = onset_strength(x, sample_rate, hop_s=hop_s)
    s = s - s.mean()
    hop = hop_samples(hop_s, check_rate(sample_rate)) / sample_rate  # the hop the envelope took (whole samples)
    lag_lo, lag_hi = int(math.floor(60.0 / hi / hop)), int(math.ceil(60.0 / lo / hop))
    if lag_hi + 2 >= s.size or not np.any(s):
        return math.nan
    n = 1 << int(math.ceil(math.log2(2 * s.size)))
    spec = np.fft.rfft(s, n)
    ac = np.fft.irfft(spec * np.conj(spec), n)[: s.size]
    lags = np.arange(max(lag_lo, 1), lag_hi + 1)
    best = int(lags[np.argmax(ac[lags])])
    if ac[best] <= 0:
        return math.nan
    lag = best + parabolic_offset(ac[best - 1], ac[best], ac[best + 1])
    return 60.0 / (lag * hop)
