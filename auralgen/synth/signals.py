"""Validating public wrappers around the synthesis kernels.

Every function returns a new 1-D ``np.float64`` array (a building block; tasks assemble
float32 ``[channels, samples]`` clips later). Data arguments come first, everything else
is keyword-only; units are in the names. Bad input raises
:class:`~auralgen.core.errors.ParameterError` naming the value and what is allowed.

Time of sample ``i`` is ``i / sample_rate``; a duration becomes
``n_samples(duration_s, sample_rate) = round(duration_s * sample_rate)`` samples.
Levels are not set here: see :mod:`auralgen.synth.levels`.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from auralgen.core.errors import ParameterError, check_range
from auralgen.synth import _kernels
from auralgen.synth._checks import as_signal, check_finite, check_frequency, check_int, check_sample_rate

NOISE_COLORS = ("white", "pink", "brown")
SWEEP_METHODS = ("linear", "log")


def n_samples(duration_s: float, sample_rate: int) -> int:
    """Number of samples in ``duration_s`` seconds: ``int(round(duration_s * sample_rate))``.

    Parameters
    ----------
    duration_s : float >= 0
        Duration in seconds.
    sample_rate : int > 0
        Sampling rate in Hz.

    Returns
    -------
    int
        The number of samples (>= 0).

    Raises
    ------
    ParameterError
        If ``duration_s`` is negative or not finite, or ``sample_rate`` is not a positive integer.

    Examples
    --------
    >>> n_samples(0.5, 44100)
    22050
    """
    sample_rate = check_sample_rate(sample_rate)
    duration_s = check_range("duration_s", check_finite("duration_s", duration_s), low=0)
    return int(round(duration_s * sample_rate))


def _length(duration_s, sample_rate: int) -> int:
    """Number of samples of a signal that must not be empty."""
    duration_s = check_range("duration_s", check_finite("duration_s", duration_s), low=0, low_open=True)
    n = n_samples(duration_s, sample_rate)
    if n < 1:
        raise ParameterError(
            f"duration_s={duration_s!r} is shorter than one sample at sample_rate={sample_rate}; "
            f"allowed: duration_s >= {0.5 / sample_rate:g} s"
        )
    return n


def tone(
    freq_hz: float, duration_s: float, *, sample_rate: int, amplitude: float = 1.0, phase_rad: float = 0.0
) -> np.ndarray:
    """Pure tone ``amplitude * sin(2 pi freq_hz t + phase_rad)``.

    Parameters
    ----------
    freq_hz : float, 0 < freq_hz < sample_rate / 2
        Frequency in Hz.
    duration_s : float > 0
        Duration in seconds (rounded to whole samples).
    sample_rate : int > 0
        Sampling rate in Hz.
    amplitude : float >= 0
        Peak amplitude (digital full scale = 1). The RMS is ``amplitude / sqrt(2)``.
    phase_rad : float
        Starting phase in radians (0 = sine starting at zero).

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64]
        The tone, ``n = round(duration_s * sample_rate)`` samples.

    Examples
    --------
    >>> x = tone(1000.0, 0.01, sample_rate=48000, amplitude=0.5)
    >>> x.shape, float(x.max()) <= 0.5
    ((480,), True)
    """
    sample_rate = check_sample_rate(sample_rate)
    freq_hz = check_frequency("freq_hz", freq_hz, sample_rate)
    n = _length(duration_s, sample_rate)
    amplitude = check_range("amplitude", check_finite("amplitude", amplitude), low=0)
    phase_rad = check_finite("phase_rad", phase_rad)
    return _kernels._render_tone(freq_hz, n, sample_rate, amplitude, phase_rad)


def harmonic_complex(
    f0_hz: float,
    duration_s: float,
    *,
    sample_rate: int,
    n_harmonics: int = 10,
    amplitudes=None,
    phases_rad=None,
    block: int = 0,
) -> np.ndarray:
    """Harmonic complex ``sum_k a_k sin(2 pi k f0_hz t + phi_k)`` for ``k = 1..n_harmonics``.

    The raw sum is returned, **not** normalised: set the level afterwards by RMS
    (:func:`auralgen.synth.levels.set_level_db_spl`).

    Parameters
    ----------
    f0_hz : float > 0
        Fundamental frequency in Hz.
    duration_s : float > 0
        Duration in seconds.
    sample_rate : int > 0
        Sampling rate in Hz.
    n_harmonics : int >= 1
        Number of harmonics; ``n_harmonics * f0_hz`` must be below Nyquist.
    amplitudes : array-like [shape=(n_harmonics,)], optional
        Peak amplitude of each harmonic (``k = 1`` first); default ``1 / k``.
        A zero removes a harmonic (e.g. a missing fundamental).
    phases_rad : array-like [shape=(n_harmonics,)], optional
        Starting phase of each harmonic in radians; default all zero (sine phase).
    block : int >= 0
        0 (default): one sine per sample and harmonic. ``block > 0``: the sines of each block of
        that many samples from its first sample's by angle addition, several times faster and equal
        within ~1e-10 of the sum's peak (the rounding of the phase ``2 pi k f0 t``, which both share).

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64]
        The unnormalised sum, ``n = round(duration_s * sample_rate)`` samples.

    Examples
    --------
    >>> x = harmonic_complex(200.0, 0.1, sample_rate=16000, n_harmonics=5)
    >>> x.shape
    (1600,)
    """
    sample_rate = check_sample_rate(sample_rate)
    f0_hz = check_frequency("f0_hz", f0_hz, sample_rate)
    n_harmonics, block = check_int("n_harmonics", n_harmonics, low=1), check_int("block", block, low=0)
    nyquist = sample_rate / 2
    if n_harmonics * f0_hz >= nyquist:
        raise ParameterError(
            f"n_harmonics={n_harmonics} with f0_hz={f0_hz!r} puts harmonic {n_harmonics} at "
            f"{n_harmonics * f0_hz:g} Hz; allowed: n_harmonics * f0_hz < Nyquist ({nyquist:g} Hz)"
        )
    n = _length(duration_s, sample_rate)
    k = np.arange(1, n_harmonics + 1, dtype=np.float64)
    amps = 1.0 / k if amplitudes is None else _harmonic_vector("amplitudes", amplitudes, n_harmonics)
    phases = np.zeros(n_harmonics) if phases_rad is None else _harmonic_vector("phases_rad", phases_rad, n_harmonics)
    return _kernels._render_harmonic(f0_hz, n, sample_rate, amps, phases, block)


def _harmonic_vector(key: str, values, n_harmonics: int) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (n_harmonics,):
        raise ParameterError(f"{key} has shape {arr.shape}; allowed: shape ({n_harmonics},) = (n_harmonics,)")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{key}={arr.tolist()!r} has non-finite values; allowed: finite numbers")
    return np.ascontiguousarray(arr)


def noise(
    duration_s: float, *, sample_rate: int, rng: np.random.Generator, color: str = "white", band_hz=None
) -> np.ndarray:
    """Gaussian noise with a white, pink (-3 dB/octave) or brown (-6 dB/octave) spectrum.

    The spectrum is shaped in the frequency domain: one ``rng.standard_normal(n)`` draw,
    FFT, power density weighted by ``1``, ``1/f`` or ``1/f**2``, the DC bin and any bin
    outside ``band_hz`` zeroed, inverse FFT. The result is scaled to unit RMS (exactly).

    Parameters
    ----------
    duration_s : float > 0
        Duration in seconds.
    sample_rate : int > 0
        Sampling rate in Hz.
    rng : numpy.random.Generator
        Source of randomness (the item's generator; never a global RNG).
    color : {"white", "pink", "brown"}
        Spectral slope.
    band_hz : (float, float), optional
        ``(low, high)`` pass band in Hz, ``0 <= low < high <= Nyquist``; bins with
        ``low <= f <= high`` are kept.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64], unit RMS
        The noise, ``n = round(duration_s * sample_rate)`` samples.

    Examples
    --------
    >>> x = noise(0.1, sample_rate=16000, rng=np.random.default_rng(0), color="pink")
    >>> round(float(np.sqrt(np.mean(x**2))), 12)
    1.0
    """
    sample_rate = check_sample_rate(sample_rate)
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng={rng!r} is not a numpy.random.Generator; allowed: np.random.Generator")
    if color not in NOISE_COLORS:
        raise ParameterError(f"color={color!r} is unknown; allowed: {list(NOISE_COLORS)}")
    n = _length(duration_s, sample_rate)
    if n < 2:
        raise ParameterError(
            f"duration_s={duration_s!r} is 1 sample at sample_rate={sample_rate}; allowed: >= 2 samples for noise"
        )
    band = None if band_hz is None else _check_band(band_hz, sample_rate / 2)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    weights = _noise_gain if n <= NOISE_MEMO_MAX_N else _noise_gain.__wrapped__  # long ones: not kept
    x = np.fft.irfft(spectrum * weights(n, sample_rate, color, band), n=n)
    r = float(np.sqrt(np.mean(x**2)))
    if r == 0.0:
        raise ParameterError(
            f"band_hz={band_hz!r} with duration_s={duration_s!r} contains no FFT bin (bin spacing "
            f"{sample_rate / n:g} Hz); allowed: a wider band or a longer duration"
        )
    return x / r


NOISE_MEMO_MAX_N = 1 << 15  # noise() keeps the spectral weights of up to this many samples (32 x 128 kB at most)


def noise_at_fast_length(
    duration_s: float, *, sample_rate: int, rng: np.random.Generator, color: str = "white", band_hz=None
) -> np.ndarray:
    """:func:`noise` shaped at the next fast FFT length (``scipy.fft.next_fast_len``) and cut to
    ``n_samples(duration_s, sample_rate)``: a length with a large prime factor transforms several times
    slower. A length that is already fast gives :func:`noise`'s samples; a cut one is not scaled again
    (its RMS is near 1, not exactly 1).

    Parameters
    ----------
    duration_s, sample_rate, rng, color, band_hz
        As in :func:`noise`.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64]
        The first ``n`` samples of the noise shaped at the fast length.

    Examples
    --------
    >>> x = noise_at_fast_length(0.1, sample_rate=8009, rng=np.random.default_rng(0), color="pink")
    >>> x.shape, round(float(np.sqrt(np.mean(x**2))), 1)
    ((801,), 1.0)
    """
    from scipy import fft as sp_fft

    n = n_samples(duration_s, sample_rate)
    fast = sp_fft.next_fast_len(n, real=True) if n >= 2 else n  # noise() refuses fewer than 2 samples
    return noise(fast / sample_rate, sample_rate=sample_rate, rng=rng, color=color, band_hz=band_hz)[:n]


@functools.lru_cache(maxsize=32)
def _noise_gain(n: int, sample_rate: int, color: str, band: tuple[float, float] | None) -> np.ndarray:
    """:func:`noise`'s amplitude weight per rFFT bin of ``n`` samples (read-only; kept for the lengths that recur)."""
    freqs = np.fft.rfftfreq(n, d=1.0 / sample_rate)
    gain = np.zeros_like(freqs)
    exponent = {"white": 0.0, "pink": 0.5, "brown": 1.0}[color]
    gain[1:] = freqs[1:] ** -exponent
    if band is not None:
        gain[(freqs < band[0]) | (freqs > band[1])] = 0.0
    gain.setflags(write=False)
    return gain


