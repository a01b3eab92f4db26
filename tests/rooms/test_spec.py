"""RoomSpec validation, positions, presets and config round trips."""

from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.rooms.spec import (
    ROOMS_DIR_ENV,
    WALLS,
    RoomSpec,
    check_position,
    fits_distance,
    inverse_sabine_absorption,
    load_preset,
    min_rt60_s,
    room_from_config,
    room_names,
    wall_absorption,
)

ROOM = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.6)
CONF = Path(__file__).resolve().parents[2] / "conf" / "room"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dims_m": (6.0, -5.0, 3.0)}, r"dims_m=\(6\.0, -5\.0, 3\.0\).*> 0"),
        ({"dims_m": (6.0, 5.0)}, r"dims_m=.*three finite lengths"),
        ({"dims_m": (6.0, 5.0, 3.0), "rt60_s": 0.05}, r"rt60_s=0\.05 is unreachable.*allowed: >= 0\.1"),
        ({"dims_m": (6.0, 5.0, 3.0), "rt60_s": -1.0}, r"rt60_s=-1\.0 is out of range; allowed: > 0"),
        (
            {"dims_m": (6.0, 5.0, 3.0), "materials": 1.5},
            r"materials=1\.5 is out of range; allowed: >= 0\.0 and <= 1\.0",
        ),
        ({"dims_m": (6.0, 5.0, 3.0), "materials": {"east": 0.2}}, r"missing walls \['west'"),
        ({"dims_m": (6.0, 5.0, 3.0), "rt60_s": 0.5, "materials": 0.3}, r"both given"),
        ({"dims_m": (6.0, 5.0, 3.0), "max_order": -1}, r"max_order=-1 is out of range; allowed: >= 0"),
        ({"dims_m": (6.0, 5.0, 3.0), "c_m_s": 34.3}, r"c_m_s=34\.3 is out of range"),
    ],
)
def test_validate_rejects_with_key_value_and_range(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        RoomSpec(**kwargs).validate()


def test_unreachable_rt60_agrees_with_pyroomacoustics_inverse_sabine():
    pra = pytest.importorskip("pyroomacoustics")
    rt_min = min_rt60_s(ROOM)
    with pytest.raises(ValueError):
        pra.inverse_sabine(0.98 * rt_min, ROOM.dims_m, c=343.0)
    with pytest.raises(ParameterError, match="unreachable"):
        RoomSpec(dims_m=ROOM.dims_m, rt60_s=0.98 * rt_min).validate()
    absorption, _ = pra.inverse_sabine(0.6, ROOM.dims_m, c=343.0)
    assert inverse_sabine_absorption(ROOM, 0.6) == pytest.approx(absorption, rel=1e-12)
    np.testing.assert_allclose(wall_absorption(ROOM), absorption)


def test_materials_order_follows_walls():
    mats = {w: 0.1 * (i + 1) for i, w in enumerate(WALLS)}
    np.testing.assert_allclose(
        wall_absorption(RoomSpec((4.0, 3.0, 2.5), materials=mats)), [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    )
    np.testing.assert_allclose(wall_absorption(RoomSpec((4.0, 3.0, 2.5), materials=0.25)), 0.25)
    np.testing.assert_allclose(wall_absorption(RoomSpec((4.0, 3.0, 2.5))), 1.0)


@pytest.mark.parametrize(
    ("pos", "match"),
    [
        ((6.5, 2.0, 1.0), r"source_m=\[6\.5, 2\.0, 1\.0\] is outside the room.*0\.1 <= x <= 5\.9"),
        ((0.05, 2.0, 1.0), r"closer than 0\.1 m"),
        ((1.0, 2.0), r"three finite coordinates"),
        ((1.0, np.nan, 1.0), r"three finite coordinates"),
    ],
)
def test_check_position_rejects(pos, match):
    with pytest.raises(ParameterError, match=match):
        check_position(pos, ROOM, "source_m")


def test_check_position_accepts_margin_exactly():
    np.testing.assert_array_equal(check_position((0.1, 4.9, 2.9), ROOM, "mic"), [0.1, 4.9, 2.9])


def test_fits_distance():
    centre = (3.0, 2.5, 1.5)
    assert fits_distance(ROOM, centre, 2.9, direction=(1, 0, 0))
    assert not fits_distance(ROOM, centre, 3.0, direction=(1, 0, 0))
    far = float(np.linalg.norm([2.9, 2.4, 1.4]))
    assert fits_distance(ROOM, centre, far - 1e-9)
    assert not fits_distance(ROOM, centre, far + 1e-6)


@given(
    st.tuples(*[st.floats(0.1, 1.0)] * 3),
    st.floats(0.0, 10.0),
    st.tuples(*[st.floats(-1, 1)] * 3).filter(lambda u: np.linalg.norm(u) > 1e-3),
)
@settings(max_examples=60, deadline=None)
def test_fits_distance_point_passes_check_position(frac, dist, direction):
    listener = 0.1 + np.asarray(frac) * (np.asarray(ROOM.dims_m) - 0.2)
    if fits_distance(ROOM, listener, dist, direction=direction):
        u = np.asarray(direction) / np.linalg.norm(direction)
        check_position(listener + dist * u, ROOM, "p")  # must not raise
        assert fits_distance(ROOM, listener, dist)


# the built-in rooms as the YAML files define them (pinned: a changed file changes every spatial item)
BUILT_IN = {
    "anechoic": RoomSpec(dims_m=(8.0, 8.0, 4.0), rt60_s=None, max_order=0),
    "booth": RoomSpec(dims_m=(2.5, 2.2, 2.2), rt60_s=0.12),
    "small_office": RoomSpec(dims_m=(4.0, 3.5, 2.7), rt60_s=0.4),
    "living_room": RoomSpec(dims_m=(5.5, 4.5, 2.6), rt60_s=0.5),
    "classroom": RoomSpec(dims_m=(9.0, 7.0, 3.2), rt60_s=0.8),
    "hall": RoomSpec(dims_m=(25.0, 16.0, 10.0), rt60_s=1.8),
}


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_built_in_rooms_come_from_their_yaml(name):
    mapping = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    assert mapping["name"] == name
    assert set(mapping) == {"name", "dims_m", "rt60_s", "materials", "air_absorption", "max_order"}
    assert room_from_config(mapping) == BUILT_IN[name]
    assert load_preset(name) == BUILT_IN[name]


def test_room_names_are_the_yaml_files():
    assert room_names() == sorted(BUILT_IN) == sorted(p.stem for p in CONF.glob("*.yaml"))
    assert len(room_names()) == 6
    with pytest.raises(ParameterError, match=r"room='attic' is unknown; allowed: anechoic, booth, classroom, hall"):
        load_preset("attic")


def test_anechoic_preset_has_no_reflections():
    assert load_preset("anechoic").max_order == 0
    np.testing.assert_allclose(wall_absorption(load_preset("anechoic")), 1.0)


@pytest.fixture
def user_rooms(tmp_path, monkeypatch):
    monkeypatch.setenv(ROOMS_DIR_ENV, str(tmp_path))
    load_preset.cache_clear()
    yield tmp_path
    load_preset.cache_clear()


def test_user_rooms_folder_adds_and_overrides_rooms(user_rooms):
    (user_rooms / "attic.yaml").write_text("name: attic\ndims_m: [6.0, 4.0, 2.2]\nrt60_s: 0.3\n")
    (user_rooms / "booth.yaml").write_text("dims_m: [3.0, 2.5, 2.2]\nrt60_s: 0.2\n")
    assert room_names() == sorted([*BUILT_IN, "attic"])
    assert load_preset("attic") == RoomSpec(dims_m=(6.0, 4.0, 2.2), rt60_s=0.3)
    assert load_preset("booth") == RoomSpec(dims_m=(3.0, 2.5, 2.2), rt60_s=0.2)
    (user_rooms / "loft.yaml").write_text("name: attic\ndims_m: [6.0, 4.0, 2.2]\n")
    with pytest.raises(
        ParameterError, match=r"room\.name='attic' in .*loft\.yaml differs from the file name; allowed: 'loft'"
    ):
        load_preset("loft")


def test_user_rooms_folder_must_exist(user_rooms, monkeypatch):
    monkeypatch.setenv(ROOMS_DIR_ENV, str(user_rooms / "missing"))
    with pytest.raises(ParameterError, match=r"AURALGEN_ROOMS_DIR='.*missing' is not a folder"):
        room_names()


def test_room_from_config_round_trip_and_errors():
    room = RoomSpec((5.0, 4.0, 2.8), materials={w: 0.3 for w in WALLS}, max_order=4)
    assert room_from_config(room.to_dict()) == room
    with pytest.raises(ParameterError, match=r"room\.color='red' is not a key"):
        room_from_config({"dims_m": [4, 3, 2.5], "color": "red"})
    with pytest.raises(ParameterError, match=r"dims_m=None is required"):
        room_from_config({"rt60_s": 0.4})
    # air absorption is a property of the room; the backend that renders it decides (compute_rir)
    assert room_from_config({"dims_m": [4, 3, 2.5], "air_absorption": True}).air_absorption


@pytest.mark.parametrize(("key", "value"), [("backend", "fast"), ("mode", "hybrid")])
def test_room_config_refuses_the_tasks_simulation_keys(key, value):
    with pytest.raises(
        ParameterError, match=rf"room\.{key}='{value}' is not a room key: the task's {key} decides; allowed: \['name'"
    ):
        room_from_config({"dims_m": [4, 3, 2.5], key: value})
