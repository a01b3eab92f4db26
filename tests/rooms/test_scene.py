"""rooms.scene's statistical room figures: the critical distance of a room given either way."""

import math

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
