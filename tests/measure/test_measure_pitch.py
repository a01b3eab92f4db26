"""Tests of pitch and frequency measurements (YIN f0, cents, dominant frequency, tracks)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.measure import cents, dominant_freq_hz, f0_hz, freq_track

SR = 48000


def _ramped(x: np.ndarray, ramp_s: float = 0.01) -> np.ndarray:
    r = int(ramp_s * SR)
    w = 0.5 - 0.5 * np.cos(np.pi * np.arange(r) / r)
    y = x.copy()
    y[:r] *= w
    y[-r:] *= w[::-1]
    return y


def _tone(f_hz: float, dur_s: float = 0.5, phase: float = 0.3) -> np.ndarray:
    t = np.arange(int(dur_s * SR)) / SR
    return np.sin(2 * np.pi * f_hz * t + phase)


@pytest.mark.parametrize("f_hz", [55.0, 110.3, 261.63, 440.0, 1000.0, 2637.02, 5000.0, 9100.0])
def test_f0_pure_tone_within_one_cent(f_hz):
    x = np.concatenate([np.zeros(2400), _ramped(_tone(f_hz)), np.zeros(2400)]).astype(np.float32)
    assert abs(cents(f_hz, f0_hz(x, SR))) < 1.0


@pytest.mark.parametrize(("f_hz", "n_harm"), [(82.4, 12), (150.0, 8), (220.0, 10), (523.25, 6), (1100.0, 5)])
def test_f0_harmonic_complex_within_one_cent(f_hz, n_harm):
    rng = np.random.default_rng(int(f_hz))
    t = np.arange(int(0.5 * SR)) / SR
    x = sum(np.sin(2 * np.pi * k * f_hz * t + rng.uniform(0, 2 * np.pi)) / k for k in range(1, n_harm + 1))
    assert abs(cents(f_hz, f0_hz(_ramped(x), SR))) < 1.0


def test_f0_noisy_tone_within_one_cent():
    rng = np.random.default_rng(3)
    x = _tone(330.0) + 0.1 * rng.standard_normal(SR // 2)  # 17 dB SNR
    assert abs(cents(330.0, f0_hz(x, SR))) < 1.0


def test_f0_stereo_averages_channels():
    x = np.stack([_tone(440.0), 0.5 * _tone(440.0)])
    assert abs(cents(440.0, f0_hz(x, SR))) < 1.0


def test_f0_respects_search_range():
    # 880 Hz is outside [50, 600]: the first period inside the range is two cycles (440 Hz)
    assert abs(cents(440.0, f0_hz(_tone(880.0), SR, fmax_hz=600.0))) < 1.0


def test_f0_silence_is_nan():
    assert math.isnan(f0_hz(np.zeros(SR // 4), SR))


def test_f0_bad_range_raises():
    with pytest.raises(ParameterError, match="fmin_hz"):
        f0_hz(_tone(440.0), SR, fmin_hz=500.0, fmax_hz=400.0)


def test_f0_too_short_raises():
    with pytest.raises(ParameterError, match="at least"):
        f0_hz(np.ones(100), SR)


@pytest.mark.parametrize(
    ("f_a", "f_b", "expected"), [(440.0, 880.0, 1200.0), (440.0, 220.0, -1200.0), (100.0, 100.0, 0.0)]
)
def test_cents_known_values(f_a, f_b, expected):
    assert cents(f_a, f_b) == pytest.approx(expected, abs=1e-9)


freqs = st.floats(min_value=1.0, max_value=20000.0, allow_nan=False)


@given(freqs, freqs, freqs)
def test_cents_antisymmetric_and_additive(f_a, f_b, f_c):
    assert cents(f_a, f_b) == pytest.approx(-cents(f_b, f_a), abs=1e-9)
    assert cents(f_a, f_c) == pytest.approx(cents(f_a, f_b) + cents(f_b, f_c), abs=1e-6)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_cents_rejects_non_positive(bad):
    with pytest.raises(ParameterError, match="f_a_hz"):
        cents(bad, 440.0)


@pytest.mark.parametrize("f_hz", [250.0, 1000.0, 1733.3, 4000.0])
def test_dominant_freq_resolves_doppler_shift(f_hz):
    """0.1 % Doppler shifts on a 1 s tone are resolved with an error far below the shift."""
    shifted = f_hz * 1.001
    rng = np.random.default_rng(0)
    for f in (f_hz, shifted):
        x = _tone(f, 1.0) + 0.01 * rng.standard_normal(SR)
        assert abs(dominant_freq_hz(x, SR, fmin_hz=100.0, fmax_hz=8000.0) / f - 1) < 1e-4


def test_dominant_freq_ignores_out_of_band_peak():
    x = _tone(3000.0, 1.0) + 0.1 * _tone(700.0, 1.0)
    assert dominant_freq_hz(x, SR, fmin_hz=500.0, fmax_hz=1000.0) == pytest.approx(700.0, rel=1e-4)


def test_freq_track_follows_linear_chirp():
    f0, f1, dur = 500.0, 1500.0, 2.0
    t = np.arange(int(dur * SR)) / SR
    x = np.sin(2 * np.pi * (f0 * t + (f1 - f0) / (2 * dur) * t**2))
    track = freq_track(x, SR, frame_s=0.05)
    times, got = np.array(track.times_s), np.array(track.freqs_hz)
    assert len(times) == len(got) > 70
    np.testing.assert_allclose(got, f0 + (f1 - f0) * times / dur, rtol=5e-3)


def test_freq_track_marks_silent_frames_nan():
    x = np.concatenate([_tone(800.0, 0.5), np.zeros(SR // 2)])
    track = freq_track(x, SR, frame_s=0.04)
    got = np.array(track.freqs_hz)
    times = np.array(track.times_s)
    assert np.all(np.isnan(got[times > 0.55]))
    np.testing.assert_allclose(got[times < 0.45], 800.0, rtol=1e-3)


def test_spectral_shift_reads_every_sample_of_a_clip_longer_than_its_base_fft():
    """A 2 s clip at 48 kHz (96,000 samples) whose sound starts after the first 65,536: its shift is found."""
    from auralgen.measure.pitch import spectral_shift

    sr, n = 48000, 96000
    t = np.arange(n) / sr
    ref = np.sin(2 * np.pi * 440.0 * t)
    late = np.where(np.arange(n) >= 70000, np.sin(2 * np.pi * 440.0 * 2 ** (100 / 1200) * t), 0.0)
    cents, match = spectral_shift(ref, late, sr)
    assert abs(cents - 100.0) <= 5.0, (cents, match)
