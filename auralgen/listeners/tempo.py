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
    """Index of the first option containing ``keyword`` (case-insensitive); :data:`NO_ANSWER` if none."""
    for i, text in enumerate(options):
        if keyword in text.lower():
            return i
    return NO_ANSWER


def two_groups(clip: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The clip's onsets split at the longest interval between consecutive onsets (None: < 2 onsets)."""
    t = onset_times(mono(clip), sample_rate)
    if t.size < 2:
        return None
    cut = int(np.argmax(np.diff(t))) + 1
    return t[:cut], t[cut:]


def direction(options: Sequence[str], value: float, bound: float, up: str, down: str, same: str) -> int:
    """The option naming ``up`` (value > bound), ``down`` (value < -bound) or ``same``."""
    if not math.isfinite(value):
        return NO_ANSWER
    if abs(value) < bound:
        return find_option(options, same)
    return find_option(options, up if value > 0 else down)


def tempo_relative(question, options, clips, sample_rate) -> int:
    """Faster / slower / the same: the second sequence's tempo against the first's."""
    groups = two_groups(clips[0], sample_rate)
    if groups is None:
        return NO_ANSWER
    a, b = (ioi_tempo_bpm(g) for g in groups)
    change = 100.0 * (b / a - 1.0) if a > 0 else math.nan
    return direction(options, change, TEMPO_JND_PERCENT, "faster", "slower", "same")


def bpm_bins(options: Sequence[str]) -> list[tuple[float, float]]:
    """Each option's BPM range from its text: ``below X`` -> (0, X), ``X to Y`` -> (X, Y), ``above X`` -> (X, inf)."""
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
    """The option whose BPM range holds the clip's measured tempo."""
    bpm = ioi_tempo_bpm(onset_times(mono(clips[0]), sample_rate))
    if not math.isfinite(bpm):
        return NO_ANSWER
    for i, (lo, hi) in enumerate(bpm_bins(options)):
        if lo <= bpm < hi:
            return i
    return NO_ANSWER