def _check_band(band_hz, nyquist: float) -> tuple[float, float]:
    """``band_hz`` as ``(low, high)`` with ``0 <= low < high <= nyquist``, or ParameterError."""
    if isinstance(band_hz, (str, bytes)) or not hasattr(band_hz, "__len__") or len(band_hz) != 2:
        raise ParameterError(f"band_hz={band_hz!r} is not a pair; allowed: (low, high) in Hz")
    low, high = (check_finite("band_hz", v) for v in band_hz)
    if not 0 <= low < high <= nyquist:
        raise ParameterError(
            f"band_hz={tuple(band_hz)!r} is out of range; allowed: 0 <= low < high <= Nyquist ({nyquist:g} Hz)"
        )
    return low, high


def sweep(
    f_start_hz: float,
    f_end_hz: float,
    duration_s: float,
    *,
    sample_rate: int,
    method: str = "linear",
    amplitude: float = 1.0,
    block: int = 0,
) -> np.ndarray:
    """Phase-continuous sine chirp from ``f_start_hz`` to ``f_end_hz``.

    Instantaneous frequency ``f(t) = f0 + (f1 - f0) t / T`` (``"linear"``) or
    ``f0 * (f1 / f0) ** (t / T)`` (``"log"``, exponential), ``T = n / sample_rate``: it equals
    ``f_start_hz`` at the first sample and reaches ``f_end_hz`` at the end of the last one.
    Phase is 0 at ``t = 0``. Equal to ``scipy.signal.chirp(t, f0, T, f1, method=..., phi=-90)``
    with ``method`` ``"linear"`` / ``"logarithmic"``.

    Parameters
    ----------
    f_start_hz, f_end_hz : float
        Start and end frequencies in Hz, ``0 <= f < Nyquist`` (``0 < f`` for ``"log"``);
        a downward sweep has ``f_end_hz < f_start_hz``.
    duration_s : float > 0
        Duration in seconds.
    sample_rate : int > 0
        Sampling rate in Hz.
    method : {"linear", "log"}
        Frequency trajectory.
    amplitude : float >= 0
        Peak amplitude.
    block : int >= 0
        0 (default): one sine per sample. ``block > 0`` (``"log"`` only): each block of that many samples by
        complex rotation from its first sample, ~5x faster, equal within ~1e-10 of ``amplitude``.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64]
        The chirp, ``n = round(duration_s * sample_rate)`` samples, peak at most ``amplitude``.

    Examples
    --------
    >>> sweep(100.0, 1000.0, 0.5, sample_rate=8000, method="log").shape
    (4000,)
    """
    sample_rate = check_sample_rate(sample_rate)
    if method not in SWEEP_METHODS:
        raise ParameterError(f"method={method!r} is unknown; allowed: {list(SWEEP_METHODS)}")
    allow_zero = method == "linear"
    f_start_hz = check_frequency("f_start_hz", f_start_hz, sample_rate, allow_zero=allow_zero)
    f_end_hz = check_frequency("f_end_hz", f_end_hz, sample_rate, allow_zero=allow_zero)
    n = _length(duration_s, sample_rate)
    amplitude = check_range("amplitude", check_finite("amplitude", amplitude), low=0)
    if check_int("block", block, low=0) and method != "log":
        raise ParameterError(f"block={block} applies to method='log'; allowed: block=0 with method={method!r}")
    if block:
        return _kernels._render_sweep_log_blocks(f_start_hz, f_end_hz, n, sample_rate, amplitude, block)
    kernel = _kernels._render_sweep_linear if method == "linear" else _kernels._render_sweep_log
    return kernel(f_start_hz, f_end_hz, n, sample_rate, amplitude)


