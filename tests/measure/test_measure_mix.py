"""Tests of mixture decomposition into known references (onsets and gains)."""

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.measure import mixture_components

SR = 48000


def _ramp(x: np.ndarray, ramp_s: float = 0.01) -> np.ndarray:
    r = int(ramp_s * SR)
    w = 0.5 - 0.5 * np.cos(np.pi * np.arange(r) / r)
    y = x.copy()
    y[:r] *= w
    y[-r:] *= w[::-1]
    return y


def _references(rng: np.random.Generator) -> list[np.ndarray]:
    t = np.arange(int(0.6 * SR)) / SR
    noise = 0.2 * rng.standard_normal(len(t))
    harmonic = _ramp(sum(np.sin(2 * np.pi * k * 196.0 * t + rng.uniform(0, 6)) / k for k in range(1, 8)))
    chirp = _ramp(0.5 * np.sin(2 * np.pi * (300.0 * t + 1200.0 * t**2)))
    return [noise, harmonic, chirp]


@pytest.mark.parametrize(
    ("onsets_s", "gains_db"),
    [
        ((0.1234, 0.9876, 1.5), (-3.0, -12.0, 4.0)),
        ((0.0, 0.2, 0.35), (0.0, -6.0, -20.0)),  # heavily overlapping
        ((1.0, 0.05, 0.6), (-30.0, 2.0, -1.5)),
    ],
)
def test_mixture_onsets_within_1ms_and_gains_within_half_db(onsets_s, gains_db):
    rng = np.random.default_rng(11)
    refs = _references(rng)
    mix = np.zeros(int(2.2 * SR))
    for ref, on, g in zip(refs, onsets_s, gains_db, strict=True):
        i = int(round(on * SR))
        mix[i : i + len(ref)] += 10 ** (g / 20) * ref
    mix += 1e-3 * rng.standard_normal(len(mix))
    got = mixture_components(np.stack([mix, mix]).astype(np.float32), refs, SR)
    assert [c.onset_s for c in got] == pytest.approx(list(onsets_s), abs=0.001)
    assert [c.gain_db for c in got] == pytest.approx(list(gains_db), abs=0.5)


