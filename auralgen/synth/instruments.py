"""Procedural instrument notes: an excitation shaped by a spectral envelope given as mel cepstrum.

A note is *source x filter*. The source (the excitation) gives the note its fine structure in
time and frequency -- how it starts, decays, wavers and whether it is periodic:

- ``"harmonic"``: a steady harmonic recipe (flat harmonics, organ-like);
- ``"bowed"``: a sawtooth-like wave with vibrato (~5.5 Hz, 0.6 %), slow attack and bow noise;
- ``"brass"``: a harmonic tone whose upper harmonics enter as the note swells (brightness rising
  with amplitude, the lip-reed behaviour);
- ``"fm"``: two-operator FM (carrier = modulator = f0, index decaying), harmonic;
- ``"plucked"``: a Karplus-Strong string (numba kernel), decaying;
- ``"noise"``: a noise-excited (breathy, unpitched) sound.

The filter is the note's *spectral envelope*: ``ceps`` holds the mel-cepstral coefficients
1..:data:`N_CEPS` (dB, orthonormal DCT-II of the :data:`N_BANDS` mel-band levels). Rendering
imposes it on the excitation in the frequency domain: the excitation's own band levels are
measured and divided out (an exact linear solve, :func:`impose_envelope`), so the rendered
note's band levels are the envelope's. Hence the mel-cepstral distance of two notes measured
from their audio (:func:`band_db`, :func:`cepstrum`) equals the distance of their recipes'
``ceps``, whatever their excitations.

A recipe (``note``) is a JSON-able dict::

    {"excitation": "plucked", "f0_hz": 150.0, "duration_s": 0.6, "seed": 123,
     "ceps": [c1, ..., c10], "loudness_lufs": -26.0}
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit
from scipy.fft import dct, idct
from scipy.optimize import nnls

from auralgen.core.errors import ParameterError
from auralgen.synth.levels import set_loudness_lufs
from auralgen.synth.signals import apply_ramps, n_samples

EXCITATIONS = ("harmonic", "bowed", "brass", "fm", "plucked", "noise")
N_BANDS = 16  # mel bands of the envelope, FMIN_HZ..FMAX_HZ
N_CEPS = 10  # cepstral coefficients 1..N_CEPS describe the envelope (c0, the level, is left out)
FMIN_HZ = 200.0
FMAX_HZ = 7000.0
RAMP_S = 0.01  # onset / offset ramps of every excitation
EDGE_RAMP_S = 0.002  # ramps after the envelope filter (its ringing beyond the note's ends)
PAD = 1024  # zeros after the note while filtering (no circular wrap of the attack into the tail)
WHITEN_PASSES = 2  # dB-gain passes before the exact solve
FLOOR_DB = -40.0  # a flat harmonic floor under the FM and plucked excitations, so every band has energy
WAVETABLE = 2048  # samples per cycle of the harmonic wavetables


def hz_to_mel(f):
    """Mel value ``1127 ln(1 + f / 700)`` of frequencies in Hz.

    Parameters
    ----------
    f : float or array_like
        Frequencies, in Hz.

    Returns
    -------
    ndarray, float64
        The mel values, same shape as ``f`` (0-d for a scalar).
    """
    return 1127.0 * np.log1p(np.asarray(f, dtype=np.float64) / 700.0)


def mel_to_hz(m):
    """Frequency in Hz of mel values (inverse of :func:`hz_to_mel`).

    Parameters
    ----------
    m : float or array_like
        Mel values.

    Returns
    -------
    ndarray, float64
        The frequencies, in Hz, same shape as ``m`` (0-d for a scalar).
    """
    return 700.0 * np.expm1(np.asarray(m, dtype=np.float64) / 1127.0)


def band_centres_hz() -> np.ndarray:
    """Centre frequencies of the :data:`N_BANDS` mel bands.

    Returns
    -------
    ndarray, shape (N_BANDS,), float64
        The centres, in Hz, rising, between :data:`FMIN_HZ` and :data:`FMAX_HZ`.
    """
    m = np.linspace(hz_to_mel(FMIN_HZ), hz_to_mel(FMAX_HZ), N_BANDS + 2)
    return mel_to_hz(m[1:-1])


@lru_cache(maxsize=32)
def mel_weights(n_fft: int, sample_rate: int) -> np.ndarray:
    """Triangular mel filterbank over the rfft bins of ``n_fft`` samples.

    Parameters
    ----------
    n_fft : int
        FFT length, in samples.
    sample_rate : int
        Sampling rate, in Hz (Nyquist above :data:`FMAX_HZ`).

    Returns
    -------
    ndarray, shape (N_BANDS, n_fft // 2 + 1), float64
        The weights (read-only; cached per argument pair).

    Raises
    ------
    ParameterError
        If Nyquist is at or below :data:`FMAX_HZ`.
    """
    if FMAX_HZ >= sample_rate / 2:
        raise ParameterError(
            f"sample_rate={sample_rate} puts Nyquist below the envelope's top band edge {FMAX_HZ} Hz; "
            f"allowed: sample_rate > {2 * FMAX_HZ:g}"
        )
    f = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    edges = mel_to_hz(np.linspace(hz_to_mel(FMIN_HZ), hz_to_mel(FMAX_HZ), N_BANDS + 2))
    w = np.zeros((N_BANDS, f.size))
    for b in range(N_BANDS):
        lo, mid, hi = edges[b], edges[b + 1], edges[b + 2]
        w[b] = np.clip(np.minimum((f - lo) / (mid - lo), (hi - f) / (hi - mid)), 0.0, None)
    w.setflags(write=False)
    return w


def band_db(power: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mel-band levels of an rfft power spectrum.

    Parameters
    ----------
    power : ndarray, shape (bins,)
        Power spectrum, ``abs(rfft) ** 2``.
    weights : ndarray, shape (N_BANDS, bins)
        Filterbank from :func:`mel_weights`.

    Returns
    -------
    ndarray, shape (N_BANDS,), float64
        Band levels, in dB (``10 log10`` of the band power).
    """
    return 10.0 * np.log10(weights @ power + 1e-30)


def cepstrum(bands_db: np.ndarray) -> np.ndarray:
    """Mel-cepstral coefficients 1..:data:`N_CEPS` of band levels (orthonormal DCT-II).

    Parameters
    ----------
    bands_db : array_like, shape (N_BANDS,)
        Mel-band levels, in dB.

    Returns
    -------
    ndarray, shape (N_CEPS,), float64
        Coefficients 1..N_CEPS, in dB (c0, the overall level, is left out).
    """
    return dct(np.asarray(bands_db, dtype=np.float64), type=2, norm="ortho")[1 : N_CEPS + 1]


def envelope_db(ceps) -> np.ndarray:
    """Band levels of cepstral coefficients 1..:data:`N_CEPS` (inverse of :func:`cepstrum`).

    Parameters
    ----------
    ceps : array_like, shape (N_CEPS,)
        Mel-cepstral coefficients 1..N_CEPS, in dB.

    Returns
    -------
    ndarray, shape (N_BANDS,), float64
        Band levels, in dB, with zero mean.
    """
    c = np.zeros(N_BANDS)
    c[1 : N_CEPS + 1] = np.asarray(ceps, dtype=np.float64)
    return idct(c, type=2, norm="ortho")


def ceps_distance_db(a, b) -> float:
    """Euclidean distance of two cepstral vectors: the timbre distance of two envelopes.

    Parameters
    ----------
    a, b : array_like, shape (N_CEPS,)
        Mel-cepstral coefficients 1..N_CEPS, in dB.

    Returns
    -------
    float
        The distance, in dB.
    """
    return float(np.linalg.norm(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)))


