"""The one spatial convention of auralgen.

Coordinates are metres in a right-handed room frame: x, y on the floor, z up.
A listener (or array) has a position and an orientation ``(yaw_deg, pitch_deg)``:
yaw 0 looks along +x, positive yaw turns counter-clockwise seen from above.

Directions relative to the listener:

- azimuth (deg): 0 = straight ahead, positive = counter-clockwise seen from above,
  i.e. to the listener's **left**; range [-180, 180).
- elevation (deg): 0 = ear level, +90 = straight above, -90 = below.

So a source at azimuth +90 deg is at the left ear, -90 deg at the right ear.
"""

from __future__ import annotations

import numpy as np


def wrap_azimuth_deg(az_deg):
    """Wrap azimuth(s) to [-180, 180).

    Parameters
    ----------
    az_deg : float or array_like
        Azimuth(s) in degrees.

    Returns
    -------
    ndarray, float64
        The azimuth(s) in degrees, in [-180, 180), same shape as ``az_deg`` (a numpy float for a scalar).
    """
    return (np.asarray(az_deg, dtype=float) + 180.0) % 360.0 - 180.0


def az_el_to_unit(az_deg, el_deg) -> np.ndarray:
    """Unit vector(s) ``[..., 3]`` in the listener frame (x ahead, y left, z up).

    Parameters
    ----------
    az_deg : float or array_like
        Azimuth(s) in degrees (counter-clockwise from the front, i.e. positive to the left).
    el_deg : float or array_like
        Elevation(s) in degrees (positive up); broadcast against ``az_deg``.

    Returns
    -------
    ndarray, shape (..., 3), float64
        Unit vector(s) ``(x, y, z)`` in the listener frame.
    """
    az, el = np.radians(az_deg), np.radians(el_deg)
    return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=-1)


def unit_to_az_el(vec) -> tuple[np.ndarray, np.ndarray]:
    """Azimuth and elevation (deg) of vector(s) ``[..., 3]`` in the listener frame.

    Parameters
    ----------
    vec : array_like, shape (..., 3)
        Vector(s) ``(x, y, z)`` in the listener frame (need not be unit length).

    Returns
    -------
    az_deg : ndarray, shape (...), float64
        Azimuth(s) in degrees, in [-180, 180), counter-clockwise from the front.
    el_deg : ndarray, shape (...), float64
        Elevation(s) in degrees, in [-90, 90], positive up.
    """
    v = np.asarray(vec, dtype=float)
    az = np.degrees(np.arctan2(v[..., 1], v[..., 0]))
    el = np.degrees(np.arctan2(v[..., 2], np.hypot(v[..., 0], v[..., 1])))
    return wrap_azimuth_deg(az), el


def rotation_matrix(yaw_deg: float, pitch_deg: float = 0.0) -> np.ndarray:
    """Rotation taking listener-frame vectors to room-frame vectors (yaw about z, then pitch).

    Parameters
    ----------
    yaw_deg : float
        Yaw in degrees, counter-clockwise seen from above (0 looks along +x).
    pitch_deg : float, optional
        Pitch in degrees, positive tilts the look direction up.

    Returns
    -------
    ndarray, shape (3, 3), float64
        The rotation; ``room = R @ listener`` for column vectors.
    """
    y, p = np.radians(yaw_deg), np.radians(pitch_deg)
    rz = np.array([[np.cos(y), -np.sin(y), 0.0], [np.sin(y), np.cos(y), 0.0], [0.0, 0.0, 1.0]])
    # positive pitch tilts the look direction upward
    ry = np.array([[np.cos(p), 0.0, -np.sin(p)], [0.0, 1.0, 0.0], [np.sin(p), 0.0, np.cos(p)]])
    return rz @ ry


def room_to_listener(points_m, listener_m, yaw_deg: float = 0.0, pitch_deg: float = 0.0) -> np.ndarray:
    """Express room-frame point(s) ``[..., 3]`` in the listener frame.

    Parameters
    ----------
    points_m : array_like, shape (..., 3)
        Point(s) in the room frame, metres.
    listener_m : array_like, shape (3,)
        Listener position in the room frame, metres.
    yaw_deg, pitch_deg : float, optional
        Listener orientation in degrees (see :func:`rotation_matrix`).

    Returns
    -------
    ndarray, shape (..., 3), float64
        The point(s) relative to the listener in the listener frame (x ahead, y left, z up), metres.
    """
    rel = np.asarray(points_m, dtype=float) - np.asarray(listener_m, dtype=float)
    return rel @ rotation_matrix(yaw_deg, pitch_deg)


def listener_to_room(points_l, listener_m, yaw_deg: float = 0.0, pitch_deg: float = 0.0) -> np.ndarray:
    """Inverse of :func:`room_to_listener`.

    Parameters
    ----------
    points_l : array_like, shape (..., 3)
        Point(s) in the listener frame (x ahead, y left, z up), metres.
    listener_m, yaw_deg, pitch_deg
        The listener, as in :func:`room_to_listener`.

    Returns
    -------
    ndarray, shape (..., 3), float64
        The point(s) in the room frame, metres.
    """
    return np.asarray(points_l, dtype=float) @ rotation_matrix(yaw_deg, pitch_deg).T + np.asarray(listener_m, float)


def direction_of(points_m, listener_m, yaw_deg: float = 0.0, pitch_deg: float = 0.0):
    """``(azimuth_deg, elevation_deg, distance_m)`` of room-frame point(s) seen by the listener.

    Parameters
    ----------
    points_m, listener_m, yaw_deg, pitch_deg
        As in :func:`room_to_listener`.

    Returns
    -------
    azimuth_deg : ndarray, shape (...)
        Azimuth in degrees, [-180, 180), counter-clockwise from the listener's front.
    elevation_deg : ndarray, shape (...)
        Elevation in degrees, positive up.
    distance_m : ndarray, shape (...)
        Distance from the listener in metres.
    """
    local = room_to_listener(points_m, listener_m, yaw_deg, pitch_deg)
    az, el = unit_to_az_el(local)
    return az, el, np.linalg.norm(local, axis=-1)
