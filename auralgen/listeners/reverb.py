"""Reference listeners for reverberation: each sound's reverberation time read from its decay in the clip.

The listener finds the sounds' onsets (:func:`auralgen.measure.reverb.rises`), and in each sound's
stretch (to the next onset or the clip's end) where its decay begins (the end of its loudest part,
:func:`auralgen.measure.reverb.decay_start`); T20 is backward-integrated from there
(:func:`auralgen.measure.reverb.decay_rt60_s`). It knows nothing of the recipe: not the sound's
duration, nor the room, nor where the slots are.

Relative: "more" / "less" reverberant when the second sound's T20 differs from the first's by at
least :data:`JND_PERCENT`, else "equally". Absolute: the option whose reverberation-time range
(parsed from its text, in seconds) holds the measured T20, or the nearest one in log-time.
"""

from __future__ import annotations

import math
import re

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.listeners.brightness import value_bins
from auralgen.listeners.common import compare, listener_doc, nearest_bin, no_answer
from auralgen.measure.reverb import ENVELOPE_S, decay_rt60_s, decay_start, rises

# the listener's own threshold: above its error on identical sounds (~0.3 %), below the hardest default level (5 %)
JND_PERCENT = 2.0
_SECONDS = re.compile(r"(\d+(?:\.\d+)?)\s*s\b")


def sound_rt60s(clip, sample_rate: int, *, want: int) -> list[float]:
    """T20 (s) of the first ``want`` sounds of ``clip`` (nan where a decay cannot be measured); [] if
    fewer sounds are found.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip.
    sample_rate : int
        Sampling rate of ``clip`` (Hz).
    want : int
        How many sounds to measure.

    Returns
    -------
    list of float
        T20 of each sound (s), in time order, nan where a decay cannot be measured; empty when fewer
        than ``want`` sounds are found.
    """
    x = np.asarray(clip, dtype=np.float64)
    onsets = rises(x, sample_rate, n=want)
    if len(onsets) < want:
        return []
    back = int(ENVELOPE_S * sample_rate)  # an onset is found up to one envelope window late
    ends = [*(o - back for o in onsets[1:]), x.shape[-1]]
    out = []
    for a, b in zip(onsets, ends):
        try:
            out.append(decay_rt60_s(x, sample_rate, decay_start(x, sample_rate, a, b), b))
        except ParameterError:
            out.append(math.nan)
    return out


def rt60_difference_percent(clip, sample_rate: int) -> float:
    """``100 * ln(T2 / T1)`` of the two sounds' T20 (~ percent for small differences); nan without two.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip with two sounds.
    sample_rate : int
        Sampling rate of ``clip`` (Hz).

    Returns
    -------
    float
        ``100 ln(T2 / T1)`` (~ percent); nan without two measured decays.
    """
    t = sound_rt60s(clip, sample_rate, want=2)
    return 100.0 * math.log(t[1] / t[0]) if len(t) == 2 and all(v > 0 for v in t) else math.nan


@listener_doc("the first holds the two sounds")
def reverberation_relative(question, options, clips, sample_rate) -> int:
    """More, less or equally reverberant: the second sound's T20 against the first's."""
    diff = rt60_difference_percent(clips[0], sample_rate)
    return compare(options, diff, math.log1p(JND_PERCENT / 100.0) * 100.0, "more", "less", "equally")


@listener_doc()
def reverberation_absolute(question, options, clips, sample_rate) -> int:
    """The option whose reverberation-time range (s) holds the clip's measured T20, or the nearest."""
    bins = value_bins(options, _SECONDS)
    t = sound_rt60s(clips[0], sample_rate, want=1)
    if not bins or not t or not t[0] > 0:
        return no_answer(options)
    return nearest_bin(bins, t[0])
