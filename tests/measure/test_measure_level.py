"""Tests of level, loudness, activity segments and narrowband tone presence."""

import math

import numpy as np
import pyloudnorm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.measure import level_db_rms, level_db_spl, loudness_lufs, segments, tone_presence

SR = 48000


def _ramped_tone(f_hz: float, dur_s: float, ramp_s: float = 0.01) -> np.ndarray:
    n = int(round(dur_s * SR))
    x = np.sin(2 * np.pi * f_hz * np.arange(n) / SR)
    r = int(ramp_s * SR)
    w = 0.5 - 0.5 * np.cos(np.pi * np.arange(r) / r)
    x[:r] *= w
    x[-r:] *= w[::-1]
    return x


def _place(total_s: float, parts) -> np.ndarray:
    out = np.zeros(int(total_s * SR))
    for onset_s, sig in parts:
        i = int(round(onset_s * SR))
        out[i : i + len(sig)] += sig
    return out


# --- levels -----------------------------------------------------------------------------


def test_level_db_rms_full_scale_sine_is_minus_3db():
    x = np.sin(2 * np.pi * 1000 * np.arange(SR) / SR)
    assert level_db_rms(x) == pytest.approx(-3.0103, abs=1e-3)


def test_level_db_rms_silence_is_minus_inf():
    assert level_db_rms(np.zeros(10)) == -math.inf


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e3), st.integers(min_value=0, max_value=2**16))
def test_level_shift_by_gain(gain, seed):
    x = np.random.default_rng(seed).standard_normal((2, 256))
    assert level_db_rms(gain * x) - level_db_rms(x) == pytest.approx(20 * math.log10(gain), abs=1e-9)


