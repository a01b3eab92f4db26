"""Reference DSP listener for the mixture tasks: ``mixture`` and ``multi_source_relation``.

What it can and cannot do (honestly):

- ``mixture`` / **count** ("how many distinct sounds"): the number of distinct sound
  onsets -- strong energy rises at least :data:`~auralgen.listeners.spatial.MIN_SOUND_GAP_S`
  apart (:func:`~auralgen.listeners.spatial.direct_onsets`) -- clamped to the
  counts offered and matched to the nearest option. Two sounds starting within that gap
  count as one, and a click or knock train's later events may read as new sounds, so it
  is well above chance but far from perfect.
- ``mixture`` / **louder**, **first**, **overlap** and every ``multi_source_relation``
  question: the options are sound *names* ("the harmonic tone", "the noise burst", ...).
  Answering needs attributing parts of the mixture to named sound types, i.e. a sound-type
  classifier with source separation; this listener has none, so it answers "Unable to
  determine". A physical measurement alone (which onset is first, which direction is
  leftmost) cannot say *which named sound* that was.
"""

from __future__ import annotations

import math
import re

import numpy as np

from auralgen.listeners.common import no_answer
from auralgen.listeners.spatial import direct_onsets

MAX_COUNT = 8  # onsets searched for (more than any option offers)
_INT = re.compile(r"^\s*(\d+)\s*$")


def sub_question(question: str) -> str | None:
    """The mixture sub-question named by the question text: count / louder / first / overlap.

    Examples
    --------
    >>> sub_question("How many distinct sounds are in this clip?")
    'count'
    >>> sub_question("Listen to the mixture. Which sound begins earliest?")
    'first'
    """
    q = question.lower()
    if "how many" in q or "count" in q:
        return "count"
    if "loud" in q:
        return "louder"
    if "first" in q or "earliest" in q or "begin" in q:
        return "first"
    if "overlap" in q or "same time" in q:
        return "overlap"
    return None


def count_options(options) -> dict[int, int]:
    """``{option index: count}`` for options that are plain integers ("2", "3", "4")."""
    out = {}
    for i, text in enumerate(options):
        m = _INT.match(text)
        if m:
            out[i] = int(m[1])
    return out


def count_sounds(clip: np.ndarray, sample_rate: int) -> int:
    """Number of distinct sound onsets (energy rises) in a mixture; 0 for silence."""
    return len(direct_onsets(np.asarray(clip, dtype=np.float64), sample_rate, want=MAX_COUNT))


def mixture(question, options, clips, sample_rate) -> int:
    if sub_question(question) != "count":
        return no_answer(options)  # needs named-sound attribution (see module doc)
    counts = count_options(options)
    n = count_sounds(clips[0], sample_rate)
    if not counts or n == 0:
        return no_answer(options)
    return min(counts, key=lambda i: (abs(math.log(counts[i] / n)), counts[i]))


def multi_source_relation(question, options, clips, sample_rate, layout=None) -> int:
    return no_answer(options)  # options are sound names: needs a sound-type classifier (see module doc)
