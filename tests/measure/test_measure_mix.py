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
