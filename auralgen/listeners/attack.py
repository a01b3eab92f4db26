"""Reference listeners for attack: the 10-90 % rise time of each sound's envelope, from the audio alone.

Each sound is found by its activity segment; its rise time is measured on the audio from a little
before the segment's onset (:data:`PRE_ONSET_S`, the segment detector places onsets where the ramp is
already ~50 dB up) to the segment's end. Relative: "more sharply" when the second sound's rise time is
shorter than the first's by at least :data:`JND_RATIO`, "more softly" when longer, else "the same".
Absolute: the option whose rise-time range (parsed from its text, in ms) holds the measured rise time.
"""

from __future__ import annotations

import math
import re

from auralgen.listeners.brightness import value_bins
from auralgen.listeners.common import compare, listener_doc, mono, nearest_bin, sound_segments
from auralgen.measure.attack import rise_time_s

PRE_ONSET_S = 0.02
_MS = re.compile(r"(\d+(?:\.\d+)?)\s*ms\b")  # option texts give rise times in ms
JND_RATIO = 0.05  # the listener's own threshold (5 %): above the measurement error (~1 %), below the hardest level


def rise_times_s(clip, sample_rate: int, *, want: int = 2) -> list[float]:
    """Rise time (s) of each of the ``want`` longest sounds of ``clip``, in time order.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip; its channels are averaged.
    sample_rate : int
        Sampling rate of ``clip`` (Hz).
    want : int, optional
        How many sounds to measure.

    Returns
    -------
    list of float
        Rise time of each sound found (s, 10-90 % of the envelope); at most ``want``.
    """
    x = mono(clip)
    spans = sound_segments(x, sample_rate, want=want)
    pre = int(PRE_ONSET_S * sample_rate)
    starts = [max(a - pre, spans[i - 1][1] if i else 0) for i, (a, _) in enumerate(spans)]
    return [rise_time_s(x[s:b], sample_rate) for s, (_, b) in zip(starts, spans)]


@listener_doc("the first holds the two sounds")
def attack_relative(question, options, clips, sample_rate) -> int:
    """Sharper, softer or the same: the second sound's rise time against the first's."""
    r = rise_times_s(clips[0], sample_rate)
    ratio = math.log(r[0] / r[1]) if len(r) == 2 and all(v > 0 for v in r) else math.nan  # > 0: second sharper
    return compare(options, ratio, math.log1p(JND_RATIO), "more sharply", "more softly", "same")


@listener_doc()
def attack_absolute(question, options, clips, sample_rate) -> int:
    """The option whose rise-time range (ms) holds the clip's measured rise time."""
    r = rise_times_s(clips[0], sample_rate, want=1)
    bins = value_bins(options, _MS)
    if not r or not bins or not r[0] > 0:
        return compare(options, math.nan, 0.0, "", "", "")  # nothing to measure: the no-answer index
    return nearest_bin(bins, r[0] * 1000.0)
