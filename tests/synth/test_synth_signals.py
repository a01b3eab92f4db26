"""Signals against closed forms, scipy references and spectral invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.signal import chirp

from auralgen.synth import (
    apply_ramps,
    click_train,
    harmonic_complex,
    impact,
    n_samples,
    noise,
    place,
    silence,
    sweep,
    tone,
)


def fft_peak_hz(x: np.ndarray, sample_rate: int, *, pad: int = 4) -> float:
    """Frequency of the largest spectral peak (Hann window, parabolic interpolation on log magnitude)."""
    n_fft = pad * x.size
    mag = np.abs(np.fft.rfft(x * np.hanning(x.size), n=n_fft))
    k = int(np.argmax(mag))
    a, b, c = np.log(mag[k - 1 : k + 2])
    delta = 0.5 * (a - c) / (a - 2 * b + c)
    return (k + delta) * sample_rate / n_fft


def zero_crossing_hz(x: np.ndarray, sample_rate: int) -> float:
    """Mean frequency between the first and last zero crossing (linearly interpolated)."""
    i = np.flatnonzero(np.signbit(x[:-1]) != np.signbit(x[1:]))
    t = (i + x[i] / (x[i] - x[i + 1])) / sample_rate
    return (len(t) - 1) / (2.0 * (t[-1] - t[0]))


# --------------------------------------------------------------------------- lengths


@pytest.mark.parametrize(
    ("duration_s", "sample_rate", "expected"),
    [(0.5, 44100, 22050), (0.0, 8000, 0), (1 / 3, 48000, 16000), (1.0000104, 48000, 48000), (0.0000105, 48000, 1)],
)
def test_n_samples_table(duration_s, sample_rate, expected):
    assert n_samples(duration_s, sample_rate) == expected


@settings(max_examples=60, deadline=None)
@given(duration_s=st.floats(0.001, 0.2), sample_rate=st.sampled_from([8000, 16000, 22050, 44100, 48000]))
def test_every_generator_has_exact_length(duration_s, sample_rate):
    n = int(round(duration_s * sample_rate))
    rng = np.random.default_rng(0)
    assert tone(100.0, duration_s, sample_rate=sample_rate).shape == (n,)
    assert harmonic_complex(100.0, duration_s, sample_rate=sample_rate, n_harmonics=3).shape == (n,)
    assert sweep(100.0, 200.0, duration_s, sample_rate=sample_rate, method="log").shape == (n,)
    assert silence(duration_s, sample_rate=sample_rate).shape == (n,)
    assert click_train(50.0, duration_s, sample_rate=sample_rate).shape == (n,)
    assert impact(300.0, 0.01, duration_s, sample_rate=sample_rate).shape == (n,)
    if n >= 2:
        assert noise(duration_s, sample_rate=sample_rate, rng=rng).shape == (n,)


# --------------------------------------------------------------------------- tone


@pytest.mark.parametrize(
    ("freq_hz", "sample_rate", "amplitude", "phase_rad"),
    [
        (1000.0, 48000, 1.0, 0.0),
        (440.0, 44100, 0.25, math.pi / 3),
        (12345.6, 32000, 0.5, -1.0),
        (31.25, 16000, 2.0, 0.0),
    ],
)
def test_tone_equals_closed_form(freq_hz, sample_rate, amplitude, phase_rad):
    x = tone(freq_hz, 0.5, sample_rate=sample_rate, amplitude=amplitude, phase_rad=phase_rad)
    t = np.arange(x.size) / sample_rate
    np.testing.assert_allclose(x, amplitude * np.sin(2 * np.pi * freq_hz * t + phase_rad), rtol=0, atol=1e-9)
    assert x.dtype == np.float64


@pytest.mark.parametrize(("freq_hz", "sample_rate"), [(100.0, 8000), (440.0, 44100), (1234.5, 48000), (9876.5, 22050)])
def test_tone_frequency_by_fft_peak_and_zero_crossings(freq_hz, sample_rate):
    x = tone(freq_hz, 1.0, sample_rate=sample_rate)
    assert fft_peak_hz(x, sample_rate) == pytest.approx(freq_hz, abs=0.02)
    assert zero_crossing_hz(x, sample_rate) == pytest.approx(freq_hz, rel=5e-5)  # linear interp. bias near Nyquist


@pytest.mark.parametrize("amplitude", [1.0, 0.5, 0.01])
def test_tone_rms_is_amplitude_over_sqrt2(amplitude):
    # 1000 Hz for 0.1 s at 48 kHz: exactly 100 periods.
    x = tone(1000.0, 0.1, sample_rate=48000, amplitude=amplitude)
    assert np.sqrt(np.mean(x**2)) == pytest.approx(amplitude / math.sqrt(2), rel=1e-12)
    assert np.max(np.abs(x)) == pytest.approx(amplitude, rel=1e-12)


def test_tone_phase_sets_first_sample():
    assert tone(500.0, 0.01, sample_rate=8000, amplitude=0.3, phase_rad=math.pi / 2)[0] == pytest.approx(0.3)
    assert tone(500.0, 0.01, sample_rate=8000, amplitude=0.3)[0] == 0.0


# --------------------------------------------------------------------------- harmonic complex


def _harmonic_reference(f0, n, sr, amps, phases):
    t = np.arange(n) / sr
    k = np.arange(1, len(amps) + 1)[:, None]
    return np.sum(np.asarray(amps)[:, None] * np.sin(2 * np.pi * k * f0 * t + np.asarray(phases)[:, None]), axis=0)


@pytest.mark.parametrize(
    ("f0_hz", "n_harmonics", "amplitudes", "phases_rad"),
    [
        (200.0, 10, None, None),
        (150.0, 4, [0.0, 1.0, 0.5, 0.25], None),  # missing fundamental
        (311.1, 3, [1.0, 2.0, 3.0], [0.0, math.pi / 2, -1.0]),
    ],
)
def test_harmonic_complex_equals_closed_form_sum(f0_hz, n_harmonics, amplitudes, phases_rad):
    sr = 16000
    x = harmonic_complex(
        f0_hz, 0.25, sample_rate=sr, n_harmonics=n_harmonics, amplitudes=amplitudes, phases_rad=phases_rad
    )
    amps = 1.0 / np.arange(1, n_harmonics + 1) if amplitudes is None else amplitudes
    phases = np.zeros(n_harmonics) if phases_rad is None else phases_rad
    np.testing.assert_allclose(x, _harmonic_reference(f0_hz, x.size, sr, amps, phases), rtol=0, atol=1e-9)


@pytest.mark.parametrize("block", [1, 7, 64, 5000])
def test_harmonic_complex_by_blocks_equals_the_per_sample_sines(block):
    """The angle-addition kernel against the sine per sample, on random tones as the spatial palette
    draws them (1-1.5 s, 150-400 Hz, every harmonic below Nyquist) and with phases and a missing
    fundamental: within 1e-10 of the peak (the phase's own rounding is ~1e-11 rad at these lengths)."""
    rng = np.random.default_rng(block)
    for _ in range(4):
        f0, dur = float(rng.uniform(150.0, 400.0)), float(rng.uniform(1.0, 1.5))
        n_h = int(7999 // f0)
        amps = np.concatenate([[0.0], rng.uniform(0.1, 1.0, n_h - 1)])
        phases = rng.uniform(-math.pi, math.pi, n_h)
        for kw in ({}, {"amplitudes": amps, "phases_rad": phases}):
            a = harmonic_complex(f0, dur, sample_rate=16000, n_harmonics=n_h, **kw)
            b = harmonic_complex(f0, dur, sample_rate=16000, n_harmonics=n_h, block=block, **kw)
            assert b.shape == a.shape and np.max(np.abs(a - b)) < 1e-10 * np.max(np.abs(a))


def test_harmonic_complex_is_not_normalised():
    # Two unit harmonics in cosine phase add up to a peak of 2 at t = 0.
    x = harmonic_complex(100.0, 0.1, sample_rate=8000, n_harmonics=2, amplitudes=[1, 1], phases_rad=[math.pi / 2] * 2)
    assert x[0] == pytest.approx(2.0)
    assert np.sqrt(np.mean(x**2)) == pytest.approx(1.0, rel=1e-9)


# --------------------------------------------------------------------------- sweep


@pytest.mark.parametrize("block", [1, 7, 64, 256])  # the rotations' rounding grows ~block**2
def test_log_sweep_by_blocks_equals_the_per_sample_sines(block):
    """The rotation kernel against the sine per sample: random sweeps as the mixture palette draws them
    (0.6-1.2 s, 250-500 Hz up 2.5-3.5 octaves), downward, very short (each block's turn too large for the
    series: per-sample sines) and constant ones, within 1e-10 of the amplitude; the block starts exactly."""
    rng = np.random.default_rng(block)
    cases = [(100.0, 7000.0, 0.05, 16000), (7000.0, 100.0, 0.3, 16000), (300.0, 300.0, 0.5, 16000)]
    for _ in range(4):
        f0 = float(np.exp(rng.uniform(np.log(250.0), np.log(500.0))))
        cases.append((f0, f0 * 2.0 ** rng.uniform(2.5, 3.5), float(rng.uniform(0.6, 1.2)), 16000))
    cases.append((20.0, 20000.0, 2.0, 48000))
    for f0, f1, dur, sr in cases:
        a = sweep(f0, f1, dur, sample_rate=sr, method="log", amplitude=0.7)
        b = sweep(f0, f1, dur, sample_rate=sr, method="log", amplitude=0.7, block=block)
        assert b.shape == a.shape and np.max(np.abs(a - b)) < 1e-10
        assert np.array_equal(a[::block], b[::block])
    assert (np.max(np.abs(a - b)) > 0) == (block > 1)  # the rotations round differently (block 1: none)


@pytest.mark.parametrize(
    ("f_start_hz", "f_end_hz", "method", "scipy_method"),
    [
        (100.0, 4000.0, "linear", "linear"),
        (5000.0, 20.0, "linear", "linear"),
        (0.0, 1000.0, "linear", "linear"),
        (50.0, 8000.0, "log", "logarithmic"),
        (8000.0, 125.0, "log", "logarithmic"),
    ],
)
def test_sweep_matches_scipy_chirp(f_start_hz, f_end_hz, method, scipy_method):
    sr, duration_s = 22050, 0.75
    x = sweep(f_start_hz, f_end_hz, duration_s, sample_rate=sr, method=method, amplitude=0.8)
    t = np.arange(x.size) / sr
    ref = 0.8 * chirp(t, f0=f_start_hz, t1=x.size / sr, f1=f_end_hz, method=scipy_method, phi=-90)
    np.testing.assert_allclose(x, ref, rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["linear", "log"])
@pytest.mark.parametrize(("f_start_hz", "f_end_hz"), [(200.0, 3200.0), (3200.0, 200.0)])
def test_sweep_instantaneous_frequency_at_start_and_end(method, f_start_hz, f_end_hz):
    sr, duration_s, window = 48000, 2.0, 960  # 20 ms windows
    x = sweep(f_start_hz, f_end_hz, duration_s, sample_rate=sr, method=method)
    period = x.size / sr

    def f_at(t):
        ratio = t / period
        if method == "linear":
            return f_start_hz + (f_end_hz - f_start_hz) * ratio
        return f_start_hz * (f_end_hz / f_start_hz) ** ratio

    half_window_s = window / 2 / sr
    assert zero_crossing_hz(x[:window], sr) == pytest.approx(f_at(half_window_s), rel=0.01)
    assert zero_crossing_hz(x[-window:], sr) == pytest.approx(f_at(period - half_window_s), rel=0.01)


@pytest.mark.parametrize("method", ["linear", "log"])
def test_sweep_is_phase_continuous(method):
    sr, f_max = 16000, 6000.0
    x = sweep(30.0, f_max, 1.0, sample_rate=sr, method=method)
    # |d/dt sin(phi)| <= 2 pi f_max: no sample step may exceed the bound (a phase jump would).
    assert np.max(np.abs(np.diff(x))) <= 2 * np.pi * f_max / sr * 1.0001
    assert x[0] == 0.0


@pytest.mark.parametrize("method", ["linear", "log"])
def test_flat_sweep_is_a_tone(method):
    np.testing.assert_allclose(
        sweep(440.0, 440.0, 0.2, sample_rate=8000, method=method), tone(440.0, 0.2, sample_rate=8000), atol=1e-9
    )


# --------------------------------------------------------------------------- noise


def _band_slope_db_per_octave(x, sr, low_hz=50.0, high_hz=12800.0):
    psd = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(x.size, 1 / sr)
    edges = low_hz * 2.0 ** np.arange(0, np.log2(high_hz / low_hz) + 0.01, 0.5)
    centres, levels = [], []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (freqs >= lo) & (freqs < hi)
        centres.append(np.log2(np.sqrt(lo * hi)))
        levels.append(10 * np.log10(np.mean(psd[sel])))
    return float(np.polyfit(centres, levels, 1)[0])


@pytest.mark.parametrize(("color", "slope_db"), [("white", 0.0), ("pink", -3.01), ("brown", -6.02)])
def test_noise_spectral_slope(color, slope_db):
    sr = 32000
    x = noise(2.0, sample_rate=sr, rng=np.random.default_rng(1), color=color)
    assert _band_slope_db_per_octave(x, sr) == pytest.approx(slope_db, abs=0.3)


@pytest.mark.parametrize("color", ["white", "pink", "brown"])
@pytest.mark.parametrize("band_hz", [None, (500.0, 2000.0), (0.0, 300.0), (7000.0, 8000.0)])
def test_noise_unit_rms_zero_mean_and_band(color, band_hz):
    sr = 16000
    x = noise(0.5, sample_rate=sr, rng=np.random.default_rng(7), color=color, band_hz=band_hz)
    assert np.sqrt(np.mean(x**2)) == pytest.approx(1.0, rel=1e-12)
    assert abs(np.mean(x)) < 1e-12
    if band_hz is not None:
        power = np.abs(np.fft.rfft(x)) ** 2
        freqs = np.fft.rfftfreq(x.size, 1 / sr)
        outside = (freqs < band_hz[0]) | (freqs > band_hz[1])
        assert power[outside].sum() < 1e-20 * power.sum()
        assert power[~outside].sum() > 0


def test_noise_is_deterministic_for_a_seed():
    a = noise(0.1, sample_rate=8000, rng=np.random.default_rng(42), color="pink")
    b = noise(0.1, sample_rate=8000, rng=np.random.default_rng(42), color="pink")
    c = noise(0.1, sample_rate=8000, rng=np.random.default_rng(43), color="pink")
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize(("color", "band_hz"), [("pink", None), ("brown", (200.0, 3000.0)), ("white", None)])
def test_noise_with_its_spectral_weights_kept_equals_the_direct_shaping(color, band_hz):
    """The per-length weights are kept (read-only) between calls; a call that reuses them gives the noise
    shaped directly: rFFT of the draw, weight f**-exponent (0 at DC and outside the band), inverse, unit RMS."""
    from auralgen.synth.signals import _noise_gain

    n, sr = 4001, 8000
    for seed in (1, 2):  # the second call finds the weights kept
        x = noise(n / sr, sample_rate=sr, rng=np.random.default_rng(seed), color=color, band_hz=band_hz)
        freqs = np.fft.rfftfreq(n, d=1.0 / sr)
        gain = np.zeros_like(freqs)
        gain[1:] = freqs[1:] ** -{"white": 0.0, "pink": 0.5, "brown": 1.0}[color]
        if band_hz is not None:
            gain[(freqs < band_hz[0]) | (freqs > band_hz[1])] = 0.0
        y = np.fft.irfft(np.fft.rfft(np.random.default_rng(seed).standard_normal(n)) * gain, n=n)
        np.testing.assert_array_equal(x, y / float(np.sqrt(np.mean(y**2))))
    kept = _noise_gain(n, sr, color, band_hz)
    assert kept is _noise_gain(n, sr, color, band_hz) and not kept.flags.writeable


def test_noise_keeps_the_weights_of_short_lengths_only():
    """Weights of up to NOISE_MEMO_MAX_N samples are kept (a bounded memo); a longer noise computes its own."""
    from auralgen.synth.signals import NOISE_MEMO_MAX_N, _noise_gain

    _noise_gain.cache_clear()
    noise(1000 / 8000, sample_rate=8000, rng=np.random.default_rng(0), color="pink")
    long_n = NOISE_MEMO_MAX_N + 2
    x = noise(long_n / 8000, sample_rate=8000, rng=np.random.default_rng(0), color="pink")
    assert _noise_gain.cache_info().currsize == 1 and x.shape == (long_n,)


# --------------------------------------------------------------------------- ramps, silence, place


@pytest.mark.parametrize(("n", "sample_rate", "ramp_s"), [(1000, 1000, 0.05), (100, 8000, 0.00625), (20, 10, 1.0)])
def test_ramps_raised_cosine_shape(n, sample_rate, ramp_s):
    x = np.linspace(1.0, 2.0, n)
    m = int(round(ramp_s * sample_rate))
    y = apply_ramps(x, sample_rate=sample_rate, ramp_s=ramp_s)
    gain = 0.5 * (1 - np.cos(np.pi * np.arange(m) / m))
    assert y[0] == 0.0 and y[-1] == 0.0
    np.testing.assert_allclose(y[:m], x[:m] * gain, rtol=1e-12)
    np.testing.assert_allclose(y[n - m :][::-1], x[n - m :][::-1] * gain, rtol=1e-12)
    np.testing.assert_array_equal(y[m : n - m], x[m : n - m])
    np.testing.assert_array_equal(x, np.linspace(1.0, 2.0, n))  # input untouched


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 50), extra=st.integers(0, 50))
def test_ramps_envelope_is_symmetric_and_bounded(m, extra):
    n = 2 * m + extra
    y = apply_ramps(np.ones(n), sample_rate=1000, ramp_s=m / 1000)
    np.testing.assert_allclose(y, y[::-1], atol=1e-15)
    assert np.all((y >= 0) & (y <= 1))
    assert np.count_nonzero(y == 1.0) == n - 2 * m  # only the middle is untouched


