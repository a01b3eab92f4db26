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

from auralgen.listeners.common import NO_ANSWER, compare, listener_doc, mono
from auralgen.measure.onsets import ioi_tempo_bpm, onset_times

# the listener's decision bound (percent): below the tasks' hardest non-zero level (3 %) and the
# human tempo-discrimination JND of ~2-5 % (Drake & Botte 1993), so its accuracy per level is
# the physical-solvability curve
TEMPO_JND_PERCENT = 1.0
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def two_groups(clip: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The clip's onsets split at the longest interval between consecutive onsets (None: < 2 onsets).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip; onsets are found on its channel mean.
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


@listener_doc("the first holds the two sequences")
def tempo_relative(question, options, clips, sample_rate) -> int:
    """Faster / slower / the same: the second sequence's tempo against the first's."""
    groups = two_groups(clips[0], sample_rate)
    if groups is None:
        return NO_ANSWER
    a, b = (ioi_tempo_bpm(g) for g in groups)
    change = 100.0 * (b / a - 1.0) if a > 0 else math.nan
    return compare(options, change, TEMPO_JND_PERCENT, "faster", "slower", "same")


def bpm_bins(options: Sequence[str]) -> list[tuple[float, float]]:
    """Each option's BPM range from its text: ``below X`` -> (0, X), ``X to Y`` -> (X, Y), ``above X`` -> (X, inf).

    Parameters
    ----------
    options : sequence of str
        The option texts, e.g. "Below 80 BPM", "80 to 120 BPM", "Above 120 BPM".

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


def option_in_range(options: Sequence[str], value: float) -> int:
    """The first option whose range (:func:`bpm_bins`) holds ``value``: ``low <= value < high``.

    Parameters
    ----------
    options : sequence of str
        The option texts.
    value : float
        The measured value, in the options' unit; nan when unmeasured.

    Returns
    -------
    int
        Index of that option; ``NO_ANSWER`` (-1) when ``value`` is not finite or no range holds it.
    """
    if not math.isfinite(value):
        return NO_ANSWER
    for i, (lo, hi) in enumerate(bpm_bins(options)):
        if lo <= value < hi:
            return i
    return NO_ANSWER


@listener_doc(none="nothing is measured or no option matches")
def tempo_absolute(question, options, clips, sample_rate) -> int:
    """The option whose BPM range holds the clip's measured tempo."""
    return option_in_range(options, ioi_tempo_bpm(onset_times(mono(clips[0]), sample_rate)))
