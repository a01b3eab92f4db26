"""Reference listeners of the counting tasks: the number of events from their onsets.

The listener sees the question, the option texts and the clip, never ``params``. It counts the
events' onsets (:func:`auralgen.measure.onsets.onset_times`); a two-sequence clip is split at its
longest interval between onsets (:func:`auralgen.listeners.tempo.two_groups`).
"""

from __future__ import annotations

import re

from auralgen.listeners.common import NO_ANSWER, compare, listener_doc, mono
from auralgen.listeners.tempo import two_groups
from auralgen.measure.onsets import onset_times

_INT = re.compile(r"\d+")


@listener_doc("the first holds the two sequences")
def counting_relative(question, options, clips, sample_rate) -> int:
    """More / fewer / the same: the second sequence's count against the first's."""
    groups = two_groups(clips[0], sample_rate)
    if groups is None:
        return NO_ANSWER
    a, b = (g.size for g in groups)
    return compare(options, float(b - a), 0.5, "more", "fewer", "same")


@listener_doc(none="no option states the count")
def counting_absolute(question, options, clips, sample_rate) -> int:
    """The option whose number is the count of onsets in the clip."""
    n = int(onset_times(mono(clips[0]), sample_rate).size)
    for i, text in enumerate(options):
        found = _INT.findall(text)
        if found and int(found[0]) == n:
            return i
    return NO_ANSWER
