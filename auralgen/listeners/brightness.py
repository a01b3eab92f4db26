"""Reference listeners for brightness: the spectral centroid of each sound, from the audio alone.

Relative: the centroid of each of the two sounds' steady parts; "brighter" / "darker" when the
second's centroid differs from the first's by at least :data:`JND_PERCENT`, else "the same".
Absolute: the option whose centroid range (parsed from its text, in Hz) holds the measured
centroid, or the nearest one in log-frequency.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from auralgen.listeners.common import (
    compare,
    listener_doc,
    mono,
    nearest_bin,
    range_bins,
    sound_segments,
    steady,
)
from auralgen.measure import segments
from auralgen.measure.brightness import spectral_centroid_hz

# the listener's own threshold: above the measurement error (~0.1 %), below the hardest default level
JND_PERCENT = 1.0
_HZ = re.compile(r"(\d+(?:\.\d+)?)\s*Hz\b")


def value_bins(options: Sequence[str], pattern: re.Pattern = _HZ, scale: float = 1.0) -> dict[int, tuple[float, float]]:
    """``{option index: (low, high)}`` from texts like "... between 500 Hz and 2000 Hz" ("below X":
    ``(0, X)``, "above X": ``(X, inf)``); numbers matched by ``pattern`` are multiplied by ``scale``.

    Examples
    --------
    >>> value_bins(["Dark: below 500 Hz", "Neutral: between 500 Hz and 2000 Hz", "Bright: above 2000 Hz"])
    {0: (0.0, 500.0), 1: (500.0, 2000.0), 2: (2000.0, inf)}

    Parameters
    ----------
    options : sequence of str
        The option texts.
    pattern : re.Pattern, optional
        Regular expression whose first group is one number with its unit (default: Hz).
    scale : float, optional
        Factor applied to each number found.

    Returns
    -------
    dict of int to tuple of float
        Option index to its ``(low, high)`` range, in the unit of ``pattern`` times ``scale``.
    """
    return range_bins(options, lambda text: [float(v) * scale for v in pattern.findall(text)])


def centroid_difference_percent(clip, sample_rate: int) -> float:
    """``100 * ln(c2 / c1)`` of the two sounds' centroids (~ percent for small differences); nan without two sounds.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip with two sounds; its channels are averaged.
    sample_rate : int
        Sampling rate of ``clip`` (Hz).

    Returns
    -------
    float
        ``100 ln(c2 / c1)`` of the spectral centroids (~ percent); nan without two sounds.
    """
    x = mono(clip)
    spans = sound_segments(x, sample_rate)
    if len(spans) < 2:
        return math.nan
    c = [spectral_centroid_hz(steady(x, s), sample_rate) for s in spans]
    return 100.0 * math.log(c[1] / c[0]) if all(v > 0 for v in c) else math.nan


@listener_doc("the first holds the two sounds")
def brightness_relative(question, options, clips, sample_rate) -> int:
    """Brighter, darker or the same: the second sound's spectral centroid against the first's."""
    diff = centroid_difference_percent(clips[0], sample_rate)
    return compare(options, diff, math.log1p(JND_PERCENT / 100.0) * 100.0, "brighter", "darker", "same")


@listener_doc()
def brightness_absolute(question, options, clips, sample_rate) -> int:
    """The option whose centroid range (Hz) holds the clip's measured spectral centroid, or the nearest."""
    x = mono(clips[0])
    found = segments(x, sample_rate)
    bins = value_bins(options)
    if not found or not bins:
        return compare(options, math.nan, 0.0, "", "", "")  # nothing to measure: the no-answer index
    a, b = int(found[0].onset_s * sample_rate), int(found[-1].offset_s * sample_rate)
    c = spectral_centroid_hz(steady(x, (a, b)), sample_rate)
    return nearest_bin(bins, c)
