"""Room specifications: a shoebox, its walls' absorption, and what may be placed in it.

A :class:`RoomSpec` is a frozen, JSON-able description of a rectangular room in the
room frame of :mod:`auralgen.measure.geometry` (metres, x/y on the floor, z up, the room
spanning ``[0, Lx] x [0, Ly] x [0, Lz]``). The walls follow pyroomacoustics' names and
order: ``west``/``east`` at x = 0 / Lx, ``south``/``north`` at y = 0 / Ly,
``floor``/``ceiling`` at z = 0 / Lz (:data:`WALLS`).

Absorption comes from exactly one of

- ``rt60_s``: a target reverberation time, turned into one uniform energy absorption
  coefficient by inverse Sabine (as ``pyroomacoustics.inverse_sabine``);
- ``materials``: energy absorption per wall (a dict with the six wall names) or one
  float for every wall;
- neither: an anechoic room (every wall absorbs everything, ``max_order`` defaults to 0).

Examples
--------
>>> room = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.6).validate()
>>> round(float(wall_absorption(room)[0]), 4)
0.1918
>>> check_position((3.0, 2.5, 1.5), room, "source_m")
array([3. , 2.5, 1.5])
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.errors import ParameterError, check_range
from auralgen.core.registry import Registry
from auralgen.core.resources import conf_path

#: Wall names in pyroomacoustics' shoebox order: (low, high) pairs along x, y, z.
WALLS = ("west", "east", "south", "north", "floor", "ceiling")
#: Closest a source or receiver may be to a wall (m).
WALL_MARGIN_M = 0.1
#: Sabine's constant 24 ln(10) (3D), as in pyroomacoustics.
_SABINE = 24.0 * math.log(10.0)
#: Largest image-source order accepted in a spec (memory grows as order**3).
MAX_ORDER_LIMIT = 250
MAX_RT60_S = 20.0  # longest RT60 a room may ask for (the image-source order and RIR length grow with it)

#: backend name -> :class:`auralgen.rooms.backends.Backend`, registered by (and lazily loading)
#: :mod:`auralgen.rooms.backends`: the one list of allowed ``backend`` values
BACKENDS: Registry = Registry("backend", modules={"fast": "auralgen.rooms.backends", "pra": "auralgen.rooms.backends"})


def all_modes() -> tuple[str, ...]:
    """Every mode some backend renders, in first-seen order (``("exact", "hybrid")``).

    Returns
    -------
    tuple of str
        The mode names, each once.
    """
    return tuple(dict.fromkeys(m for b in BACKENDS.values() for m in b.modes))


@dataclass(frozen=True)
class RoomSpec:
    """A shoebox room.

    Parameters
    ----------
    dims_m : tuple of 3 floats > 0
        Room size ``(Lx, Ly, Lz)`` in metres.
    rt60_s : float > 0 or None
        Target reverberation time (s); absorption by inverse Sabine.
    materials : dict or float or None
        Energy absorption in [0, 1] per wall (keys :data:`WALLS`) or one value for all.
    air_absorption : bool
        Model air absorption (the ``pra`` backend only; ``fast`` refuses such a room).
    c_m_s : float
        Speed of sound (m/s).
    max_order : int >= 0 or None
        Image-source order; None = enough to cover the reverberation time
        (:func:`auralgen.rooms.images.max_order_for`).
    """

    dims_m: tuple[float, float, float]
    rt60_s: float | None = None
    materials: dict | float | None = None
    air_absorption: bool = False
    c_m_s: float = SPEED_OF_SOUND_M_S
    max_order: int | None = None

    def validate(self) -> RoomSpec:
        """Return ``self`` or raise :class:`ParameterError` naming key, value and allowed range.

        Returns
        -------
        RoomSpec
            ``self``, unchanged, when every field is valid.

        Raises
        ------
        ParameterError
            If a field is out of range, both ``rt60_s`` and ``materials`` are given, the RT60 is
            unreachable in this room, or the materials give an RT60 over :data:`MAX_RT60_S`.
        """
        dims = np.asarray(self.dims_m, dtype=float) if _is_seq(self.dims_m) else None
        if dims is None or dims.shape != (3,) or not np.all(np.isfinite(dims)) or np.any(dims <= 0):
            raise ParameterError(f"dims_m={self.dims_m!r} is invalid; allowed: three finite lengths > 0 (m)")
        if np.any(dims <= 2 * WALL_MARGIN_M):
            raise ParameterError(f"dims_m={self.dims_m!r} is too small; allowed: every side > {2 * WALL_MARGIN_M} m")
        check_range("c_m_s", self.c_m_s, low=200.0, high=500.0)
        if not isinstance(self.air_absorption, bool | np.bool_):
            raise ParameterError(f"air_absorption={self.air_absorption!r} is invalid; allowed: true or false")
        if self.max_order is not None:
            if isinstance(self.max_order, bool) or not isinstance(self.max_order, int | np.integer):
                raise ParameterError(f"max_order={self.max_order!r} is invalid; allowed: an integer or null")
            check_range("max_order", int(self.max_order), low=0, high=MAX_ORDER_LIMIT)
        if self.rt60_s is not None and self.materials is not None:
            raise ParameterError(
                f"rt60_s={self.rt60_s!r} and materials={self.materials!r} both given; allowed: one of them (or neither)"
            )
        if self.rt60_s is not None:
            check_range("rt60_s", self.rt60_s, low=0.0, low_open=True, high=MAX_RT60_S)
            rt_min = min_rt60_s(self)
            if self.rt60_s < rt_min:
                raise ParameterError(
                    f"rt60_s={self.rt60_s!r} is unreachable in a room of dims_m={tuple(dims.tolist())} "
                    f"(inverse Sabine absorption > 1); allowed: >= {rt_min:.4f} s"
                )
        if self.materials is not None:
            _materials_array(self.materials)
        if self.max_order is None and self.rt60_s is None and self.materials is not None:
            if reverberation_time_s(self) > MAX_RT60_S:
                raise ParameterError(
                    f"materials={self.materials!r} give RT60 > {MAX_RT60_S:g} s; "
                    "allowed: absorption large enough or set max_order"
                )
        return self

    @property
    def volume_m3(self) -> float:
        return float(np.prod(self.dims_m))

    @property
    def surface_m2(self) -> float:
        lx, ly, lz = (float(v) for v in self.dims_m)
        return 2.0 * (lx * ly + lx * lz + ly * lz)

    def to_dict(self) -> dict:
        """A JSON-able dict (the recipe); :func:`room_from_config` reads it back.

        Returns
        -------
        dict
            The six fields by name, as plain floats, bools, lists and dicts.
        """
        mats = self.materials
        if isinstance(mats, Mapping):
            mats = {k: float(v) for k, v in mats.items()}
        elif mats is not None:
            mats = float(mats)
        return {
            "dims_m": [float(v) for v in self.dims_m],
            "rt60_s": None if self.rt60_s is None else float(self.rt60_s),
            "materials": mats,
            "air_absorption": bool(self.air_absorption),
            "c_m_s": float(self.c_m_s),
            "max_order": None if self.max_order is None else int(self.max_order),
        }


def _is_seq(x) -> bool:
    return isinstance(x, list | tuple | np.ndarray)


def _materials_array(materials) -> np.ndarray:
    if isinstance(materials, Mapping):
        unknown = sorted(set(materials) - set(WALLS))
        missing = [w for w in WALLS if w not in materials]
        if unknown or missing:
            raise ParameterError(
                f"materials={dict(materials)!r} has unknown walls {unknown} / missing walls {missing}; "
                f"allowed: exactly the keys {list(WALLS)}"
            )
        values = [materials[w] for w in WALLS]
        keys = [f"materials.{w}" for w in WALLS]
    elif isinstance(materials, int | float | np.floating | np.integer) and not isinstance(materials, bool):
        values, keys = [materials] * 6, ["materials"] * 6
    else:
        raise ParameterError(
            f"materials={materials!r} is invalid; allowed: a float in [0, 1] or a dict of {list(WALLS)}"
        )
    for key, v in zip(keys, values, strict=True):
        if isinstance(v, bool) or not isinstance(v, int | float | np.floating | np.integer) or not math.isfinite(v):
            raise ParameterError(f"{key}={v!r} is invalid; allowed: an energy absorption in [0, 1]")
        check_range(key, float(v), low=0.0, high=1.0)
    return np.asarray(values, dtype=float)


def min_rt60_s(room: RoomSpec) -> float:
    """Shortest RT60 inverse Sabine can give this room (absorption 1 on every wall).

    Parameters
    ----------
    room : RoomSpec
        The room; its ``volume_m3``, ``surface_m2`` and ``c_m_s`` are read.

    Returns
    -------
    float
        RT60 (s).
    """
    return _SABINE * room.volume_m3 / (room.c_m_s * room.surface_m2)


def inverse_sabine_absorption(room: RoomSpec, rt60_s: float) -> float:
    """Uniform energy absorption giving ``rt60_s`` by Sabine's formula (as ``pra.inverse_sabine``).

    Parameters
    ----------
    room : RoomSpec
        The room; its ``volume_m3``, ``surface_m2`` and ``c_m_s`` are read.
    rt60_s : float > 0
        Target reverberation time (s).

    Returns
    -------
    float
        Energy absorption coefficient (> 1 when the room cannot be that dry).
    """
    return _SABINE * room.volume_m3 / (room.c_m_s * room.surface_m2 * rt60_s)


def wall_areas_m2(room: RoomSpec) -> np.ndarray:
    """Areas of the walls in :data:`WALLS` order.

    Parameters
    ----------
    room : RoomSpec
        The room; its ``dims_m`` are read.

    Returns
    -------
    np.ndarray, shape (6,)
        Areas (m^2).
    """
    lx, ly, lz = (float(v) for v in room.dims_m)
    return np.array([ly * lz, ly * lz, lx * lz, lx * lz, lx * ly, lx * ly])


def wall_absorption(room: RoomSpec) -> np.ndarray:
    """Energy absorption coefficients in :data:`WALLS` order (anechoic room: all 1).

    Parameters
    ----------
    room : RoomSpec
        The room; its ``materials``, else its ``rt60_s``, set the coefficients.

    Returns
    -------
    np.ndarray, shape (6,)
        Coefficients in [0, 1].
    """
    if room.materials is not None:
        return _materials_array(room.materials)
    if room.rt60_s is not None:
        return np.full(6, inverse_sabine_absorption(room, float(room.rt60_s)))
    return np.ones(6)


def reverberation_time_s(room: RoomSpec, *, formula: str = "sabine") -> float:
    """RT60 (s): the target ``rt60_s`` if given (``formula='sabine'``), else from the walls.

    ``formula='eyring'`` always computes from the absorption (Millington-Sette form,
    ``-sum(S_w ln(1 - a_w))``), which is the decay of a shoebox image-source response.

    Parameters
    ----------
    room : RoomSpec
        The room; its ``rt60_s``, walls and ``c_m_s`` are read.
    formula : {"sabine", "eyring"}
        Sabine (the target ``rt60_s`` when set) or Eyring (always from the walls).

    Returns
    -------
    float
        RT60 (s); 0.0 for an anechoic room.
    """
    alpha = wall_absorption(room)
    areas = wall_areas_m2(room)
    if formula == "sabine":
        if room.rt60_s is not None:
            return float(room.rt60_s)
        total = float(np.sum(areas * alpha))
    elif formula == "eyring":
        total = float(np.sum(-areas * np.log(np.clip(1.0 - alpha, 1e-300, None))))
    else:
        raise ParameterError(f"formula={formula!r} is invalid; allowed: 'sabine', 'eyring'")
    if total <= 0:
        return math.inf
    return 0.0 if np.all(alpha >= 1.0) else _SABINE * room.volume_m3 / (room.c_m_s * total)


def check_position(pos_m, room: RoomSpec, key: str) -> np.ndarray:
    """``pos_m`` checked against the room: inside, and at least 0.1 m from every wall.

    Parameters
    ----------
    pos_m : sequence of 3 float
        Position in the room frame (m).
    room : RoomSpec
        The room; its ``dims_m`` are read.
    key : str
        The config key named in the error.

    Returns
    -------
    np.ndarray, shape (3,)
        The position (m), float64.

    Raises
    ------
    ParameterError
        If the position is invalid, outside the room or too close to a wall.
    """
    try:
        p = np.asarray(pos_m, dtype=float)
    except (TypeError, ValueError):
        p = None
    if p is None or p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ParameterError(f"{key}={pos_m!r} is invalid; allowed: three finite coordinates (m)")
    dims = np.asarray(room.dims_m, dtype=float)
    if np.any(p < WALL_MARGIN_M) or np.any(p > dims - WALL_MARGIN_M):
        allowed = ", ".join(
            f"{WALL_MARGIN_M} <= {ax} <= {d - WALL_MARGIN_M:g}" for ax, d in zip("xyz", dims, strict=True)
        )
        raise ParameterError(
            f"{key}={p.tolist()!r} is outside the room or closer than {WALL_MARGIN_M} m to a wall; allowed: {allowed}"
        )
    return p


def fits_distance(room: RoomSpec, listener, distance_m: float, *, direction=None) -> bool:
    """Whether a point at ``distance_m`` from ``listener`` can lie inside the room (0.1 m margin).

    With ``direction`` (a room-frame vector ``[3]``), test that one point
    ``listener + distance_m * direction / |direction|``; without, whether any direction fits
    (the farthest corner of the usable box is at least ``distance_m`` away).

    Parameters
    ----------
    room : RoomSpec
        The room; its ``dims_m`` are read.
    listener : sequence of 3 float
        Listener position in the room frame (m).
    distance_m : float
        Distance from the listener (m).
    direction : sequence of 3 float, optional
        Room-frame direction of the point.

    Returns
    -------
    bool
        True when the point (or, without ``direction``, some point) fits.
    """
    lo = np.full(3, WALL_MARGIN_M)
    hi = np.asarray(room.dims_m, dtype=float) - WALL_MARGIN_M
    lis = np.asarray(listener, dtype=float)
    if direction is not None:
        u = np.asarray(direction, dtype=float)
        p = lis + float(distance_m) * u / np.linalg.norm(u)
        return bool(np.all(p >= lo) and np.all(p <= hi))
    far = np.maximum(np.abs(lis - lo), np.abs(hi - lis))
    return bool(np.linalg.norm(far) >= float(distance_m))


# ----------------------------------------------------------------------------- presets

#: every key a room YAML may hold (the simulation ``backend`` and ``mode`` are the task's)
_CONFIG_KEYS = ("name", "dims_m", "rt60_s", "materials", "air_absorption", "c_m_s", "max_order")
_TASK_KEYS = ("backend", "mode")
_CONF_DIR = conf_path("room")  # package data auralgen.conf (the repository's conf/room)
#: environment variable naming a folder of extra ``<name>.yaml`` rooms (they override built-ins)
ROOMS_DIR_ENV = "AURALGEN_ROOMS_DIR"


def room_from_config(mapping: Mapping) -> RoomSpec:
    """Build and validate a :class:`RoomSpec` from a config mapping (e.g. ``conf/room/<name>.yaml``).

    Keys: ``name, dims_m, rt60_s, materials, air_absorption, c_m_s, max_order``; ``dims_m`` is
    required. ``backend`` and ``mode`` are refused: the task's own ``backend``/``mode`` decide.

    Parameters
    ----------
    mapping : Mapping
        The room's config.

    Returns
    -------
    RoomSpec
        The validated room.

    Raises
    ------
    ParameterError
        If ``mapping`` is not a mapping, names an unknown key or a task key, lacks ``dims_m``, or a value
        is out of range.

    Examples
    --------
    >>> room_from_config({"dims_m": [4, 3, 2.5], "rt60_s": 0.3}).rt60_s
    0.3
    """
    if not isinstance(mapping, Mapping):
        raise ParameterError(f"room={mapping!r} is invalid; allowed: a mapping with keys {list(_CONFIG_KEYS)}")
    for key in _TASK_KEYS:
        if key in mapping:
            raise ParameterError(
                f"room.{key}={mapping[key]!r} is not a room key: the task's {key} decides; "
                f"allowed: {list(_CONFIG_KEYS)}"
            )
    unknown = sorted(set(mapping) - set(_CONFIG_KEYS))
    if unknown:
        raise ParameterError(f"room.{unknown[0]}={mapping[unknown[0]]!r} is not a key; allowed: {list(_CONFIG_KEYS)}")
    if "dims_m" not in mapping:
        raise ParameterError("room.dims_m=None is required; allowed: three lengths > 0 (m)")
    dims = mapping["dims_m"]
    if not _is_seq(dims) and not hasattr(dims, "__len__"):
        raise ParameterError(f"dims_m={dims!r} is invalid; allowed: three finite lengths > 0 (m)")
    mats = mapping.get("materials")
    if isinstance(mats, Mapping):
        mats = dict(mats)
    max_order = mapping.get("max_order")
    room = RoomSpec(
        dims_m=tuple(float(v) for v in dims) if len(dims) == 3 else tuple(dims),
        rt60_s=None if mapping.get("rt60_s") is None else mapping["rt60_s"],
        materials=mats,
        air_absorption=mapping.get("air_absorption", False),
        c_m_s=mapping.get("c_m_s", SPEED_OF_SOUND_M_S),
        max_order=max_order,
    )
    return room.validate()


def _room_files() -> dict[str, Path]:
    """``{name: path}`` of every room YAML: the package's, then :data:`ROOMS_DIR_ENV`'s (which win)."""
    dirs = [_CONF_DIR]
    user = os.environ.get(ROOMS_DIR_ENV)
    if user:
        if not Path(user).is_dir():
            raise ParameterError(f"{ROOMS_DIR_ENV}={user!r} is not a folder; allowed: a folder of <name>.yaml rooms")
        dirs.append(Path(user))
    return {p.stem: p for d in dirs for p in sorted(d.glob("*.yaml"))}


def room_names() -> list[str]:
    """Every room a task can name: ``conf/room/<name>.yaml`` and the user folder's (:data:`ROOMS_DIR_ENV`).

    Returns
    -------
    list of str
        The room names, sorted.
    """
    return sorted(_room_files())


@functools.lru_cache(maxsize=64)
def load_preset(name: str) -> RoomSpec:
    """The room ``name``, read from its YAML file (the one source of rooms; cached per name).

    Parameters
    ----------
    name : str
        One of :func:`room_names`.

    Returns
    -------
    RoomSpec
        The validated room.

    Examples
    --------
    >>> load_preset("booth").rt60_s
    0.12
    """
    files = _room_files()
    if name not in files:
        raise ParameterError(f"room={name!r} is unknown; allowed: {', '.join(sorted(files))}")
    import yaml  # PyYAML ships with hydra-core

    mapping = yaml.safe_load(files[name].read_text(encoding="utf-8"))
    if isinstance(mapping, Mapping) and mapping.get("name", name) != name:
        raise ParameterError(
            f"room.name={mapping['name']!r} in {files[name]} differs from the file name; allowed: {name!r} (or no name)"
        )
    return room_from_config(mapping)
