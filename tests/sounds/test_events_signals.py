"""The mixture palette's noise and harmonic tone, rendered the fast way, against the direct synthesis."""

import numpy as np
import pytest

from auralgen.sounds import palette
from auralgen.sounds.events import HARMONIC_BLOCK, N_HARMONICS, SWEEP_BLOCK
from auralgen.synth import harmonic_complex, noise, sweep

SR = 16000
EVENTS = palette("events")


def test_noise_at_a_fast_length_is_the_direct_noise():
    """A 5-smooth length is already fast: the burst is synth.noise itself (before its ramps)."""
    got = EVENTS["noise"].signal({"kind": "noise", "duration_s": 0.6, "noise_seed": 3}, SR)  # 9600 samples
    want = noise(0.6, sample_rate=SR, rng=np.random.default_rng(3), color="pink")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [9601, 14173, 19157])  # primes: the slowest lengths to transform directly
def test_noise_of_any_length_is_unit_rms_pink_noise(n):
    """Shaped at the next fast length and cut to ``n`` samples: ``n`` samples, unit RMS, -3 dB per octave
    (band powers over 125 Hz-4 kHz octaves on a line within 1 dB), and another draw for another seed."""
    spec = {"kind": "noise", "duration_s": n / SR, "noise_seed": 11}
    x = EVENTS["noise"].signal(spec, SR)
    assert x.shape == (n,) and np.sqrt(np.mean(x**2)) == pytest.approx(1.0, abs=1e-12)
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(n, 1 / SR)
    edges = 125.0 * 2.0 ** np.arange(6)
    band_db = [10 * np.log10(power[(freqs >= lo) & (freqs < 2 * lo)].sum()) for lo in edges[:-1]]
    slope = np.polyfit(np.arange(len(band_db)), band_db, 1)[0]  # pink: equal power per octave
    assert abs(slope) < 1.0
    assert max(abs(b - np.mean(band_db)) for b in band_db) < 1.5
    other = EVENTS["noise"].signal({**spec, "noise_seed": 12}, SR)
    assert np.max(np.abs(x - other)) > 1.0


@pytest.mark.parametrize("f0_hz", [150.0, 233.7, 399.0])
def test_harmonic_tone_by_angle_addition_equals_a_sine_per_sample(f0_hz):
    """The harmonic tone's blocks (angle addition) are the per-sample sines within 1e-10 of the peak."""
    spec = {"kind": "harmonic", "duration_s": 1.2, "f0_hz": f0_hz}
    got = EVENTS["harmonic"].signal(spec, SR)
    want = harmonic_complex(f0_hz, 1.2, sample_rate=SR, n_harmonics=N_HARMONICS)
    assert HARMONIC_BLOCK > 0 and got.shape == want.shape
    assert 0 < np.max(np.abs(got - want)) < 1e-10 * np.max(np.abs(want))


def test_sweep_by_rotation_equals_a_sine_per_sample():
    """The rising sweep's blocks (complex rotation) are the per-sample sines within 1e-10."""
    spec = {"kind": "sweep", "duration_s": 0.9, "f_start_hz": 431.0, "f_end_hz": 431.0 * 2**3.3}
    got = EVENTS["sweep"].signal(spec, SR)
    want = sweep(431.0, 431.0 * 2**3.3, 0.9, sample_rate=SR, method="log")
    assert SWEEP_BLOCK > 0 and got.shape == want.shape
    assert 0 < np.max(np.abs(got - want)) < 1e-10