# -- excitations ----------------------------------------------------------------------------------
@njit(cache=True)
def _render_karplus_strong(burst, n, period, loss):
    """Karplus-Strong: ``burst`` then ``y[i] = loss * (y[i - D] + y[i - D - 1]) / 2`` for the
    (fractional, linearly interpolated) delay ``D = period``."""
    out = np.zeros(n)
    p = int(period)
    frac = period - p
    m = min(n, burst.size)
    for i in range(m):
        out[i] = burst[i]
    for i in range(p + 2, n):
        a = (1.0 - frac) * out[i - p] + frac * out[i - p - 1]
        b = (1.0 - frac) * out[i - p - 1] + frac * out[i - p - 2]
        out[i] = loss * 0.5 * (a + b)
    return out


def _wavetable(amps: np.ndarray, phases: np.ndarray) -> np.ndarray:
    spec = np.zeros(WAVETABLE // 2 + 1, dtype=np.complex128)
    spec[1 : amps.size + 1] = amps * np.exp(1j * phases)
    return np.fft.irfft(spec, WAVETABLE) * WAVETABLE / 2


def _read(table: np.ndarray, cycles: np.ndarray) -> np.ndarray:
    """``table`` read at the phase ``cycles`` (in cycles, any real), linearly interpolated."""
    pos = (cycles % 1.0) * WAVETABLE
    i = pos.astype(np.int64)
    frac = pos - i
    return table[i] * (1 - frac) + table[(i + 1) % WAVETABLE] * frac


def _harmonics(f0: float, sample_rate: int) -> int:
    return max(1, min(WAVETABLE // 2 - 1, int((0.45 * sample_rate) / f0)))


def _floor(f0_hz: float, t: np.ndarray, phases: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Flat harmonics :data:`FLOOR_DB` below ``x`` (RMS), following its amplitude envelope (50 ms)."""
    c = np.concatenate(([0.0], np.cumsum(x**2)))
    half = 400
    i = np.arange(x.size)
    lo, hi = np.maximum(i - half, 0), np.minimum(i + half + 1, x.size)
    env = np.sqrt((c[hi] - c[lo]) / (hi - lo))
    flat = _read(_wavetable(np.ones(phases.size), phases), f0_hz * t)
    return env * flat / (np.std(flat) + 1e-30) * 10.0 ** (FLOOR_DB / 20.0)


def excitation(
    kind: str, f0_hz: float, n: int, sample_rate: int, seed: int, shape_seed: int | None = None
) -> np.ndarray:
    """The source signal of a note, from its seeds alone.

    Parameters
    ----------
    kind : str
        One of :data:`EXCITATIONS` (another raises ParameterError).
    f0_hz : float
        Fundamental frequency, in Hz (ignored by ``"noise"``).
    n : int
        Length, in samples.
    sample_rate : int
        Sampling rate, in Hz.
    seed : int
        Seed of the fine structure (the partials' phases).
    shape_seed : int or None, optional
        Seed of the course in time: vibrato rate, depth and phase, bow noise, attack and swell times, the FM
        index, its decay and the modulator's phase, the string's burst and loss, the phases of the harmonic
        floor under these two (which fills the FM spectrum's nulls), a noise excitation's realisation. Two
        notes with one ``shape_seed`` evolve alike in time and frequency; None (default): ``seed`` draws both.

    Returns
    -------
    ndarray, shape (n,), float64
        The excitation, at an arbitrary level.
    """
    rng = np.random.default_rng(seed)
    shape = rng if shape_seed is None else np.random.default_rng(shape_seed)
    t = np.arange(n) / sample_rate
    k = _harmonics(f0_hz, sample_rate)
    phases = rng.uniform(0, 2 * np.pi, k)
    if kind == "harmonic":
        return _read(_wavetable(np.ones(k), phases), f0_hz * t)
    if kind == "bowed":
        rate, depth = shape.uniform(5.0, 6.0), shape.uniform(0.004, 0.008)
        vib = depth * np.sin(2 * np.pi * rate * t + shape.uniform(0, 2 * np.pi))
        cycles = np.cumsum(f0_hz * (1.0 + vib)) / sample_rate
        saw = _read(_wavetable(1.0 / np.arange(1, k + 1), phases), cycles)
        swell = 1.0 - np.exp(-t / shape.uniform(0.05, 0.09))
        return swell * saw + 0.03 * np.std(saw) * shape.standard_normal(n)
    if kind == "brass":
        env = 1.0 - np.exp(-t / shape.uniform(0.02, 0.04))
        dark = _read(_wavetable(1.0 / np.arange(1, k + 1) ** 2, phases), f0_hz * t)
        bright = _read(_wavetable(np.ones(k), phases), f0_hz * t)
        return env * ((1 - env) * dark + env * bright)
    if kind == "fm":
        index = shape.uniform(3.0, 6.0) * np.exp(-t / shape.uniform(0.2, 0.4)) + shape.uniform(2.0, 4.0)
        offset = phases[0] if shape is rng else shape.uniform(0, 2 * np.pi)  # sets how the sidebands add up
        fm = np.sin(2 * np.pi * f0_hz * t + index * np.sin(2 * np.pi * f0_hz * t + offset))
        return fm + _floor(f0_hz, t, phases if shape is rng else shape.uniform(0, 2 * np.pi, k), fm)
    if kind == "plucked":
        period = sample_rate / f0_hz - 0.5  # the averaging filter delays by half a sample
        burst = shape.uniform(-1, 1, int(period) + 2)  # sets each partial's start and decay
        string = _render_karplus_strong(burst, n, period, float(shape.uniform(0.994, 0.998)))
        return string + _floor(f0_hz, t, phases if shape is rng else shape.uniform(0, 2 * np.pi, k), string)
    if kind == "noise":  # its realisation is its course in time (band levels frame by frame)
        return shape.standard_normal(n) * (1.0 - np.exp(-t / 0.03))
    raise ParameterError(f"excitation={kind!r} is unknown; allowed: one of {list(EXCITATIONS)}")


# -- notes ------------------------------------------------------------------------------------------
@lru_cache(maxsize=32)
def _hats(n_fft: int, sample_rate: int) -> np.ndarray:
    """``[N_BANDS, n_fft // 2 + 1]`` linear-interpolation basis on the mel axis between the band
    centres (flat beyond the first and last): a power gain ``h @ hats`` interpolates ``h``."""
    mel_bins = hz_to_mel(np.fft.rfftfreq(n_fft, 1.0 / sample_rate))
    centres = hz_to_mel(band_centres_hz())
    u = np.stack([np.interp(mel_bins, centres, np.eye(N_BANDS)[b]) for b in range(N_BANDS)])
    u.setflags(write=False)
    return u


def impose_envelope(x: np.ndarray, sample_rate: int, ceps) -> np.ndarray:
    """``x`` filtered so that its mel-band levels (over the whole signal) follow ``ceps``.

    First :data:`WHITEN_PASSES` passes flatten the excitation (each band's level error, as a dB
    gain interpolated on the mel axis); then the power gain, interpolated on the mel axis between
    per-band values ``h``, gives band energies linear in ``h`` (``M @ h``), and ``h`` solves
    ``M h = target`` (non-negative least squares): exact where the excitation has energy in every band;
    :data:`WHITEN_PASSES` more dB passes correct what it leaves.

    Parameters
    ----------
    x : ndarray, shape (samples,)
        The excitation.
    sample_rate : int
        Sampling rate, in Hz.
    ceps : array_like, shape (N_CEPS,)
        Target mel-cepstral coefficients 1..N_CEPS, in dB.

    Returns
    -------
    ndarray, shape (samples,), float64
        The filtered signal, as long as ``x`` (the filter's ringing past the end is cut).
    """
    n = x.size + PAD
    spec = np.fft.rfft(x, n)
    w, u = mel_weights(n, sample_rate), _hats(n, sample_rate)
    target_db = envelope_db(ceps)
    for _ in range(WHITEN_PASSES):
        err = target_db - band_db(np.abs(spec) ** 2, w)
        spec = spec * 10.0 ** ((err - err.mean()) @ u / 20.0)
    power = np.abs(spec) ** 2
    current = w @ power + 1e-30
    target = 10.0 ** (target_db / 10.0)
    target *= np.exp(np.mean(np.log(current)) - np.mean(np.log(target)))
    m = (w * power) @ u.T
    h = np.linalg.solve(m, target)
    if np.any(h <= 0):
        h = nnls(m / current[:, None], target / current)[0]
    spec = spec * np.sqrt(h @ u)
    for _ in range(WHITEN_PASSES):  # what the solve left (bands it could not reach exactly)
        err = target_db - band_db(np.abs(spec) ** 2, w)
        spec = spec * 10.0 ** ((err - err.mean()) @ u / 20.0)
    return np.fft.irfft(spec, n)[: x.size]


def render_note(note: dict[str, Any], sample_rate: int) -> np.ndarray:
    """One note from its recipe: excitation, envelope, ramps, loudness.

    Parameters
    ----------
    note : dict
        The recipe (see the module docstring): ``excitation``, ``f0_hz`` (Hz), ``duration_s``
        (seconds), ``seed``, optional ``shape_seed``, ``ceps`` (dB) and ``loudness_lufs`` (LUFS).
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    ndarray, shape (samples,), float64
        The note, ``round(duration_s * sample_rate)`` samples, at ``loudness_lufs`` LUFS.
    """
    n = n_samples(note["duration_s"], sample_rate)
    shape_seed = note.get("shape_seed")
    x = excitation(
        note["excitation"],
        float(note["f0_hz"]),
        n,
        sample_rate,
        int(note["seed"]),
        None if shape_seed is None else int(shape_seed),
    )
    x = apply_ramps(x, sample_rate=sample_rate, ramp_s=RAMP_S)
    x = impose_envelope(x, sample_rate, note["ceps"])
    x = apply_ramps(x, sample_rate=sample_rate, ramp_s=EDGE_RAMP_S)
    return set_loudness_lufs(x, sample_rate, float(note["loudness_lufs"]))


def note_cepstrum(x: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mel cepstrum of a note's samples (one FFT over them).

    Parameters
    ----------
    x : array_like, shape (samples,)
        The note.
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    ndarray, shape (N_CEPS,), float64
        Coefficients 1..:data:`N_CEPS`, in dB.
    """
    x = np.asarray(x, dtype=np.float64)
    return cepstrum(band_db(np.abs(np.fft.rfft(x)) ** 2, mel_weights(x.size, sample_rate)))


# -- families: spectral-envelope templates ------------------------------------------------------------
FAMILY_DISTANCE_DB = 10.0  # timbre distance between any two family templates
# the envelope (dB vs frequency, Hz) each family's template leans toward: a bright bridge hill, one broad
# formant, a dark low-pass and a two-peaked reed (conventions of this module, not measurements)
_SHAPES = {
    "string": lambda f: 6.0 * np.log2(f / 300.0) - 1.5 * np.log2(f / 300.0) ** 2,
    "brass": lambda f: -2.0 * np.log2(f / 1000.0) ** 2,
    "flute": lambda f: -4.0 * np.log2(np.maximum(f, 400.0) / 400.0),
    "reed": lambda f: 5.0 * np.cos(2.2 * np.log2(f / 600.0)),
}


def _templates() -> dict[str, tuple[float, ...]]:
    """A regular simplex (every pair :data:`FAMILY_DISTANCE_DB` apart, centred on a flat envelope)
    whose vertices are the shapes' cepstra made orthonormal in turn (Gram-Schmidt, in the order of
    ``_SHAPES``): each template keeps its shape's main direction, and a note morphed between two
    templates is nearest to the one it holds more of."""
    raw = np.stack([cepstrum(shape(band_centres_hz())) for shape in _SHAPES.values()], axis=1)
    q, r = np.linalg.qr(raw)
    q = q * np.sign(np.diag(r))
    v = q.T * FAMILY_DISTANCE_DB / math.sqrt(2.0)
    v -= v.mean(axis=0)
    return {name: tuple(round(float(c), 4) for c in row) for name, row in zip(_SHAPES, v)}


FAMILIES: dict[str, tuple[float, ...]] = _templates()
FAMILY_LABELS = {"string": "String-like", "brass": "Brass-like", "flute": "Flute-like", "reed": "Reed-like"}
