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

from auralgen.listeners.common import NO_ANSWER, compare, listener_doc, mono
from auralgen.listeners.tempo import option_in_range
from auralgen.measure.texture import density_hz, grain_times

# decision bound (percent): below the hardest non-zero level of texture_relative (8 %) and the
# ~10-20 % density JND of irregular textures, so the listener's accuracy is physical solvability
DENSITY_BOUND_PERCENT = 2.0


@listener_doc("the first holds the two textures")
def texture_relative(question, options: Sequence[str], clips, sample_rate) -> int:
    """Denser / sparser / the same: the second texture's density against the first's."""
    t = grain_times(mono(clips[0]), sample_rate)
    if t.size < 4:
        return NO_ANSWER
    cut = int(np.argmax(np.diff(t))) + 1
    a, b = density_hz(t[:cut]), density_hz(t[cut:])
    change = 100.0 * (b / a - 1.0) if a > 0 else math.nan
    return compare(options, change, DENSITY_BOUND_PERCENT, "denser", "sparser", "same")


@listener_doc(none="nothing is measured or no option matches")
def texture_absolute(question, options: Sequence[str], clips, sample_rate) -> int:
    """The option whose range of events per second holds the texture's measured density."""
    return option_in_range(options, density_hz(grain_times(mono(clips[0]), sample_rate)))
