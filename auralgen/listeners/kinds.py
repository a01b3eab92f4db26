"""Which synthesized sound kind a stretch of audio holds: the mixture listener's classifier.

The ``events`` palette (:mod:`auralgen.sounds.events`) has five kinds that differ in two
physical properties a DSP measurement reads directly (no training, no templates of instances):

- **impulsiveness**: clicks and knocks are trains of decaying pulses; their 2 ms power envelope
  spans tens of dB within one period, a continuous sound's (after its ramp) a few dB;
- **spectrum**: clicks ring at 3 kHz, knocks at 250-500 Hz; among the continuous kinds the
  noise burst is broadband (its energy is not in a few spectral peaks), the harmonic tone has
  several peaks at multiples of one fundamental that stay put, and the rising sweep has one
  peak that moves up by octaves per second.

:func:`classify` decides on one stretch holding one sound (or one sound that dominates it);
the mixture listener cuts the clip into such stretches. What it cannot do: tell the kinds
apart in a stretch where two sounds of similar level overlap, or on less than
:data:`MIN_SEGMENT_S` of audio.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import find_peaks

MIN_SEGMENT_S = 0.03
ENV_FRAME_S = 0.005  # power envelope for impulsiveness
LOUD_DB = 40.0  # frames whose decay is measured: this close to the loudest
IMPULSIVE_DB = 3.0  # typical decay over the next 20-60 ms (dB, :func:`_decay_db`) above which it is a pulse train
PULSE_SPLIT_HZ = 1500.0  # impulsive: spectral centroid above -> clicks, below -> knocks
TONAL_FRACTION = 0.6  # whitened power in the strongest tenth of bins (:func:`_tonal_fraction`) below which it is noise
SWEEP_OCT_PER_S = 0.8  # tonal: the strongest peak rising this fast -> sweep
RISE_SPAN_S = 0.08  # ... measured over at least this long
PEAK_DB = 25.0  # spectral peaks counted within this of the strongest
KINDS = ("harmonic", "noise", "sweep", "clicks", "knocks")
# the words an option uses for each kind, as a listener reads them (the palette's names contain them)
WORDS = {
    "harmonic": "harmonic tone",
    "noise": "noise burst",
    "sweep": "sweep",
    "clicks": "click train",
    "knocks": "knocking",
}


def _decay_db(x: np.ndarray, sample_rate: int) -> float:
    """How far the power typically falls over the next 20-60 ms (dB): a train of decaying pulses
    falls by about ten dB from its loud frames (an exponential decay falls by the same dB per second
    everywhere), a steady sound by about nothing.

    Over 5 ms frames within :data:`LOUD_DB` of the loudest: each frame's level minus the median
    level of the frames 20-60 ms later; the median of those drops weighted by the frames' power
    (a quieter sound under a pulse train fills the frames between the pulses, not the weight).
    0 when the stretch is too short.
    """
    f = max(1, int(ENV_FRAME_S * sample_rate))
    n = x.size // f
    p = (x[: n * f] ** 2).reshape(n, f).mean(axis=1)
    if n < 5 or p.max() <= 0:
        return 0.0
    db = 10 * np.log10(p + p.max() * 1e-10)
    a, b = int(round(0.02 / ENV_FRAME_S)), int(round(0.06 / ENV_FRAME_S))
    idx = [i for i in np.flatnonzero(db >= db.max() - LOUD_DB) if i + a < n]
    if not idx:
        return 0.0
    drops = np.array([db[i] - np.median(db[i + a : i + b + 1]) for i in idx])
    order = np.argsort(drops)
    w = np.cumsum(p[idx][order])
    return float(drops[order][np.searchsorted(w, 0.5 * w[-1])])


def _spectrum(x: np.ndarray, sample_rate: int, n_fft: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean power spectrum over Hann frames of ``n_fft`` (hop n_fft/4) and the bin frequencies."""
    if x.size < n_fft:
        x = np.pad(x, (0, n_fft - x.size))
    hop = n_fft // 4
    n = 1 + (x.size - n_fft) // hop
    frames = np.lib.stride_tricks.sliding_window_view(x, n_fft)[::hop][:n] * np.hanning(n_fft)
    spec = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    return spec, np.fft.rfftfreq(n_fft, 1.0 / sample_rate)


