"""The KEMAR template observer: known-source and cross-relation matching, deconvolution."""

from __future__ import annotations

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.measure.binaural import deconvolve, match_cross_relation, match_known_source
from auralgen.rooms.receivers import Binaural

SR = 16000


@pytest.fixture(scope="module")
def kemar():
    return Binaural(position_m=(2.0, 2.0, 1.5)).hrtf_at(SR)


def _ears(kemar, index: int, dry: np.ndarray) -> np.ndarray:
    return np.stack([np.convolve(dry, kemar.hrirs[index, e]) for e in (0, 1)])


@pytest.mark.parametrize("az,el", [(40.0, 0.0), (140.0, 0.0), (-100.0, 20.0), (0.0, 30.0), (180.0, -20.0)])
def test_known_source_finds_the_rendered_direction_incl_front_back_and_median_plane(kemar, az, el):
    i = int(kemar.nearest(az, el))
    dry = np.random.default_rng(3).standard_normal(200)
    x = _ears(kemar, i, dry)[:, :200]
    m = match_known_source(x[:, -48:], dry, kemar.hrirs, kemar.directions_deg)
    assert m.index == i and m.residual < 1e-9 and m.runner_up > 0.01


def test_known_source_finds_a_fractional_arrival_with_the_lag_search(kemar):
    i = int(kemar.nearest(-60.0, 10.0))
    dry = np.random.default_rng(4).standard_normal(256)
    f = np.fft.rfftfreq(512)
    late = np.fft.irfft(np.fft.rfft(dry, 512) * np.exp(-2j * np.pi * f * 1.5), 512)[:256]  # 1.5 samples late
    x = _ears(kemar, i, late)[:, :256]
    assert match_known_source(x[:, -64:], dry, kemar.hrirs, kemar.directions_deg, max_lag=2.0).index == i
    assert match_known_source(x[:, -64:], dry, kemar.hrirs, kemar.directions_deg).residual > 1e-3


def test_cross_relation_needs_no_source_and_tells_left_from_right(kemar):
    dry = np.random.default_rng(5).standard_normal(64)
    for az in (60.0, -60.0):
        i = int(kemar.nearest(az, 0.0))
        m = match_cross_relation(_ears(kemar, i, dry)[:, :96], kemar.hrirs, kemar.directions_deg)
        assert np.sign(m.azimuth_deg) == np.sign(az) and m.residual < 1e-6


def test_cross_relation_cannot_tell_median_plane_directions_apart(kemar):
    # the set is left/right symmetric: on the median plane both ears get the same signal
    dry = np.random.default_rng(6).standard_normal(64)
    m = match_cross_relation(_ears(kemar, int(kemar.nearest(0.0, 0.0)), dry)[:, :96], kemar.hrirs, kemar.directions_deg)
    assert m.runner_up < 1e-6  # a direction > 20 deg away fits as well


def test_deconvolve_returns_the_response_and_the_source_kernel():
    rng = np.random.default_rng(7)
    s = rng.standard_normal(2000)
    x = np.stack([np.convolve(s, [0, 0, 0.8, -0.3]), np.convolve(s, [0, 0.5, 0, 0.1])])
    h, kernel = deconvolve(x, s, n_out=5, regularisation=1e-9)
    np.testing.assert_allclose(h, [[0, 0, 0.8, -0.3, 0], [0, 0.5, 0, 0.1, 0]], atol=1e-6)
    assert kernel[0] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda h, d: match_known_source(np.zeros((2, 16)), np.ones(16), h, d), "x carries no energy"),
        (lambda h, d: match_known_source(np.ones((1, 16)), np.ones(16), h, d), r"allowed: \(2, n\)"),
        (lambda h, d: match_known_source(np.ones((2, 16)), np.ones(8), h, d), "dry has 8 samples"),
        (lambda h, d: match_cross_relation(np.ones((2, 16)), h[:, :1], d), "hrirs shape"),
        (lambda h, d: deconvolve(np.ones((2, 16)), np.zeros(8), n_out=4), "non-silent dry"),
    ],
)
def test_bad_input_is_one_line(call, msg):
    h, d = np.ones((2, 2, 4)), np.zeros((2, 2))
    with pytest.raises(ParameterError, match=msg) as err:
        call(h, d)
    assert "\n" not in str(err.value)


def test_known_source_with_a_known_fractional_lag_needs_no_search(kemar):
    i = int(kemar.nearest(120.0, -10.0))
    dry = np.random.default_rng(8).standard_normal(256)
    f = np.fft.rfftfreq(512)
    late = np.fft.irfft(np.fft.rfft(dry, 512) * np.exp(-2j * np.pi * f * 0.4), 512)[:256]  # 0.4 samples late
    x = _ears(kemar, i, late)[:, :256]
    m = match_known_source(x[:, -64:], dry, kemar.hrirs, kemar.directions_deg, lag=0.4)
    assert m.index == i and m.residual < 1e-6
    assert match_known_source(x[:, -64:], dry, kemar.hrirs, kemar.directions_deg).residual > 10 * m.residual


