"""Reference listeners of the texture tasks: grain times and event density, read from the audio.

The listener sees the question, the option texts and the clip, never ``params``. It finds the
grains (:func:`auralgen.measure.texture.grain_times`), splits a two-texture clip at its longest
silence between grains, and reads each texture's density (events per second between its first
and last grain).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from auralgen.listeners.common import mono
from auralgen.listeners.tempo import NO_ANSWER, bpm_bins, direction
from auralgen.measure.texture import density_hz, grain_times

# decision bound (percent): below the hardest non-zero level of texture_relative (8 %) and the
# ~10-20 % density JND of irregular textures, so the listener's accuracy is physical solvability
DENSITY_BOUND_PERCENT = 2.0


def texture_relative(question, options: Sequence[str], clips, sample_rate) -> int:
    """Denser / sparser / the same: the second texture's density against the first's.

    Parameters
    ----------
    question : str
        The item's question text (not read).
    options : list of str
        The option texts, in canonical order.
    clips : list of ndarray, each shape (channels, samples)
        The item's decoded clips; the first holds the two textures.
    sample_rate : int
        Sampling rate of the clips (Hz).

    Returns
    -------
    int
        Index into ``options`` of the answer; ``NO_ANSWER`` (-1) when the audio gives nothing to measure.
    """
    t = grain_times(mono(clips[0]), sample_rate)
    if t.size < 4:
        return NO_ANSWER
    cut = int(np.argmax(np.diff(t))) + 1
    a, b = density_hz(t[:cut]), density_hz(t[cut:])
    change = 100.0 * (b / a - 1.0) if a > 0 else math.nan
    return direction(options, change, DENSITY_BOUND_PERCENT, "denser", "sparser", "same")


def texture_absolute(question, options: Sequence[str], clips, sample_rate) -> int:
    """The option whose range of events per second holds the texture's measured density.

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
    d = density_hz(grain_times(mono(clips[0]), sample_rate))
    if not math.isfinite(d):
        return NO_ANSWER
    for i, (lo, hi) in enumerate(bpm_bins(options)):
        if lo <= d < hi:
            return i
    return NO_ANSWER
