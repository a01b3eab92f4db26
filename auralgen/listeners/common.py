"""What every listener shares: finding options by their text, cutting a clip into sounds.

The listener sees what a model sees -- the question, the option texts and the decoded clips --
and never ``params``; it picks the option whose text names the measured answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from auralgen.measure import segments

NO_ANSWER = -1  # what a listener returns when the audio gives it nothing to measure (scored wrong, never a guess)
SEGMENT_THRESHOLDS_DB = (-30.0, -50.0, -70.0)  # tried in turn until two sounds are found
STEADY_FRACTION = 0.8  # central part of a segment analysed for level / pitch


def option_index(options: Sequence[str], *keywords: str) -> int:
    """The first option containing ``keywords[0]`` (case-insensitive), else the first containing
    ``keywords[1]``, and so on; else :data:`NO_ANSWER`. Keywords go from the most specific: "at ear
    level" before "ear level", which "Above ear level" also contains.

    >>> option_index(["Above ear level", "At ear level", "Below ear level"], "at ear level", "ear level")
    1
    """
    low = [o.lower() for o in options]
    for k in keywords:
        for i, text in enumerate(low):
            if k in text:
                return i
    return NO_ANSWER


def no_answer(options: Sequence[str]) -> int:
    """:data:`NO_ANSWER`: the listener cannot measure what ``options`` ask about (it does not guess)."""
    return NO_ANSWER


def mono(clip: np.ndarray) -> np.ndarray:
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


def steady(x: np.ndarray, span: tuple[int, int]) -> np.ndarray:
    a, b = span
    trim = int((b - a) * (1 - STEADY_FRACTION) / 2)
    return x[a + trim : b - trim]


def compare(options, value: float, jnd: float, up: str, down: str, same: str) -> int:
    if not math.isfinite(value):
        return no_answer(options)
    if abs(value) < jnd:
        return option_index(options, same)
    return option_index(options, up if value > 0 else down)