@pytest.mark.parametrize("az_deg", [20.0, np.nextafter(20.0, 0.0), np.nextafter(20.0, 90.0)])
def test_runner_up_leaves_out_a_direction_20_deg_away_whatever_the_last_bit(az_deg):
    """A template grid holds directions exactly 20 deg apart; whether one of them counts as "more than
    20 deg away" must not hang on the last bit of sin/cos (which differs between CPUs)."""
    from auralgen.measure.binaural import _best

    d = np.array([[0.0, 0.0], [az_deg, 0.0], [40.0, 0.0]])
    m = _best(np.array([0.0, 0.1, 0.5]), d)
    assert m.index == 0 and m.runner_up == 0.5


def _fft_residuals(x, dry, h, lag):
    """The template residuals by the frequency-domain path match_known_source took before its matrix product:
    every template's FFT times the delayed signal's, inverse FFT, the window's samples."""
    import scipy.fft

    w, s, n = np.asarray(x, float), np.asarray(dry, float), x.shape[1]
    pad = int(np.ceil(abs(lag))) + 1
    nfft = scipy.fft.next_fast_len(s.size + 2 * pad + h.shape[2] - 1, real=True)
    sf = scipy.fft.rfft(np.concatenate([np.zeros(pad), s, np.zeros(pad)]), nfft)
    spectrum = scipy.fft.rfft(h, nfft, axis=-1) * (sf * np.exp(-1j * 2 * np.pi * np.fft.rfftfreq(nfft) * lag))
    pred = scipy.fft.irfft(spectrum, nfft, axis=-1)[..., pad + s.size - n : pad + s.size]
    num, den = np.einsum("ken,en->k", pred, w), np.einsum("ken,ken->k", pred, pred)
    return np.clip(1.0 - num**2 / (den * np.sum(w**2)), 0.0, 1.0)


@pytest.mark.parametrize("n", [30, 47, 63])
def test_known_source_residuals_equal_the_frequency_domain_path(kemar, n):
    """The windowed template predictions by one matrix product equal the FFT path's within 1e-12 (residuals
    in [0, 1]) on noisy windows of random signals, with a fractional lag: the same best direction, the
    same residual and runner-up to 10 digits."""
    from auralgen.measure.binaural import _best

    rng = np.random.default_rng(n)
    for _ in range(3):
        i = int(rng.integers(kemar.hrirs.shape[0]))
        dry = rng.standard_normal(n + 32)
        x = _ears(kemar, i, dry)[:, : dry.size][:, -n:] + 0.05 * rng.standard_normal((2, n))
        lag = float(rng.uniform(-0.5, 0.5))
        ref = _fft_residuals(x, dry, kemar.hrirs, lag)
        got = match_known_source(x, dry, kemar.hrirs, kemar.directions_deg, lag=lag)
        want = _best(ref, kemar.directions_deg)
        assert (got.index, got.azimuth_deg, got.elevation_deg) == (want.index, want.azimuth_deg, want.elevation_deg)
        assert got.residual == pytest.approx(want.residual, abs=1e-12)
        assert got.runner_up == pytest.approx(want.runner_up, abs=1e-12)


@pytest.mark.parametrize("max_lag", [0.0, 1.5])
def test_known_source_float32_screen_gives_the_float64_scores(kemar, monkeypatch, max_lag):
    """The float32 screen only picks which directions are scored in float64: with every direction scored
    (an infinite margin, the full float64 path) the best direction, its residual and the runner-up are the
    same numbers, on noisy windows of random signals at several lags."""
    import auralgen.measure.binaural as binaural

    rng = np.random.default_rng(7)
    for n in (40, 60):
        i = int(rng.integers(kemar.hrirs.shape[0]))
        dry = rng.standard_normal(n + 32)
        x = _ears(kemar, i, dry)[:, : dry.size][:, -n:] + 0.02 * rng.standard_normal((2, n))
        lag = float(rng.uniform(-0.5, 0.5))
        got = match_known_source(x, dry, kemar.hrirs, kemar.directions_deg, lag=lag, max_lag=max_lag)
        with monkeypatch.context() as m:
            m.setattr(binaural, "SCREEN_MARGIN", np.inf)
            full = match_known_source(x, dry, kemar.hrirs, kemar.directions_deg, lag=lag, max_lag=max_lag)
        assert got == full
        assert 0.0 < got.residual < got.runner_up <= 1.0


@pytest.mark.parametrize("x_scale,dry_scale", [(1e39, 1.0), (1e-41, 1e-20), (1e20, 1e25)])
def test_known_source_screen_holds_at_any_scale(kemar, x_scale, dry_scale):
    """The residuals do not depend on the scale of the window or of the signal; the float32 screen sees both at a
    peak of 1, so windows beyond float32's range (1e39, 1e-41) give the direction and residuals of the unscaled."""
    rng = np.random.default_rng(11)
    i = int(kemar.nearest(-60.0, 10.0))
    dry = rng.standard_normal(92)
    x = _ears(kemar, i, dry)[:, : dry.size][:, -60:] + 0.01 * rng.standard_normal((2, 60))
    want = match_known_source(x, dry, kemar.hrirs, kemar.directions_deg)
    got = match_known_source(x * x_scale, dry * dry_scale, kemar.hrirs, kemar.directions_deg)
    assert got.index == want.index == i
    assert got.residual == pytest.approx(want.residual, rel=1e-9)
    assert got.runner_up == pytest.approx(want.runner_up, rel=1e-9)
