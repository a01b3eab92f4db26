"""Receivers: layouts, omni-array geometry, FOA gains, binaural cues, orientation, config."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.signal
from hypothesis import given, settings
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.measure.geometry import az_el_to_unit, listener_to_room
from auralgen.rooms import images
from auralgen.rooms.hrtf import HrtfMissingError, fetch, load_kemar
from auralgen.rooms.receivers import (
    FOA,
    RECEIVERS,
    Binaural,
    Circular,
    Mono,
    StereoPair,
    Tetrahedral,
    foa_weights,
    receiver_from_config,
)

C = 343.0
CENTRE = np.array([3.0, 2.5, 1.5])


# --------------------------------------------------------------------------- images
# ImageSources are built by hand (a direct image or a few), independent of the enumeration.


@pytest.fixture
def images_mod():
    return images


def _images(mod, positions, gains=None):
    pos = np.atleast_2d(np.asarray(positions, float))
    g = np.ones(len(pos)) if gains is None else np.asarray(gains, float)
    return mod.ImageSources(positions_m=pos, gains=g, orders=np.zeros(len(pos), dtype=int))


def _source_at(az_deg, el_deg, dist_m=2.0, yaw_deg=0.0, pitch_deg=0.0):
    """Room-frame position of a source at (az, el, dist) relative to a listener at CENTRE."""
    return listener_to_room(dist_m * az_el_to_unit(az_deg, el_deg), CENTRE, yaw_deg, pitch_deg)


def _peak_position(x: np.ndarray, up: int = 32) -> float:
    """Sub-sample position of the largest |x| (band-limited FFT upsampling by ``up``)."""
    return int(np.argmax(np.abs(scipy.signal.resample(x, up * len(x))))) / up


@pytest.fixture(scope="session")
def kemar_available():
    try:
        load_kemar()
    except HrtfMissingError:
        try:
            fetch()
        except Exception as exc:  # no PyPI access
            pytest.skip(f"KEMAR HRTF unavailable and fetch failed: {exc}")
    return True


# --------------------------------------------------------------------------- layouts


@pytest.mark.parametrize(
    ("config", "layout", "channels"),
    [
        ({"type": "mono"}, "mono", 1),
        ({"type": "stereo", "spacing_m": 0.3}, "stereo", 2),
        ({"type": "tetra"}, "tetra", 4),
        ({"type": "circular", "n": 6, "radius_m": 0.1}, "circular_6", 6),
        ({"type": "foa"}, "foa_acn_sn3d", 4),
        ({"type": "binaural"}, "binaural", 2),
    ],
)
def test_layout_channels_and_config_roundtrip(config, layout, channels):
    rec = receiver_from_config({**config, "position_m": [1, 2, 1.5], "yaw_deg": 30})
    assert rec.layout == layout
    assert rec.num_channels == channels
    assert rec.position_m == (1.0, 2.0, 1.5)
    assert receiver_from_config(rec.to_config()) == rec
    assert set(RECEIVERS) == {"mono", "stereo", "tetra", "foa", "circular", "binaural"}


@pytest.mark.parametrize(
    "rec",
    [
        Mono(position_m=CENTRE),
        StereoPair(position_m=CENTRE, spacing_m=0.4),
        Tetrahedral(position_m=CENTRE, radius_m=0.1),
        Circular(position_m=CENTRE, n=5, radius_m=0.2),
        FOA(position_m=CENTRE),
    ],
    ids=lambda r: r.layout,
)
def test_render_shape_dtype(images_mod, rec):
    rir = rec.render(_images(images_mod, [[5.0, 3.0, 1.2]]), sample_rate=16000, c_m_s=C, n_samples=700)
    assert rir.shape == (rec.num_channels, 700) and rir.dtype == np.float64
    assert np.all(np.abs(rir).max(axis=1) > 0)


def test_mono_is_render_omni(images_mod):
    ims = _images(images_mod, [[5.0, 3.0, 1.2], [1.0, 0.5, 2.0]], gains=[1.0, -0.6])
    rir = Mono(position_m=CENTRE).render(ims, sample_rate=16000, c_m_s=C, n_samples=600)
    expected = images_mod.render_omni(ims, CENTRE, sample_rate=16000, c_m_s=C, n_samples=600)
    np.testing.assert_array_equal(rir[0], expected)


# --------------------------------------------------------------------------- omni arrays


@pytest.mark.parametrize("yaw_deg", [0.0, 70.0])
def test_tetra_channel_delays_match_geometry(images_mod, yaw_deg):
    fs, rec = 48000, Tetrahedral(position_m=CENTRE, radius_m=0.1, yaw_deg=yaw_deg)
    mics = rec.mic_positions_m()
    np.testing.assert_allclose(np.linalg.norm(mics - CENTRE, axis=1), 0.1)
    np.testing.assert_allclose(mics.mean(axis=0), CENTRE, atol=1e-12)
    src = CENTRE + np.array([2.0, 1.0, 0.7])
    rir = rec.render(_images(images_mod, [src]), sample_rate=fs, c_m_s=C, n_samples=800)
    measured = np.array([_peak_position(ch) for ch in rir])
    expected = np.linalg.norm(mics - src, axis=1) / C * fs
    np.testing.assert_allclose(measured - measured[0], expected - expected[0], atol=0.1)
    assert np.ptp(expected) > 10  # the test would notice swapped channels


def test_tetra_first_mic_is_front_left_up():
    offsets = Tetrahedral(radius_m=1.0).local_offsets_m()
    assert np.all(np.sign(offsets) == [[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]])


def test_stereo_left_channel_leads_for_source_at_left(images_mod):
    rec = StereoPair(position_m=CENTRE, spacing_m=0.5, yaw_deg=90.0)  # facing +y: left is -x
    np.testing.assert_allclose(rec.mic_positions_m()[0], CENTRE + [-0.25, 0.0, 0.0], atol=1e-12)
    rir = rec.render(
        _images(images_mod, [_source_at(90.0, 0.0, yaw_deg=90.0)]), sample_rate=48000, c_m_s=C, n_samples=600
    )
    lead = _peak_position(rir[1]) - _peak_position(rir[0])
    assert lead == pytest.approx(0.5 / C * 48000, abs=0.1)


def test_circular_positions():
    rec = Circular(position_m=CENTRE, n=4, radius_m=0.1, yaw_deg=90.0)
    np.testing.assert_allclose(
        rec.mic_positions_m() - CENTRE, [[0, 0.1, 0], [-0.1, 0, 0], [0, -0.1, 0], [0.1, 0, 0]], atol=1e-12
    )


# --------------------------------------------------------------------------- FOA


def _foa_peak_gains(rir: np.ndarray) -> np.ndarray:
    i = int(np.argmax(np.abs(rir[0])))
    return rir[:, i] / rir[0, i]


@pytest.mark.parametrize(
    ("az", "el", "wyzx"),
    [
        (90.0, 0.0, [1, 1, 0, 0]),  # left: Y = W
        (-90.0, 0.0, [1, -1, 0, 0]),  # right
        (0.0, 0.0, [1, 0, 0, 1]),  # front: X = W
        (180.0, 0.0, [1, 0, 0, -1]),
        (0.0, 90.0, [1, 0, 1, 0]),  # above: Z = W
        (45.0, 30.0, [1, math.sqrt(0.5) * math.sqrt(0.75), 0.5, math.sqrt(0.5) * math.sqrt(0.75)]),
    ],
)
def test_foa_gains_follow_direction(images_mod, az, el, wyzx):
    rir = FOA(position_m=CENTRE).render(
        _images(images_mod, [_source_at(az, el)]), sample_rate=16000, c_m_s=C, n_samples=400
    )
    np.testing.assert_allclose(_foa_peak_gains(rir), wyzx, atol=1e-9)


def test_foa_w_is_omni_and_rotation_moves_front_to_right(images_mod):
    ims = _images(images_mod, [CENTRE + [2.0, 0.0, 0.0]])  # straight ahead at yaw 0
    rir0 = FOA(position_m=CENTRE).render(ims, sample_rate=16000, c_m_s=C, n_samples=400)
    rir90 = FOA(position_m=CENTRE, yaw_deg=90.0).render(ims, sample_rate=16000, c_m_s=C, n_samples=400)
    omni = images_mod.render_omni(ims, CENTRE, sample_rate=16000, c_m_s=C, n_samples=400)
    np.testing.assert_array_equal(rir0[0], omni)
    np.testing.assert_allclose(_foa_peak_gains(rir0), [1, 0, 0, 1], atol=1e-9)
    np.testing.assert_allclose(_foa_peak_gains(rir90), [1, -1, 0, 0], atol=1e-9)  # now at az -90


@settings(max_examples=30, deadline=None)
@given(st.floats(-180, 180), st.floats(-90, 90))
def test_foa_weights_unit_energy_sn3d(az, el):
    w = foa_weights(az, el)
    assert w[0] == 1.0
    assert w[1] ** 2 + w[2] ** 2 + w[3] ** 2 == pytest.approx(1.0)


# --------------------------------------------------------------------------- binaural


def _itd_ild(rir: np.ndarray, fs: int) -> tuple[float, float]:
    """ITD in s (> 0: left ear leads) by cross-correlation, ILD in dB (> 0: left louder)."""
    left, right = rir
    xc = scipy.signal.correlate(right, left, mode="full")
    lag = scipy.signal.correlation_lags(len(right), len(left))[np.argmax(xc)]
    return lag / fs, 10 * np.log10(np.sum(left**2) / np.sum(right**2))


def _binaural_direct(images_mod, az, el=0.0, yaw_deg=0.0, fs=48000):
    rec = Binaural(position_m=CENTRE, yaw_deg=yaw_deg)
    src = _source_at(az, el, yaw_deg=yaw_deg)
    return rec.render(_images(images_mod, [src]), sample_rate=fs, c_m_s=C, n_samples=2048)


@pytest.mark.usefixtures("kemar_available")
@pytest.mark.parametrize("side", [1.0, -1.0])
def test_binaural_lateral_source_itd_ild(images_mod, side):
    itd_s, ild_db = _itd_ild(_binaural_direct(images_mod, 90.0 * side), 48000)
    assert 0.55e-3 < side * itd_s < 0.8e-3
    assert side * ild_db > 6.0


@pytest.mark.usefixtures("kemar_available")
def test_binaural_frontal_source_small_cues(images_mod):
    itd_s, ild_db = _itd_ild(_binaural_direct(images_mod, 0.0), 48000)
    assert abs(itd_s) < 0.05e-3
    assert abs(ild_db) < 1.0


@pytest.mark.usefixtures("kemar_available")
def test_binaural_rotation_moves_front_source_to_the_right(images_mod):
    ims = _images(images_mod, [CENTRE + [2.0, 0.0, 0.0]])
    rir = Binaural(position_m=CENTRE, yaw_deg=90.0).render(ims, sample_rate=48000, c_m_s=C, n_samples=2048)
    itd_s, ild_db = _itd_ild(rir, 48000)
    assert itd_s < -0.55e-3 and ild_db < -6.0
    np.testing.assert_allclose(rir, _binaural_direct(images_mod, -90.0), atol=1e-12)


@pytest.mark.usefixtures("kemar_available")
def test_binaural_is_linear_in_images(images_mod):
    """The render of several images equals the sum of single-image renders (two share a direction)."""
    rec, fs = Binaural(position_m=CENTRE, yaw_deg=20.0), 16000
    pts = [_source_at(30, 0, 2.0, 20.0), _source_at(30, 0, 3.1, 20.0), _source_at(-120, 40, 4.0, 20.0), [0.5, 0.2, 2.9]]
    gains = [1.0, -0.5, 0.7, 0.3]
    whole = rec.render(_images(images_mod, pts, gains), sample_rate=fs, c_m_s=C, n_samples=1200)
    parts = sum(
        rec.render(_images(images_mod, [p], [g]), sample_rate=fs, c_m_s=C, n_samples=1200)
        for p, g in zip(pts, gains, strict=True)
    )
    np.testing.assert_allclose(whole, parts, atol=1e-12)
    assert np.abs(whole).max() > 1e-3


@pytest.mark.usefixtures("kemar_available")
def test_binaural_hrirs_trimmed_and_normalised():
    hr = Binaural().hrtf_at(16000)
    assert hr.sample_rate == 16000 and hr.hrirs.shape[:2] == (710, 2)
    assert np.mean(np.sum(hr.hrirs**2, axis=-1)) == pytest.approx(1.0)
    onsets = np.argmax(np.abs(hr.hrirs) >= 0.05 * np.abs(hr.hrirs).max(axis=-1, keepdims=True), axis=-1)
    assert onsets.min() == math.ceil(1e-4 * 16000)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"type": "dipole"}, r"receiver\.type='dipole' is unknown; allowed: mono, stereo"),
        ({"spacing_m": 0.2}, r"receiver\.type=None is unknown"),
        (
            {"type": "stereo", "spacng_m": 0.2},
            r"receiver\.spacng_m=0\.2 is not a field of 'stereo'; allowed: .*spacing_m",
        ),
        ({"type": "stereo", "spacing_m": -0.1}, r"receiver\.spacing_m=-0\.1 is out of range; allowed: > 0"),
        ({"type": "tetra", "radius_m": "big"}, r"receiver\.radius_m='big' is not a number"),
        ({"type": "circular"}, r"receiver\.n is missing; required for type 'circular'"),
        ({"type": "circular", "n": 1}, r"receiver\.n=1 is invalid; allowed: an integer in \[2, 64\]"),
        ({"type": "circular", "n": 4.5}, r"receiver\.n=4\.5 is invalid"),
        ({"type": "mono", "pitch_deg": 100}, r"receiver\.pitch_deg=100\.0 is out of range; allowed: >= -90"),
        ({"type": "mono", "position_m": [1, 2]}, r"receiver\.position_m=\[1, 2\] is not a 3-vector"),
        ({"type": "foa", "yaw_deg": float("nan")}, r"receiver\.yaw_deg=nan is not finite"),
        ({"type": "binaural", "hrtf": "cipic"}, r"receiver\.hrtf='cipic' is unknown; allowed: mit_kemar"),
    ],
)
def test_config_validation(config, match):
    with pytest.raises(ParameterError, match=match):
        receiver_from_config(config)


def test_config_validation_key_prefix_and_non_mapping():
    with pytest.raises(ParameterError, match=r"^tasks\.x\.receiver\.spacing_m=0\.0 is out of range"):
        receiver_from_config({"type": "stereo", "spacing_m": 0}, key="tasks.x.receiver")
    with pytest.raises(ParameterError, match=r"receiver='mono' is not a mapping"):
        receiver_from_config("mono")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sample_rate": 0, "c_m_s": C, "n_samples": 10}, r"sample_rate=0"),
        ({"sample_rate": 16000, "c_m_s": -1.0, "n_samples": 10}, r"c_m_s=-1\.0 is out of range"),
        ({"sample_rate": 16000, "c_m_s": C, "n_samples": 0}, r"n_samples=0"),
    ],
)
def test_render_argument_validation(images_mod, kwargs, match):
    with pytest.raises(ParameterError, match=match):
        FOA().render(_images(images_mod, [[1.0, 1.0, 1.0]]), **kwargs)


# --------------------------------------------------------------------------- capabilities
# what the scene, the backends and the tasks ask a receiver instead of testing its type


@pytest.mark.parametrize(
    ("config", "omni", "ears", "order", "gains"),
    [
        ({"type": "mono"}, True, False, None, [1.0]),
        ({"type": "stereo"}, True, False, None, [1.0, 1.0]),
        ({"type": "tetra"}, True, False, None, [1.0] * 4),
        ({"type": "circular", "n": 3}, True, False, None, [1.0] * 3),
        ({"type": "foa"}, False, False, 1, [1.0, 3**-0.5, 3**-0.5, 3**-0.5]),
        ({"type": "binaural"}, False, True, None, [1.0, 1.0]),
    ],
)
def test_capabilities(config, omni, ears, order, gains):
    rec = receiver_from_config({**config, "position_m": list(CENTRE), "yaw_deg": 90.0})
    mics, ear_points = rec.mic_positions_m(), rec.ear_positions_m()
    assert (mics is not None) == omni and (ear_points is not None) == ears
    assert rec.ambisonic_order() == order
    np.testing.assert_allclose(rec.diffuse_gains(), gains, rtol=1e-15)
    tail = rec.tail_points_m()
    assert tail.shape == (rec.num_channels, 3)
    if omni:
        np.testing.assert_array_equal(tail, mics)


def test_tail_points_are_the_ears_and_a_small_tetrahedron():
    head = Binaural(position_m=tuple(CENTRE), yaw_deg=90.0)  # looking along +y: the left ear is at -x
    np.testing.assert_allclose(head.ear_positions_m(), CENTRE + [[-0.0875, 0, 0], [0.0875, 0, 0]], atol=1e-12)
    np.testing.assert_array_equal(head.tail_points_m(), head.ear_positions_m())
    foa = FOA(position_m=tuple(CENTRE)).tail_points_m()
    np.testing.assert_allclose(np.linalg.norm(foa - CENTRE, axis=1), 0.0875, rtol=1e-12)
    np.testing.assert_allclose(foa[0] - CENTRE, [0.0875 / math.sqrt(3)] * 3, rtol=1e-12)


def test_only_omni_arrays_have_mic_positions():
    # backend=pra renders a receiver only if it has mic positions (rooms.backends.PraBackend.supports)
    configs = [{"type": name, "n": 3} if name == "circular" else {"type": name} for name in RECEIVERS]
    has = {c["type"]: receiver_from_config(c).mic_positions_m() is not None for c in configs}
    assert has == {"mono": True, "stereo": True, "tetra": True, "foa": False, "circular": True, "binaural": False}