@pytest.mark.parametrize(("target_db_spl", "full_scale_db_spl"), [(60.0, 100.0), (94.0, 120.0), (20.0, 110.0)])
def test_level_db_spl_round_trip(target_db_spl, full_scale_db_spl):
    x = np.random.default_rng(1).standard_normal(SR // 10)
    x *= 10 ** ((target_db_spl - full_scale_db_spl) / 20) / np.sqrt(np.mean(x**2))
    assert level_db_spl(x.astype(np.float32), full_scale_db_spl=full_scale_db_spl) == pytest.approx(
        target_db_spl, abs=1e-4
    )


def test_level_db_spl_rejects_non_finite_reference():
    with pytest.raises(ParameterError, match="full_scale_db_spl"):
        level_db_spl(np.ones(4), full_scale_db_spl=math.nan)


@pytest.mark.parametrize("channels", [1, 2])
def test_loudness_matches_pyloudnorm(channels):
    rng = np.random.default_rng(channels)
    x = 0.1 * rng.standard_normal((channels, SR))
    expected = pyloudnorm.Meter(SR).integrated_loudness(x.T)
    got = loudness_lufs(x.astype(np.float32) if channels == 2 else x[0], SR)
    assert got == pytest.approx(expected, abs=1e-3)
    assert -40 < got < 0


def test_loudness_rejects_short_clip():
    with pytest.raises(ParameterError, match="0.4 s"):
        loudness_lufs(np.ones(1000), SR)


# --- segments ---------------------------------------------------------------------------


@pytest.mark.parametrize("f_hz", [60.0, 125.0, 1000.0, 6000.0])
@pytest.mark.parametrize(("onset_s", "dur_s", "ramp_s"), [(0.1234, 0.3, 0.01), (0.5, 0.05, 0.01), (0.0371, 0.8, 0.005)])
def test_segments_of_ramped_tone_within_2ms(f_hz, onset_s, dur_s, ramp_s):
    x = _place(1.2, [(onset_s, _ramped_tone(f_hz, dur_s, ramp_s))])
    x += 1e-4 * np.random.default_rng(0).standard_normal(len(x))  # -80 dB floor
    (seg,) = segments(x.astype(np.float32), SR)
    assert seg.onset_s == pytest.approx(onset_s, abs=0.002)
    assert seg.offset_s == pytest.approx(onset_s + dur_s, abs=0.002)
    assert seg.duration_s == pytest.approx(dur_s, abs=0.004)


def test_segments_of_abrupt_noise_bursts_and_gap_merging():
    rng = np.random.default_rng(4)
    bursts = [(0.2, 0.1), (0.33, 0.1), (0.45, 0.1), (1.0, 0.25)]  # gaps: 30 ms (merged), 20 ms (merged), 450 ms
    x = _place(1.5, [(on, 0.3 * rng.standard_normal(int(d * SR))) for on, d in bursts])
    got = segments(np.stack([x, 0.5 * x]), SR)
    edges = [edge for seg in got for edge in (seg.onset_s, seg.offset_s)]
    assert edges == pytest.approx([0.2, 0.55, 1.0, 1.25], abs=0.001)
    assert len(segments(x, SR, min_gap_s=0.01)) == 4


@pytest.mark.parametrize("f_hz", [60.0, 440.0])
def test_segments_of_abrupt_tone_within_half_ms(f_hz):
    tone = np.sin(2 * np.pi * f_hz * np.arange(int(0.4 * SR)) / SR + 1.0)
    (seg,) = segments(_place(1.0, [(0.25, tone)]), SR)
    assert (seg.onset_s, seg.offset_s) == pytest.approx((0.25, 0.65), abs=5e-4)


def test_segments_threshold_drops_quiet_events():
    x = _place(1.0, [(0.1, _ramped_tone(500.0, 0.2)), (0.6, 0.01 * _ramped_tone(500.0, 0.2))])  # second at -40 dB
    assert len(segments(x, SR)) == 1
    assert len(segments(x, SR, threshold_db=-50.0)) == 2


def test_segments_of_silence_is_empty():
    assert segments(np.zeros(SR), SR) == []


@pytest.mark.parametrize("kwargs", [{"threshold_db": 3.0}, {"min_gap_s": -0.1}, {"frame_s": 0.0}])
def test_segments_rejects_bad_parameters(kwargs):
    with pytest.raises(ParameterError, match=next(iter(kwargs))):
        segments(np.ones(100), SR, **kwargs)


# --- tone presence ----------------------------------------------------------------------


def _dithered_24bit(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    tpdf = rng.uniform(-0.5, 0.5, len(x)) + rng.uniform(-0.5, 0.5, len(x))
    return (np.round(x * 2**23 + tpdf) / 2**23).astype(np.float32)


@pytest.mark.parametrize("where", ["first", "second", "absent"])
def test_tone_presence_finds_sub_lsb_tone_after_tpdf_dither(where):
    """A 1 kHz tone of peak 5e-8 (< one 24-bit LSB = 1.19e-7) in one half of a 4 s clip."""
    n = 4 * SR
    t = np.arange(n) / SR
    gate = {"first": t < 2.0, "second": t >= 2.0, "absent": np.zeros(n, bool)}[where]
    q = _dithered_24bit(5e-8 * np.sin(2 * np.pi * 1000.0 * t) * gate, np.random.default_rng(7))
    assert np.max(np.abs(q)) < 4e-7  # the tone is buried in dither noise
    res = tone_presence(q, SR, 1000.0)
    assert res.verdict == where
    for half, snr, level in (
        ("first", res.first_snr_db, res.first_level_db),
        ("second", res.second_snr_db, res.second_level_db),
    ):
        if half == where:
            assert snr > 30.0
            assert level == pytest.approx(20 * math.log10(5e-8 / math.sqrt(2)), abs=1.0)
        else:
            assert snr < 13.0


def test_tone_presence_both_halves_and_level():
    t = np.arange(2 * SR) / SR
    x = 0.1 * np.sin(2 * np.pi * 440.0 * t) + 0.01 * np.random.default_rng(2).standard_normal(len(t))
    res = tone_presence(np.stack([x, x]), SR, 440.0)
    assert res.verdict == "both"
    assert res.first_level_db == pytest.approx(20 * math.log10(0.1 / math.sqrt(2)), abs=0.1)


def test_tone_presence_ignores_other_frequencies():
    t = np.arange(2 * SR) / SR
    x = np.sin(2 * np.pi * 1500.0 * t) + 1e-3 * np.random.default_rng(3).standard_normal(len(t))
    assert tone_presence(x, SR, 1000.0).verdict == "absent"


def test_tone_presence_rejects_frequency_above_nyquist():
    with pytest.raises(ParameterError, match="freq_hz"):
        tone_presence(np.ones(SR), SR, 30000.0)
