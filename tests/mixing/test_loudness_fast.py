"""The mixer's mono loudness equals pyloudnorm's meter bit for bit."""

import numpy as np
import pyloudnorm
import pytest

from auralgen.mixing import component_level
from auralgen.mixing._loudness import lufs_mono
from auralgen.synth.levels import loudness_lufs


@pytest.mark.parametrize("sample_rate", [16000, 22050, 44100, 48000])
def test_lufs_mono_is_pyloudnorm_bit_for_bit(sample_rate):
    """Random lengths and levels, quiet tails that the absolute and relative gates drop, and silence
    (-inf): the same float as ``pyloudnorm.Meter(sr, block_size=0.4).integrated_loudness``."""
    rng = np.random.default_rng(sample_rate)
    meter = pyloudnorm.Meter(sample_rate, block_size=0.4)
    for trial in range(40):
        n = int(rng.integers(int(0.4 * sample_rate), int(2.5 * sample_rate)))
        x = rng.standard_normal(n) * 10 ** rng.uniform(-5, 0)
        if trial % 3 == 0:
            x[int(rng.integers(0, n)) :] *= 10 ** rng.uniform(-6, -1)
        if trial % 10 == 0:
            x[:] = 0.0
        want = meter.integrated_loudness(x)
        got = lufs_mono(x, sample_rate)
        assert got == want or (np.isneginf(got) and np.isneginf(want)), (trial, got, want)


def test_component_level_of_a_mono_clip_is_the_shared_loudness():
    """component_level (mono, padded to one block) reads what synth.levels.loudness_lufs reads."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(3000) * 0.1  # shorter than a block: padded both sides
    pad = int(np.ceil(0.4 * 16000)) - 3000
    padded = np.pad(x, (pad // 2, pad - pad // 2))
    assert component_level(x, 16000) == loudness_lufs(padded, 16000)
    assert component_level(np.zeros(8000), 16000) == -np.inf


def test_block_sums_are_numpys_pairwise_sums():
    """The kernel's sum of squares is ``np.sum(np.square(...))`` bit for bit, for slices short (< 8), within one
    pairwise block (<= 128) and split in halves (longer), at any offset."""
    from auralgen.mixing._loudness import _sum_of_squares

    rng = np.random.default_rng(3)
    for n in [*range(0, 140), *rng.integers(140, 40000, size=200)]:
        y = rng.standard_normal(int(n) + 40) * 10 ** rng.uniform(-8, 3)
        lo = int(rng.integers(0, 40))
        assert _sum_of_squares(y, lo, int(n)) == np.sum(np.square(y[lo : lo + int(n)])), n


def test_gating_means_are_numpys_means():
    """The gating's mean of a few block powers is ``np.mean`` bit for bit (numpy's pairwise order)."""
    from auralgen.mixing._loudness import _mean

    rng = np.random.default_rng(4)
    for n in [*range(1, 140), 300, 1000]:
        v = (rng.standard_normal(n) ** 2 * 10 ** rng.uniform(-9, 1)).tolist()
        assert _mean(v) == np.mean(np.array(v)), n
