"""Reference listeners of the tone tasks: two-interval comparisons, duration bins, audiogram.

Decisions use fixed just-noticeable differences (:data:`JND`), so a listener's accuracy per
difficulty level is the dataset's *physical-solvability curve*: near 100 % where the
difference is well above the JND, falling toward chance where it is below.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from auralgen.listeners.common import (
    compare,
    listener_doc,
    mono,
    nearest_bin,
    no_answer,
    option_index,
    range_bins,
    sound_segments,
    steady,
)
from auralgen.measure import f0_hz, level_db_rms, segments

JND = {
    "pitch_cents": 10.0,  # trained listeners resolve ~5-10 cents at mid frequencies
    "level_db": 1.0,  # intensity JND ~0.5-1 dB
    "duration_ratio": 0.10,  # Weber fraction for duration ~10 %
}
PEAK_PROMINENCE_DB = 20.0  # narrowband peak over the spectrum's median (dither-floor noise maxima reach ~13 dB)
F0_WINDOW_S = 0.25


def _two_sounds(clip, sample_rate: int, measure) -> list[float] | None:
    """``measure(x, span)`` of each of the clip's two sounds (``x`` its channel mean); None with fewer."""
    x = mono(clip)
    spans = sound_segments(x, sample_rate)
    return [measure(x, span) for span in spans] if len(spans) == 2 else None


def _middle_f0(x: np.ndarray, span: tuple[int, int], sample_rate: int) -> float:
    """f0 (Hz) over the :data:`F0_WINDOW_S` around the middle of ``span`` (all of it when shorter)."""
    a, b = span
    mid, h = (a + b) // 2, min(int(F0_WINDOW_S * sample_rate / 2), (b - a) // 2)
    return f0_hz(x[mid - h : mid + h], sample_rate)


@listener_doc("the first holds the two sounds")
def pitch_relative(question, options, clips, sample_rate) -> int:
    """Higher, lower or the same: the second sound's f0 against the first's, in cents (:data:`JND`)."""
    f = _two_sounds(clips[0], sample_rate, lambda x, span: _middle_f0(x, span, sample_rate))
    if f is None or not all(math.isfinite(v) and v > 0 for v in f):
        return no_answer(options)
    return compare(options, 1200.0 * math.log2(f[1] / f[0]), JND["pitch_cents"], "higher", "lower", "same")


@listener_doc("the first holds the two sounds")
def loudness_relative(question, options, clips, sample_rate) -> int:
    """Louder, softer or the same: the second sound's steady RMS level against the first's, in dB (:data:`JND`)."""
    lv = _two_sounds(clips[0], sample_rate, lambda x, span: level_db_rms(steady(x, span)))
    if lv is None:
        return no_answer(options)
    return compare(options, lv[1] - lv[0], JND["level_db"], "louder", "softer", "same")


@listener_doc("the first holds the two sounds")
def duration_relative(question, options, clips, sample_rate) -> int:
    """Longer, shorter or the same: the second sound's active span against the first's (:data:`JND`)."""
    spans = sound_segments(mono(clips[0]), sample_rate)
    if len(spans) < 2 or min(b - a for a, b in spans) <= 0:
        return no_answer(options)
    ratio = math.log((spans[1][1] - spans[1][0]) / (spans[0][1] - spans[0][0]))
    return compare(options, ratio, math.log1p(JND["duration_ratio"]), "longer", "shorter", "same")


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s)\b")


def duration_bins(options: Sequence[str]) -> dict[int, tuple[float, float]]:
    """``{option index: (low_s, high_s)}`` parsed from texts like "Between 0.5 s and 1 s".

    "Shorter than X" is ``(0, X)``, "Longer than X" is ``(X, inf)``; options without a
    duration (e.g. "Unable to determine") are left out.

    Examples
    --------
    >>> duration_bins(["Shorter than 0.5 s", "Between 0.5 s and 1 s", "Longer than 1 s"])
    {0: (0.0, 0.5), 1: (0.5, 1.0), 2: (1.0, inf)}

    Parameters
    ----------
    options : sequence of str
        The option texts (durations in s or ms).

    Returns
    -------
    dict of int to tuple of float
        Option index to its ``(low, high)`` range in seconds.
    """
    return range_bins(options, _seconds)


def _seconds(text: str) -> list[float]:
    return [float(v) / (1000.0 if unit == "ms" else 1.0) for v, unit in _NUMBER.findall(text)]


@listener_doc()
def duration_absolute(question, options, clips, sample_rate) -> int:
    """The option whose duration range (s) holds the sound's span (first onset to last offset), or the nearest."""
    found = segments(mono(clips[0]), sample_rate)
    bins = duration_bins(options)
    if not found or not bins:
        return no_answer(options)
    return nearest_bin(bins, found[-1].offset_s - found[0].onset_s)  # the sound's span (bridges any dips inside it)


def peak_prominence_db(x: np.ndarray, sample_rate: int, *, fmin_hz: float = 15.0) -> float:
    """Strongest narrowband peak above ``fmin_hz`` over the median bin power (dB), Hann window.

    On white (dither) noise the maximum over ~10^4-10^5 bins sits ~12-13 dB above the median;
    a 1 s tone at the audiogram's quietest levels stands 40 dB or more above it.

    Parameters
    ----------
    x : ndarray, shape (samples,)
        A mono stretch of audio.
    sample_rate : int
        Sampling rate of ``x`` (Hz).
    fmin_hz : float, optional
        Lowest frequency looked at (Hz).

    Returns
    -------
    float
        The peak bin's power over the median bin power (dB); ``-inf`` on silence or under 16 samples,
        ``inf`` over a zero median.
    """
    n = x.shape[-1]
    if n < 16:
        return -math.inf
    power = np.abs(np.fft.rfft(x * np.hanning(n + 2)[1:-1])) ** 2
    band = power[int(math.ceil(fmin_hz * n / sample_rate)) :]
    floor = float(np.median(band))
    peak = float(band.max())
    if peak <= 0:
        return -math.inf
    return math.inf if floor <= 0 else 10.0 * math.log10(peak / floor)


@listener_doc("the first holds the two intervals (its halves)")
def audiogram(question, options, clips, sample_rate) -> int:
    """Which interval holds the tone (first or second half of the clip), or none: the stronger narrowband peak."""
    x = mono(clips[0])
    half = x.size // 2
    prom = [peak_prominence_db(part, sample_rate) for part in (x[:half], x[half : 2 * half])]
    if max(prom) < PEAK_PROMINENCE_DB:
        return option_index(options, "not present", "absent", "no tone")
    return option_index(options, "first" if prom[0] >= prom[1] else "second")
