"""A reference DSP listener: answers items from their audio alone.

The listener sees what a model sees -- the task name, the question, the option texts and
the decoded clips -- and never ``params``. It measures the physical attribute the task asks
about and picks the option whose text names the measured answer. Decisions use fixed
just-noticeable differences (:data:`JND`), so its accuracy per difficulty level is the
dataset's *physical-solvability curve*: near 100 % where the difference is well above the
JND, falling toward chance where it is below.

Answerers live in a registry keyed by task name; a new task adds one with
:func:`register_listener`. An answerer may take a ``layout`` keyword (the row's
``channel_layout``, which a model sees too; ``None`` when the caller does not pass it)::

    @register_listener("azimuth_absolute")
    def _azimuth(question, options, clips, sample_rate, layout=None) -> int: ...

The spatial answerers live in :mod:`auralgen.validation.listener_spatial`, the mixture's in
:mod:`auralgen.validation.listener_mixture`; both are imported at the end of this module.

Examples
--------
>>> sr = 16000; t = np.arange(int(0.5 * sr)) / sr
>>> clip = np.zeros((1, 2 * sr), np.float32)
>>> clip[0, 1600:1600 + t.size] = 0.1 * np.sin(2 * np.pi * 440 * t)
>>> clip[0, 16000:16000 + t.size] = 0.1 * np.sin(2 * np.pi * 470 * t)
>>> answer("pitch_relative", "", ["Lower", "The same", "Higher", "Unable to determine"], [clip], sr)
2
"""

from __future__ import annotations

import inspect
import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from auralgen.core.registry import Registry
from auralgen.errors import ParameterError
from auralgen.measure import f0_hz, level_db_rms, segments

Answerer = Callable[[str, Sequence[str], Sequence[np.ndarray], int], int]
LISTENERS: Registry[Answerer] = Registry("listener")  # task name -> answerer
_TAKES_LAYOUT: set[str] = set()

UNABLE_WORDS = ("unable", "cannot", "can't")
JND = {
    "pitch_cents": 10.0,  # trained listeners resolve ~5-10 cents at mid frequencies
    "level_db": 1.0,  # intensity JND ~0.5-1 dB
    "duration_ratio": 0.10,  # Weber fraction for duration ~10 %
}
SEGMENT_THRESHOLDS_DB = (-30.0, -50.0, -70.0)  # tried in turn until two sounds are found
PEAK_PROMINENCE_DB = 20.0  # narrowband peak over the spectrum's median (dither-floor noise maxima reach ~13 dB)
STEADY_FRACTION = 0.8  # central part of a segment analysed for level / pitch
F0_WINDOW_S = 0.25


def register_listener(task: str) -> Callable[[Answerer], Answerer]:
    """Decorator: register ``fn(question, options, clips, sample_rate) -> option index`` for ``task``."""

    def deco(fn: Answerer) -> Answerer:
        LISTENERS.register(task)(fn)
        (_TAKES_LAYOUT.add if "layout" in inspect.signature(fn).parameters else _TAKES_LAYOUT.discard)(task)
        return fn

    return deco


def answer(
    task: str,
    question: str,
    options: Sequence[str],
    clips: Sequence[np.ndarray],
    sample_rate: int,
    *,
    layout: str | None = None,
) -> int:
    """Index into ``options`` of the listener's answer to one item.

    Parameters
    ----------
    task : str
        Task name; selects the answerer.
    question : str
    options : sequence of str
        The option texts as stored (canonical order, "Unable to determine" last).
    clips : sequence of np.ndarray [shape=(channels, samples)]
        Decoded audio.
    sample_rate : int > 0
        Hz.
    layout : str, optional
        The row's ``channel_layout`` (``binaural``, ``foa_acn_sn3d``, ``tetra``, ...); spatial
        answerers infer it from the channels when it is not given.

    Returns
    -------
    int
        The chosen option; the "Unable to determine" option when nothing can be measured.
    """
    if task not in LISTENERS:
        raise ParameterError(f"task={task!r} has no listener; allowed: {', '.join(sorted(LISTENERS))}")
    if not options:
        raise ParameterError("options=[] is empty; allowed: at least one option")
    extra = {"layout": layout} if task in _TAKES_LAYOUT else {}
    return int(LISTENERS[task](question, list(options), list(clips), int(sample_rate), **extra))


