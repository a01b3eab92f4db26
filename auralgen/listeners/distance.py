"""Reference DSP listener for the distance tasks: the direct-to-reverberant ratio read from the clip.

The listener never reads ``params``. In a room, a source's received sound is its direct sound
(``1/r^2`` in energy) plus a diffuse reverberant field whose level does not depend on where the
source stands (Sabine's statistical model): the ratio of the two, the DRR, falls by 6 dB per
doubling of distance whatever the source level. The listener reads it from each sound:

- the sound's **onset** (:func:`auralgen.listeners.spatial.direct_onsets`, the second of two
  copies of one dry signal aligned to the first) and **offset**: the change point where a
  steady envelope turns into a straight-line dB decay (:func:`offset_frame`; for two copies of
  one dry signal, one common duration is fitted);
- the **reverberant level**: the decay after the offset (:data:`TAIL_FIT_S`) extrapolated back
  to the offset instant (when the source stops, the direct sound stops at once and the diffuse
  field decays from its steady level);
- the **direct level**: the steady power minus the reverberant power expected in the same
  window (the diffuse field builds up as ``1 - exp(-t / tau)``, ``tau`` from the decay slope),
  minus the previous sound's decaying tail under it.

``distance_relative`` answers the sound with the higher DRR; ``distance_absolute`` turns the DRR
into a distance with the task room's critical distance (:data:`CRITICAL_DISTANCE_M`: all items
of the task are rendered in one room, so it is the listener's calibration, like a human's
familiarity with a room) and picks the bin nearest in log distance.

Periodic sources (harmonic complexes) make the reverberant field coherent and modal: its level
at the harmonics swings by several dB, and so does the DRR read from it (this is why the
distance tasks draw broadband sources by default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from auralgen.listeners.common import copy_search, listener_doc, no_answer, option_index

FRAME_S = 0.005  # envelope frames (s)
SMOOTH_S = 0.04  # envelope smoothing for the offset change point (bridges click gaps)
COPY_TEMPLATE_S = 0.1  # distance_relative: the first sound's start matched to find the second ...
COPY_SEARCH_S = 0.15  # ... this far before a candidate rise
COPY_CANDIDATES = 1
PAIR_TAIL_S = 0.2  # distance_relative: tail windows this long (the sounds' gap is longer)
RISE_SPAN_S = 0.2  # onsets: power over this span after a frame against this span before it (> a click period)
MIN_SOUND_GAP_S = 0.5  # two sounds' onsets lie at least this far apart
RISE_MIN_DB = 3.0  # a sound's onset raises the power by at least this much
MIN_DECAY_DB_S = -20.0  # a reverberant tail decays at least this fast (RT60 <= 3 s)
MIN_SOUND_S = 0.3  # a sound lasts at least this long (the tasks' sources: >= 0.5 s)
MAX_SOUND_S = 1.5
STEADY_FIT_S = 0.2  # offset change point: flat fit over this span before a candidate ...
TAIL_FIT_S = (0.02, 0.25)  # ... and the decay fitted over this span after it (s re the offset)
STEADY_START_S = 0.05  # the steady window starts this long after the onset ...
STEADY_END_S = 0.02  # ... and ends this long before the offset (the ramps)
# the task's room (hall preset: 25 x 16 x 10 m, RT60 1.8 s): critical distance sqrt(A / (16 pi)), A = 0.161 V / T
CRITICAL_DISTANCE_M = math.sqrt(0.161 * 25.0 * 16.0 * 10.0 / 1.8 / (16 * math.pi))
LAYOUT_UNREAD = """
layout : str or None, optional
    The row's channel layout (not read: the DRR needs no direction).
