"""Timbre measurements: the mel cepstrum of a note and the timbre distance of two notes.

The spectral envelope of a note is read as its mel-band levels (:data:`~auralgen.synth.instruments.N_BANDS`
triangular bands, 200-7000 Hz, one FFT over the note) and summarised by the mel-cepstral
coefficients 1..:data:`~auralgen.synth.instruments.N_CEPS` (dB, orthonormal DCT-II; c0, the
level, left out) -- the MFCCs of one frame as long as the note. The timbre distance of two notes
is the Euclidean distance of their cepstra (dB); with the orthonormal DCT it is the RMS-free
distance of their smoothed spectral envelopes.
"""

from __future__ import annotations

import numpy as np

from auralgen.measure.common import as_mono, check_rate
from auralgen.measure.level import segments
from auralgen.synth.instruments import N_CEPS, band_db, ceps_distance_db, cepstrum, mel_weights, note_cepstrum

__all__ = ["ceps_distance_db", "framewise_distance_db", "mel_cepstrum", "nearest", "note_spans", "timbre_distance_db"]
MIN_NOTE_S = 0.1  # a detected note shorter than this is not analysed
FRAME_N = 1024  # framewise_distance_db: Hann frames of this many samples ...
FRAME_HOP = 512  # ... this far apart
FRAME_FLOOR_DB = 30.0  # ... where both notes are within this of their loudest frame


def mel_cepstrum(x, sample_rate) -> np.ndarray:
    """Mel cepstrum (coefficients 1..N_CEPS, dB) of the samples ``x`` of one note.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        One note, at least 16 samples; channels are averaged.
    sample_rate : float
        Sample rate of ``x`` in Hz (used as an int).

    Returns
    -------
    ndarray, shape (N_CEPS,), float64
        The mel-cepstral coefficients 1..N_CEPS in dB.

    Examples
    --------
    >>> from auralgen.synth.instruments import render_note
    >>> c = [0.0] * 10; c[1] = 4.0
    >>> note = {"excitation": "noise", "f0_hz": 150.0, "duration_s": 0.5, "seed": 1, "ceps": c, "loudness_lufs": -26.0}
    >>> round(float(mel_cepstrum(render_note(note, 16000), 16000)[1]), 1)
    4.0
    """
    sr = int(check_rate(sample_rate))
    return note_cepstrum(as_mono(x, min_samples=16), sr)


def timbre_distance_db(a, b, sample_rate) -> float:
    """Timbre distance (dB) of two notes' samples: the distance of their mel cepstra.

    Parameters
    ----------
    a, b : array_like, shape (samples,) or (channels, samples)
        The two notes, each at least 16 samples; channels are averaged.
    sample_rate : float
        Sample rate of both in Hz.

    Returns
    -------
    float
        The Euclidean distance of their mel cepstra in dB.
    """
    return ceps_distance_db(mel_cepstrum(a, sample_rate), mel_cepstrum(b, sample_rate))


def frame_cepstra(x, sample_rate, *, n_fft: int = FRAME_N, hop: int = FRAME_HOP) -> tuple[np.ndarray, np.ndarray]:
    """Mel cepstra ``[frames, N_CEPS]`` (dB) of Hann-windowed frames of one note, and each frame's energy (dB).

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        One note, at least ``n_fft`` samples; channels are averaged.
    sample_rate : float
        Sample rate of ``x`` in Hz (used as an int).
    n_fft : int, optional
        Frame length in samples.
    hop : int, optional
        Frame step in samples (frames start at sample 0; a partial last frame is dropped).

    Returns
    -------
    ceps : ndarray, shape (frames, N_CEPS), float64
        Each frame's mel-cepstral coefficients 1..N_CEPS in dB.
    energy_db : ndarray, shape (frames,), float64
        Each windowed frame's energy (sum of its power spectrum) in dB.
    """
    sr = int(check_rate(sample_rate))
    x = as_mono(x, min_samples=n_fft).astype(np.float64)
    starts = np.arange(0, x.size - n_fft + 1, hop)
    frames = np.stack([x[a : a + n_fft] for a in starts]) * np.hanning(n_fft)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    w = mel_weights(n_fft, sr)
    ceps = np.stack([cepstrum(band_db(p, w)) for p in power])[:, :N_CEPS]
    return ceps, 10.0 * np.log10(power.sum(axis=1) + 1e-300)


