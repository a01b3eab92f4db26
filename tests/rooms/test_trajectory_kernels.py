"""The moving-image kernel against its first, sample-by-sample form (tests/support/moving_reference.py):
the same emission times bit for bit and the same signals to float rounding, for noise, clicks and
signals with silent stretches, any image order and path; and the binaural filtering of the images
against its first, image-by-image form."""

import numpy as np
import pytest
import scipy.fft

from auralgen.rooms import _moving, _trajectory_kernels
from auralgen.rooms import images as _images
from auralgen.rooms.images import FDL2, SINC_LUT_GRANULARITY
from auralgen.rooms.receivers import Binaural
from auralgen.rooms.spec import load_preset
from auralgen.rooms.trajectory import arc_around, pass_by, radial
from auralgen.synth import click_train
from tests.support.moving_reference import _render_moving_images as reference
from tests.support.moving_reference import binaural_early

FS = 16000
LIS = (2.75, 2.25, 1.5)


def _signal(kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "clicks":
        return np.asarray(click_train(9.0, 0.5, sample_rate=FS), dtype=float)
    x = rng.standard_normal(FS // 2)
    if kind == "gaps":
        x[1000:3000] = 0.0  # silent stretches longer than the taps, and one shorter
        x[5000:5030] = 0.0
        x[-500:] = 0.0
    return x


@pytest.mark.parametrize("kind", ["noise", "clicks", "gaps"])
@pytest.mark.parametrize(
    ("path", "order"),
    [
        (pass_by(LIS, closest_azimuth_deg=20.0, closest_distance_m=1.0, length_m=1.5, ccw=True, duration_s=0.5), 1),
        (
            radial(
                LIS, direction="approach", azimuth_deg=-70.0, start_distance_m=2.0, end_distance_m=0.6, duration_s=0.5
            ),
            2,
        ),
        (arc_around(LIS, radius_m=1.2, start_azimuth_deg=90.0, sweep_deg=-120.0, duration_s=0.5), 0),
    ],
)
def test_the_kernel_reproduces_the_sample_by_sample_reference(kind, path, order):
    """Emission times at least as close to the converged solution as the reference's three fixed-point
    steps at every sample (solved every 16 samples, cubic between); the signals within 1e-6 of the peak
    (the rank-8 basis of the static engine, < 1e-7, and those sub-sample differences of the times)."""
    rng = np.random.default_rng(len(kind) + order)
    room = load_preset("living_room")
    sig = np.ascontiguousarray(_signal(kind, rng))
    samples = _moving.sampled_path(path, sig.size + 1, FS)
    offsets, signs, gains = _moving._image_affine(room, order)
    mic = np.asarray(LIS, dtype=float) + rng.uniform(-0.1, 0.1, 3)
    n_out = sig.size + 900
    common = (float(FS), float(room.c_m_s), FDL2, SINC_LUT_GRANULARITY)
    want_y, want_tau = reference(sig, samples, offsets, signs, gains, mic, *common, _images._phase_kernels(), n_out)
    nonzero = np.concatenate([[0], np.cumsum(sig != 0.0)]).astype(np.int64)
    y, tau = _trajectory_kernels._render_moving_images(
        _moving.basis_convolution(sig),
        nonzero,
        samples,
        offsets,
        signs,
        gains,
        mic,
        *common,
        _images._phase_basis()[0],
        n_out,
    )
    exact = _converged_tau(samples, (offsets, signs, gains), mic, room.c_m_s, n_out)
    err, want_err = np.abs(tau - exact).max(axis=1), np.abs(want_tau - exact).max(axis=1)
    assert np.all(err <= want_err + 1e-9), (err, want_err)
    # the solved grid (every 16th sample, converged from the cubic guess): within 1e-9 sample where smooth
    grid_err = np.abs(tau - exact)[:, ::16]
    assert np.median(grid_err) <= 1e-9 and np.mean(grid_err <= 1e-9) >= 0.95, np.max(grid_err)
    read = _full_read(sig, tau, gains, room.c_m_s)  # the reference's tap sums at the kernel's own times
    assert np.max(np.abs(y - read)) <= 1e-6 * np.max(np.abs(read))
    # against the reference: the same signals but for the reference's own error in the times (< 2e-4 sample)
    assert np.max(np.abs(y - want_y)) <= 1e-3 * np.max(np.abs(want_y))
    assert np.count_nonzero(want_y) > 300  # the images were heard (a few clicks: ~81 samples each)
    # silence skipped where the reference summed zeros only (but where a time moved by a hair across a window edge)
    assert np.count_nonzero((y == 0.0) != (want_y == 0.0)) <= 2e-3 * y.size


def _full_read(sig, tau, gains, c):
    """``gain / r * signal(tau)`` per image with the 81-tap phase kernels interpolated between two table
    phases, as the reference sums them (numpy), ``r = c (t - tau) / fs``."""
    kernels = _images._phase_kernels()
    n_out = tau.shape[1]
    n = np.arange(n_out)[None, :]
    delay = n - tau
    ip = np.floor(delay)
    xg = (1.0 - (delay - ip)) * SINC_LUT_GRANULARITY
    ph = np.floor(xg).astype(int)
    w = (xg - ph)[..., None]
    base = (n - ip).astype(int) + FDL2
    j = base[..., None] - np.arange(kernels.shape[1])  # signal index of each tap
    taps = np.where((j >= 0) & (j < sig.size), sig[np.clip(j, 0, sig.size - 1)], 0.0)
    kern = (1.0 - w) * kernels[ph] + w * kernels[ph + 1]
    r = (n - FDL2 - tau) * c / FS
    return np.where(gains[:, None] != 0.0, gains[:, None] / r * np.sum(taps * kern, axis=-1), 0.0)


def _converged_tau(samples, affine, mic, c, n_out, steps=12):
    """The emission times of every image, fixed-point steps until converged (float64 rounding)."""
    t = np.arange(n_out, dtype=float)[None, :] - FDL2
    tau = np.repeat(t, affine[0].shape[0], axis=0)
    for _ in range(steps):
        tau = t - np.linalg.norm(_moving._emitted_positions(samples, tau, affine) - mic, axis=-1) * FS / c
    return tau


@pytest.mark.parametrize("kind", ["noise", "clicks", "gaps"])
def test_the_basis_convolution_is_the_direct_one(kind):
    """Sample by sample for a sparse signal, by FFT for a dense one: both the direct full convolution."""
    sig = np.ascontiguousarray(_signal(kind, np.random.default_rng(5)))
    kernels = _images._phase_basis()[1]
    want = np.stack([np.convolve(sig, k) for k in kernels], axis=1)
    got = _moving.basis_convolution(sig)
    assert got.shape == want.shape == (sig.size + 2 * FDL2, kernels.shape[0])
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
    assert (np.count_nonzero(sig) < _moving.SPARSE_SAMPLES) == (kind == "clicks")  # both paths ran


@pytest.mark.parametrize(("kind", "partition"), [("noise", 4), ("clicks", 4), ("gaps", 4), ("noise", 1), ("gaps", 7)])
def test_the_binaural_filtering_reproduces_the_image_by_image_reference(kind, partition, monkeypatch):
    """Blocks of one direction summed over partitions of 1 to 7 blocks and filtered together: the same sum
    of filtered blocks as the reference, which filters each windowed block with its own HRIR pair."""
    monkeypatch.setattr(_moving, "PARTITION_BLOCKS", partition)
    rng = np.random.default_rng(7)
    room = load_preset("classroom")
    path = pass_by(LIS, closest_azimuth_deg=160.0, closest_distance_m=1.2, length_m=2.0, ccw=False, duration_s=0.5)
    receiver = Binaural(position_m=LIS, yaw_deg=25.0)
    sig = np.ascontiguousarray(_signal(kind, rng))
    samples = _moving.sampled_path(path, sig.size + 1, FS)
    affine = _moving._image_affine(room, 1)
    y, tau = _moving._read(sig, samples, affine, np.asarray(LIS, dtype=float), room, FS, sig.size + 700)
    y[2] = 0.0  # an image never heard: no block of it is filtered
    want = binaural_early(receiver, y, tau, samples, affine, FS)
    got = _moving._binaural_early(receiver, y, tau, samples, affine, FS)
    assert got.shape == want.shape == (2, y.shape[1])
    assert np.max(np.abs(got - want)) <= 1e-13 * np.max(np.abs(want))  # sums in another order: float rounding
    assert np.sqrt(np.mean(want**2)) > 1e-3 * np.max(np.abs(want))  # a signal heard throughout, not a few blocks
    part = partition * int(round(_moving.BLOCK_S * FS))
    n_fft = scipy.fft.next_fast_len(part + receiver.hrtf_at(FS).num_taps - 1, real=True)
    b = part // partition
    centres = np.arange(0, y.shape[1] + b, b)
    dirs = np.where(
        _trajectory_kernels._live_windows(y, centres - b, np.sin(0.5 * np.pi * np.arange(2 * b) / b) ** 2), 0, -1
    )
    dirs[:, 1::3] = 1  # a direction change every few blocks: pieces of one partition split by direction
    pieces, where, which = _trajectory_kernels._direction_pieces(
        y, np.sin(0.5 * np.pi * np.arange(2 * b) / b) ** 2, b, dirs, part, n_fft
    )
    placed = np.zeros(((y.shape[1] + part - 1) // part + 1) * part)
    for piece, p in zip(pieces, where):
        placed[p * part : p * part + n_fft] += piece[: min(n_fft, placed.size - p * part)]
    assert np.max(np.abs(placed[: y.shape[1]] - y.sum(axis=0))) <= 1e-14 * np.max(np.abs(y))  # windows sum to one
    assert np.any(np.bincount(where) > 1)  # some partitions hold two directions


def test_the_closest_distance_kernel_equals_the_numpy_minimum():
    rng = np.random.default_rng(3)
    path = rng.uniform(0.0, 5.0, (2000, 3))
    points = rng.uniform(0.0, 5.0, (4, 3))
    d = path[:, None, :] - points[None, :, :]
    want = float(np.min(np.einsum("npk,npk->np", d, d)))
    assert _trajectory_kernels._min_distance_sq(path, points) == pytest.approx(want, rel=1e-15)
    assert _trajectory_kernels._min_distance_sq(path, path[[1234]]) == 0.0  # a point on the path
