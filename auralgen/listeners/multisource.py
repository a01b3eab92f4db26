"""Reference DSP listener for ``multi_source_relation``: each named source's direction, read from the mix.

An ideal observer of the recipe, as the spatial template listener is of the HRTF set: it knows the
palette (:mod:`auralgen.synth.palette`: which kinds exist, the harmonic tone's f0 range, the click
rates) and the order in which the synthesized sources enter (:data:`SPATIAL_ENTRY_ORDER`), never the
item's ``params``. Each source's direction comes from its own direct sound
(:func:`~auralgen.listeners.spatial.binaural_direction`, the cross relation against the HRTF set):

- the first source to enter: its onset, alone in the clip;
- the noise after the harmonic tone: the tone is a sum of harmonics of one f0 (estimated to 0.05 Hz),
  so its ongoing part is fitted over the 60 ms before each 4 ms step and predicted over the step;
  where the prediction error jumps the noise has entered, and its onset is read on the residual;
- the click train (always last): every click carries the same direct sound, so the windows at the
  clicks (period from the spikes' autocorrelation, refined to 0.02 samples by the coherence of the
  aligned windows, each click re-aligned within 2 samples) are averaged; the other sources, not
  periodic at the click rate, average out.

``left`` and ``left_of`` compare the lateral components (``sin az cos el``), ``higher`` the elevations.
For ``higher`` the click train's direction comes from matching one known click through every HRIR of
the set (its arrival searched to half a sample) rather than from the cross relation: at 16 kHz the
elevation cues lie in the few kHz below Nyquist, which the known source keeps (solo clicks misread by
more than 20 deg: 1 of 60 against 5; `higher` on 200 items: 98-100 % against 94-99 %), while the cross
relation reads the lateral angle better (`left` at 20 deg, 100 items: 100 % against 95 %).

``closer`` compares direct-sound levels. The three sources are emitted at one level, so each one's
direct sound at the ears, divided by what the recipe's signal through the HRIR of its measured
direction gives at 1 m, is ``1 / d**2`` (:func:`read_sources` with ``levels=True``):

- the tone: its known waveform (f0 as estimated, sine phase, the onset ramp) through that HRIR, fitted
  (least squares) to the first 2.5 ms of its onset at the best-correlating lag;
- the clicks: the averaged click's energy over 2 ms against one click of the recipe (its energy is
  the period times the unit power) through that HRIR;
- the noise: its energy 2-4 ms after its arrival in the residual of the tone's prediction (the tone
  model ends 12.5 ms before the detected entry, which a far noise trips late; the arrival is the
  sharpest rise), less the residual's floor, against the mean of 16 pink noises of the recipe.

The noise's reading is the weak one: the tone's own response to its onset is not harmonic and decays
with the room (at 150 ms, -10 to -25 dB of the tone in a 0.8 s room), so a far noise's direct sound
can lie under it. A cap by the noise's total power less the tone's reverberant power was tried and
dropped: a tone's power sits in a few harmonics, whose room gains scatter by several dB, so it
misjudged the room's return (two close noises of the validity suite read as silent).

Recorded classes, kinds outside the entry order and layouts other than binaural are answered
:data:`~auralgen.listeners.common.NO_ANSWER`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from auralgen.listeners._multisource import (
    CLICK_WINDOW_PRE,
    _aligned_mean,
    _best_lag,
    _click_period,
    _first_click,
    _hrir,
    _positions,
    _span,
    _spikes,
    _through,
)
from auralgen.listeners.common import NO_ANSWER, listener_doc, option_index
from auralgen.listeners.spatial import DIRECT_PRE, HRTF, binaural_direction, direct_onsets
from auralgen.measure.binaural import match_known_source
from auralgen.synth import apply_ramps, harmonic_complex, n_samples, noise
from auralgen.synth.palette import (
    SPATIAL_ENTRY_ORDER,
    SPATIAL_F0_HZ,
    SPATIAL_MAX_HARMONICS,
    SPATIAL_NAMES,
    SPATIAL_RAMP_S,
    spatial_harmonics,
    spatial_noise_band,
)

F0_STEP_HZ = 0.05  # f0 grid of the harmonic tone's estimate
FIT_S, STEP_S = 0.06, 0.004  # harmonic model: fitted over 60 ms, predicted over the next 4 ms
FIRST_FIT_S = (0.04, 0.14)  # f0 estimated on this span after the tone's onset (no other source enters before 0.15 s)
GUARD_S = 0.003  # the final fit ends this long before the detected entry (its ramp starts earlier)
ENTRY_JUMP = 10.0  # an entry: the step's prediction error this many times the fit's residual power
ONSET_JUMP = 4.0  # ... refined to where the trailing 1 ms power first exceeds the residual this much
SEARCH_S = 0.5  # the next source enters within this of the tone's onset
SAME_LATERAL = 0.1  # left_of: lateral components this close are "the same direction"
TONE_MATCH_S = 0.0025  # closer: the tone's direct sound, fitted over its first 2.5 ms ...
ONSET_SEARCH_S = (0.005, 0.005)  # ... at the lag, this far before / after the detected onset, that correlates best
NOISE_GUARD_S = 0.0125  # the noise: the tone model ends this long before the detected entry ...
NOISE_FLOOR_S = 0.004  # ... the residual's floor: its first 4 ms; a rise: the next 2 ms over the previous 4 ms
NOISE_WINDOW_S = (0.002, 0.004)  # ... its direct sound: this span after the arrival (the 2 ms ramp is over)
NOISE_REFERENCES = 16  # expected noise energies: the mean over this many pink noises of the recipe
CLICK_MATCH_S = 0.002  # a click's direct sound: its energy over 2 ms from the best-correlating lag
KNOWN_WINDOW_S = 0.003  # higher: the averaged click's first 3 ms (and the DIRECT_PRE samples before) against ...
KNOWN_LAG_S = (0.0005, 0.0015, 0.00003125)  # ... an impulse at its start, arriving 0.5 +- 1.5 ms later, in 1/32 ms
# steps (0.5 samples at 16 kHz; each direction its best): the HRIRs' own lead and the onset threshold vary
SIDE_TEXTS = {"left": "to the left of", "right": "to the right of", "same": "in the same direction as"}


@listener_doc(
    "the first, binaural, is measured",
    """
    layout : str or None, optional
        The row's channel layout; anything but ``binaural`` is not answered.
    tetra_offsets_m : ndarray or None, optional
        Bound by the task for every direction listener (not read).
    """,
    HRTF,
    question="; it names the relation and, for a side question, the two sources",
)
def multi_source_relation(
    question, options, clips, sample_rate, layout=None, *, tetra_offsets_m=None, hrtf=None
) -> int:
    """The option naming the source that the measured directions make furthest left / highest, or whose
    direct level is highest (closest), or A's side of B; :data:`NO_ANSWER` where the relation, the sounds
    or the layout are not readable, or without ``hrtf``.
    """
    x = np.asarray(clips[0], dtype=np.float64)
    if hrtf is None or x.ndim != 2 or x.shape[0] != 2 or (layout not in (None, "binaural")):
        return NO_ANSWER
    hrtf = hrtf(sample_rate) if callable(hrtf) else hrtf
    q = question.lower()
    if "relative to" in q:
        found = [k for name in re.findall(r"where is (.+) relative to (.+)\?", q)[0] for k in _kinds([name])]
        if len(found) != 2:
            return NO_ANSWER
        dirs = source_directions(x, sample_rate, found, hrtf)
        if any(d is None for d in dirs.values()):
            return NO_ANSWER
        diff = lateral(dirs[found[0]]) - lateral(dirs[found[1]])
        side = "same" if abs(diff) < SAME_LATERAL else ("left" if diff > 0 else "right")
        return option_index(options, SIDE_TEXTS[side])
    measure = {
        "furthest to the left": lambda h: lateral(h.direction),
        "highest": lambda h: h.direction[1],
        "closest": lambda h: h.level,
    }
    key = next((k for k in measure if k in q), None)
    kinds = _kinds(options)
    if key is None or len(kinds) != len(options):
        return NO_ANSWER
    heard = read_sources(x, sample_rate, kinds, hrtf, levels=key == "closest", known_clicks=key == "highest")
    values = [None if heard.get(k) is None or heard[k].direction is None else measure[key](heard[k]) for k in kinds]
    if any(v is None or not math.isfinite(v) for v in values):
        return NO_ANSWER
    return int(np.argmax(values))


def _kinds(texts) -> list[str]:
    """The palette kinds named by ``texts`` (one per text that names one)."""
    by_name = {v: k for k, v in SPATIAL_NAMES.items()}
    return [by_name[t.strip().lower()] for t in texts if t.strip().lower() in by_name]


def lateral(direction: tuple[float, float]) -> float:
    """Lateral component ``sin(az) cos(el)`` of ``(azimuth_deg, elevation_deg)`` (+1 = left).

    Parameters
    ----------
    direction : tuple of (float, float)
        ``(azimuth, elevation)`` in degrees (azimuth counter-clockwise from the front).

    Returns
    -------
    float
        ``sin(az) cos(el)``, in [-1, 1]: +1 straight left, -1 straight right.
    """
    return math.sin(math.radians(direction[0])) * math.cos(math.radians(direction[1]))


@dataclass(frozen=True)
class Heard:
    """One source as read from the mix: its direction and, when asked for, its direct level (the direct
    sound's power at the ears over what the recipe's signal through the HRIR of that direction gives at
    1 m: ``1 / d**2`` for a source at ``d`` m); ``None`` where not read."""

    direction: tuple[float, float] | None
    level: float | None = None


def source_directions(x: np.ndarray, sample_rate: int, kinds, hrtf) -> dict[str, tuple[float, float] | None]:
    """``(azimuth_deg, elevation_deg)`` of each named kind (``None`` where not measurable).

    Parameters
    ----------
    x, sample_rate, kinds, hrtf
        As for :func:`read_sources`.

    Returns
    -------
    dict of str to tuple of (float, float) or None
        Each kind's ``(azimuth, elevation)`` (degrees); None where not measurable.
    """
    return {k: None if h is None else h.direction for k, h in read_sources(x, sample_rate, kinds, hrtf).items()}


def read_sources(
    x: np.ndarray, sample_rate: int, kinds, hrtf, *, levels: bool = False, known_clicks: bool = False
) -> dict[str, Heard | None]:
    """Each named kind's :class:`Heard` (``None`` where its entry is not found). Levels are read only
    when ``levels`` and all three kinds are named (the noise's needs the tone before it); with
    ``known_clicks`` the click train's direction comes from matching the known click (see :func:`read_clicks`).

    Parameters
    ----------
    x : ndarray, shape (2, samples)
        The binaural clip (left, right).
    sample_rate : int
        Sampling rate of ``x`` (Hz).
    kinds : sequence of str
        Palette kinds to read (``'harmonic'``, ``'noise'``, ``'clicks'``).
    hrtf : Hrtf
        The HRTF set the item was rendered with, at ``sample_rate``.
    levels : bool, optional
        Also read each source's direct level (for ``closer``).
    known_clicks : bool, optional
        Read the click train's direction by matching the known click (for ``higher``).

    Returns
    -------
    dict of str to Heard or None
        Each kind's reading; None where its entry is not found.
    """
    if not set(kinds) <= set(SPATIAL_ENTRY_ORDER):  # e.g. "the sweep": a kind this task does not draw
        return dict.fromkeys(kinds)
    order = sorted(kinds, key=SPATIAL_ENTRY_ORDER.index)
    levels = levels and order == list(SPATIAL_ENTRY_ORDER)
    onsets = direct_onsets(x, sample_rate, want=1)
    if not onsets:
        return dict.fromkeys(kinds)
    first = onsets[0]
    out: dict[str, Heard | None] = {}
    if order[0] == "clicks":
        out["clicks"] = read_clicks(x, sample_rate, max(first - DIRECT_PRE, 0), hrtf, levels=False, known=known_clicks)
        return out
    if order[0] == "harmonic":
        f0 = tone_f0(_span(x, first, FIRST_FIT_S, sample_rate), sample_rate)
    out[order[0]] = Heard(binaural_direction(x, first, sample_rate, hrtf))
    after = first
    if order[0] == "harmonic" and "noise" in order:
        entry = entry_after_tone(x, sample_rate, first, f0=f0)
        out["noise"] = None if entry is None else Heard(binaural_direction(entry[1], entry[0], sample_rate, hrtf))
        after = first if entry is None else entry[0]
        if levels and entry is not None and out["harmonic"].direction and out["noise"].direction:
            tone = tone_level(x, sample_rate, first, f0, _hrir(hrtf, out["harmonic"].direction))
            out["harmonic"] = Heard(out["harmonic"].direction, tone)
            level = noise_level(x, sample_rate, entry[0], f0, _hrir(hrtf, out["noise"].direction))
            out["noise"] = Heard(out["noise"].direction, level)
    if "clicks" in order:
        out["clicks"] = read_clicks(
            x, sample_rate, after + int(0.1 * sample_rate), hrtf, levels=levels, known=known_clicks
        )
    return out


# -- the harmonic tone ------------------------------------------------------------------------
def tone_f0(x: np.ndarray, sample_rate: int) -> float:
    """f0 (Hz) of a harmonic tone in ``x`` [channels, n]: the grid f0 whose harmonics collect the most power.

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        A stretch where the harmonic tone is alone.
    sample_rate : int
        Sampling rate of ``x`` (Hz).

    Returns
    -------
    float
        The f0 (Hz) on a :data:`F0_STEP_HZ` grid over the palette's range.
    """
    m = x.mean(axis=0)
    nfft = 1 << 18
    power = np.abs(np.fft.rfft(m * np.hanning(m.size), nfft)) ** 2
    f0 = np.arange(SPATIAL_F0_HZ[0], SPATIAL_F0_HZ[1] + F0_STEP_HZ / 2, F0_STEP_HZ)
    k = np.arange(1, SPATIAL_MAX_HARMONICS + 1)
    bins = np.rint(np.outer(f0, k) * nfft / sample_rate).astype(int)
    audible = np.outer(f0, k) < sample_rate / 2 - 1  # the palette keeps harmonics below Nyquist
    score = np.sum(np.where(audible, power[np.minimum(bins, power.size - 1)], 0.0), axis=1)
    return float(f0[int(np.argmax(score))])


def _tone_basis(start: int, stop: int, end: int, f0: float, sample_rate: int) -> np.ndarray:
    """Columns cos/sin of every harmonic of ``f0`` (below Nyquist), each also times (t - end): a slow drift."""
    n_h = spatial_harmonics(f0, sample_rate)
    t = np.arange(start, stop)
    phase = 2.0 * np.pi * f0 / sample_rate * np.outer(t, np.arange(1, n_h + 1))
    c, s = np.cos(phase), np.sin(phase)
    drift = ((t - end) / sample_rate)[:, None]
    return np.concatenate([c, s, c * drift, s * drift], axis=1)


def tone_fit(x: np.ndarray, start: int, stop: int, f0: float, sample_rate: int):
    """The tone's least-squares model on ``x[:, start:stop]``: ``predict(a, b)`` -> [channels, b - a].

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    start, stop : int
        The fitted span (samples).
    f0 : float
        Fundamental frequency of the harmonic tone (Hz).
    sample_rate : int
        Sampling rate of ``x`` (Hz).

    Returns
    -------
    callable
        ``predict(a, b) -> ndarray, shape (channels, b - a)``: the model over samples ``a`` to ``b``.
    """
    coef, *_ = np.linalg.lstsq(_tone_basis(start, stop, stop, f0, sample_rate), x[:, start:stop].T, rcond=None)
    return lambda a, b: (_tone_basis(a, b, stop, f0, sample_rate) @ coef).T


def entry_after_tone(
    x: np.ndarray, sample_rate: int, tone_onset: int, *, f0: float | None = None
) -> tuple[int, np.ndarray] | None:
    """``(onset, residual)`` of the source entering after the harmonic tone (of ``f0``, estimated here
    when not given): the residual is ``x`` minus the tone's prediction around the onset (zero elsewhere);
    ``None`` when no entry is found.

    Parameters
    ----------
    x, sample_rate
        The binaural clip and its sampling rate (Hz), as for :func:`read_sources`.
    tone_onset : int
        Onset of the harmonic tone (samples).
    f0 : float or None, optional
        The tone's f0 (Hz); estimated when None.

    Returns
    -------
    tuple of (int, ndarray) or None
        The entering source's onset (samples) and the residual, shape (2, samples); None if not found.
    """
    f0 = tone_f0(_span(x, tone_onset, FIRST_FIT_S, sample_rate), sample_rate) if f0 is None else f0
    fit_n, step = int(FIT_S * sample_rate), int(STEP_S * sample_rate)
    t = tone_onset + int(FIRST_FIT_S[1] * sample_rate)
    last = min(x.shape[1], tone_onset + int(SEARCH_S * sample_rate))
    while t + step <= last:
        predict = tone_fit(x, t - fit_n, t, f0, sample_rate)
        seg = x[:, t - fit_n : t + step] - predict(t - fit_n, t + step)
        if np.mean(seg[:, fit_n:] ** 2) > ENTRY_JUMP * np.mean(seg[:, :fit_n] ** 2):
            onset = t - fit_n + _rise(seg, fit_n, sample_rate)
            a, b = onset - fit_n - int(GUARD_S * sample_rate), onset - int(GUARD_S * sample_rate)
            predict = tone_fit(x, a, b, f0, sample_rate)
            stop = min(onset + int(0.02 * sample_rate), x.shape[1])
            residual = np.zeros_like(x)
            residual[:, b:stop] = x[:, b:stop] - predict(b, stop)
            return onset, residual
        t += step
    return None


def _rise(seg: np.ndarray, start: int, sample_rate: int) -> int:
    """Index in ``seg`` where a sound enters after ``start``: the trailing 1 ms power first exceeds
    :data:`ONSET_JUMP` times ``seg[:, :start]``'s mean power, searched back from its first
    :data:`ENTRY_JUMP`-fold excess (at most 5 ms)."""
    p = np.sum(seg**2, axis=0)
    floor = float(np.mean(p[:start]))
    m = max(1, int(0.001 * sample_rate))
    trailing = np.convolve(p, np.ones(m) / m)[: p.size]
    above = np.flatnonzero(trailing[start:] > ENTRY_JUMP * floor)
    if above.size == 0:
        return start
    i = start + int(above[0])
    j = max(i - int(0.005 * sample_rate), start)
    return j + int(np.flatnonzero(trailing[j : i + 1] > ONSET_JUMP * floor)[0]) - m // 2


# -- direct levels (closer) ---------------------------------------------------------------------
def tone_model(f0: float, sample_rate: int, n: int) -> np.ndarray:
    """The first ``n`` samples of the palette's harmonic tone of ``f0`` (sine phase, ``1/k`` amplitudes,
    harmonics below Nyquist) with its onset ramp, at unit steady RMS, as the source emits it.

    Parameters
    ----------
    f0 : float
        Fundamental frequency of the harmonic tone (Hz).
    sample_rate : int
        Sampling rate (Hz).
    n : int
        Number of samples.

    Returns
    -------
    ndarray, shape (n,), float64
        The tone's first ``n`` samples at unit steady RMS.
    """
    n_h = spatial_harmonics(f0, sample_rate)
    long = harmonic_complex(f0, (2 * n + 1) / sample_rate, sample_rate=sample_rate, n_harmonics=n_h)
    ramped = apply_ramps(long, sample_rate=sample_rate, ramp_s=SPATIAL_RAMP_S)[:n]  # the offset ramp lies past n
    return ramped / math.sqrt(0.5 * float(np.sum(1.0 / np.arange(1, n_h + 1) ** 2)))


def tone_level(x: np.ndarray, sample_rate: int, onset: int, f0: float, hrir: np.ndarray) -> float:
    """Level of the tone entering first near ``onset``: the least-squares gain (squared) of its model
    through ``hrir`` on its first :data:`TONE_MATCH_S`, at the lag within :data:`ONSET_SEARCH_S` that
    correlates best (the detected onset can lead the arrival by 4 ms: a loud tone's low-frequency
    pre-ringing).

    Parameters
    ----------
    x, sample_rate, onset
        The binaural clip, its sampling rate (Hz) and the tone's detected onset (samples).
    f0 : float
        The tone's f0 (Hz).
    hrir : ndarray, shape (2, taps)
        The HRIR pair of the source's measured direction.

    Returns
    -------
    float
        The tone's direct power re its model through ``hrir`` (linear, ``1 / d**2`` at ``d`` m); nan if no lag fits.
    """
    n_match = int(TONE_MATCH_S * sample_rate)
    lo, hi = int(ONSET_SEARCH_S[0] * sample_rate), int(ONSET_SEARCH_S[1] * sample_rate)
    ref = _through(tone_model(f0, sample_rate, n_match), hrir)
    lag = _best_lag(x, ref, range(onset - lo, onset + hi), n_match)
    if lag < 0:
        return math.nan
    r, y = ref[:, :n_match], x[:, lag : lag + n_match]
    return (float(np.sum(y * r)) / float(np.sum(r * r))) ** 2


@lru_cache(maxsize=8)
def _noise_references(sample_rate: int) -> tuple[np.ndarray, ...]:
    """:data:`NOISE_REFERENCES` pink noises of the recipe (fixed seeds), onset-ramped, 12.5 ms each."""
    band = spatial_noise_band(sample_rate)
    n = n_samples(0.0125, sample_rate)
    out = []
    for seed in range(NOISE_REFERENCES):
        z = noise(0.05, sample_rate=sample_rate, rng=np.random.default_rng(seed), color="pink", band_hz=band)
        out.append(apply_ramps(z, sample_rate=sample_rate, ramp_s=SPATIAL_RAMP_S)[:n])
    return tuple(out)


def noise_level(x: np.ndarray, sample_rate: int, entry: int, f0: float, hrir: np.ndarray) -> float:
    """Level of the noise detected entering at ``entry`` over the tone of ``f0``: the residual of the
    tone's prediction (the model ending :data:`NOISE_GUARD_S` before ``entry``); the arrival where the
    next 2 ms rise most over the previous 4 ms; the energy :data:`NOISE_WINDOW_S` after it, less the
    residual's floor, over the mean of :data:`NOISE_REFERENCES` recipe noises through ``hrir``.

    Parameters
    ----------
    x, sample_rate, f0, hrir
        As for :func:`tone_level`.
    entry : int
        Detected entry of the noise (samples).

    Returns
    -------
    float
        The noise's direct energy re the recipe's noises through ``hrir`` (linear, >= 0); nan if too early.
    """
    guard, fit = int(NOISE_GUARD_S * sample_rate), int(FIT_S * sample_rate)
    floor_n, (w0, w1) = int(NOISE_FLOOR_S * sample_rate), (int(v * sample_rate) for v in NOISE_WINDOW_S)
    b, stop = entry - guard, min(entry + int(0.025 * sample_rate), x.shape[1])
    if b - fit < 0:
        return math.nan
    p = np.sum((x[:, b:stop] - tone_fit(x, b - fit, b, f0, sample_rate)(b, stop)) ** 2, axis=0)
    floor = float(np.mean(p[:floor_n]))
    cs = np.concatenate([[0.0], np.cumsum(p)])
    cand = np.arange(floor_n, min(guard + n_samples(0.0025, sample_rate), p.size - w1))
    rise = (cs[cand + w1 - w0] - cs[cand]) / (w1 - w0) / np.maximum((cs[cand] - cs[cand - floor_n]) / floor_n, 1e-300)
    a = int(cand[int(np.argmax(rise))])
    expected = float(np.mean([np.sum(_through(z, hrir)[:, w0:w1] ** 2) for z in _noise_references(sample_rate)]))
    return max(float(np.sum(p[a + w0 : a + w1])) - (w1 - w0) * floor, 0.0) / expected


# -- the click train ---------------------------------------------------------------------------
def click_average(x: np.ndarray, sample_rate: int, after: int) -> tuple[np.ndarray, float] | None:
    """``(window, period)`` of the click train entering after sample ``after``: the mean of its aligned
    click windows [2, n] (each starting :data:`CLICK_WINDOW_PRE` samples before its spike) and its period
    (samples, to 0.02); ``None`` when no train is found.

    Parameters
    ----------
    x, sample_rate
        The binaural clip (left, right) and its sampling rate (Hz).
    after : int
        Sample after which the click train enters.

    Returns
    -------
    tuple of (ndarray, float) or None
        The averaged click window, shape (2, samples), and the period (samples); None if not found.
    """
    spikes = _spikes(x, sample_rate, after)
    if not np.any(spikes):
        return None
    period = _click_period(spikes, sample_rate, after)
    first = _first_click(spikes, period, after)
    length = CLICK_WINDOW_PRE + DIRECT_PRE + int(0.004 * sample_rate)
    best = (-1.0, [], 0.0)
    for p in np.arange(period - 1.0, period + 1.0, 0.02):  # the period to 0.02 samples: the most coherent average
        pos = _positions(spikes, first, p, x.shape[1] - length - 3)
        if len(pos) >= 2:
            energy = float(
                np.sum(np.mean([x[:, q - CLICK_WINDOW_PRE : q - CLICK_WINDOW_PRE + length] for q in pos], axis=0) ** 2)
            )
            if energy * len(pos) > best[0]:
                best = (energy * len(pos), pos, float(p))
    if not best[1]:
        return None
    return _aligned_mean(x, best[1], length), best[2]


def read_clicks(
    x: np.ndarray, sample_rate: int, after: int, hrtf, *, levels: bool, known: bool = False
) -> Heard | None:
    """The click train entering after ``after``: its direction from the averaged click (the cross
    relation, or with ``known`` the match of one recipe click through each HRIR) and, with
    ``levels``, its level (the averaged click's energy over :data:`CLICK_MATCH_S` at the best-correlating
    lag, against one click of the recipe -- energy ``period`` at unit power -- through that direction's HRIR).

    Parameters
    ----------
    x, sample_rate, after
        As for :func:`click_average`.
    hrtf : Hrtf
        The HRTF set, at ``sample_rate``.
    levels : bool
        Also read the train's direct level.
    known : bool, optional
        Direction by matching the known click through each HRIR, not by the cross relation.

    Returns
    -------
    Heard or None
        The train's direction and, with ``levels``, level; None when no train is found.
    """
    found = click_average(x, sample_rate, after)
    if found is None:
        return None
    avg, period = found
    power = np.sum(avg**2, axis=0)
    onset = int(np.flatnonzero(power > 0.02 * power.max())[0])
    padded = np.zeros((2, avg.shape[1] + 2 * DIRECT_PRE))
    padded[:, DIRECT_PRE : DIRECT_PRE + avg.shape[1]] = avg
    if known:  # one click of the recipe (a unit impulse) at the window's start, its arrival searched
        win = padded[:, onset : onset + DIRECT_PRE + int(KNOWN_WINDOW_S * sample_rate)]
        m = match_known_source(
            win,
            np.eye(1, win.shape[1])[0],
            hrtf.hrirs,
            hrtf.directions_deg,
            max_lag=KNOWN_LAG_S[1] * sample_rate,
            lag_step=KNOWN_LAG_S[2] * sample_rate,
            lag=KNOWN_LAG_S[0] * sample_rate,
        )
        direction: tuple[float, float] | None = (m.azimuth_deg, m.elevation_deg)
    else:
        direction = binaural_direction(padded, DIRECT_PRE + onset, sample_rate, hrtf)
    if not levels or direction is None:
        return Heard(direction)
    n = int(CLICK_MATCH_S * sample_rate)
    ref = math.sqrt(period) * _hrir(hrtf, direction)
    lag = _best_lag(avg, ref, range(CLICK_WINDOW_PRE + n), n)
    level = float(np.sum(avg[:, lag : lag + n] ** 2)) / float(np.sum(ref[:, :n] ** 2)) if lag >= 0 else math.nan
    return Heard(direction, level)
