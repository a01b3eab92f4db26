"""Moving sources: trajectories in a room, and their rendering through any receiver.

A :class:`Trajectory` is a frozen, JSON-able path at constant speed in the room frame of
:mod:`auralgen.measure.geometry` (metres; azimuth + = the listener's left): ``linear``, ``points_m = (start, end)``;
``polyline``, ``points_m = (p0, p1, ..., pk)`` travelled at constant speed (a turn); ``arc``, ``points_m = (centre,)``,
a horizontal circle of ``radius_m`` at the centre's height, from room-frame angle ``start_deg`` (counter-clockwise
from +x) through ``sweep_deg`` (+ = counter-clockwise seen from above).

Before ``t = 0`` and after ``duration_s`` the source rests at its end points. Builders in listener terms:
:func:`linear`, :func:`radial` (:func:`approach`, :func:`recede`), :func:`pass_by`, :func:`arc_around`, :func:`turn`.
:meth:`Trajectory.check_in` keeps every point >= 0.1 m (:data:`~auralgen.rooms.spec.WALL_MARGIN_M`) from every wall
and the speed <= ``max_speed_m_s`` (default :data:`MAX_SPEED_M_S` = 3 m/s).

Rendering (:func:`render_moving`), per receiver channel point:

- **early part**, physically: the source and its images up to ``early_order`` (a moving point's image in a shoebox is
  the mirrored moving point). Per image and output sample the dry signal is read at the *retarded* time
  ``tau = t - r(tau) / c`` (fixed-point steps, error < 1e-6 sample) through pyroomacoustics' fractional-delay table
  and scaled by ``gain / r(tau)``: the Doppler shift ``c / (c -+ v_radial)`` and the 1/r level follow the geometry;
  the convective amplification ``(1 - M cos)^-2`` of a moving monopole is left out (< 2 % at 3 m/s). Timing, amplitude
  and high-pass as in :mod:`auralgen.rooms.images`: at rest, the static response convolved with the signal.
- **late part** (``late``, reverberant room): the static hybrid response (:func:`~auralgen.rooms.scene.spatial_rir`)
  of the path's *midpoint*, faded in by a raised-cosine over ``XFADE_S`` from the mixing time after its direct sound,
  convolved with the signal. The diffuse tail carries no direction, so freezing it at the midpoint is a small error;
  images of order <= ``early_order`` arriving after the mixing time count in both parts (a small energy excess),
  those of higher order arriving before it are missing.

Receivers: omni arrays read once per microphone; :class:`~auralgen.rooms.receivers.FOA` applies W, Y, Z, X gains of
each image's direction per *sample*; :class:`Binaural` picks, per image and block of ``BLOCK_S`` (8 ms), the nearest
HRIR direction at the block centre and crossfades blocks with sin^2 windows twice as long (summing to one), each
windowed segment convolved with its HRIR pair in full: a click-free change of direction, exact for a source at rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError, check_range
from auralgen.measure.geometry import az_el_to_unit, listener_to_room
from auralgen.rooms import _moving
from auralgen.rooms._moving import BLOCK_S, MIN_RECEIVER_DISTANCE_M
from auralgen.rooms.images import max_order_for
from auralgen.rooms.receivers import Receiver
from auralgen.rooms.spec import WALL_MARGIN_M, RoomSpec

__all__ = [
    "BLOCK_S",
    "KINDS",
    "MAX_SPEED_M_S",
    "MIN_RECEIVER_DISTANCE_M",
    "Point",
    "Trajectory",
    "approach",
    "arc_around",
    "linear",
    "pass_by",
    "radial",
    "recede",
    "render_moving",
    "turn",
]

KINDS = ("linear", "polyline", "arc")
#: default speed limit (m/s)
MAX_SPEED_M_S = 3.0
_ARC_CHECK_STEP_DEG = 0.25
Point = tuple[float, float, float]  #: a point of the room frame: (x, y, z) in metres


def _point(key: str, value) -> Point:
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        p = None
    if p is None or p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ParameterError(f"trajectory.{key}={value!r} is invalid; allowed: three finite coordinates (m)")
    return tuple(float(v) for v in p)


def _float(key: str, value, **bounds) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"trajectory.{key}={value!r} is not a number; allowed: a finite float") from None
    if not math.isfinite(v):
        raise ParameterError(f"trajectory.{key}={value!r} is not finite; allowed: a finite float")
    return float(check_range(f"trajectory.{key}", v, **bounds))


@dataclass(frozen=True)
class Trajectory:
    """A path at constant speed (see the module docstring for the kinds).

    Parameters
    ----------
    kind : {"linear", "polyline", "arc"}
    points_m : tuple of (x, y, z)
        linear: (start, end); polyline: >= 2 vertices; arc: (centre,). Room frame, metres.
    duration_s : float > 0
        Time to travel the whole path (s).
    radius_m, start_deg, sweep_deg : float
        Arc only: radius (> 0), start angle and signed swept angle (deg, + = counter-clockwise).

    Examples
    --------
    >>> tr = Trajectory("linear", ((1.0, 1.0, 1.5), (3.0, 1.0, 1.5)), 2.0)
    >>> tr.position_at([0.0, 1.0, 5.0]).tolist()
    [[1.0, 1.0, 1.5], [2.0, 1.0, 1.5], [3.0, 1.0, 1.5]]
    >>> tr.speed_m_s, Trajectory.from_dict(tr.to_dict()) == tr
    (1.0, True)
    """

    kind: str
    points_m: tuple[Point, ...]
    duration_s: float
    radius_m: float = 0.0
    start_deg: float = 0.0
    sweep_deg: float = 0.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError(f"trajectory.kind={self.kind!r} is unknown; allowed: {', '.join(KINDS)}")
        if isinstance(self.points_m, (str, bytes)) or not hasattr(self.points_m, "__len__"):
            raise ParameterError(f"trajectory.points_m={self.points_m!r} is invalid; allowed: a list of [x, y, z] (m)")
        pts = tuple(_point(f"points_m[{i}]", p) for i, p in enumerate(self.points_m))
        need = {"linear": (2, 2), "polyline": (2, 10_000), "arc": (1, 1)}[self.kind]
        if not need[0] <= len(pts) <= need[1]:
            allowed = f"{need[0]}" if need[0] == need[1] else f">= {need[0]}"
            raise ParameterError(
                f"trajectory.points_m has {len(pts)} points for kind {self.kind!r}; allowed: {allowed}"
            )
        object.__setattr__(self, "points_m", pts)
        object.__setattr__(
            self, "duration_s", _float("duration_s", self.duration_s, low=0.0, low_open=True, high=3600.0)
        )
        if self.kind == "arc":
            object.__setattr__(self, "radius_m", _float("radius_m", self.radius_m, low=0.0, low_open=True))
            object.__setattr__(self, "start_deg", _float("start_deg", self.start_deg))
            object.__setattr__(self, "sweep_deg", _float("sweep_deg", self.sweep_deg, low=-3600.0, high=3600.0))
        else:
            for key in ("radius_m", "start_deg", "sweep_deg"):
                if float(getattr(self, key)) != 0.0:
                    raise ParameterError(
                        f"trajectory.{key}={getattr(self, key)!r} is set for kind {self.kind!r}; allowed: 0 (arc only)"
                    )
                object.__setattr__(self, key, 0.0)

    # -- geometry --------------------------------------------------------------------
    @property
    def length_m(self) -> float:
        """Path length (m)."""
        if self.kind == "arc":
            return abs(math.radians(self.sweep_deg)) * self.radius_m
        pts = np.asarray(self.points_m)
        return float(np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1)))

    @property
    def speed_m_s(self) -> float:
        """Constant speed along the path (m/s)."""
        return self.length_m / self.duration_s

    def position_at(self, t_s) -> np.ndarray:
        """Positions ``[n, 3]`` (room frame, m) at times ``t_s`` (s; clamped to the path's ends).

        Parameters
        ----------
        t_s : float or array_like
            Time(s) in seconds from the start of the path (flattened).

        Returns
        -------
        ndarray, shape (n, 3), float64
            One room-frame position (m) per time.
        """
        t = np.clip(np.atleast_1d(np.asarray(t_s, dtype=float)).ravel(), 0.0, self.duration_s)
        u = t / self.duration_s  # fraction of the path travelled
        if self.kind == "arc":
            (cx, cy, cz), r = self.points_m[0], self.radius_m
            ang = np.radians(self.start_deg + u * self.sweep_deg)
            return np.stack([cx + r * np.cos(ang), cy + r * np.sin(ang), np.full_like(ang, cz)], axis=1)
        pts = np.asarray(self.points_m)
        seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        total = float(seg.sum())
        if total == 0.0:
            return np.repeat(pts[:1], len(t), axis=0)
        if len(pts) == 2:
            return _moving.on_segment(pts, u)
        cum = np.concatenate([[0.0], np.cumsum(seg)]) / total
        return np.stack([np.interp(u, cum, pts[:, d]) for d in range(3)], axis=1)

    def outline_m(self) -> np.ndarray:
        """Points ``[k, 3]`` whose bounding box is the path's (vertices, or a dense arc).

        Returns
        -------
        ndarray, shape (k, 3), float64
            Room-frame points (m).
        """
        if self.kind != "arc":
            return np.asarray(self.points_m)
        n = max(2, int(math.ceil(abs(self.sweep_deg) / _ARC_CHECK_STEP_DEG)) + 1)
        pts = self.position_at(np.linspace(0.0, self.duration_s, n))
        # add the arc's axis extremes that the sweep passes (exact bounding box)
        a0, a1 = sorted((self.start_deg, self.start_deg + self.sweep_deg))
        extra = [k * 90.0 for k in range(int(math.ceil(a0 / 90.0)), int(math.floor(a1 / 90.0)) + 1)]
        if extra:
            ang = np.radians(extra)
            c = np.asarray(self.points_m[0])
            ext = np.stack(
                [c[0] + self.radius_m * np.cos(ang), c[1] + self.radius_m * np.sin(ang), np.full_like(ang, c[2])],
                axis=1,
            )
            pts = np.concatenate([pts, ext])
        return pts

    def check_in(self, room: RoomSpec, *, max_speed_m_s: float = MAX_SPEED_M_S) -> Trajectory:
        """Return ``self`` or raise :class:`ParameterError` if any point of the path is < 0.1 m from a wall.

        Parameters
        ----------
        room, max_speed_m_s : RoomSpec, float
            The room (its ``dims_m``) and the speed limit (m/s).

        Returns
        -------
        Trajectory
            ``self``, when the path stays inside the room and no faster than ``max_speed_m_s``.
        """
        speed = self.speed_m_s
        if speed > max_speed_m_s:
            raise ParameterError(
                f"trajectory.speed_m_s={speed:.3f} (length {self.length_m:.3f} m in {self.duration_s:g} s) is too "
                f"fast; allowed: <= {max_speed_m_s:g} m/s"
            )
        pts = self.outline_m()
        dims = np.asarray(room.dims_m, dtype=float)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        bad = np.flatnonzero((lo < WALL_MARGIN_M - 1e-9) | (hi > dims - WALL_MARGIN_M + 1e-9))
        if bad.size:
            d = int(bad[0])
            allowed = ", ".join(
                f"{WALL_MARGIN_M} <= {ax} <= {v - WALL_MARGIN_M:g}" for ax, v in zip("xyz", dims, strict=True)
            )
            raise ParameterError(
                f"trajectory ({self.kind}) spans {'xyz'[d]} in [{lo[d]:.3f}, {hi[d]:.3f}] m, outside the room or "
                f"closer than {WALL_MARGIN_M} m to a wall; allowed: every point with {allowed}"
            )
        return self

    # -- serialisation -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-able dict; :meth:`from_dict` reads it back.

        Returns
        -------
        dict
            ``kind``, ``points_m``, ``duration_s`` (and the arc's ``radius_m``, ``start_deg``, ``sweep_deg``).
        """
        out = {"kind": self.kind, "points_m": [list(p) for p in self.points_m], "duration_s": self.duration_s}
        if self.kind == "arc":
            out.update(radius_m=self.radius_m, start_deg=self.start_deg, sweep_deg=self.sweep_deg)
        return out

    @classmethod
    def from_dict(cls, mapping) -> Trajectory:
        """The trajectory a :meth:`to_dict` mapping describes.

        Parameters
        ----------
        mapping : Mapping
            ``kind``, ``points_m`` and ``duration_s``, optionally ``radius_m``, ``start_deg``, ``sweep_deg``.

        Returns
        -------
        Trajectory
            The validated trajectory.
        """
        keys = ("kind", "points_m", "duration_s", "radius_m", "start_deg", "sweep_deg")
        if not hasattr(mapping, "keys"):
            raise ParameterError(f"trajectory={mapping!r} is invalid; allowed: a mapping with keys {list(keys)}")
        unknown = sorted(set(mapping) - set(keys))
        if unknown:
            raise ParameterError(f"trajectory.{unknown[0]}={mapping[unknown[0]]!r} is not a key; allowed: {list(keys)}")
        for k in keys[:3]:
            if k not in mapping:
                raise ParameterError(f"trajectory.{k} is missing; allowed: a mapping with keys {list(keys)}")
        return cls(**{k: mapping[k] for k in keys if k in mapping})


# ------------------------------------------------------------------------------- builders


def _duration(length_m: float, duration_s, speed_m_s) -> float:
    if (duration_s is None) == (speed_m_s is None):
        raise ParameterError(f"duration_s={duration_s!r}, speed_m_s={speed_m_s!r}; allowed: exactly one of them")
    if duration_s is not None:
        return float(duration_s)
    return length_m / _float("speed_m_s", speed_m_s, low=0.0, low_open=True)


def linear(start_m, end_m, *, duration_s: float | None = None, speed_m_s: float | None = None) -> Trajectory:
    """Straight line from ``start_m`` to ``end_m``, given a duration or a speed.

    Parameters
    ----------
    start_m, end_m : sequence of 3 float
        End points in the room frame (m).
    duration_s, speed_m_s : float > 0, exactly one of them
        Travel time (s) or constant speed (m/s).

    Returns
    -------
    Trajectory
        The ``linear`` path, validated.
    """
    a, b = _point("start_m", start_m), _point("end_m", end_m)
    return Trajectory("linear", (a, b), _duration(math.dist(a, b), duration_s, speed_m_s))


def _local(listener_m, yaw_deg, az_deg, el_deg, dist_m) -> Point:
    p = listener_to_room(float(dist_m) * az_el_to_unit(az_deg, el_deg), listener_m, yaw_deg)
    return tuple(float(v) for v in p)


#: a radial path's direction -> (what it requires, whether ``end`` vs ``start`` meets it)
_RADIAL = {"approach": ("end < start", lambda e, s: e < s), "recede": ("end > start", lambda e, s: e > s)}


def radial(
    listener_m,
    *,
    direction: str,
    azimuth_deg: float,
    start_distance_m: float,
    end_distance_m: float,
    yaw_deg: float = 0.0,
    elevation_deg: float = 0.0,
    duration_s: float | None = None,
    speed_m_s: float | None = None,
) -> Trajectory:
    """Radial path along ``(azimuth, elevation)`` seen by the listener, ``start_distance_m`` to ``end_distance_m``.

    Parameters
    ----------
    listener_m, yaw_deg : sequence of 3 float, float
        Listener position in the room frame (m) and its yaw in the room (deg).
    direction : {"approach", "recede"}
        Toward the listener (``end < start``) or away from it (``end > start``).
    azimuth_deg, elevation_deg : float
        Direction of the path from the listener (deg, listener frame).
    start_distance_m, end_distance_m : float > 0
        Distances from the listener at the start and the end (m).
    duration_s, speed_m_s : float
        As in :func:`linear`.

    Returns
    -------
    Trajectory
        A ``linear`` path along the line of sight, validated.
    """
    if direction not in _RADIAL:
        raise ParameterError(f"direction={direction!r} is invalid; allowed: one of {sorted(_RADIAL)}")
    rule, ok = _RADIAL[direction]
    s = _float("start_distance_m", start_distance_m, low=0.0, low_open=True)
    e = _float("end_distance_m", end_distance_m, low=0.0, low_open=True)
    if not ok(e, s):
        raise ParameterError(f"end_distance_m={e!r} for start_distance_m={s!r}; allowed: {rule} ({direction})")
    a = _local(listener_m, yaw_deg, azimuth_deg, elevation_deg, s)
    b = _local(listener_m, yaw_deg, azimuth_deg, elevation_deg, e)
    return Trajectory("linear", (a, b), _duration(abs(s - e), duration_s, speed_m_s))


def approach(listener_m, **path: float | None) -> Trajectory:
    """Radial path toward the listener (``end < start``): :func:`radial` with ``direction="approach"``.

    Parameters
    ----------
    listener_m, **path
        As :func:`radial` (whose ``direction`` this sets).

    Returns
    -------
    Trajectory
        The path toward the listener.
    """
    return radial(listener_m, direction="approach", **path)


def recede(listener_m, **path: float | None) -> Trajectory:
    """Radial path away from the listener (``end > start``): :func:`radial` with ``direction="recede"``.

    Parameters
    ----------
    listener_m, **path
        As :func:`approach`.

    Returns
    -------
    Trajectory
        The path away from the listener.
    """
    return radial(listener_m, direction="recede", **path)


def pass_by(
    listener_m,
    *,
    closest_azimuth_deg: float,
    closest_distance_m: float,
    length_m: float,
    ccw: bool,
    offset_m: float = 0.0,
    yaw_deg: float = 0.0,
    duration_s: float | None = None,
    speed_m_s: float | None = None,
) -> Trajectory:
    """Straight pass, horizontal, perpendicular to the line of sight at ``closest_azimuth_deg``.

    The point of closest approach is ``closest_distance_m`` away; the path is ``length_m`` long, centred on it
    shifted by ``offset_m`` along the direction of travel. ``ccw``: the source moves counter-clockwise seen from
    above, i.e. its azimuth increases (a pass in front goes right to left, a pass behind left to right).

    Parameters
    ----------
    listener_m, yaw_deg : sequence of 3 float, float
        As in :func:`radial`.
    closest_azimuth_deg, closest_distance_m : float
        Azimuth (deg, listener frame) and distance (m, > 0) of the point of closest approach.
    length_m, offset_m : float
        Path length (m, > 0) and shift of its centre along the direction of travel (m).
    ccw : bool
        Direction of travel (counter-clockwise seen from above).
    duration_s, speed_m_s : float
        As in :func:`linear`.

    Returns
    -------
    Trajectory
        A horizontal ``linear`` path, validated.
    """
    d = _float("closest_distance_m", closest_distance_m, low=0.0, low_open=True)
    half = 0.5 * _float("length_m", length_m, low=0.0, low_open=True)
    foot = np.asarray(_local(listener_m, yaw_deg, closest_azimuth_deg, 0.0, d))
    sign = 1.0 if ccw else -1.0
    along = sign * az_el_to_unit(float(closest_azimuth_deg) + 90.0 + float(yaw_deg), 0.0)  # room frame, ccw tangent
    a = foot + (float(offset_m) - half) * along
    b = foot + (float(offset_m) + half) * along
    return Trajectory("linear", (tuple(a.tolist()), tuple(b.tolist())), _duration(2 * half, duration_s, speed_m_s))


def arc_around(
    listener_m,
    *,
    radius_m: float,
    start_azimuth_deg: float,
    sweep_deg: float,
    yaw_deg: float = 0.0,
    height_m: float | None = None,
    duration_s: float | None = None,
    speed_m_s: float | None = None,
) -> Trajectory:
    """Circle (part) around the listener: ``radius_m``, from ``start_azimuth_deg`` through ``sweep_deg``.

    Parameters
    ----------
    listener_m, yaw_deg : sequence of 3 float, float
        As in :func:`radial`.
    radius_m, start_azimuth_deg : float
        Radius (m, > 0) and start direction (deg, listener frame).
    sweep_deg : float in [-3600, 3600]
        Angle travelled (deg; + = counter-clockwise seen from above, toward the listener's left from the front).
    height_m : float, optional
        Height of the circle (m); default the listener's.
    duration_s, speed_m_s : float
        As in :func:`linear`.

    Returns
    -------
    Trajectory
        An ``arc`` around the listener, validated.
    """
    lis = np.asarray(_point("listener_m", listener_m))
    centre = (float(lis[0]), float(lis[1]), float(lis[2] if height_m is None else height_m))
    r = _float("radius_m", radius_m, low=0.0, low_open=True)
    sweep = _float("sweep_deg", sweep_deg, low=-3600.0, high=3600.0)
    length = abs(math.radians(sweep)) * r
    return Trajectory(
        "arc",
        (centre,),
        _duration(length, duration_s, speed_m_s),
        radius_m=r,
        start_deg=float(start_azimuth_deg) + float(yaw_deg),
        sweep_deg=sweep,
    )


def turn(start_m, corner_m, end_m, *, duration_s: float | None = None, speed_m_s: float | None = None) -> Trajectory:
    """Two straight legs ``start -> corner -> end`` at constant speed.

    Parameters
    ----------
    start_m, corner_m, end_m : sequence of 3 float
        Points in the room frame (m).
    duration_s, speed_m_s : float
        As in :func:`linear`.

    Returns
    -------
    Trajectory
        A ``polyline`` of two legs, validated.
    """
    pts = (_point("start_m", start_m), _point("corner_m", corner_m), _point("end_m", end_m))
    length = math.dist(pts[0], pts[1]) + math.dist(pts[1], pts[2])
    return Trajectory("polyline", pts, _duration(length, duration_s, speed_m_s))


# ------------------------------------------------------------------------------ rendering


def render_moving(
    signal,
    trajectory: Trajectory,
    room: RoomSpec,
    receiver: Receiver,
    *,
    sample_rate: int,
    early_order: int = 1,
    late: bool = True,
    rng: np.random.Generator | None = None,
    max_speed_m_s: float = MAX_SPEED_M_S,
    n_out: int | None = None,
) -> np.ndarray:
    """A moving source heard through ``receiver``: float64 ``[receiver.num_channels, n]``.

    Parameters
    ----------
    signal : np.ndarray [n_sig]
        Dry source signal; sample ``k`` is emitted at ``trajectory.position_at(k / sample_rate)``.
    trajectory, max_speed_m_s : Trajectory, float
        Checked by :meth:`Trajectory.check_in` (<= ``max_speed_m_s`` m/s); >= :data:`MIN_RECEIVER_DISTANCE_M` from mics.
    room, receiver : RoomSpec, Receiver
        The room, and any receiver (mono, stereo, tetra, circular, FOA, binaural).
    sample_rate : int
        Sample rate of ``signal`` and the output in Hz.
    early_order : int in [0, 3]
        Image order rendered with motion (0 = direct path only); capped at the room's order.
    late, rng : bool, np.random.Generator
        Add the static hybrid tail of the path's midpoint (see module doc), its noise drawn from ``rng``.
    n_out : int > 0 or None
        Return at most the first ``n_out`` samples (the later ones are not computed), e.g. what a clip keeps.

    Returns
    -------
    np.ndarray, shape (receiver.num_channels, n), float64
        ``n = n_sig + ceil(fs * r_max / c) + 2 * fdl2 + 1`` (early part: every image's last sample) or the
        tail's length ``n_sig + len(rir) - 1`` if longer, at most ``n_out``; sample ``n`` is heard at ``(n - 40) / fs``.

    Examples
    --------
    >>> from auralgen.rooms.spec import load_preset
    >>> from auralgen.rooms.receivers import Mono
    >>> room = load_preset("anechoic")
    >>> tr = linear((1.0, 4.0, 1.5), (3.0, 4.0, 1.5), speed_m_s=2.0)
    >>> x = render_moving(np.ones(16000), tr, room, Mono(position_m=(2.0, 2.0, 1.5)), sample_rate=16000)
    >>> x.shape[0]
    1
    """
    sig, fs, early_order = _checked_args(signal, sample_rate, early_order, trajectory)
    if n_out is not None and (isinstance(n_out, bool) or int(n_out) != n_out or n_out < 1):
        raise ParameterError(f"n_out={n_out!r}; allowed: None or an integer >= 1 (samples)")
    trajectory.check_in(room, max_speed_m_s=max_speed_m_s)
    path = _moving.sampled_path(trajectory, sig.size + 1, fs)
    points = _moving.receiving_points(receiver, room, path)
    early, n_early = _moving.early_moving(sig, path, trajectory, room, receiver, points, early_order, fs)
    if not late or max_order_for(room, fs) == 0:
        return early[:, :n_out]
    return _moving.add_late(early, n_early, sig, trajectory, room, receiver, fs, rng, n_out=n_out)


def _checked_args(signal, sample_rate, early_order, trajectory) -> tuple[np.ndarray, int, int]:
    """``(signal as contiguous float64 [n], sample rate, early order)`` of :func:`render_moving`, validated."""
    sig = np.ascontiguousarray(np.asarray(signal, dtype=float).ravel())
    if sig.size == 0 or not np.all(np.isfinite(sig)):
        raise ParameterError(
            f"signal has {sig.size} samples / non-finite values; allowed: a non-empty finite 1-D array"
        )
    if isinstance(sample_rate, bool) or int(sample_rate) != sample_rate:
        raise ParameterError(f"sample_rate={sample_rate!r}; allowed: an integer in [1000, 384000]")
    fs = int(check_range("sample_rate", int(sample_rate), low=1000, high=384000))
    if isinstance(early_order, bool) or int(early_order) != early_order:
        raise ParameterError(f"early_order={early_order!r}; allowed: an integer in [0, 3]")
    early_order = int(check_range("early_order", int(early_order), low=0, high=3))
    if not isinstance(trajectory, Trajectory):
        raise ParameterError(
            f"trajectory={trajectory!r} is not a Trajectory; allowed: auralgen.rooms.trajectory.Trajectory"
        )
    return sig, fs, early_order
