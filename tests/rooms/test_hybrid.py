"""Hybrid RIRs (exact early part + shaped noise tail) against the exact image-source RIR."""

import numpy as np
import pytest
import scipy.signal

from auralgen.measure.room import drr_db, rt60_schroeder
from auralgen.rooms.hybrid import mixing_time_s
from auralgen.rooms.images import FDL2
from auralgen.rooms.simulate import compute_rir
from auralgen.rooms.spec import RoomSpec

FS = 16000


def _direct_sample(src, mic, c=343.0):
    return float(np.linalg.norm(np.subtract(mic, src))) / c * FS + FDL2


def _t30(rir):
    """T30 (the generator's measurement of a room, over -5..-35 dB)."""
    return rt60_schroeder(rir, FS, decay_db=30.0)


def _compare(room, src, mic, seed):
    exact = compute_rir(room, src, [mic], sample_rate=FS)[0]
    hybrid = compute_rir(room, src, [mic], sample_rate=FS, mode="hybrid", rng=np.random.default_rng(seed))[0]
    # the hybrid ends where its modelled diffuse energy has decayed by 70 dB: what the exact response has after
    # that is > 55 dB below it in the audible band (below 20 Hz, small rooms keep the 10 Hz high-pass's ringing)
    assert hybrid.size <= exact.size
    band = scipy.signal.sosfiltfilt(scipy.signal.butter(4, 20.0, "highpass", fs=FS, output="sos"), exact)
    assert np.sum(band[hybrid.size :] ** 2) <= 10**-5.5 * np.sum(band**2)
    rt_err = _t30(hybrid) / _t30(exact) - 1.0
    drr_err = drr_db(hybrid, FS) - drr_db(exact, FS)
    return exact, hybrid, rt_err, drr_err


CASES = [
    pytest.param(RoomSpec((6.0, 5.0, 3.0), rt60_s=0.6), (1.5, 3.6, 1.3), (4.05, 1.55, 1.25), id="6x5x3-rt0.6"),
    pytest.param(RoomSpec((8.25, 4.47, 3.94), rt60_s=0.63), (1.3, 3.1, 2.2), (6.1, 1.2, 1.4), id="rect-rt0.63"),
    pytest.param(
        RoomSpec(
            (8.85, 6.08, 2.83),
            materials={"west": 0.1, "east": 0.3, "south": 0.2, "north": 0.15, "floor": 0.05, "ceiling": 0.6},
        ),
        (2.0, 2.3, 1.5),
        (6.4, 4.1, 1.2),
        id="materials",
    ),
    pytest.param(RoomSpec((2.5, 2.2, 2.2), rt60_s=0.12), (0.6, 0.75, 1.35), (1.55, 1.6, 1.05), id="booth"),
    pytest.param(RoomSpec((6.0, 5.0, 3.0), rt60_s=1.0), (1.5, 3.6, 1.3), (3.05, 2.55, 1.55), id="6x5x3-rt1.0"),
]


def test_hybrid_rt60_and_drr_match_exact():
    room, src, mic = CASES[0].values
    exact, hybrid, rt_err, drr_err = _compare(room, src, mic, seed=0)
    assert abs(rt_err) <= 0.05
    assert abs(drr_err) <= 1.0
    # before the mixing time (minus the crossfade and filter spread) the two are the exact same images
    n0 = int(_direct_sample(src, mic) + mixing_time_s(room) * FS) - FDL2 - 60
    np.testing.assert_allclose(hybrid[:n0], exact[:n0], atol=2e-3 * np.abs(exact).max())