def framewise_distance_db(a, b, sample_rate, *, n_fft: int = FRAME_N, hop: int = FRAME_HOP) -> float:
    """Time-local timbre distance (dB) of two notes.

    It is the RMS over aligned Hann frames (``n_fft`` samples, ``hop`` apart, from each note's start)
    of their frames' mel-cepstral distances, over the frames where both notes are within
    :data:`FRAME_FLOOR_DB` of their loudest frame. Two notes with one spectral envelope but a
    different course in time (attack, vibrato, a decaying FM index) are far apart here although
    their whole-note cepstra match.

    Parameters
    ----------
    a, b : array_like, shape (samples,) or (channels, samples)
        The two notes, each at least ``n_fft`` samples; channels are averaged.
    sample_rate : float
        Sample rate of both in Hz.
    n_fft : int, optional
        Frame length in samples.
    hop : int, optional
        Frame step in samples.

    Returns
    -------
    float
        The distance in dB; NaN when no frame pair passes the floor.

    Examples
    --------
    >>> rng = np.random.default_rng(0); x = rng.standard_normal(8000)
    >>> framewise_distance_db(x, x, 16000)
    0.0
    """
    ca, ea = frame_cepstra(a, sample_rate, n_fft=n_fft, hop=hop)
    cb, eb = frame_cepstra(b, sample_rate, n_fft=n_fft, hop=hop)
    m = min(len(ca), len(cb))
    keep = (ea[:m] >= ea.max() - FRAME_FLOOR_DB) & (eb[:m] >= eb.max() - FRAME_FLOOR_DB)
    d = np.sqrt(np.sum((ca[:m] - cb[:m]) ** 2, axis=1))[keep]
    return float(np.sqrt(np.mean(d**2))) if d.size else float("nan")


def nearest(ceps, templates) -> tuple[int, list[float]]:
    """Index of the template nearest to ``ceps`` and the distances (dB) to every template.

    Parameters
    ----------
    ceps : array_like, shape (N_CEPS,)
        A mel cepstrum (dB), as :func:`mel_cepstrum` returns it.
    templates : sequence of array_like
        The candidate cepstra, each shape ``(N_CEPS,)``.

    Returns
    -------
    index : int
        Position in ``templates`` of the nearest one (the first on a tie).
    distances : list of float
        The distance in dB to every template, in order.
    """
    d = [ceps_distance_db(ceps, t) for t in templates]
    return int(np.argmin(d)), d


def note_spans(x, sample_rate, *, want: int) -> list[tuple[int, int]]:
    """Sample ranges of the ``want`` longest sounding stretches (-40 dB re the loudest), in time order.

    Fewer are returned when fewer are found; stretches under :data:`MIN_NOTE_S` are ignored.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The clip.
    sample_rate : float
        Sample rate of ``x`` in Hz (used as an int).
    want : int
        How many stretches to return at most.

    Returns
    -------
    list of tuple of (int, int)
        ``(start, stop)`` sample indices of each stretch (stop exclusive), in time order.
    """
    sr = int(check_rate(sample_rate))
    segs = [s for s in segments(x, sr, threshold_db=-40.0) if s.duration_s >= MIN_NOTE_S]
    segs = sorted(segs, key=lambda s: s.duration_s, reverse=True)[:want]
    return sorted((int(round(s.onset_s * sr)), int(round(s.offset_s * sr))) for s in segs)
