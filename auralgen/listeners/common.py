"""What every listener shares: its signature, finding options by their text, cutting a clip into sounds.

The listener sees what a model sees -- the question, the option texts and the decoded clips --
and never ``params``; it picks the option whose text names the measured answer. Every listener
takes the same four arguments (and some a receiver's ``layout``): :data:`LISTENER` documents them
once and :func:`listener_doc` appends that documentation to each listener's docstring.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.measure import segments

NO_ANSWER = -1  # what a listener returns when the audio gives it nothing to measure (scored wrong, never a guess)
SEGMENT_THRESHOLDS_DB = (-30.0, -50.0, -70.0)  # tried in turn until two sounds are found
STEADY_FRACTION = 0.8  # central part of a segment analysed for level / pitch
LISTENER = """
Parameters
----------
question : str
    The item's question text{question}.
options : list of str
    The option texts, in canonical order.
clips : list of ndarray, each shape (channels, samples)
    The item's decoded clips; {clips}.
sample_rate : int
    Sampling rate of the clips (Hz).{more}

Returns
-------
int
    Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when {none}.
"""
"""The sections every listener's docstring ends with (filled in by :func:`listener_doc`)."""


def listener_doc(
    clips: str = "the first is measured",
    *more: str,
    question: str = " (not read)",
    none: str = "the audio gives nothing to measure",
) -> Callable:
    """A decorator ending a listener's docstring with :data:`LISTENER`, the arguments every listener takes.

    Parameters
    ----------
    clips : str, optional
        What the listener reads in the clips, e.g. "the first holds the two sounds".
    *more : str
        Numpydoc entries of the listener's further parameters (e.g. ``layout``), one string each.
    question : str, optional
        Appended to "The item's question text": whether and how the listener reads it.
    none : str, optional
        When the listener answers ``NO_ANSWER``.

    Returns
    -------
    callable
        The decorator (:func:`auralgen.core.docstrings.sections`).
    """
    extra = "".join("\n" + inspect.cleandoc(m) for m in more)
    return sections(LISTENER, clips=clips, more=extra, question=question, none=none)


def option_index(options: Sequence[str], *keywords: str) -> int:
    """The first option containing ``keywords[0]`` (case-insensitive), else the first containing
    ``keywords[1]``, and so on; else :data:`NO_ANSWER`. Keywords go from the most specific: "at ear
    level" before "ear level", which "Above ear level" also contains.

    >>> option_index(["Above ear level", "At ear level", "Below ear level"], "at ear level", "ear level")
    1

    Parameters
    ----------
    options : sequence of str
        The option texts.
    *keywords : str
        Lower-case texts to look for, the most specific first.

    Returns
    -------
    int
        Index of the first option holding the first keyword found; ``NO_ANSWER`` (-1) when none does.
    """
    low = [o.lower() for o in options]
    for k in keywords:
        for i, text in enumerate(low):
            if k in text:
                return i
    return NO_ANSWER


_BELOW = ("below", "under", "less", "shorter")
_ABOVE = ("above", "over", "more", "longer")


def range_bins(options: Sequence[str], numbers: Callable[[str], list[float]]) -> dict[int, tuple[float, float]]:
    """``{option index: (low, high)}`` from the numbers ``numbers(text)`` finds in each option: two are
    a range, one after "below"/"under"/"less"/"shorter" is ``(0, X)``, one after "above"/"over"/"more"/"longer"
    is ``(X, inf)``; options without a number (e.g. "Unable to determine") are left out.

    Examples
    --------
    >>> range_bins(["below 2", "2 to 5", "above 5", "none"], lambda t: [float(w) for w in t.split() if w.isdigit()])
    {0: (0.0, 2.0), 1: (2.0, 5.0), 2: (5.0, inf)}

    Parameters
    ----------
    options : sequence of str
        The option texts.
    numbers : callable
        ``numbers(text) -> list of float``: the numbers one option text states, in its unit.

    Returns
    -------
    dict of int to tuple of float
        Option index to its ``(low, high)`` range, in the unit ``numbers`` returns.
    """
    bins = {}
    for i, text in enumerate(options):
        vals = numbers(text)
        low = text.lower()
        if len(vals) == 2:
            bins[i] = (min(vals), max(vals))
        elif len(vals) == 1 and any(w in low for w in _BELOW):
            bins[i] = (0.0, vals[0])
        elif len(vals) == 1 and any(w in low for w in _ABOVE):
            bins[i] = (vals[0], math.inf)
    return bins


def nearest_bin(bins: dict[int, tuple[float, float]], value: float) -> int:
    """The option whose range holds ``value`` (> 0), else the nearest in log distance.

    Parameters
    ----------
    bins : dict of int to tuple of float
        Option index to its ``(low, high)`` range, as :func:`range_bins` makes it.
    value : float
        The measured value (> 0), in the unit of the ranges.

    Returns
    -------
    int
        Index of the option whose range holds ``value``, else of the one nearest in ``log`` distance.
    """

    def log_distance(i: int) -> float:
        lo, hi = bins[i]
        if lo <= value <= hi:
            return 0.0
        return math.log(lo / value) if value < lo else math.log(value / hi)

    return min(bins, key=log_distance)


