"""Reference listeners of the tempo tasks: onsets, inter-onset intervals, tempo in BPM.

The listener sees the question, the option texts and the clip, never ``params``. It finds the
events' onsets (:func:`auralgen.measure.onsets.onset_times`), splits a two-sequence clip at its
longest silence between onsets, and reads each sequence's tempo from its inter-onset intervals
(:func:`auralgen.measure.onsets.ioi_tempo_bpm`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from auralgen.listeners.common import mono
from auralgen.measure.onsets import ioi_tempo_bpm, onset_times

NO_ANSWER = -1  # no measurable answer: scored wrong, never a guess
# the listener's decision bound (percent): below the tasks' hardest non-zero level (3 %) and the
# human tempo-discrimination JND of ~2-5 % (Drake & Botte 1993), so its accuracy per level is
# the physical-solvability curve
TEMPO_JND_PERCENT = 1.0
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def find_option(options: Sequence[str], keyword: str) -> int:
    """Index of the first option containing ``keyword`` (case-insensitive); :data:`NO_ANSWER` if none.

    Parameters
    ----------
    options : sequence of str
        The option texts.
    keyword : str
        Lower-case text to look for.

    Returns
    -------
    int
        Index of the first option containing ``keyword``; ``NO_ANSWER`` (-1) when none does.
    """
    for i, text in enumerate(options):
        if keyword in text.lower():
            return i
    return NO_ANSWER


def two_groups(clip: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The clip's onsets split at the longest interval between consecutive onsets (None: < 2 onsets).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip; its channels are averaged.
    sample_rate : int
        Sampling rate of ``clip`` (Hz).

    Returns
    -------
    tuple of (ndarray, ndarray) or None
        Onset times (s) of the first and the second group; None with fewer than two onsets.
    """
    t = onset_times(mono(clip), sample_rate)
    if t.size < 2:
        return None
    cut = int(np.argmax(np.diff(t))) + 1
    return t[:cut], t[cut:]


def direction(options: Sequence[str], value: float, bound: float, up: str, down: str, same: str) -> int:
    """The option naming ``up`` (value > bound), ``down`` (value < -bound) or ``same``.

    Parameters
    ----------
    options : sequence of str
        The option texts.
    value : float
        The measured change, second against first (e.g. percent); nan when unmeasured.
    bound : float
        Smallest ``|value|`` answered as a change, in the unit of ``value``.
    up, down, same : str
        Lower-case keywords of the option for an increase, a decrease and no change.

    Returns
    -------
    int
        Index of the option naming the direction; ``NO_ANSWER`` (-1) when ``value`` is not finite.
    """
    if not math.isfinite(value):
        return NO_ANSWER
    if abs(value) < bound:
        return find_option(options, same)
    return find_option(options, up if value > 0 else down)


def tempo_relative(question, options, clips, sample_rate) -> int:
    """Faster / slower / the same: the second sequence's tempo against the first's.

    Parameters
    ----------
    question : str
        The item's question text (not read).
    options : list of str
        The option texts, in canonical order.
    clips : list of ndarray, each shape (channels, samples)
        The item's decoded clips; the first holds the two sequences.
    sample_rate : int
        Sampling rate of the clips (Hz).

    Returns
    -------
    int
        Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when the audio gives nothing to measure.
    """
    groups = two_groups(clips[0], sample_rate)
    if groups is None:
        return NO_ANSWER
    a, b = (ioi_tempo_bpm(g) for g in groups)
    change = 100.0 * (b / a - 1.0) if a > 0 else math.nan
    return direction(options, change, TEMPO_JND_PERCENT, "faster", "slower", "same")


def bpm_bins(options: Sequence[str]) -> list[tuple[float, float]]:
    """Each option's BPM range from its text: ``below X`` -> (0, X), ``X to Y`` -> (X, Y), ``above X`` -> (X, inf).

    Parameters
    ----------
    options : sequence of str
        The option texts.

    Returns
    -------
    list of tuple of (float, float)
        One ``(low, high)`` range per option in the options' unit (BPM, or events
        per second for texture); ``(nan, nan)`` for an option without one.
    """
    out = []
    for text in options:
        nums = [float(v) for v in _NUMBER.findall(text)]
        low = text.lower()
        if len(nums) >= 2:
            out.append((nums[0], nums[1]))
        elif nums and "below" in low:
            out.append((0.0, nums[0]))
        elif nums and "above" in low:
            out.append((nums[0], math.inf))
        else:
            out.append((math.nan, math.nan))
    return out


def tempo_absolute(question, options, clips, sample_rate) -> int:
    """The option whose BPM range holds the clip's measured tempo.

    Parameters
    ----------
    question : str
        The item's question text (not read).
    options : list of str
        The option texts, in canonical order.
    clips : list of ndarray, each shape (channels, samples)
        The item's decoded clips; the first is measured.
    sample_rate : int
        Sampling rate of the clips (Hz).

    Returns
    -------
    int
        Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when nothing is measured or no option matches.
    """
    bpm = ioi_tempo_bpm(onset_times(mono(clips[0]), sample_rate))
    if not math.isfinite(bpm):
        return NO_ANSWER
    for i, (lo, hi) in enumerate(bpm_bins(options)):
        if lo <= bpm < hi:
            return i
    return NO_ANSWER
