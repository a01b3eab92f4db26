"""Tests of ITD/ILD, array DOA and FOA direction, in the auralgen azimuth convention (+ = left)."""

import math

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.measure import doa_array, doa_foa, itd_ild
from auralgen.measure.geometry import az_el_to_unit
from auralgen.measure.spatial import itd_windows, srp_phat_direction

SR = 48000
C = 343.0


def _delayed(s: np.ndarray, delay_s) -> np.ndarray:
    """``s`` delayed by (possibly fractional, possibly negative) ``delay_s``; rows for an array of delays."""
    f = np.fft.rfftfreq(len(s), 1 / SR)
    phase = np.exp(-2j * np.pi * f * np.atleast_1d(delay_s)[:, None])
    out = np.fft.irfft(np.fft.rfft(s) * phase, len(s))
    return out if np.ndim(delay_s) else out[0]


def _noise(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize(
    ("itd_s", "ild_db"), [(3.3e-4, 6.0), (-2.17e-4, -4.5), (6.8e-4, 12.0), (0.0, 0.0), (-1.04e-5, 1.0)]
)
def test_itd_ild_sign_and_magnitude(itd_s, ild_db):
    """Positive ITD = left leads: the right ear gets the delayed, attenuated copy."""
    s = _noise(SR // 4)
    left = s
    right = _delayed(s, itd_s) * 10 ** (-ild_db / 20)
    got_itd, got_ild = itd_ild(left.astype(np.float32), right, SR)
    assert got_itd == pytest.approx(itd_s, abs=2e-6)
    assert got_ild == pytest.approx(ild_db, abs=0.05)


def test_itd_left_leading_is_positive_with_reverb_like_noise():
    s = _noise(SR // 4, 1)
    left = s + 0.05 * _noise(SR // 4, 2)
    right = _delayed(s, 4e-4) + 0.05 * _noise(SR // 4, 3)
    assert itd_ild(left, right, SR)[0] == pytest.approx(4e-4, abs=1e-5)


def test_itd_ild_rejects_mismatched_lengths():
    with pytest.raises(ParameterError, match="same length"):
        itd_ild(np.ones(100), np.ones(99), SR)


def test_itd_ild_rejects_silent_ear():
    with pytest.raises(ParameterError, match="energy"):
        itd_ild(_noise(1000), np.zeros(1000), SR)


def test_itd_windows_equal_itd_ild_window_by_window():
    """The batched ITDs are itd_ild's, window by window, for a lag that moves across the windows."""
    sr, w = 16000, 1600
    s = _noise(24000, seed=3)
    rng = np.random.default_rng(5)
    lag = np.linspace(-11.3, 9.7, s.size)  # a moving source: the right ear's delay drifts (samples)
    right = np.interp(np.arange(s.size) - lag, np.arange(s.size), s) + 0.2 * rng.standard_normal(s.size)
    starts = np.arange(0, s.size - w + 1, w // 2)
    got = itd_windows(s, right, sr, starts, w)
    want = np.array([itd_ild(s[a : a + w], right[a : a + w], sr)[0] for a in starts])
    assert np.max(np.abs(got - want)) < 1e-12
    assert want[0] < -5e-4 and want[-1] > 4e-4  # the windows span lags of both signs


def test_itd_windows_give_nan_for_a_window_past_the_end_or_silent_in_an_ear():
    s = _noise(8000, seed=1)
    right = np.roll(s, 4)
    right[4000:] = 0.0
    got = itd_windows(s, right, 16000, [0, 4000, 6000, 7000], 1600)
    assert got[0] == pytest.approx(4 / 16000, abs=1e-7)  # the right ear hears it later: the left leads, +
    assert np.isnan(got[1:]).tolist() == [True, True, True]  # silent right ear, silent, past the end


@pytest.mark.parametrize(
    ("starts", "window", "match"),
    [
        ([0], 1, "window=1 is invalid; allowed: an integer >= 2"),
        ([0], 10, "max_itd_s=0.001 must span >= 1 sample and < the window"),
        ([-1], 1600, "holds a negative start; allowed: starts >= 0"),
    ],
)
def test_itd_windows_reject_bad_arguments_in_one_line(starts, window, match):
    with pytest.raises(ParameterError, match=match):
        itd_windows(_noise(4000), _noise(4000, seed=2), 16000, starts, window)


SQUARE = np.array([[0.05, 0.0, 0.0], [0.0, 0.05, 0.0], [-0.05, 0.0, 0.0], [0.0, -0.05, 0.0]])
TETRA = 0.03 * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / math.sqrt(3)


def _plane_wave(mics: np.ndarray, az_deg: float, n: int, seed: int = 0) -> np.ndarray:
    """Far-field noise from ``az_deg`` (ear level): mics nearer the source hear it earlier."""
    lead_s = mics @ az_el_to_unit(az_deg, 0.0) / C
    x = _delayed(_noise(n, seed), -lead_s)
    return x + 0.05 * np.random.default_rng(seed + 1).standard_normal(x.shape)


@pytest.mark.parametrize("method", ["SRP", "MUSIC"])
@pytest.mark.parametrize("az_deg", [0.0, 37.0, 90.0, -63.0, -120.0, 178.0])
def test_doa_array_square_within_5_deg(method, az_deg):
    got = doa_array(_plane_wave(SQUARE, az_deg, SR // 4), SQUARE, SR, method=method)
    assert abs((got - az_deg + 180) % 360 - 180) < 5.0


@pytest.mark.parametrize("az_deg", [45.0, -150.0])
def test_doa_array_tetrahedral_within_5_deg(az_deg):
    got = doa_array(_plane_wave(TETRA, az_deg, SR // 4).astype(np.float32), TETRA, SR, freq_range=(500, 6000))
    assert abs((got - az_deg + 180) % 360 - 180) < 5.0


def test_doa_array_rejects_position_shape_mismatch():
    with pytest.raises(ParameterError, match="mic_positions_m"):
        doa_array(np.zeros((4, 4096)), SQUARE[:3], SR)


def test_doa_array_rejects_unknown_method():
    with pytest.raises(ParameterError, match="method"):
        doa_array(_plane_wave(SQUARE, 0.0, 4096), SQUARE, SR, method="TOPS")


def _foa(az_deg: float, el_deg: float, n: int = SR // 4, seed: int = 0) -> np.ndarray:
    """ACN/SN3D encoding (W, Y, Z, X) of noise from (az, el) plus weak uncorrelated noise."""
    s = _noise(n, seed)
    x, y, z = az_el_to_unit(az_deg, el_deg)
    return np.stack([s, s * y, s * z, s * x]) + 0.05 * np.random.default_rng(seed + 1).standard_normal((4, n))


@pytest.mark.parametrize(
    ("az_deg", "el_deg"), [(0.0, 0.0), (90.0, 0.0), (-90.0, 0.0), (30.0, 20.0), (-135.0, -40.0), (170.0, 65.0)]
)
def test_doa_foa_within_2_deg(az_deg, el_deg):
    got_az, got_el = doa_foa(_foa(az_deg, el_deg).astype(np.float32), SR)
    assert abs((got_az - az_deg + 180) % 360 - 180) < 2.0
    assert got_el == pytest.approx(el_deg, abs=2.0)


def test_doa_foa_band_limited_ignores_out_of_band_interferer():
    target = _foa(60.0, 0.0)
    t = np.arange(target.shape[1]) / SR
    hum = np.sin(2 * np.pi * 100.0 * t) * 5.0
    ux, uy, uz = az_el_to_unit(-90.0, 0.0)
    x = target + np.stack([hum, hum * uy, hum * uz, hum * ux])
    assert abs(doa_foa(x, SR)[0] - 60.0) > 10.0  # broadband: pulled towards the hum
    assert doa_foa(x, SR, freq_range=(500.0, 8000.0))[0] == pytest.approx(60.0, abs=2.0)


def test_doa_foa_rejects_wrong_channel_count():
    with pytest.raises(ParameterError, match="4 FOA channels"):
        doa_foa(np.ones((3, 100)))


def _plane_wave_3d(mics: np.ndarray, az_deg: float, el_deg: float, n: int) -> np.ndarray:
    return _delayed(_noise(n, 7), -(mics @ az_el_to_unit(az_deg, el_deg) / C))


@pytest.mark.parametrize("az_deg,el_deg", [(30.0, 40.0), (-140.0, -30.0), (100.0, 0.0)])
def test_srp_phat_finds_azimuth_and_elevation_with_a_tetrahedron(az_deg, el_deg):
    az, el = srp_phat_direction(_plane_wave_3d(TETRA, az_deg, el_deg, 256), TETRA, SR, grid_step_deg=2.0)
    assert abs((az - az_deg + 180) % 360 - 180) <= 4.0 and abs(el - el_deg) <= 4.0


def test_srp_phat_on_a_planar_ring_searches_the_horizontal_plane_only():
    az, el = srp_phat_direction(_plane_wave_3d(SQUARE, -75.0, 30.0, 256), SQUARE, SR)
    assert el == 0.0 and abs(az + 75.0) <= 4.0  # above/below mirror each other: elevation not asked


def test_srp_phat_rejects_a_position_shape_mismatch_in_one_line():
    with pytest.raises(ParameterError, match=r"mic_positions_m shape=\(3, 3\) for x with 4 channels") as err:
        srp_phat_direction(np.ones((4, 64)), TETRA[:3], SR)
    assert "\n" not in str(err.value)


def test_the_fine_lag_kernel_equals_the_shifted_spectra_product():
    """GCC-PHAT's fine lags: the kernel that shifts each row's spectrum to its integer peak as it sums equals
    the product of the explicitly shifted spectra (negative, zero and positive peaks) within float rounding."""
    from auralgen.measure import spatial

    rng = np.random.default_rng(9)
    nfft = 1024
    cos, sin, roots = spatial._fine_shift_parts(nfft)
    w = rng.standard_normal((7, nfft // 2 + 1)) + 1j * rng.standard_normal((7, nfft // 2 + 1))
    coarse = np.array([-16, -3, 0, 1, 5, 16, -1], dtype=np.int64)
    z = w * roots[np.outer(coarse, np.arange(w.shape[1])) % nfft]
    want = (z @ (cos + 1j * sin).T).real
    got = spatial._shifted_real_products(
        np.ascontiguousarray(w.real),
        np.ascontiguousarray(w.imag),
        coarse,
        roots.real.copy(),
        roots.imag.copy(),
        cos,
        sin,
    )
    assert got.shape == want.shape == (7, cos.shape[0])
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