# -- helpers ---------------------------------------------------------------------------------
def option_index(options: Sequence[str], *keywords: str) -> int:
    """First option containing any of ``keywords`` (case-insensitive); else the "unable" option."""
    low = [o.lower() for o in options]
    for i, text in enumerate(low):
        if any(k in text for k in keywords):
            return i
    return unable_index(options)


def unable_index(options: Sequence[str]) -> int:
    low = [o.lower() for o in options]
    hits = [i for i, text in enumerate(low) if any(w in text for w in UNABLE_WORDS)]
    return hits[0] if hits else len(options) - 1


def _mono(clip: np.ndarray) -> np.ndarray:
    x = np.asarray(clip, dtype=np.float64)
    return x.mean(axis=0) if x.ndim == 2 else x


def sound_segments(x: np.ndarray, sample_rate: int, *, want: int = 2) -> list[tuple[int, int]]:
    """Sample ranges of the ``want`` longest active sounds, in time order (fewer if not found).

    The detection threshold is lowered step by step (:data:`SEGMENT_THRESHOLDS_DB`) until
    ``want`` sounds are found, so a sound 48 dB below the other is still seen.
    """
    found: list = []
    for thr in SEGMENT_THRESHOLDS_DB:
        found = segments(x, sample_rate, threshold_db=thr)
        if len(found) >= want:
            break
    found = sorted(found, key=lambda s: s.duration_s, reverse=True)[:want]
    spans = [(int(round(s.onset_s * sample_rate)), int(round(s.offset_s * sample_rate))) for s in found]
    return sorted(spans)


def _steady(x: np.ndarray, span: tuple[int, int]) -> np.ndarray:
    a, b = span
    trim = int((b - a) * (1 - STEADY_FRACTION) / 2)
    return x[a + trim : b - trim]


def _compare(options, value: float, jnd: float, up: str, down: str, same: str) -> int:
    if not math.isfinite(value):
        return unable_index(options)
    if abs(value) < jnd:
        return option_index(options, same)
    return option_index(options, up if value > 0 else down)


# -- tone tasks --------------------------------------------------------------------------------
@register_listener("pitch_relative")
def _pitch_relative(question, options, clips, sample_rate) -> int:
    x = _mono(clips[0])
    spans = sound_segments(x, sample_rate)
    if len(spans) < 2:
        return unable_index(options)
    half = int(F0_WINDOW_S * sample_rate / 2)
    f = []
    for a, b in spans:
        mid, h = (a + b) // 2, min(half, (b - a) // 2)
        f.append(f0_hz(x[mid - h : mid + h], sample_rate))
    if not all(math.isfinite(v) and v > 0 for v in f):
        return unable_index(options)
    return _compare(options, 1200.0 * math.log2(f[1] / f[0]), JND["pitch_cents"], "higher", "lower", "same")


@register_listener("loudness_relative")
def _loudness_relative(question, options, clips, sample_rate) -> int:
    x = _mono(clips[0])
    spans = sound_segments(x, sample_rate)
    if len(spans) < 2:
        return unable_index(options)
    lv = [level_db_rms(_steady(x, s)) for s in spans]
    return _compare(options, lv[1] - lv[0], JND["level_db"], "louder", "softer", "same")


@register_listener("duration_relative")
def _duration_relative(question, options, clips, sample_rate) -> int:
    spans = sound_segments(_mono(clips[0]), sample_rate)
    if len(spans) < 2 or min(b - a for a, b in spans) <= 0:
        return unable_index(options)
    ratio = math.log((spans[1][1] - spans[1][0]) / (spans[0][1] - spans[0][0]))
    return _compare(options, ratio, math.log1p(JND["duration_ratio"]), "longer", "shorter", "same")


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s)\b")