def test_ramps_zero_length_is_a_copy():
    x = np.arange(5.0)
    y = apply_ramps(x, sample_rate=100, ramp_s=0.0)
    np.testing.assert_array_equal(y, x)
    assert y is not x


def test_silence():
    np.testing.assert_array_equal(silence(0.01, sample_rate=1000), np.zeros(10))
    assert silence(0.0, sample_rate=1000).shape == (0,)


@pytest.mark.parametrize(
    ("segments", "total", "expected"),
    [
        ([], 3, [0, 0, 0]),
        ([(np.ones(2), 0)], 4, [1, 1, 0, 0]),
        ([(np.ones(2), 2)], 4, [0, 0, 1, 1]),
        ([(np.ones(3), 0), (2 * np.ones(2), 1)], 4, [1, 3, 3, 0]),
        ([(np.array([1.0, -1.0]), np.int64(1))], 3, [0, 1, -1]),
    ],
)
def test_place_overlap_adds(segments, total, expected):
    np.testing.assert_array_equal(place(segments, total), np.asarray(expected, dtype=float))


# --------------------------------------------------------------------------- clicks, impact


@pytest.mark.parametrize(
    ("rate_hz", "duration_s", "sample_rate", "expected"),
    [(4.0, 1.0, 100, [0, 25, 50, 75]), (3.0, 1.0, 100, [0, 33, 67]), (10.0, 0.35, 100, [0, 10, 20, 30])],
)
def test_click_train_positions(rate_hz, duration_s, sample_rate, expected):
    x = click_train(rate_hz, duration_s, sample_rate=sample_rate)
    assert np.flatnonzero(x).tolist() == expected
    assert set(np.unique(x)) == {0.0, 1.0}


def test_impact_equals_closed_form_and_decays_by_1_over_e():
    sr, f, tau = 16000, 1000.0, 0.05
    x = impact(f, tau, 0.3, sample_rate=sr)
    t = np.arange(x.size) / sr
    np.testing.assert_allclose(x, np.exp(-t / tau) * np.sin(2 * np.pi * f * t), atol=1e-12)
    # Peak of the cycle around t = tau (cycle 50, quarter period = 4 samples) is ~1/e.
    assert np.max(np.abs(x[796:804])) == pytest.approx(math.exp(-1), rel=0.01)