def _tonal_fraction(spec: np.ndarray, freqs: np.ndarray) -> float:
    """Share of each frame's power in its strongest tenth of bins, after whitening pink noise
    (power times frequency), averaged over the frames weighted by power: about 1/3 for noise,
    above 0.8 for tones, sweeps and ringing pulses."""
    w = spec * freqs
    e = w.sum(axis=1)
    keep = e > max(e.max() * 1e-2, 0.0)
    if not keep.any():
        return 0.0
    top = max(1, w.shape[1] // 10)
    s = -np.sort(-w[keep], axis=1)
    return float(np.average(s[:, :top].sum(axis=1) / e[keep], weights=e[keep]))


def _peak_rise_oct_per_s(spec: np.ndarray, freqs: np.ndarray, hop_s: float) -> float:
    """Slope (octaves/s, least squares) of the strongest peak's frequency over the frames within
    20 dB of the loudest; 0 when those span less than :data:`RISE_SPAN_S` (one bin's jitter over a
    few frames reads as octaves per second)."""
    e = spec.sum(axis=1)
    keep = np.flatnonzero(e >= e.max() * 1e-2)
    if keep.size < 3 or (keep[-1] - keep[0]) * hop_s < RISE_SPAN_S:
        return 0.0
    f = freqs[np.argmax(spec[keep][:, 1:], axis=1) + 1]
    return float(np.polyfit(keep * hop_s, np.log2(f), 1)[0])


def _n_peaks(p: np.ndarray) -> int:
    """Spectral peaks within :data:`PEAK_DB` of the strongest."""
    peaks, _ = find_peaks(10 * np.log10(p + max(p.max(), 1e-30) * 1e-12), prominence=10.0)
    return int(np.sum(p[peaks] >= p.max() * 10 ** (-PEAK_DB / 10)))


def classify(x: np.ndarray, sample_rate: int) -> str | None:
    """The kind of the sound filling ``x`` (mono), or ``None`` on silence or too little audio.

    In order: broadband -> noise; decaying pulses -> clicks (spectral peak above
    :data:`PULSE_SPLIT_HZ`) or knocks (below); a peak rising by octaves per second -> sweep; three
    or more peaks -> harmonic; one steady peak (the first moments of a sweep) -> sweep.

    Examples
    --------
    >>> from auralgen.synth import harmonic_complex, sweep
    >>> classify(harmonic_complex(200.0, 0.5, sample_rate=16000, n_harmonics=6), 16000)
    'harmonic'
    >>> classify(sweep(300.0, 3000.0, 0.8, sample_rate=16000, method="log"), 16000)
    'sweep'

    Parameters
    ----------
    x : ndarray, shape (samples,)
        One mono stretch of audio holding one sound (or one that dominates it).
    sample_rate : int
        Sampling rate of ``x`` (Hz).

    Returns
    -------
    str or None
        One of :data:`KINDS`; None on silence or on less than :data:`MIN_SEGMENT_S` of audio.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size < MIN_SEGMENT_S * sample_rate or not np.any(x):
        return None
    s512, f512 = _spectrum(x, sample_rate, 512)
    if _tonal_fraction(s512, f512) < TONAL_FRACTION:
        return "noise"
    spec, _ = _spectrum(x, sample_rate, 512 if x.size < 0.1 * sample_rate else 1024)
    if _decay_db(x, sample_rate) >= IMPULSIVE_DB:  # the pulses' ringing: the loudest frames' spectral peak
        e = s512.sum(axis=1)
        loud = s512[e >= e.max() * 0.1].mean(axis=0)
        return "clicks" if f512[int(np.argmax(loud))] >= PULSE_SPLIT_HZ else "knocks"
    if _peak_rise_oct_per_s(s512, f512, 128 / sample_rate) >= SWEEP_OCT_PER_S:
        return "sweep"
    return "harmonic" if _n_peaks(np.median(spec, axis=0)) >= 3 else "sweep"  # median: pulses of others left out