def duration_bins(options: Sequence[str]) -> dict[int, tuple[float, float]]:
    """``{option index: (low_s, high_s)}`` parsed from texts like "Between 0.5 s and 1 s".

    "Shorter than X" is ``(0, X)``, "Longer than X" is ``(X, inf)``; options without a
    duration (e.g. "Unable to determine") are left out.

    Examples
    --------
    >>> duration_bins(["Shorter than 0.5 s", "Between 0.5 s and 1 s", "Longer than 1 s", "Unable to determine"])
    {0: (0.0, 0.5), 1: (0.5, 1.0), 2: (1.0, inf)}
    """
    bins = {}
    for i, text in enumerate(options):
        vals = [float(v) / (1000.0 if unit == "ms" else 1.0) for v, unit in _NUMBER.findall(text)]
        low = text.lower()
        if len(vals) == 2:
            bins[i] = (min(vals), max(vals))
        elif len(vals) == 1 and any(w in low for w in ("shorter", "less", "under", "below")):
            bins[i] = (0.0, vals[0])
        elif len(vals) == 1 and any(w in low for w in ("longer", "more", "over", "above")):
            bins[i] = (vals[0], math.inf)
    return bins


@register_listener("duration_absolute")
def _duration_absolute(question, options, clips, sample_rate) -> int:
    found = segments(_mono(clips[0]), sample_rate)
    bins = duration_bins(options)
    if not found or not bins:
        return unable_index(options)
    d = found[-1].offset_s - found[0].onset_s  # the sound's span (bridges any dips inside it)

    def log_distance(i: int) -> float:
        lo, hi = bins[i]
        if lo <= d <= hi:
            return 0.0
        return math.log(lo / d) if d < lo else math.log(d / hi)

    return min(bins, key=log_distance)


def peak_prominence_db(x: np.ndarray, sample_rate: int, *, fmin_hz: float = 15.0) -> float:
    """Strongest narrowband peak above ``fmin_hz`` over the median bin power (dB), Hann window.

    On white (dither) noise the maximum over ~10^4-10^5 bins sits ~12-13 dB above the median;
    a 1 s tone at the audiogram's quietest levels stands 40 dB or more above it.
    """
    n = x.shape[-1]
    if n < 16:
        return -math.inf
    power = np.abs(np.fft.rfft(x * np.hanning(n + 2)[1:-1])) ** 2
    band = power[int(math.ceil(fmin_hz * n / sample_rate)) :]
    floor = float(np.median(band))
    peak = float(band.max())
    if peak <= 0:
        return -math.inf
    return math.inf if floor <= 0 else 10.0 * math.log10(peak / floor)


@register_listener("audiogram")
def _audiogram(question, options, clips, sample_rate) -> int:
    x = _mono(clips[0])
    half = x.size // 2
    prom = [peak_prominence_db(part, sample_rate) for part in (x[:half], x[half : 2 * half])]
    if max(prom) < PEAK_PROMINENCE_DB:
        return option_index(options, "not present", "absent", "no tone")
    return option_index(options, "first" if prom[0] >= prom[1] else "second")


# -- dataset-level -------------------------------------------------------------------------------
def listener_accuracy(dataset_dir) -> dict[tuple[str, int], dict[str, Any]]:
    """Listener accuracy per ``(task, level)`` over every item of an exported dataset.

    Returns
    -------
    dict
        ``{(task, level): {"level_value", "level_unit", "n", "correct", "accuracy"}}``;
        tasks without a registered listener are left out.
    """
    from auralgen.validation.audit import iter_items

    acc: dict[tuple[str, int], dict[str, Any]] = defaultdict(lambda: {"n": 0, "correct": 0})
    for item in iter_items(dataset_dir):
        row = item.row
        if row["task"] not in LISTENERS or item.clips is None:
            continue
        rec = acc[(row["task"], row["level"])]
        rec.update(level_value=row["level_value"], level_unit=row["level_unit"])
        rec["n"] += 1
        got = answer(row["task"], row["question"], row["options"], item.clips, item.sample_rate,
                     layout=row.get("channel_layout"))  # fmt: skip
        rec["correct"] += int(got == row["answer_index"])
    return {k: {**v, "accuracy": v["correct"] / v["n"]} for k, v in sorted(acc.items())}


from auralgen.validation import listener_mixture as _mixture  # noqa: E402, F401 - registers answerers
from auralgen.validation import listener_spatial as _spatial  # noqa: E402, F401 - registers answerers
from auralgen.validation import listener_temporal as _temporal  # noqa: E402, F401 - registers answerers