def apply_ramps(x, *, sample_rate: int, ramp_s: float) -> np.ndarray:
    """Raised-cosine (half-Hann) onset and offset ramps of ``ramp_s`` seconds each.

    With ``m = n_samples(ramp_s, sample_rate)``, sample ``i < m`` is multiplied by
    ``0.5 * (1 - cos(pi * i / m))`` and sample ``n - 1 - i`` by the same gain, so the first
    and last samples are 0 and samples ``m .. n - 1 - m`` are untouched.

    Parameters
    ----------
    x : np.ndarray [shape=(n,)]
        Signal (not modified).
    sample_rate : int > 0
        Sampling rate in Hz.
    ramp_s : float >= 0
        Duration of each ramp in seconds; ``2 * m <= n`` is required.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64]
        A ramped copy of ``x``.

    Examples
    --------
    >>> y = apply_ramps(np.ones(100), sample_rate=1000, ramp_s=0.01)
    >>> float(y[0]), float(y[50])
    (0.0, 1.0)
    """
    sample_rate = check_sample_rate(sample_rate)
    x = as_signal("x", x)
    ramp_s = check_range("ramp_s", check_finite("ramp_s", ramp_s), low=0)
    m = n_samples(ramp_s, sample_rate)
    if 2 * m > x.shape[0]:
        raise ParameterError(
            f"ramp_s={ramp_s!r} is {m} samples, too long for a {x.shape[0]}-sample signal; "
            f"allowed: 2 * ramp samples <= len(x)"
        )
    return _kernels._render_raised_cosine_ramps(np.ascontiguousarray(x), m)


