"""rooms.scene's statistical room figures (the critical distance of a room given either way) and the binaural
hybrid response against its parts computed one by one."""

import math

import numpy as np
import pytest

from auralgen.rooms.scene import critical_distance_m
from auralgen.rooms.spec import WALLS, RoomSpec, inverse_sabine_absorption


def test_critical_distance_of_a_room_given_by_materials_matches_its_rt60_twin():
    by_rt60 = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.6).validate()
    alpha = inverse_sabine_absorption(by_rt60, 0.6)
    by_materials = RoomSpec(dims_m=(6.0, 5.0, 3.0), materials=alpha).validate()
    assert math.isclose(critical_distance_m(by_materials), critical_distance_m(by_rt60), rel_tol=1e-3)
    assert 0.5 < critical_distance_m(by_materials) < 2.0
    walls = dict.fromkeys(WALLS, alpha)
    walls["floor"] = 0.9  # a more absorbing floor: more absorption area, a longer critical distance
    assert critical_distance_m(RoomSpec(dims_m=(6.0, 5.0, 3.0), materials=walls).validate()) > critical_distance_m(
        by_rt60
    )
    assert critical_distance_m(RoomSpec(dims_m=(6.0, 5.0, 3.0), materials=1.0).validate()) == math.inf
    assert critical_distance_m(RoomSpec(dims_m=(6.0, 5.0, 3.0)).validate()) == math.inf


@pytest.mark.parametrize("src", [(4.2, 1.3, 1.6), (1.1, 3.9, 0.6)])
def test_binaural_hybrid_is_its_parts_filtered_one_by_one_then_crossfaded(src, monkeypatch):
    """The binaural hybrid response filters the head's two early responses and the ears' two tails in one
    high-pass call and crossfades only the ramp's samples: the very numbers of the fast engine's tails
    (:func:`compute_rir`), the head's render of the early images, each high-passed alone, and
    ``early * (1 - w) + tail * w`` over the whole response."""
    from auralgen.rooms import scene
    from auralgen.rooms.hybrid import XFADE_S, mixing_time_s
    from auralgen.rooms.images import FDL2, image_sources
    from auralgen.rooms.receivers import Binaural
    from auralgen.rooms.scene import _tail_and_early, spatial_rir
    from auralgen.rooms.simulate import compute_rir

    room = RoomSpec(dims_m=(5.5, 4.5, 2.6), rt60_s=0.5).validate()
    head = Binaural(position_m=(2.4, 2.1, 1.4), yaw_deg=-120.0)
    src = np.asarray(src)
    images = image_sources(room, src, max_order=3)
    tail, early = _tail_and_early(room, src, head, images, sample_rate=16000, rng=np.random.default_rng(5))
    want_tail = compute_rir(
        room, src, head.tail_points_m(), sample_rate=16000, backend="fast", mode="hybrid", rng=np.random.default_rng(5)
    )
    n = want_tail.shape[1]
    assert np.array_equal(tail, want_tail)
    assert np.array_equal(early, head.render(images, sample_rate=16000, c_m_s=room.c_m_s, n_samples=n))
    parts = []
    monkeypatch.setattr(scene, "_tail_and_early", lambda *a, **k: parts.append(_tail_and_early(*a, **k)) or parts[-1])
    got = spatial_rir(room, src, head, sample_rate=16000, mode="hybrid", rng=np.random.default_rng(5))
    (tail, early), n = parts[0], parts[0][0].shape[1]
    assert np.all(head.diffuse_gains() == 1.0)
    n0 = round((np.linalg.norm(src - head.position_m) / room.c_m_s + mixing_time_s(room)) * 16000) + FDL2
    n_x = round(XFADE_S * 16000)
    w = np.zeros(n)
    w[n0 : n0 + n_x] = np.sin(0.5 * np.pi * (np.arange(n_x) + 0.5) / n_x) ** 2
    w[n0 + n_x :] = 1.0
    assert np.array_equal(got, early * (1.0 - w) + tail * w)
    assert np.abs(got[:, n0 + n_x :]).max() > 1e-4  # the tail is there
