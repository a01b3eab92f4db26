"""Every ParameterError path of auralgen.synth: the message quotes the value and what is allowed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.synth import (
    apply_ramps,
    click_train,
    db_hl_to_db_spl,
    db_spl_to_db_hl,
    db_spl_to_rms,
    harmonic_complex,
    impact,
    loudness_lufs,
    n_samples,
    noise,
    peak_for_db_spl_sine,
    place,
    reference_threshold_db_spl,
    rms,
    rms_to_db_spl,
    set_level_db_spl,
    set_loudness_lufs,
    silence,
    sweep,
    tone,
)

RNG = np.random.default_rng(0)
SR = 8000

SIGNAL_CASES = [
    # n_samples / silence
    (lambda: n_samples(-0.1, SR), r"duration_s=-0.1 is out of range; allowed: >= 0"),
    (lambda: n_samples(math.nan, SR), r"duration_s=nan is not a finite number"),
    (lambda: n_samples(math.inf, SR), r"duration_s=inf is not a finite number"),
    (lambda: n_samples(1.0, 44100.0), r"sample_rate=44100.0 is not a positive integer"),
    (lambda: n_samples(1.0, 0), r"sample_rate=0 is not a positive integer"),
    (lambda: n_samples(1.0, True), r"sample_rate=True is not a positive integer"),
    (lambda: silence(-1.0, sample_rate=SR), r"duration_s=-1.0 is out of range"),
    # tone
    (
        lambda: tone(0.0, 1.0, sample_rate=SR),
        r"freq_hz=0.0 is out of range; allowed: 0 < freq_hz < Nyquist \(4000 Hz\)",
    ),
    (lambda: tone(-5.0, 1.0, sample_rate=SR), r"freq_hz=-5.0 .*Nyquist \(4000 Hz\)"),
    (lambda: tone(4000.0, 1.0, sample_rate=SR), r"freq_hz=4000.0 .*0 < freq_hz < Nyquist \(4000 Hz\)"),
    (lambda: tone(440.0, 0.0, sample_rate=SR), r"duration_s=0.0 is out of range; allowed: > 0"),
    (lambda: tone(440.0, 1e-5, sample_rate=SR), r"duration_s=1e-05 is shorter than one sample at sample_rate=8000"),
    (lambda: tone(440.0, 1.0, sample_rate=-8000), r"sample_rate=-8000 is not a positive integer"),
    (lambda: tone(440.0, 1.0, sample_rate=SR, amplitude=-1.0), r"amplitude=-1.0 is out of range; allowed: >= 0"),
    (lambda: tone(440.0, 1.0, sample_rate=SR, phase_rad=math.inf), r"phase_rad=inf is not a finite number"),
    (lambda: tone("440", 1.0, sample_rate=SR), r"freq_hz='440' is not a finite number"),
    # harmonic complex
    (
        lambda: harmonic_complex(500.0, 1.0, sample_rate=SR, n_harmonics=8),
        r"n_harmonics=8 with f0_hz=500.0 puts harmonic 8 at 4000 Hz; allowed: n_harmonics \* f0_hz < Nyquist \(4000 "
        r"Hz\)",
    ),
    (
        lambda: harmonic_complex(100.0, 1.0, sample_rate=SR, n_harmonics=0),
        r"n_harmonics=0 is out of range; allowed: >= 1",
    ),
    (lambda: harmonic_complex(100.0, 1.0, sample_rate=SR, n_harmonics=2.0), r"n_harmonics=2.0 is not an integer"),
    (lambda: harmonic_complex(100.0, 1.0, sample_rate=SR, block=-1), r"block=-1 is out of range; allowed: >= 0"),
    (
        lambda: sweep(100.0, 1000.0, 1.0, sample_rate=SR, block=64),
        r"^block=64 applies to method='log'; allowed: block=0 with method='linear'$",
    ),
    (lambda: sweep(100.0, 1000.0, 1.0, sample_rate=SR, method="log", block=-2), r"block=-2 is out of range"),
    (lambda: harmonic_complex(5000.0, 1.0, sample_rate=SR), r"f0_hz=5000.0 is out of range"),
    (
        lambda: harmonic_complex(100.0, 1.0, sample_rate=SR, n_harmonics=3, amplitudes=[1, 1]),
        r"amplitudes has shape \(2,\); allowed: shape \(3,\)",
    ),
    (
        lambda: harmonic_complex(100.0, 1.0, sample_rate=SR, n_harmonics=2, phases_rad=[0, 1, 2]),
        r"phases_rad has shape \(3,\); allowed: shape \(2,\)",
    ),
    (
        lambda: harmonic_complex(100.0, 1.0, sample_rate=SR, n_harmonics=2, amplitudes=[1, math.nan]),
        r"amplitudes=\[1.0, nan\] has non-finite values",
    ),
    # noise
    (lambda: noise(1.0, sample_rate=SR, rng=42), r"rng=42 is not a numpy.random.Generator"),
    (
        lambda: noise(1.0, sample_rate=SR, rng=np.random.RandomState(0)),
        r"rng=RandomState.* is not a numpy.random.Generator",
    ),
    (
        lambda: noise(1.0, sample_rate=SR, rng=RNG, color="blue"),
        r"color='blue' is unknown; allowed: \['white', 'pink', 'brown'\]",
    ),
    (lambda: noise(0.0, sample_rate=SR, rng=RNG), r"duration_s=0.0 is out of range"),
    (lambda: noise(1 / SR, sample_rate=SR, rng=RNG), r"duration_s=0.000125 is 1 sample at sample_rate=8000"),
    (lambda: noise(1.0, sample_rate=SR, rng=RNG, band_hz=(100.0,)), r"band_hz=\(100.0,\) is not a pair"),
    (lambda: noise(1.0, sample_rate=SR, rng=RNG, band_hz=100.0), r"band_hz=100.0 is not a pair"),
    (
        lambda: noise(1.0, sample_rate=SR, rng=RNG, band_hz=(500.0, 100.0)),
        r"band_hz=\(500.0, 100.0\) .*0 <= low < high <= Nyquist \(4000 Hz\)",
    ),
    (lambda: noise(1.0, sample_rate=SR, rng=RNG, band_hz=(-1.0, 100.0)), r"band_hz=\(-1.0, 100.0\) is out of range"),
    (
        lambda: noise(1.0, sample_rate=SR, rng=RNG, band_hz=(100.0, 4001.0)),
        r"band_hz=\(100.0, 4001.0\) is out of range",
    ),
    (lambda: noise(1.0, sample_rate=SR, rng=RNG, band_hz=(100.0, math.nan)), r"band_hz=nan is not a finite number"),
    (
        lambda: noise(0.01, sample_rate=SR, rng=RNG, band_hz=(110.0, 120.0)),
        r"contains no FFT bin \(bin spacing 100 Hz\)",
    ),
    # sweep
    (
        lambda: sweep(100.0, 4000.0, 1.0, sample_rate=SR),
        r"f_end_hz=4000.0 is out of range; allowed: 0 <= f_end_hz < Nyquist",
    ),
    (lambda: sweep(-1.0, 400.0, 1.0, sample_rate=SR), r"f_start_hz=-1.0 is out of range"),
    (
        lambda: sweep(0.0, 400.0, 1.0, sample_rate=SR, method="log"),
        r"f_start_hz=0.0 is out of range; allowed: 0 < f_start_hz",
    ),
    (
        lambda: sweep(100.0, 400.0, 1.0, sample_rate=SR, method="logarithmic"),
        r"method='logarithmic' is unknown; allowed: \['linear', 'log'\]",
    ),
    (lambda: sweep(100.0, 400.0, -1.0, sample_rate=SR), r"duration_s=-1.0 is out of range"),
    (lambda: sweep(100.0, 400.0, 1.0, sample_rate=SR, amplitude=-0.5), r"amplitude=-0.5 is out of range"),
    # ramps
    (
        lambda: apply_ramps(np.ones(10), sample_rate=1000, ramp_s=0.006),
        r"ramp_s=0.006 is 6 samples, too long for a 10-sample signal",
    ),
    (
        lambda: apply_ramps(np.ones(10), sample_rate=1000, ramp_s=-0.001),
        r"ramp_s=-0.001 is out of range; allowed: >= 0",
    ),
    (
        lambda: apply_ramps(np.ones((2, 10)), sample_rate=1000, ramp_s=0.001),
        r"x has shape \(2, 10\); allowed: a 1-D array",
    ),
    # place
    (lambda: place([(np.ones(3), 2)], 4), r"segments\[0\] spans samples \[2, 5\); allowed: within \[0, 4\)"),
    (lambda: place([(np.ones(1), 0), (np.ones(1), -1)], 4), r"segments\[1\] spans samples \[-1, 0\)"),
    (lambda: place([(np.ones(1), 1.0)], 4), r"segments\[0\] onset=1.0 is not an integer"),
    (lambda: place([(np.ones(1), 0, 1)], 4), r"segments\[0\] has 3 items; allowed: \(signal_1d, onset_sample\)"),
    (lambda: place([(np.ones((1, 1)), 0)], 4), r"segments\[0\] signal has shape \(1, 1\)"),
    (lambda: place([], -1), r"total_samples=-1 is out of range; allowed: >= 0"),
    # clicks, impact
    (lambda: click_train(0.0, 1.0, sample_rate=SR), r"rate_hz=0.0 is out of range; allowed: 0 < rate_hz <= 4000 Hz"),
    (lambda: click_train(4001.0, 1.0, sample_rate=SR), r"rate_hz=4001.0 is out of range"),
    (lambda: click_train(10.0, 0.0, sample_rate=SR), r"duration_s=0.0 is out of range"),
    (
        lambda: impact(5000.0, 0.1, 1.0, sample_rate=SR),
        r"freq_hz=5000.0 is out of range; allowed: 0 < freq_hz < Nyquist",
    ),
    (lambda: impact(500.0, 0.0, 1.0, sample_rate=SR), r"decay_s=0.0 is out of range; allowed: > 0"),
    (lambda: impact(500.0, 0.1, 0.0, sample_rate=SR), r"duration_s=0.0 is out of range"),
]

LEVEL_CASES = [
    (lambda: rms([]), r"x has 0 samples"),
    (lambda: rms_to_db_spl(-0.1), r"rms_value=-0.1 is negative; allowed: rms_value >= 0"),
    (lambda: rms_to_db_spl(math.nan), r"rms_value=nan is not a finite number"),
    (lambda: rms_to_db_spl(1.0, full_scale_db_spl=math.inf), r"full_scale_db_spl=inf is not a finite number"),
    (lambda: db_spl_to_rms(math.inf), r"level_db_spl=inf is not a finite number"),
    (lambda: peak_for_db_spl_sine(math.nan), r"level_db_spl=nan is not a finite number"),
    (lambda: set_level_db_spl(np.zeros(4), 60.0), r"x has RMS 0.0; allowed: a finite, non-zero RMS"),
    (lambda: set_level_db_spl(np.ones(4), math.nan), r"level_db_spl=nan is not a finite number"),
    (lambda: reference_threshold_db_spl(19.9), r"freq_hz=19.9 is out of range; allowed: 20 <= freq_hz <= 18000 Hz"),
    (lambda: reference_threshold_db_spl(18000.5), r"freq_hz=18000.5 is out of range"),
    (lambda: reference_threshold_db_spl([1000.0, 20000.0]), r"freq_hz=\[1000.0, 20000.0\] is out of range"),
    (lambda: reference_threshold_db_spl(math.nan), r"freq_hz=nan is out of range"),
    (lambda: db_hl_to_db_spl(40.0, 10.0), r"freq_hz=10.0 is out of range"),
    (lambda: db_hl_to_db_spl(math.inf, 1000.0), r"level_db_hl=inf is not a finite number"),
    (lambda: db_hl_to_db_spl([0.0, math.nan], 1000.0), r"level_db_hl=\[0.0, nan\] has non-finite values"),
    (lambda: db_spl_to_db_hl(math.nan, 1000.0), r"level_db_spl=nan is not a finite number"),
    (
        lambda: loudness_lufs(np.ones(3199), 8000),
        r"x is 0.399875 s long \(3199 samples at 8000 Hz\); allowed: >= 0.4 s",
    ),
    (
        lambda: loudness_lufs(np.ones((6, 8000)), 8000),
        r"x has 6 channels \(shape \(6, 8000\)\); allowed: 1..5 channels",
    ),
    (
        lambda: loudness_lufs(np.ones((1, 2, 8000)), 8000),
        r"x has shape \(1, 2, 8000\); allowed: \[n\] or \[channels, n\]",
    ),
    (lambda: loudness_lufs(np.full(8000, np.nan), 8000), r"x has non-finite samples"),
    (lambda: loudness_lufs(np.ones(8000), 8000.0), r"sample_rate=8000.0 is not a positive integer"),
    (lambda: set_loudness_lufs(np.zeros(8000), 8000, -23.0), r"x has loudness -inf LUFS \(silent after gating\)"),
    (lambda: set_loudness_lufs(np.ones(8000), 8000, math.nan), r"target_lufs=nan is not a finite number"),
]


@pytest.mark.parametrize(("call", "match"), SIGNAL_CASES + LEVEL_CASES)
def test_parameter_errors_name_value_and_allowed_range(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_parameter_error_is_a_value_error():
    with pytest.raises(ValueError, match="freq_hz"):
        tone(1e6, 1.0, sample_rate=SR)