"""


def _envelope(x: np.ndarray, sample_rate: int) -> tuple[np.ndarray, int]:
    """Mean power over channels per :data:`FRAME_S` frame, and the frame length (samples)."""
    p = np.mean(x**2, axis=0)
    f = max(1, int(FRAME_S * sample_rate))
    nf = p.size // f
    return p[: nf * f].reshape(nf, f).mean(axis=1), f


def _flat_then_decay_cost(env_db: np.ndarray, tau: int, n_pre: int, n_post: int, guard: int) -> float:
    """Residual (dB^2 per frame) of "flat over ``n_pre`` frames before ``tau``, a decay of at least
    :data:`MIN_DECAY_DB_S` after it" (``guard`` frames either side of ``tau`` are left out: the
    offset ramp, smeared by the smoothing)."""
    pre = env_db[max(tau - guard - n_pre, 0) : tau - guard]
    post = env_db[tau + guard : tau + guard + n_post]
    if pre.size < 4 or post.size < 4:
        return math.inf
    t = np.arange(post.size, dtype=np.float64)
    slope = min(float(np.polyfit(t, post, 1)[0]), MIN_DECAY_DB_S * FRAME_S)  # a flat stretch is no tail
    rest = post - slope * t
    return float((np.sum((pre - pre.mean()) ** 2) + np.sum((rest - rest.mean()) ** 2)) / (pre.size + post.size))


def offset_frame(env: np.ndarray, onsets: Sequence[int], limits: Sequence[int], *, common: bool) -> list[int]:
    """Offset frame of each sound starting at frame ``onsets[i]`` (and ending before ``limits[i]``).

    The change point from a flat envelope (:data:`STEADY_FIT_S`) to a straight dB decay (the
    first :data:`TAIL_FIT_S` [1] after it), searched over :data:`MIN_SOUND_S` ..
    :data:`MAX_SOUND_S` after the onset on the envelope smoothed over :data:`SMOOTH_S`.
    ``common``: the sounds share one dry signal, so one duration is fitted to all of them.

    Parameters
    ----------
    env : ndarray, shape (frames,)
        Mean power over channels per :data:`FRAME_S` frame (linear, full scale squared).
    onsets : sequence of int
        Onset frame of each sound.
    limits : sequence of int
        Frame before which each sound's decay must end (the next onset, or the clip's end).
    common : bool
        Fit one duration to all sounds (copies of one dry signal).

    Returns
    -------
    list of int
        Offset frame of each sound, in the order of ``onsets``.
    """
    k = max(1, int(SMOOTH_S / FRAME_S))
    smooth = np.convolve(env, np.ones(k) / k, mode="same")
    env_db = 10 * np.log10(smooth + max(float(smooth.max()), 1e-30) * 1e-12)
    n_pre, n_post, guard = int(STEADY_FIT_S / FRAME_S), int(TAIL_FIT_S[1] / FRAME_S), k // 2 + 2
    lo, hi = int(MIN_SOUND_S / FRAME_S), int(MAX_SOUND_S / FRAME_S)

    def costs(on: int, limit: int) -> np.ndarray:
        out = np.full(hi - lo, np.inf)
        for j, dur in enumerate(range(lo, hi)):
            tau = on + dur
            if tau + guard + 8 > limit:
                break
            out[j] = _flat_then_decay_cost(env_db[:limit], tau, n_pre, n_post, guard)
        return out

    table = [costs(on, limit) for on, limit in zip(onsets, limits)]
    if common:
        total = np.sum(table, axis=0)
        return [on + lo + int(np.argmin(total)) for on in onsets]
    return [on + lo + int(np.argmin(c)) for on, c in zip(onsets, table)]


def _tail_fit(env: np.ndarray, off: int, limit: int) -> tuple[float, float] | None:
    """``(slope, intercept)`` of the dB decay after frame ``off`` (frames), or None."""
    a, b = off + int(TAIL_FIT_S[0] / FRAME_S), min(off + int(TAIL_FIT_S[1] / FRAME_S), limit)
    if b - a < 6 or np.any(env[a:b] <= 0):
        return None
    t = np.arange(a, b, dtype=np.float64)
    slope, icept = np.polyfit(t, 10 * np.log10(env[a:b]), 1)
    return (float(slope), float(icept)) if slope < 0 else None


def sound_onsets(env: np.ndarray, *, want: int) -> list[int]:
    """Onset frames of the ``want`` sounds of an envelope (see :func:`_onsets`).

    Parameters
    ----------
    env : ndarray, shape (frames,)
        Mean power over channels per :data:`FRAME_S` frame (linear, full scale squared).
    want : int
        How many onsets to find.

    Returns
    -------
    list of int
        Onset frames of the ``want`` largest rises above the envelope's trend, in time order (fewer if
        fewer rise by :data:`RISE_MIN_DB`).
    """
    return _onsets(env, want=want)[0]


def _onsets(env: np.ndarray, *, want: int) -> tuple[list[int], np.ndarray]:
    """Onset frames of the ``want`` largest rises above the envelope's own trend, in time order.

    At every frame a straight line is fitted to the dB envelope (smoothed over :data:`SMOOTH_S`)
    over the preceding :data:`RISE_SPAN_S` and extrapolated over the next; the rise is the power
    there over the extrapolation. A sound after another's reverberant tail rises above the
    tail's decay even when it is quieter than the tail was; inside a sound the trend is flat
    (the spans are longer than a click train's period, so its clicks are no rises). Onsets lie
    :data:`MIN_SOUND_GAP_S` apart; each is refined to the first frame 6 dB above the trend."""
    k = max(1, int(RISE_SPAN_S / FRAME_S))
    m = max(1, int(SMOOTH_S / FRAME_S))
    floor = max(float(env.max()), 1e-30) * 1e-9
    smooth = np.convolve(env, np.ones(m) / m, mode="full")[: env.size]  # trailing: no power from ahead
    env_db = 10 * np.log10(smooth + floor)
    rise = np.full(env.size, -np.inf)
    trend = np.zeros((env.size, k))
    for i in range(1, env.size - k):
        past = env_db[max(i - k, 0) : i]
        t = np.arange(-past.size, 0, dtype=np.float64)
        line = np.polyfit(t, past, 1) if past.size >= 4 else (0.0, float(past.mean()))
        trend[i] = 10 ** (np.polyval(line, np.arange(k)) / 10)
        rise[i] = 10 * math.log10((float(np.mean(env[i : i + k])) + floor) / (float(np.mean(trend[i])) + floor))
    chosen: list[int] = []
    gap = int(MIN_SOUND_GAP_S / FRAME_S)
    for i in np.argsort(-rise, kind="stable"):
        if rise[i] < RISE_MIN_DB or len(chosen) == want:
            break
        if all(abs(int(i) - j) >= gap for j in chosen):
            chosen.append(int(i))
    out = []
    h = k // 4
    for i in sorted(chosen):  # the largest rise may sit a little after the onset: look from h frames before
        j = max(i - h, 1)
        above = np.flatnonzero(env[j : j + k] > 4.0 * trend[j] + floor)
        out.append(j + int(above[0]) if above.size else i)
    return out, rise


def sound_excess_db(clip: np.ndarray, sample_rate: int, *, want: int) -> list[float] | None:
    """Each of the ``want`` sounds' steady power over the diffuse field's power in the same window
    (dB; ``10 log10(1 + DRR)``, monotone in the DRR), in time order; None when the sounds, their
    offsets or their tails are not found (for two copies of one dry signal,
    :func:`pair_excess_db` needs no offsets).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip; its channels' powers are averaged.
    sample_rate : int
        Sampling rate (Hz).
    want : int
        How many sounds the clip holds.

    Returns
    -------
    list of float or None
        Each sound's excess over the diffuse field (dB), in time order; None when not found.
    """
    x = np.asarray(clip, dtype=np.float64)
    x = x[None] if x.ndim == 1 else x
    env, f = _envelope(x, sample_rate)
    on_f = sound_onsets(env, want=want)
    if len(on_f) != want:
        return None
    limits = [*(o - 2 for o in on_f[1:]), env.size]
    offs = offset_frame(env, on_f, limits, common=want > 1)
    out, prev = [], None
    for on, off, limit in zip(on_f, offs, limits):
        fit = _tail_fit(env, off, limit)
        a, b = on + int(STEADY_START_S / FRAME_S), off - int(STEADY_END_S / FRAME_S)
        if fit is None or b - a < 4:
            return None
        slope, icept = fit
        t = np.arange(a, b, dtype=np.float64)
        steady = env[a:b].copy()
        if prev is not None:  # the previous sound's tail, still decaying under this one
            steady -= 10 ** ((prev[1] + prev[0] * t) / 10)
        reverb = 10 ** ((icept + slope * off) / 10)  # steady diffuse power (at the offset)
        tau = 10 * math.log10(math.e) / -slope  # energy decay constant (frames)
        diffuse = reverb * float(np.mean(1.0 - np.exp(-(t - on) / tau)))  # built up since the onset
        out.append(10 * math.log10(max(float(np.mean(steady)), diffuse * 1e-3) / diffuse))
        prev = fit
    return out


def sound_drrs_db(clip: np.ndarray, sample_rate: int, *, want: int) -> list[float] | None:
    """DRR (dB) of each sound (:func:`sound_excess_db` turned back: ``10 log10(10^(e/10) - 1)``;
    at most 30 dB below the diffuse field).

    Parameters
    ----------
    clip, sample_rate, want
        As for :func:`sound_excess_db`.

    Returns
    -------
    list of float or None
        Each sound's direct-to-reverberant ratio (dB), in time order; None when the sounds are not found.
    """
    excess = sound_excess_db(clip, sample_rate, want=want)
    if excess is None:
        return None
    return [10 * math.log10(max(10 ** (e / 10) - 1.0, 1e-3)) for e in excess]


def align_copy(x: np.ndarray, first: int, guess: int, sample_rate: int) -> tuple[int, float]:
    """Onset (samples) of a second copy of the sound starting at ``first``, near ``guess``, and the
    correlation coefficient there: the first :data:`COPY_TEMPLATE_S` of the first sound (channel
    sum) is matched over [``guess`` - :data:`COPY_SEARCH_S`, ``guess`` + 20 ms]; of the lags within
    70 % of the best match the earliest is taken (a click train or a tone also matches one
    period late).

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    first : int
        Onset of the first sound (samples).
    guess : int
        Where the second copy is expected to start (samples).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    onset : int
        Onset of the second copy (samples); ``guess`` when there is nothing to match.
    correlation : float
        Normalised correlation of the template at that onset (0 when nothing matched).
    """
    found = copy_search(x, first, guess, sample_rate, template_s=COPY_TEMPLATE_S, before_s=COPY_SEARCH_S, after_s=0.02)
    if found is None:
        return guess, 0.0
    lo, seg, tpl = found
    n = tpl.size
    cc = np.correlate(seg, tpl, mode="valid")
    c = np.concatenate([[0.0], np.cumsum(seg**2)])
    norm = np.sqrt((c[n:] - c[:-n])[: cc.size] * float(np.sum(tpl**2))) + 1e-30
    best = float(cc.max())
    lag = int(np.flatnonzero(cc >= 0.7 * best)[0]) if best > 0 else int(np.argmax(cc))
    return lo + lag, float(cc[lag] / norm[lag])


def second_copy(x: np.ndarray, env: np.ndarray, f: int, sample_rate: int) -> tuple[int, int] | None:
    """Onset frames of two copies of one sound: the largest rise, then among the next
    :data:`COPY_CANDIDATES` rises at least :data:`MIN_SOUND_GAP_S` later the one whose aligned
    start (:func:`align_copy`) correlates best with the first sound's.

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    env : ndarray, shape (frames,)
        Mean power over channels per :data:`FRAME_S` frame (linear, full scale squared).
    f : int
        Frame length of ``env`` (samples).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    tuple of (int, int) or None
        Onset frames of the first and the second copy; None when no second rise is found.
    """
    ons, rise = _onsets(env, want=1)
    if not ons:
        return None
    first = ons[0]
    gap = int(MIN_SOUND_GAP_S / FRAME_S)
    later = [int(i) for i in np.argsort(-rise, kind="stable") if i >= first + gap and rise[i] >= RISE_MIN_DB]
    picked: list[int] = []
    for i in later:
        if all(abs(i - j) >= int(COPY_SEARCH_S / FRAME_S) for j in picked):
            picked.append(i)
        if len(picked) == COPY_CANDIDATES:
            break
    if not picked:
        return None
    found = [align_copy(x, first * f, i * f, sample_rate) for i in picked]
    return first, max(found, key=lambda oc: oc[1])[0] // f


def pair_excess_db(
    clip: np.ndarray, sample_rate: int, *, onsets: tuple[int, int] | None = None
) -> tuple[float, float] | None:
    """Two copies of one dry signal: each copy's steady power over its own reverberant tail's
    power, both read at the same delays after the copy's onset (dB, first and second copy).

    With one dry signal the two sounds last equally long, so windows at equal delays after the
    onsets are at equal delays after the offsets too: the diffuse field's build-up and decay
    are the same in both and cancel in the comparison, and no offset needs to be found. The
    steady windows span :data:`STEADY_START_S` .. :data:`MIN_SOUND_S` - :data:`STEADY_END_S`
    after each onset; the tail windows are the last :data:`PAIR_TAIL_S` before the second onset
    and the same span after it. The first sound's tail, fitted on its window and extrapolated,
    is taken off the second sound's steady power. ``steady / tail`` is ``D / (R e) + b / e`` for
    direct and diffuse powers D and R and equal build-up and decay factors b and e: in the same
    order as the DRRs. ``onsets``: the two direct sounds' arrivals (samples), when known (a task's
    ``measure``); else they are found (:func:`second_copy`).

    Parameters
    ----------
    clip, sample_rate
        As for :func:`sound_excess_db`.
    onsets : tuple of (int, int) or None, optional
        The two direct sounds' arrivals (samples), when known.

    Returns
    -------
    tuple of (float, float) or None
        Steady over tail power of the first and the second copy (dB); None when the
        copies or their windows are not found.
    """
    x = np.asarray(clip, dtype=np.float64)
    x = x[None] if x.ndim == 1 else x
    env, f = _envelope(x, sample_rate)
    pair = second_copy(x, env, f, sample_rate) if onsets is None else (onsets[0] // f, onsets[1] // f)
    if pair is None:
        return None
    first, second = pair
    lag = second - first
    a, b = int(STEADY_START_S / FRAME_S), int((MIN_SOUND_S - STEADY_END_S) / FRAME_S)
    t1 = (second - 2 - int(PAIR_TAIL_S / FRAME_S), second - 2)  # the first sound's tail
    end = min(t1[1] + lag, env.size)  # the second's tail, at the same delays (cut at the clip's end)
    t1 = (t1[0], end - lag)
    if t1[1] - t1[0] < 6 or lag <= b or np.any(env[t1[0] : t1[1]] <= 0):
        return None
    tt = np.arange(*t1, dtype=np.float64)
    slope, icept = np.polyfit(tt, 10 * np.log10(env[t1[0] : t1[1]]), 1)
    steady2 = env[second + a : second + b] - 10 ** ((icept + slope * np.arange(second + a, second + b)) / 10)
    p = (float(np.mean(env[first + a : first + b])), float(np.mean(steady2)))
    r = (float(np.mean(env[t1[0] : t1[1]])), float(np.mean(env[t1[0] + lag : t1[1] + lag])))
    if min(r) <= 0:
        return None
    return tuple(10 * math.log10(max(pi, ri * 1e-3) / ri) for pi, ri in zip(p, r))  # type: ignore[return-value]


@listener_doc("the first holds the two copies", LAYOUT_UNREAD)
def distance_relative(question, options, clips, sample_rate, layout=None) -> int:
    """The sound whose steady power stands higher above its own reverberant tail is the closer one."""
    excess = pair_excess_db(clips[0], sample_rate)
    if excess is None:
        return no_answer(options)
    return option_index(options, "first" if excess[0] >= excess[1] else "second")


def distance_bins(options: Sequence[str]) -> dict[int, tuple[float, float]]:
    """``{option index: (low_m, high_m)}`` from texts like "Medium (3-8 m)", "Far (more than 8 m)".

    Parameters
    ----------
    options : sequence of str
        The option texts; a range reads "X-Y m" or "more than X m" (also "over", "beyond").

    Returns
    -------
    dict of int to tuple of float
        Option index to its ``(low, high)`` range (metres); options without a range are left out.
    """
    out = {}
    for i, text in enumerate(options):
        m = re.search(r"(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*m\b", text)
        if m:
            out[i] = (float(m[1]), float(m[2]))
            continue
        m = re.search(r"(?:more than|over|beyond)\s*(\d+(?:\.\d+)?)\s*m\b", text.lower())
        if m:
            out[i] = (float(m[1]), math.inf)
    return out


@listener_doc("the first is measured", LAYOUT_UNREAD)
def distance_absolute(question, options, clips, sample_rate, layout=None) -> int:
    """Distance from the DRR and the room's critical distance: ``r = r_c 10^(-DRR / 20)``."""
    bins = distance_bins(options)
    drrs = sound_drrs_db(clips[0], sample_rate, want=1)
    if not bins or drrs is None:
        return no_answer(options)
    d = CRITICAL_DISTANCE_M * 10 ** (-drrs[0] / 20)

    def log_distance(i: int) -> float:
        lo, hi = bins[i]
        if lo <= d <= hi:
            return 0.0
        return math.log(max(lo, 1e-3) / d) if d < lo else math.log(d / hi)

    return min(bins, key=log_distance)