def copy_search(
    x: np.ndarray, first: int, guess: int, sample_rate: int, *, template_s: float, before_s: float, after_s: float
) -> tuple[int, np.ndarray, np.ndarray] | None:
    """Where to look for a second copy of the sound that starts at ``first``: the channel sum of ``x``
    ``[ch, n]`` from ``lo`` = ``guess - before_s`` (not before the template's end) to ``guess + after_s``
    plus the template, and the template (the sound's first ``template_s``). Returns ``(lo, segment,
    template)`` (samples, float arrays), or None when that span is empty or the template silent.

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    first : int
        Onset of the sound (samples).
    guess : int
        Where the second copy is expected to start (samples).
    sample_rate : int
        Sampling rate of ``x`` (Hz).
    template_s : float
        Length of the template cut from the sound's start (s).
    before_s, after_s : float
        How far before and after ``guess`` to search (s).

    Returns
    -------
    tuple of (int, ndarray, ndarray) or None
        ``(lo, segment, template)``: the search start (samples), the channel sum
        from ``lo`` (1-D) and the template (1-D); None when the span is empty or the template silent.
    """
    m = x.sum(axis=0)
    n = int(template_s * sample_rate)
    tpl = m[first : first + n]
    lo = max(guess - int(before_s * sample_rate), first + n)
    hi = min(guess + int(after_s * sample_rate), m.size - n)
    if hi <= lo or not np.any(tpl):
        return None
    return lo, m[lo : hi + n], tpl


def no_answer(options: Sequence[str]) -> int:
    """:data:`NO_ANSWER`: the listener cannot measure what ``options`` ask about (it does not guess).

    Parameters
    ----------
    options : sequence of str
        The option texts (not read).

    Returns
    -------
    int
        ``NO_ANSWER`` (-1).
    """
    return NO_ANSWER


def mono(clip: np.ndarray) -> np.ndarray:
    """The clip as one channel: the mean over its channels.

    Parameters
    ----------
    clip : array_like, shape (channels, samples) or (samples,)
        One clip.

    Returns
    -------
    ndarray, shape (samples,), float64
        The mean of the channels (a 1-D clip as it is).
    """
    x = np.asarray(clip, dtype=np.float64)
    return x.mean(axis=0) if x.ndim == 2 else x


def sound_segments(x: np.ndarray, sample_rate: int, *, want: int = 2) -> list[tuple[int, int]]:
    """Sample ranges of the ``want`` longest active sounds, in time order (fewer if not found).

    The detection threshold is lowered step by step (:data:`SEGMENT_THRESHOLDS_DB`) until
    ``want`` sounds are found, so a sound 48 dB below the other is still seen.

    Parameters
    ----------
    x : ndarray, shape (samples,)
        A mono clip.
    sample_rate : int
        Sampling rate of ``x`` (Hz).
    want : int, optional
        How many sounds to find.

    Returns
    -------
    list of tuple of (int, int)
        ``(start, stop)`` of each sound (samples), in time order; at most ``want``.
    """
    found: list = []
    for thr in SEGMENT_THRESHOLDS_DB:
        found = segments(x, sample_rate, threshold_db=thr)
        if len(found) >= want:
            break
    found = sorted(found, key=lambda s: s.duration_s, reverse=True)[:want]
    spans = [(int(round(s.onset_s * sample_rate)), int(round(s.offset_s * sample_rate))) for s in found]
    return sorted(spans)


def steady(x: np.ndarray, span: tuple[int, int]) -> np.ndarray:
    """The steady part of one sound: its span without the first and last tenth (onset and decay).

    Parameters
    ----------
    x : ndarray, shape (samples,)
        A mono clip.
    span : tuple of (int, int)
        ``(start, stop)`` of one sound (samples).

    Returns
    -------
    ndarray, shape (samples,)
        The central :data:`STEADY_FRACTION` of the span (a view of ``x``).
    """
    a, b = span
    trim = int((b - a) * (1 - STEADY_FRACTION) / 2)
    return x[a + trim : b - trim]


def compare(options, value: float, jnd: float, up: str, down: str, same: str) -> int:
    """The option naming the direction of a measured difference: up, down, or the same within ``jnd``.

    Parameters
    ----------
    options : sequence of str
        The option texts.
    value : float
        The measured difference, second sound against the first (> 0: ``up``); nan when unmeasured.
    jnd : float
        Smallest ``|value|`` answered as a difference, in the unit of ``value``.
    up, down, same : str
        Lower-case keywords of the option for a positive, negative and negligible difference.

    Returns
    -------
    int
        Index of the option naming the measured direction; ``NO_ANSWER`` (-1) when ``value`` is not finite.
    """
    if not math.isfinite(value):
        return no_answer(options)
    if abs(value) < jnd:
        return option_index(options, same)
    return option_index(options, up if value > 0 else down)