def silence(duration_s: float, *, sample_rate: int) -> np.ndarray:
    """Zeros of ``n_samples(duration_s, sample_rate)`` samples (``duration_s >= 0``).

    Parameters
    ----------
    duration_s, sample_rate
        As in :func:`n_samples`.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64]
        Zeros, ``n = round(duration_s * sample_rate)`` samples.

    Examples
    --------
    >>> silence(0.25, sample_rate=8000).shape
    (2000,)
    """
    return np.zeros(n_samples(duration_s, sample_rate), dtype=np.float64)


def place(segments, total_samples: int) -> np.ndarray:
    """Overlap-add ``(signal, onset_sample)`` pairs into zeros of length ``total_samples``.

    Parameters
    ----------
    segments : iterable of (np.ndarray [shape=(m,)], int)
        Each signal is added at ``out[onset : onset + m]``; overlaps sum.
    total_samples : int >= 0
        Length of the output.

    Returns
    -------
    np.ndarray [shape=(total_samples,), dtype=float64]
        The sum of the placed segments (zeros elsewhere).

    Examples
    --------
    >>> place([(np.ones(2), 1), (np.ones(2), 2)], 4).tolist()
    [0.0, 1.0, 2.0, 1.0]
    """
    total_samples = check_int("total_samples", total_samples, low=0)
    out = np.zeros(total_samples, dtype=np.float64)
    for k, segment in enumerate(segments):
        if len(segment) != 2:
            raise ParameterError(f"segments[{k}] has {len(segment)} items; allowed: (signal_1d, onset_sample)")
        signal, onset = segment
        signal = as_signal(f"segments[{k}] signal", signal)
        if isinstance(onset, bool) or not isinstance(onset, numbers.Integral):
            raise ParameterError(f"segments[{k}] onset={onset!r} is not an integer; allowed: int sample index")
        onset = int(onset)
        end = onset + signal.shape[0]
        if onset < 0 or end > total_samples:
            raise ParameterError(
                f"segments[{k}] spans samples [{onset}, {end}); allowed: within [0, {total_samples}) "
                f"(onset >= 0 and onset + len <= total_samples)"
            )
        out[onset:end] += signal
    return out


