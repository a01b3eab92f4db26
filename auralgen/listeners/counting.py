"""Reference listeners of the counting tasks: the number of events from their onsets.

The listener sees the question, the option texts and the clip, never ``params``. It counts the
events' onsets (:func:`auralgen.measure.onsets.onset_times`); a two-sequence clip is split at its
longest interval between onsets (:func:`auralgen.listeners.tempo.two_groups`).
"""

from __future__ import annotations

import re

from auralgen.listeners.common import mono
from auralgen.listeners.tempo import NO_ANSWER, direction, two_groups
from auralgen.measure.onsets import onset_times

_INT = re.compile(r"\d+")


def counting_relative(question, options, clips, sample_rate) -> int:
    """More / fewer / the same: the second sequence's count against the first's.

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
    a, b = (g.size for g in groups)
    return direction(options, float(b - a), 0.5, "more", "fewer", "same")


def counting_absolute(question, options, clips, sample_rate) -> int:
    """The option whose number is the count of onsets in the clip.

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
        Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when no option states the count.
    """
    n = int(onset_times(mono(clips[0]), sample_rate).size)
    for i, text in enumerate(options):
        found = _INT.findall(text)
        if found and int(found[0]) == n:
            return i
    return NO_ANSWER