def test_mixture_component_partly_outside_the_mix():
    rng = np.random.default_rng(2)
    ref = rng.standard_normal(SR // 2)
    mix = np.zeros(SR)
    mix[: SR // 4] = 0.5 * ref[SR // 4 :]  # started 0.25 s before the mix
    (c,) = mixture_components(mix, [ref], SR)
    assert c.onset_s == pytest.approx(-0.25, abs=1e-3)
    assert c.gain_db == pytest.approx(-6.02, abs=0.05)


def test_mixture_rejects_empty_reference_list():
    with pytest.raises(ParameterError, match="at least one"):
        mixture_components(np.ones(100), [], SR)


def test_mixture_rejects_silent_reference():
    with pytest.raises(ParameterError, match=r"references\[1\] is all zeros"):
        mixture_components(np.ones(100), [np.ones(10), np.zeros(10)], SR)


def _reference_path(x: np.ndarray, refs: list[np.ndarray]) -> tuple[list[int], np.ndarray]:
    """The decomposition as first written: one scipy correlation per onset estimate, lstsq gains, two passes."""
    from auralgen.measure.mix import _best_lag, _fit_gains, _placed

    lags = [_best_lag(x, r) for r in refs]
    gains = _fit_gains(x, refs, lags)
    for _ in range(2):
        for i, r in enumerate(refs):
            others = sum(
                (g * _placed(rj, lj, len(x)) for j, (rj, lj, g) in enumerate(zip(refs, lags, gains)) if j != i),
                np.zeros(len(x)),
            )
            lags[i] = _best_lag(x - others, r)
        gains = _fit_gains(x, refs, lags)
    return lags, gains


@pytest.mark.parametrize("seed", range(8))
def test_decomposition_equals_the_direct_correlation_path(seed):
    """One FFT per signal plus the reference pairs' correlations give the lags of a direct correlation
    of each residual, and the normal-equation gains equal least squares to 1e-9 dB, for 2-4 references
    placed anywhere (partly outside the mix too) over a noisy mix."""
    from auralgen.measure.mix import _placed

    rng = np.random.default_rng(seed)
    sr, n = 8000, 12000
    k = int(rng.integers(2, 5))
    refs = [_ramp(rng.standard_normal(int(rng.integers(800, 4000))) * rng.uniform(0.1, 1.0)) for _ in range(k)]
    lags = [int(rng.integers(-len(r) // 2, n - len(r) // 2)) for r in refs]
    gains_db = rng.uniform(-30, 6, size=k)
    mix = sum(10 ** (g / 20) * _placed(r, lag, n) for r, lag, g in zip(refs, lags, gains_db)) + 0.05 * (
        rng.standard_normal(n)
    )
    want_lags, want_gains = _reference_path(mix, refs)
    got = mixture_components(mix, refs, sr)
    assert [round(c.onset_s * sr) for c in got] == want_lags
    assert [c.gain_db for c in got] == pytest.approx(list(20 * np.log10(np.abs(want_gains))), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_residual_correlation_equals_a_direct_correlation(seed):
    """The correlation of the mix minus the other placed, scaled references, built in single precision
    from the pair correlations, equals scipy's double-precision correlation of that residual within the
    error bound it reports (inside and clipped), a bound below 1e-3 of the peak even for this uncorrelated mix."""
    from scipy import signal

    from auralgen.measure.mix import _Correlator, _placed

    rng = np.random.default_rng(100 + seed)
    n = 9000
    refs = [rng.standard_normal(int(rng.integers(500, 3000))) for _ in range(3)]
    x = rng.standard_normal(n)
    lags = [int(rng.integers(0, n - len(refs[0]))), -200, n - 100]  # inside, clipped at the start, at the end
    gains = rng.uniform(0.1, 3.0, size=3)
    corr = _Correlator(x, refs)
    for i in range(3):
        others = sum(g * _placed(r, lag, n) for j, (r, lag, g) in enumerate(zip(refs, lags, gains)) if j != i)
        want = signal.correlate(x - others, refs[i], mode="full", method="direct")
        got, bound = corr.residual(i, lags, gains)
        assert got.shape == want.shape and bound < 1e-3 * np.max(np.abs(want))
        np.testing.assert_allclose(got, want, rtol=0, atol=bound)
        assert np.max(np.abs(got - want)) > 0  # single precision: the bound is what keeps the decisions exact


def test_a_near_tie_is_decided_in_double_precision_like_a_direct_correlation():
    """A reference present twice at the same gain gives two equal correlation peaks: single precision
    cannot rank them, so the lag is the one scipy's double-precision correlation picks."""
    from auralgen.measure.mix import _best_lag, _Correlator

    rng = np.random.default_rng(7)
    r = rng.standard_normal(700)
    x = np.zeros(5000)
    x[1000:1700] += r
    x[3000:3700] += r
    corr = _Correlator(x, [r])
    assert corr.lag(0) == _best_lag(x, r) in (1000, 3000)
    cc, bound = corr.mix_cc[0], 1e-6 * np.linalg.norm(x) * np.linalg.norm(r)
    top = np.sort(np.abs(cc))[-2:]
    assert top[1] - top[0] < 2 * bound  # the fallback was taken


@pytest.mark.parametrize("seed", range(6))
def test_decomposition_of_a_mix_with_silent_ends_equals_the_direct_path(seed):
    """A mix that is silent before its first sound and after its last (as the mixer writes it), with
    references that end in silence (as impulsive sounds do): the mix is transformed over its nonzero
    span only, and the lags and gains are those of the direct path."""
    from scipy import signal

    from auralgen.measure.mix import _Correlator, _placed

    rng = np.random.default_rng(50 + seed)
    sr, n = 8000, 20000
    refs = []
    for _ in range(int(rng.integers(2, 5))):
        r = _ramp(rng.standard_normal(int(rng.integers(800, 3000))))
        r[-int(rng.integers(1, 400)) :] = 0.0  # trailing silence inside the reference
        refs.append(r)
    start = int(rng.integers(2000, 6000))
    lags = [start + int(rng.integers(0, 5000)) for _ in refs]
    mix = sum(10 ** (rng.uniform(-25, 0) / 20) * _placed(r, lag, n) for r, lag in zip(refs, lags))
    mix = mix.astype(np.float32).astype(np.float64)
    assert not mix[: min(lags)].any() and not mix[max(lg + len(r) for r, lg in zip(refs, lags)) :].any()
    want_lags, want_gains = _reference_path(mix, refs)
    got = mixture_components(mix, refs, sr)
    assert [round(c.onset_s * sr) for c in got] == want_lags == lags
    assert [c.gain_db for c in got] == pytest.approx(list(20 * np.log10(np.abs(want_gains))), abs=1e-9)
    corr = _Correlator(mix, refs)
    assert corr.size < n  # the transforms are shorter than the mix itself
    for i, r in enumerate(refs):
        np.testing.assert_allclose(
            corr.mix_cc[i],
            signal.correlate(mix, r, mode="full"),
            rtol=0,
            atol=1e-6 * np.linalg.norm(mix) * np.linalg.norm(r),
        )