def click_train(rate_hz: float, duration_s: float, *, sample_rate: int) -> np.ndarray:
    """Unit single-sample clicks at ``t = k / rate_hz`` (sample ``round(k * sample_rate / rate_hz)``).

    Parameters
    ----------
    rate_hz : float, 0 < rate_hz <= sample_rate / 2
        Clicks per second; the first click is at sample 0.
    duration_s : float > 0
        Length of the train in seconds.
    sample_rate : int > 0
        Sampling rate in Hz.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64] of zeros and ones
        The train, ``n = round(duration_s * sample_rate)`` samples, ones at the clicks.

    Examples
    --------
    >>> np.flatnonzero(click_train(4.0, 1.0, sample_rate=100)).tolist()
    [0, 25, 50, 75]
    """
    sample_rate = check_sample_rate(sample_rate)
    rate_hz = check_finite("rate_hz", rate_hz)
    if not 0 < rate_hz <= sample_rate / 2:
        raise ParameterError(f"rate_hz={rate_hz!r} is out of range; allowed: 0 < rate_hz <= {sample_rate / 2:g} Hz")
    n = _length(duration_s, sample_rate)
    period = sample_rate / rate_hz
    idx = np.round(np.arange(0, math.ceil(n / period) + 1) * period).astype(np.int64)
    out = np.zeros(n, dtype=np.float64)
    out[idx[idx < n]] = 1.0
    return out


def impact(freq_hz: float, decay_s: float, duration_s: float, *, sample_rate: int) -> np.ndarray:
    """Exponentially decaying sinusoid ``exp(-t / decay_s) * sin(2 pi freq_hz t)``.

    Parameters
    ----------
    freq_hz : float, 0 < freq_hz < sample_rate / 2
        Ringing frequency in Hz.
    decay_s : float > 0
        Amplitude time constant in seconds (envelope falls to 1/e; 60 dB after ``6.91 * decay_s``).
    duration_s : float > 0
        Length in seconds; the decay is cut there, not faded.
    sample_rate : int > 0
        Sampling rate in Hz.

    Returns
    -------
    np.ndarray [shape=(n,), dtype=float64], peak <= 1
        The decaying sinusoid, ``n = round(duration_s * sample_rate)`` samples.

    Examples
    --------
    >>> impact(800.0, 0.05, 0.3, sample_rate=16000).shape
    (4800,)
    """
    sample_rate = check_sample_rate(sample_rate)
    freq_hz = check_frequency("freq_hz", freq_hz, sample_rate)
    decay_s = check_range("decay_s", check_finite("decay_s", decay_s), low=0, low_open=True)
    n = _length(duration_s, sample_rate)
    return _kernels._render_impact(freq_hz, decay_s, n, sample_rate, 1.0)
