"""Moving sources: Doppler, 1/r, ITD over a pass-by, rest = static render, bounds, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import oaconvolve

from auralgen.core.errors import ParameterError
from auralgen.measure import dominant_freq_hz, itd_ild
from auralgen.rooms import _ism_kernels as _ik
from auralgen.rooms import images as _images
from auralgen.rooms.images import FDL2, image_sources
from auralgen.rooms.receivers import FOA, Binaural, Mono
from auralgen.rooms.spec import load_preset
from auralgen.rooms.trajectory import (
    Trajectory,
    approach,
    arc_around,
    linear,
    pass_by,
    recede,
    render_moving,
    turn,
)

FS = 16000
C = 343.0
ANECHOIC = load_preset("anechoic")  # 8 x 8 x 4 m
LIS = (4.0, 4.0, 1.5)


def tone(freq_hz: float, duration_s: float) -> np.ndarray:
    return np.sin(2 * np.pi * freq_hz * np.arange(int(duration_s * FS)) / FS)


def noise(duration_s: float, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(int(duration_s * FS))


@pytest.mark.parametrize("speed", [1.0, 3.0])
@pytest.mark.parametrize("toward", [True, False])
def test_radial_motion_shifts_a_tone_by_the_doppler_factor(speed, toward):
    build = approach if toward else recede
    dists = (3.5, 0.5) if toward else (0.5, 3.5)
    tr = build(LIS, azimuth_deg=30.0, start_distance_m=dists[0], end_distance_m=dists[1], speed_m_s=speed)
    x = render_moving(tone(1000.0, tr.duration_s), tr, ANECHOIC, Mono(position_m=LIS), sample_rate=FS, early_order=0)
    n = x.shape[1]
    steady = x[0, int(0.2 * n) : int(0.6 * n)]  # inside the motion, away from the ramps
    expected = 1000.0 * C / (C - speed) if toward else 1000.0 * C / (C + speed)
    measured = dominant_freq_hz(steady, FS)
    assert measured == pytest.approx(expected, rel=5e-4)  # 10x tighter than 0.5 %
    assert abs(measured - 1000.0) > 0.9 * abs(expected - 1000.0)


def test_level_follows_inverse_distance_at_the_emission_time():
    tr = approach(LIS, azimuth_deg=0.0, start_distance_m=3.0, end_distance_m=0.5, duration_s=2.0)
    sig = tone(500.0, 2.0)
    x = render_moving(sig, tr, ANECHOIC, Mono(position_m=LIS), sample_rate=FS, early_order=0)[0]
    for t_emit in (0.25, 1.0, 1.75):  # the source is at distance r(t) when it emits at t
        r = 3.0 - 1.25 * t_emit
        a = int(round((t_emit + r / C) * FS)) + FDL2
        w = int(0.02 * FS)
        rms = math.sqrt(np.mean(x[a - w // 2 : a + w // 2] ** 2))
        assert 20 * math.log10(rms * math.sqrt(2) * r) == pytest.approx(0.0, abs=0.05)


def test_binaural_pass_by_itd_changes_sign_at_the_median_plane():
    # in front, 1 m away, from the right (-y) to the left (+y): ITD goes from negative to positive
    tr = pass_by(LIS, closest_azimuth_deg=0.0, closest_distance_m=1.0, length_m=4.0, ccw=True, duration_s=2.0)
    x = render_moving(noise(2.0), tr, ANECHOIC, Binaural(position_m=LIS), sample_rate=FS)
    w = int(0.05 * FS)
    times = np.arange(0.05, 1.9, 0.05)
    itd = []
    for t in times:
        r = float(np.linalg.norm(tr.position_at(t)[0] - LIS))
        a = int(round((t + r / C) * FS)) + FDL2
        itd.append(itd_ild(x[0, a : a + w], x[1, a : a + w], FS)[0])
    itd = np.array(itd)
    assert itd[0] < -4e-4 and itd[-1] > 4e-4
    crossing = times[np.argmax(itd > 0)]
    assert crossing == pytest.approx(1.0, abs=0.1)  # median plane crossed at t = 1 s
    assert np.all(np.diff(itd) > -5e-5)  # monotonic up to measurement noise


def test_foa_lateral_component_follows_the_source():
    tr = pass_by(LIS, closest_azimuth_deg=0.0, closest_distance_m=1.0, length_m=4.0, ccw=False, duration_s=2.0)
    x = render_moving(noise(2.0), tr, ANECHOIC, FOA(position_m=LIS), sample_rate=FS)
    first, last = slice(800, 4000), slice(28000, 31000)
    y_over_w = [float(np.sum(x[0, s] * x[1, s]) / np.sum(x[0, s] ** 2)) for s in (first, last)]
    assert y_over_w[0] > 0.6 and y_over_w[1] < -0.6  # starts left (+Y), ends right


def _static_render(receiver, room, src, sig, n):
    """The signal through the static order-1 image response, high-passed over the whole output."""
    imgs = image_sources(room, src, max_order=1)
    if isinstance(receiver, Mono):  # Mono.render high-passes its short RIR alone (edge effects ~3e-2)
        rows = _ik._scatter_list(
            imgs.positions_m,
            imgs.gains,
            np.asarray(receiver.position_m),
            _images._phase_basis()[0],
            FS,
            room.c_m_s,
            FDL2,
            _images.SINC_LUT_GRANULARITY,
            n,
            1e9,
        )
        return _images._highpass(oaconvolve(sig, _images._synthesise(rows))[None, :n], FS)
    rir = receiver.render(imgs, sample_rate=FS, c_m_s=room.c_m_s, n_samples=n)
    return oaconvolve(sig[None, :], rir, axes=1)[:, :n]


@pytest.mark.parametrize(
    "receiver", [Mono(position_m=(3.0, 2.0, 1.4)), Binaural(position_m=(3.0, 2.0, 1.4), yaw_deg=30.0)]
)
def test_a_source_at_rest_renders_as_the_static_image_response(receiver):
    room = load_preset("living_room")
    src = (1.5, 3.0, 1.6)
    tr = linear(src, src, duration_s=0.5)
    sig = noise(0.5, seed=3)
    moving = render_moving(sig, tr, room, receiver, sample_rate=FS, early_order=1, late=False)
    static = _static_render(receiver, room, src, sig, moving.shape[1])
    core = slice(FDL2 + 200, sig.size)  # away from the zero-phase high-pass edges
    err = np.linalg.norm(moving[:, core] - static[:, core]) / np.linalg.norm(static[:, core])
    assert err < (1e-5 if isinstance(receiver, Mono) else 1e-3)


def test_late_tail_adds_reverberation_after_the_sound():
    room = load_preset("classroom")
    lis = (4.5, 3.5, 1.5)
    tr = pass_by(lis, closest_azimuth_deg=0.0, closest_distance_m=1.5, length_m=2.0, ccw=True, duration_s=1.0)
    sig = noise(1.0)
    dry = render_moving(sig, tr, room, Mono(position_m=lis), sample_rate=FS, late=False)
    wet = render_moving(sig, tr, room, Mono(position_m=lis), sample_rate=FS, late=True, rng=np.random.default_rng(0))
    after = slice(FS + 1600, FS + 4800)  # 0.1-0.3 s after the sound ends
    assert dry.shape[1] < after.start < after.stop < wet.shape[1]  # the early part is over by then
    during = np.sqrt(np.mean(wet[0, 1600:FS] ** 2))
    ratio_db = 20 * np.log10(np.sqrt(np.mean(wet[0, after] ** 2)) / during)
    assert -25.0 < ratio_db < -3.0  # RT60 0.8 s: -7.5 to -22 dB of decay over 0.1-0.3 s, plus the direct sound gone


@pytest.mark.parametrize(
    ("name", "lis", "receiver"),
    [
        ("living_room", (2.5, 2.0, 1.5), Binaural),
        ("classroom", (4.0, 3.0, 1.4), Binaural),
        ("hall", (8.0, 6.0, 1.6), Binaural),
        ("classroom", (4.0, 3.0, 1.4), FOA),
        ("living_room", (2.5, 2.0, 1.5), Mono),
    ],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_late_part_is_the_static_hybrid_response_faded_in(name, lis, receiver, seed):
    """The late part of a head (early images rendered only past the crossfade) equals the static hybrid
    response of the path's midpoint times the fade-in, as spatial_rir computes it, within float rounding;
    other receivers take that product itself."""
    from auralgen.rooms import _moving
    from auralgen.rooms.hybrid import XFADE_S, mixing_time_s
    from auralgen.rooms.scene import spatial_rir

    room = load_preset(name)
    tr = pass_by(
        lis, closest_azimuth_deg=10.0 + 50 * seed, closest_distance_m=1.2, length_m=1.5, ccw=bool(seed), duration_s=1.0
    )
    rec = receiver(position_m=lis, yaw_deg=30.0 * seed) if receiver is not Mono else Mono(position_m=lis)
    mid = tr.position_at(0.5 * tr.duration_s)[0]
    rir = spatial_rir(room, mid, rec, sample_rate=FS, mode="hybrid", rng=np.random.default_rng(seed))
    n0 = int(round((np.linalg.norm(mid - np.asarray(lis)) / room.c_m_s + mixing_time_s(room)) * FS)) + FDL2
    want = rir * _moving._fade_in(rir.shape[1], n0, int(round(XFADE_S * FS)))
    got = _moving._late_rir(room, tr, rec, FS, np.random.default_rng(seed))
    assert got.shape == want.shape
    assert np.max(np.abs(got - want)) <= 1e-13 * np.max(np.abs(want))
    assert np.all(got[:, :n0] == 0.0) and np.any(got[:, n0 : n0 + 32] != 0.0)  # nothing before the crossfade


def test_render_is_deterministic_and_only_the_tail_depends_on_rng():
    room = load_preset("living_room")
    lis = (2.75, 2.25, 1.5)
    tr = arc_around(lis, radius_m=1.2, start_azimuth_deg=90.0, sweep_deg=-180.0, duration_s=1.5)
    rec = Binaural(position_m=lis)
    sig = noise(1.5)
    a = render_moving(sig, tr, room, rec, sample_rate=FS, rng=np.random.default_rng(7))
    b = render_moving(sig, tr, room, rec, sample_rate=FS, rng=np.random.default_rng(7))
    c = render_moving(sig, tr, room, rec, sample_rate=FS, rng=np.random.default_rng(8))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    n0 = int(0.005 * FS)  # before the mixing time nothing depends on the tail noise
    np.testing.assert_allclose(a[:, : FDL2 + n0], c[:, : FDL2 + n0], rtol=0, atol=1e-12)  # FFT rounding only


def test_trajectory_geometry_and_round_trip():
    tr = turn((1.0, 1.0, 1.5), (3.0, 1.0, 1.5), (3.0, 2.0, 1.5), speed_m_s=1.5)
    assert tr.length_m == pytest.approx(3.0) and tr.duration_s == pytest.approx(2.0)
    np.testing.assert_allclose(
        tr.position_at([0.0, 4 / 3, 2.0, 9.0]), [[1, 1, 1.5], [3, 1, 1.5], [3, 2, 1.5], [3, 2, 1.5]]
    )
    arc = arc_around(LIS, radius_m=2.0, start_azimuth_deg=0.0, sweep_deg=90.0, yaw_deg=90.0, duration_s=1.0)
    np.testing.assert_allclose(arc.position_at(1.0)[0], [2.0, 4.0, 1.5], atol=1e-12)  # from +y (ahead) to -x
    assert arc.speed_m_s == pytest.approx(math.pi)
    for t in (tr, arc):
        assert Trajectory.from_dict(t.to_dict()) == t


@pytest.mark.parametrize(
    "make,match",
    [
        (
            lambda: linear((1.0, 1.0, 1.5), (7.95, 1.0, 1.5), duration_s=3.0).check_in(ANECHOIC),
            r"spans x in \[1.000, 7.950\]",
        ),
        (
            lambda: arc_around(LIS, radius_m=3.95, start_azimuth_deg=-10, sweep_deg=20, duration_s=5).check_in(
                ANECHOIC
            ),
            "closer than 0.1 m",
        ),
        (
            lambda: linear((1.0, 1.0, 1.5), (7.0, 1.0, 1.5), duration_s=1.0).check_in(ANECHOIC),
            r"speed_m_s=6.000.*allowed: <= 3 m/s",
        ),
        (lambda: Trajectory("spiral", ((0, 0, 0),), 1.0), "kind='spiral' is unknown"),
        (lambda: Trajectory("linear", ((1, 1, 1),), 1.0), "has 1 points for kind 'linear'; allowed: 2"),
        (lambda: Trajectory("linear", ((1, 1, 1), (2, 2, 2)), 0.0), r"duration_s=0.0 is out of range"),
        (lambda: approach(LIS, azimuth_deg=0, start_distance_m=1.0, end_distance_m=2.0, duration_s=1.0), "end < start"),
        (lambda: linear((1, 1, 1), (2, 1, 1)), "exactly one of them"),
        (
            lambda: Trajectory.from_dict(
                {"kind": "linear", "points_m": [[1, 1, 1], [2, 1, 1]], "duration_s": 1, "speed": 2}
            ),
            "speed=2 is not a key",
        ),
    ],
)
def test_bad_trajectories_raise_one_line_errors(make, match):
    with pytest.raises(ParameterError, match=match):
        make()


def test_render_rejects_paths_through_the_receiver_and_bad_arguments():
    tr = linear((2.0, 4.0, 1.5), (6.0, 4.0, 1.5), duration_s=2.0)  # passes through LIS
    with pytest.raises(ParameterError, match="passes 0.000 m from the receiver; allowed: >= 0.2 m"):
        render_moving(noise(2.0), tr, ANECHOIC, Mono(position_m=LIS), sample_rate=FS)
    ok = linear((2.0, 5.0, 1.5), (6.0, 5.0, 1.5), duration_s=2.0)
    with pytest.raises(ParameterError, match="early_order=7 is out of range"):
        render_moving(noise(1.0), ok, ANECHOIC, Mono(position_m=LIS), sample_rate=FS, early_order=7)
    with pytest.raises(ParameterError, match="rng=None with late=True"):
        render_moving(noise(1.0), ok, load_preset("classroom"), Mono(position_m=LIS), sample_rate=FS)


def test_a_three_second_binaural_pass_by_renders_both_ears_in_full():
    room = load_preset("classroom")
    lis = (4.5, 3.5, 1.5)
    tr = pass_by(lis, closest_azimuth_deg=0.0, closest_distance_m=1.5, length_m=6.0, ccw=True, duration_s=3.0)
    rec = Binaural(position_m=lis)
    render_moving(
        noise(0.2),
        linear((1, 1, 1.5), (1, 1, 1.5), duration_s=0.2),
        room,
        rec,
        sample_rate=FS,
        rng=np.random.default_rng(0),
    )  # compile / cache
    out = render_moving(noise(3.0), tr, room, rec, sample_rate=FS, early_order=1, rng=np.random.default_rng(0))
    # speed: bench/bench_trajectory.py; here: two ears, the whole clip plus the room's tail, finite
    assert out.shape[0] == 2 and out.shape[1] >= 3 * FS and np.all(np.isfinite(out))
    assert np.sqrt(np.mean(out[:, : 3 * FS] ** 2)) > 0


def test_positions_on_a_segment_are_np_interp_bit_for_bit():
    """A two-point path's positions (a column at a time, no search) equal np.interp over the path fraction
    exactly, inside, at and past both ends; an arc's equal the circle's formula."""
    rng = np.random.default_rng(4)
    for k in range(60):
        a, b = rng.uniform(0.5, 7.5, 3), rng.uniform(0.5, 7.5, 3)
        if k % 5 == 0:
            b = a + np.array([1e-3, 0.0, 0.0])  # a very short path
        tr = Trajectory("linear", (tuple(a), tuple(b)), float(rng.uniform(0.1, 3.0)))
        t = np.concatenate([np.arange(4001) / FS, [-1.0, tr.duration_s, tr.duration_s * (1 - 1e-16), 1e9]])
        u = np.clip(t, 0.0, tr.duration_s) / tr.duration_s
        want = np.stack([np.interp(u, [0.0, 1.0], np.asarray(tr.points_m)[:, d]) for d in range(3)], axis=1)
        assert np.array_equal(tr.position_at(t), want)
    arc = arc_around(LIS, radius_m=1.2, start_azimuth_deg=90.0, sweep_deg=-120.0, duration_s=0.5)
    t = np.arange(9000) / FS
    ang = np.radians(arc.start_deg + np.clip(t, 0.0, arc.duration_s) / arc.duration_s * arc.sweep_deg)
    (cx, cy, cz), r = arc.points_m[0], arc.radius_m
    np.testing.assert_array_equal(arc.position_at(t)[:, 0], cx + r * np.cos(ang))
    np.testing.assert_array_equal(arc.position_at(t)[:, 1], cy + r * np.sin(ang))
    np.testing.assert_array_equal(arc.position_at(t)[:, 2], np.full(t.size, cz))


@pytest.mark.parametrize(("name", "n_out"), [("hall", 30000), ("classroom", 30000), ("classroom", 9000)])
def test_n_out_returns_the_first_samples_of_the_full_render(name, n_out):
    """Only the first n_out samples, not computed past them: the full render's first n_out within float
    rounding (another FFT length for the tail's convolution), early part and tail both cut."""
    room = load_preset(name)
    lis = (8.0, 6.0, 1.6) if name == "hall" else (4.0, 3.0, 1.4)
    tr = pass_by(lis, closest_azimuth_deg=20.0, closest_distance_m=1.2, length_m=1.5, ccw=True, duration_s=1.0)
    rec, sig = Binaural(position_m=lis, yaw_deg=10.0), noise(1.0, seed=3)
    full = render_moving(sig, tr, room, rec, sample_rate=FS, rng=np.random.default_rng(2))
    got = render_moving(sig, tr, room, rec, sample_rate=FS, rng=np.random.default_rng(2), n_out=n_out)
    assert full.shape[1] > n_out and got.shape == (2, n_out)
    assert np.max(np.abs(got - full[:, :n_out])) <= 1e-12 * np.max(np.abs(full))
    dry = render_moving(sig, tr, room, rec, sample_rate=FS, late=False, n_out=n_out)
    assert dry.shape[1] == min(n_out, render_moving(sig, tr, room, rec, sample_rate=FS, late=False).shape[1])
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ParameterError, match=r"^n_out=.*allowed: None or an integer >= 1"):
            render_moving(sig, tr, room, rec, sample_rate=FS, rng=np.random.default_rng(2), n_out=bad)
