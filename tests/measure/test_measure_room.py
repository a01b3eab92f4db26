"""Tests of RT60 (Schroeder) and DRR on constructed impulse responses."""

import math

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.measure import drr_db, energy_decay_db, rt60_schroeder

SR = 48000


def _decaying_noise(rt60_s: float, dur_s: float, seed: int = 0) -> np.ndarray:
    t = np.arange(int(dur_s * SR)) / SR
    return np.random.default_rng(seed).standard_normal(len(t)) * 10 ** (-3.0 * t / rt60_s)


@pytest.mark.parametrize("decay_db", [20.0, 30.0])
@pytest.mark.parametrize("rt60_s", [0.2, 0.5, 1.2])
def test_rt60_of_exponential_decay_within_5_percent(rt60_s, decay_db):
    rir = np.concatenate([np.zeros(240), _decaying_noise(rt60_s, 1.2 * rt60_s, seed=int(rt60_s * 10))])
    assert rt60_schroeder(rir.astype(np.float32), SR, decay_db=decay_db) == pytest.approx(rt60_s, rel=0.05)


def test_rt60_multichannel_sums_energy():
    rir = np.stack([_decaying_noise(0.4, 0.6, 1), _decaying_noise(0.4, 0.6, 2)])
    assert rt60_schroeder(rir, SR) == pytest.approx(0.4, rel=0.05)


def test_energy_decay_starts_at_zero_and_falls():
    edc = energy_decay_db(_decaying_noise(0.3, 0.3))
    assert edc[0] == 0.0
    assert np.all(np.diff(edc) <= 1e-12)
    assert edc[-100] < -40.0


def test_rt60_raises_when_decay_range_is_not_reached():
    with pytest.raises(ParameterError, match="decays only"):
        rt60_schroeder(_decaying_noise(2.0, 0.2), SR, decay_db=30.0)


def test_rt60_rejects_bad_decay_db():
    with pytest.raises(ParameterError, match="decay_db"):
        rt60_schroeder(_decaying_noise(0.3, 0.5), SR, decay_db=60.0)


def _rir_with_drr(drr_target_db: float, direct_at_s: float = 0.0123) -> np.ndarray:
    """Fractional-delay direct path (windowed sinc) plus a decaying tail starting 3 ms after it."""
    n = int(0.5 * SR)
    k = np.arange(n)
    d = direct_at_s * SR + 0.37
    direct = np.sinc(k - d) * np.where(np.abs(k - d) < 48, 0.5 + 0.5 * np.cos(np.pi * (k - d) / 48), 0.0)
    tail = np.zeros(n)
    start = int(d) + int(0.003 * SR)
    tail[start:] = _decaying_noise(0.4, (n - start) / SR, seed=5)
    e_direct = np.sum(direct[int(d) - 120 : int(d) + 121] ** 2)
    tail *= math.sqrt(e_direct / np.sum(tail**2) * 10 ** (-drr_target_db / 10))
    return direct + tail


@pytest.mark.parametrize("drr_target_db", [-6.0, 0.0, 4.5, 12.0])
def test_drr_of_constructed_rir_within_half_db(drr_target_db):
    assert drr_db(_rir_with_drr(drr_target_db), SR) == pytest.approx(drr_target_db, abs=0.5)


def test_drr_uses_first_peak_not_a_louder_late_one():
    rir = np.zeros(SR // 10)
    rir[480] = 1.0  # direct
    rir[960] = 1.5  # a later reflection 3.5 dB stronger (within the 6 dB margin): the first peak is direct
    assert drr_db(rir, SR) == pytest.approx(10 * math.log10(1.0 / 2.25), abs=1e-9)


def test_drr_infinite_without_reverb():
    rir = np.zeros(1000)
    rir[10] = 1.0
    assert drr_db(rir, SR) == math.inf


def test_drr_rejects_all_zero_rir():
    with pytest.raises(ParameterError, match="all zeros"):
        drr_db(np.zeros(100), SR)