@pytest.mark.parametrize(("room", "src", "mic"), CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hybrid_rt60_and_drr_match_exact_many(room, src, mic, seed):
    _, _, rt_err, drr_err = _compare(room, src, mic, seed)
    assert abs(rt_err) <= 0.05
    assert abs(drr_err) <= 1.0


def test_hybrid_is_deterministic_in_rng_and_varies_with_seed():
    room = RoomSpec((5.0, 4.0, 2.8), rt60_s=0.4)
    mics = [[3.2, 2.9, 1.4], [3.3, 2.8, 1.5]]
    args = dict(sample_rate=FS, mode="hybrid")
    a = compute_rir(room, (1.1, 1.3, 1.6), mics, rng=np.random.default_rng(42), **args)
    b = compute_rir(room, (1.1, 1.3, 1.6), mics, rng=np.random.default_rng(42), **args)
    c = compute_rir(room, (1.1, 1.3, 1.6), mics, rng=np.random.default_rng(43), **args)
    np.testing.assert_array_equal(a, b)
    assert a.shape == c.shape and not np.allclose(a, c)
    assert not np.allclose(a[0], a[1])  # tails are independent per microphone


def test_hybrid_in_anechoic_room_is_exact():
    room = RoomSpec((8.0, 8.0, 4.0), max_order=0)
    args = dict(source_m=(2.0, 2.0, 1.5), mics_m=[[5.0, 6.0, 1.5]], sample_rate=FS)
    hyb = compute_rir(room, mode="hybrid", rng=np.random.default_rng(0), **args)
    np.testing.assert_allclose(hyb, compute_rir(room, **args), atol=1e-12)


def test_coherence_weights_equal_the_full_sum_of_125_sincs():
    """The kernel sums 62 pairs of equal terms (sinc is even) plus the zero offset; the full 125-term
    sum, written out here with numpy, gives the same gains, including the symmetric placements where
    they reach 8 (source and microphone level on every axis)."""
    from auralgen.rooms.hybrid import _coherence_weights, _octant_directions
    from auralgen.rooms.spec import load_preset

    room = load_preset("classroom")
    u = _octant_directions(64)
    rng = np.random.default_rng(3)
    dims = np.asarray(room.dims_m)
    src = dims / 2  # at the centre: level with, and the mirror image of, a microphone on it on every axis
    mics = np.vstack([rng.uniform(0.2, 0.9, (3, 3)) * dims, src])  # the last one sits on the source
    got = _coherence_weights(room, src, mics, u, 16000)
    for i, mic in enumerate(mics):
        offsets = []
        for d in range(3):
            a = 4 * np.pi * (src[d] - mic[d]) * u[:, d] / room.c_m_s
            b = 4 * np.pi * (src[d] + mic[d] - dims[d]) * u[:, d] / room.c_m_s
            offsets.append((np.stack([0 * a, a, -a, b, -b], 1), np.array([1, 0.25, 0.25, 0.25, 0.25])))
        k = offsets[0][0][:, :, None, None] + offsets[1][0][:, None, :, None] + offsets[2][0][:, None, None, :]
        w = offsets[0][1][:, None, None] * offsets[1][1][None, :, None] * offsets[2][1][None, None, :]
        want = np.sum(w * np.sinc(k * 8000.0 / np.pi), axis=(1, 2, 3))
        np.testing.assert_allclose(got[i], want, rtol=1e-12, atol=0)
    assert got[-1] == pytest.approx(np.full(64, 8.0), rel=1e-12)  # every image pair in phase in every direction...
    assert 0.5 < got[0].mean() < 2.0  # ...a generic placement near 1


def test_decay_envelope_follows_the_exponentials_it_carries():
    """The envelope carries exp(-r t / 2) from step to step; over 1,000 steps it stays within 1e-12 of
    the exponentials themselves, and drops each direction at its own end time."""
    from auralgen.rooms._ism_kernels import _decay_envelope

    rng = np.random.default_rng(0)
    rates, t_end = rng.uniform(5, 40, 50), rng.uniform(0.5, 3.0, 50)
    weights = rng.uniform(0.5, 2.0, (2, 50))
    env = _decay_envelope(0.002, 1000, rates, t_end, weights)
    t = np.arange(1000) * 0.002
    h = np.exp(-0.5 * np.outer(t, rates)) * (t[:, None] <= t_end[None, :])
    np.testing.assert_allclose(env[:, 1], np.broadcast_to(h.mean(axis=1), (2, 1000)), rtol=1e-12)
    np.testing.assert_allclose(env[:, 0], ((h * h) @ weights.T).T / 50, rtol=1e-12)


def test_fused_tail_equals_the_sample_arrays_it_replaces():
    """compute_rir_hybrid writes the tail in one kernel; built here from tail_statistics' per-sample mean and
    variance, the crossfade and the high-pass with numpy, the responses are the same to the bit."""
    import math

    from auralgen.rooms import hybrid as hy
    from auralgen.rooms.images import FDL2, _highpass, _inscribed_radius_m, max_order_for
    from auralgen.rooms.spec import RoomSpec

    room = RoomSpec((5.2, 4.1, 2.9), rt60_s=0.45).validate()
    src, mics, fs = np.array([1.3, 2.2, 1.4]), np.array([[3.1, 1.9, 1.2], [3.2, 2.0, 1.25], [2.6, 2.05, 1.45]]), 16000
    got = hy.compute_rir_hybrid(room, src, mics, sample_rate=fs, rng=np.random.default_rng(9))
    n_total, c, order = got.shape[1], room.c_m_s, max_order_for(room, fs)
    noise = np.random.default_rng(9).standard_normal((3, n_total))
    mean, var = hy.tail_statistics(
        room, (np.arange(n_total) - FDL2) / fs, sample_rate=fs, max_order=order, source_m=src, mics_m=mics
    )
    n_x = int(round(hy.XFADE_S * fs))
    want = np.zeros_like(got)
    n0s = [int(round((np.linalg.norm(mic - src) / c + hy.mixing_time_s(room)) * fs)) + FDL2 for mic in mics]
    reach = [c * (n0 + n_x) / fs for n0 in n0s]
    orders = [min(order, math.ceil((r + np.linalg.norm(room.dims_m)) / _inscribed_radius_m(room))) for r in reach]
    early = hy.render_order_raw(
        room,
        src,
        mics,
        sample_rate=fs,
        max_orders=orders,
        n_lens=[n0 + n_x + 1 for n0 in n0s],
        max_dists_m=[r + c / fs for r in reach],
    )
    for i, n0 in enumerate(n0s):
        n_end = n0 + n_x
        want[i, : n_end + 1] = early[i]
        tail = mean[i, n0:] + noise[i, n0:] * np.sqrt(var[i, n0:])
        ramp = np.cos(0.5 * np.pi * (np.arange(n_x) + 0.5) / n_x) ** 2
        want[i, n0:n_end] = want[i, n0:n_end] * ramp + np.sqrt(np.clip(1 - ramp**2, 0, 1)) * tail[:n_x]
        want[i, n_end:] = tail[n_x:]
    np.testing.assert_array_equal(got, _highpass(want, fs))


def test_response_ends_where_the_modelled_decay_is_70_db_down():
    from auralgen.rooms import _ism_kernels as k
    from auralgen.rooms.hybrid import TAIL_FLOOR_DB, _decay_rates, _response_length
    from auralgen.rooms.images import max_order_for

    room = RoomSpec((6.0, 5.0, 3.0), rt60_s=1.0)
    order = max_order_for(room, FS)
    _, rates, t_end = _decay_rates(room, order)
    n = _response_length(rates, t_end, FS, n_exact=10**6, n_needed=0)
    t_last = (n - 1 - FDL2) / FS  # time of the last sample
    level = 10 ** (-TAIL_FLOOR_DB / 10)
    assert k._mean_decay(rates, t_end, t_last) <= level < k._mean_decay(rates, t_end, t_last - 2.0 / FS)
    assert 1.3 < t_last < 1.7  # 70 dB at the mean rate takes 1.17 s; axial directions decay slower
    assert _response_length(rates, t_end, FS, n_exact=5000, n_needed=0) == 5000  # never past the exact response
    assert _response_length(rates, t_end, FS, n_exact=10**6, n_needed=30000) == 30000  # nor before the crossfade
