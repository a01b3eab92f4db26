"""Direction measurement of the direction tasks: each sound's direct sound, measured in every layout.

The label check knows the sound's dry signal (it is in ``params``), so it deconvolves the clip by
it (:func:`auralgen.measure.binaural.deconvolve`) and keeps the response's direct part: from just
before the direct sound's arrival to :data:`REFLECTION_GUARD_S` before the first wall reflection
(at most :data:`TEMPLATE_MAX_S`). On that window:

============================  ==================================================================
receiver                      direction
============================  ==================================================================
``binaural``                  the KEMAR template observer (:func:`~auralgen.measure.binaural.match_known_source`)
                              against the set the clip was rendered with: ITD, ILD and the per-ear
                              spectra, so front/back and elevation too (the upper bound of what the audio carries)
``foa_acn_sn3d``              the active intensity vector (:func:`~auralgen.measure.spatial.doa_foa`)
omni arrays (tetra, circular) SRP-PHAT over the sphere (:func:`~auralgen.measure.spatial.srp_phat_direction`);
                              a horizontal ring has the horizontal plane only
============================  ==================================================================

A window shorter than :data:`TEMPLATE_MIN_S` (source or head next to a wall) is not measured:
the item is not confirmed, so it is drawn again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.core.random import Dist
from auralgen.measure.geometry import az_el_to_unit
from auralgen.rooms.images import FDL2
from auralgen.rooms.receivers import receiver_from_config
from auralgen.sounds.spatial import source_signal
from auralgen.tasks import _sounds
from auralgen.tasks._spatial import SpatialConfig, check_spatial, max_distance
from auralgen.tasks.base import MEASURED

TEMPLATE_PRE = 8  # samples of the deconvolved response kept before the direct sound's nominal arrival
TEMPLATE_RING = 32  # samples of the source kernel's pre-ringing passed with the window
TEMPLATE_MAX_S = 0.004  # the direct-sound window ends at most this long after the arrival ...
REFLECTION_GUARD_S = 0.00025  # ... and this long before the first reflection reaches the head
TEMPLATE_MIN_S = 0.0006  # a shorter direct-sound window (source or head near a wall) is not measured
# the template observer confirms the direction of broadband sources; a harmonic tone (f0 150-400 Hz) has
# a line spectrum whose period (2.5-6.7 ms) is longer than the direct-sound window, so its direction is
# not measurable there (on 10 binaural items at 16 kHz: 2 within 8 deg, against 30/31 for the others)
BROADBAND_SOURCES = ("noise", "chirp", "clicks")
# the direction tasks' default: steady noise, the one kind that excites every band in every few ms. A chirp
# sweeps one band at a time and a click train is silent between clicks, so in the 4-12 ms of direct sound
# (and first reflections) a listener compares, they carry the direction in part of the spectrum only: on
# 40 items per level (seed 0/1, binaural) the reference listener reached 100 % on azimuth_absolute with noise
# against 92-94 % with clicks, and 97.5 % (noise) against 72.5 % (all three kinds) on azimuth_relative at 180
# deg. BROADBAND_SOURCES stays allowed through ``task.sources``.
DIRECTION_SOURCES = ("noise",)
SAME_MAX_DEG = 10.0  # a "same" pair: the two measured directions lie within this angle
DIFFERENT_MIN_SHARE = 0.5  # a "different" pair: measured separation >= this share of the stated one


def first_reflection_delay_s(params: dict[str, Any], sound: dict[str, Any]) -> float:
    """Extra path (s) of the sound's earliest first-order wall image over its direct path.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``room_dims_m``, ``listener_m``, ``room_spec.c_m_s``).
    sound : dict of str to Any
        One entry of ``params["sounds"]`` (its ``position_m``, ``distance_m``, ``onset_s``, ``source``).

    Returns
    -------
    float
        Seconds by which the first reflection trails the direct sound.
    """
    dims = np.asarray(params["room_dims_m"], dtype=float)
    src = np.asarray(sound["position_m"], dtype=float)
    head = np.asarray(params["listener_m"], dtype=float)
    direct = float(np.linalg.norm(src - head))
    images = []
    for axis in range(3):
        for wall in (0.0, dims[axis]):
            img = src.copy()
            img[axis] = 2 * wall - src[axis]
            images.append(float(np.linalg.norm(img - head)))
    return (min(images) - direct) / float(params["room_spec"]["c_m_s"])


def direct_response(params: dict[str, Any], clip: np.ndarray, sound: dict[str, Any]):
    """``(h [channels, n], kernel [n + TEMPLATE_RING], arrival_frac)`` of the sound's direct part, or
    ``None`` when the window before the first reflection is shorter than :data:`TEMPLATE_MIN_S`.

    ``h`` starts :data:`TEMPLATE_PRE` samples before the nominal arrival (the omni arrival time at
    the receiver centre plus the fractional-delay filter's centre); ``kernel`` is the zero-phase
    source kernel the deconvolution leaves in ``h`` (apply it to any template compared with ``h``).

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe.
    clip : ndarray, shape (channels, samples)
        The rendered clip.
    sound : dict of str to Any
        One entry of ``params["sounds"]`` (its ``position_m``, ``distance_m``, ``onset_s``, ``source``).

    Returns
    -------
    tuple of (ndarray, ndarray, float) or None
        ``h`` shape (channels, window samples), ``kernel`` shape (window samples + :data:`TEMPLATE_RING`),
        and the arrival's fractional part, samples.
    """
    from auralgen.measure.binaural import deconvolve

    sr = params["sample_rate_hz"]
    c = float(params["room_spec"]["c_m_s"])
    dry = source_signal(sound["source"], sr, ramp_s=params["ramp_s"])
    a = _sounds.n_samples(sound["onset_s"], sr)
    exact = sound["distance_m"] / c * sr + FDL2
    arrival = int(round(exact))
    span = min(TEMPLATE_MAX_S, first_reflection_delay_s(params, sound) - REFLECTION_GUARD_S)
    stop = arrival + int(span * sr)
    if stop - arrival < int(TEMPLATE_MIN_S * sr):
        return None
    seg = np.asarray(clip)[:, a : a + len(dry) + stop + 1].astype(np.float64)  # the window, not the clip, converted
    h, kernel = deconvolve(seg, dry, n_out=stop)
    idx = np.arange(stop - arrival + TEMPLATE_PRE + TEMPLATE_RING) - TEMPLATE_RING - TEMPLATE_PRE
    return h[:, arrival - TEMPLATE_PRE : stop], kernel[idx % kernel.size], exact - arrival


def measure_direction(params: dict[str, Any], clip: np.ndarray, sound: dict[str, Any]) -> dict[str, Any] | None:
    """The sound's measured direction (``azimuth_deg``, ``elevation_deg``, ``method``; the template
    observer adds its ``residual`` and ``runner_up``), or ``None`` when it cannot be measured.

    Parameters
    ----------
    params, clip, sound
        As in :func:`direct_response`.

    Returns
    -------
    dict of str to Any or None
        Azimuth and elevation in degrees (the convention of :mod:`auralgen.rooms.geometry`) and ``method``.
    """
    from auralgen.measure.binaural import match_known_source
    from auralgen.measure.spatial import doa_foa, srp_phat_direction

    got = direct_response(params, clip, sound)
    if got is None:
        return None
    h, kernel, frac = got
    sr = params["sample_rate_hz"]
    receiver = receiver_from_config(params["receiver"])
    if receiver.ear_positions_m() is not None:
        hrtf = receiver.hrtf_at(sr)
        m = match_known_source(h, kernel, hrtf.hrirs, hrtf.directions_deg, lag=frac)
        return {
            "azimuth_deg": m.azimuth_deg,
            "elevation_deg": m.elevation_deg,
            "method": "kemar_template",
            "residual": round(m.residual, 4),
            "runner_up": round(m.runner_up, 4),
        }
    if receiver.layout.startswith("foa"):
        az, el = doa_foa(h)
        return {"azimuth_deg": round(az, 2), "elevation_deg": round(el, 2), "method": "foa_intensity"}
    offsets = receiver.local_offsets_m()
    az, el = srp_phat_direction(h, offsets, sr, freq_range=(300.0, min(7000.0, sr / 2 - 100.0)))
    return {"azimuth_deg": az, "elevation_deg": el, "method": "srp_phat"}


def angle_deg(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Great-circle angle (deg) between two records with ``azimuth_deg`` / ``elevation_deg``.

    Parameters
    ----------
    a, b : dict of str to Any
        Directions, degrees.

    Returns
    -------
    float
        Degrees, in [0, 180].

    Examples
    --------
    >>> round(angle_deg({"azimuth_deg": 0, "elevation_deg": 0}, {"azimuth_deg": 90, "elevation_deg": 0}), 6)
    90.0
    """
    u = az_el_to_unit(a["azimuth_deg"], a["elevation_deg"])
    v = az_el_to_unit(b["azimuth_deg"], b["elevation_deg"])
    return math.degrees(math.acos(float(np.clip(u @ v, -1.0, 1.0))))


def quadrant_of(azimuth_deg: float) -> str:
    """``front_left`` / ``front_right`` / ``back_left`` / ``back_right`` of an azimuth (deg).

    Parameters
    ----------
    azimuth_deg : float
        Degrees, counter-clockwise from the front (positive = left).

    Returns
    -------
    str
        The quadrant.

    Examples
    --------
    >>> quadrant_of(30.0), quadrant_of(-120.0)
    ('front_left', 'back_right')
    """
    return f"{'front' if abs(azimuth_deg) < 90.0 else 'back'}_{'left' if azimuth_deg > 0 else 'right'}"


def measured_sounds(params: dict[str, Any], clips) -> list[dict[str, Any] | None]:
    """:func:`measure_direction` of every sound of the item (``None`` where unmeasurable).

    Parameters
    ----------
    params, clips
        As in :func:`pair_check`.

    Returns
    -------
    list of (dict of str to Any or None)
        One record per entry of ``params["sounds"]``.
    """
    return [measure_direction(params, clips[0], s) for s in params["sounds"]]


@sections(MEASURED, checks="The ``separation_deg`` check (degrees), the ``sounds`` records")
def pair_check(params: dict[str, Any], clips) -> dict[str, Any]:
    """Relative tasks: the measured angle between the two sounds confirms "same" (below
    :data:`SAME_MAX_DEG`) or "different" (at least :data:`DIFFERENT_MIN_SHARE` of ``separation_deg``)."""
    recs = measured_sounds(params, clips)
    if any(r is None for r in recs):
        return {"sounds": recs, "valid": False, "note": "a direct-sound window is too short to measure"}
    sep = float(params["separation_deg"])
    got = angle_deg(*recs)
    same = params["relation"] == "same"
    ok = got < SAME_MAX_DEG if same else got >= DIFFERENT_MIN_SHARE * sep
    tol = SAME_MAX_DEG if same else (1 - DIFFERENT_MIN_SHARE) * sep
    check = {"measured": round(got, 2), "expected": sep, "tolerance": tol, "ok": bool(ok)}
    return {"separation_deg": check, "sounds": recs, "valid": bool(ok)}


@sections(MEASURED, checks="The ``quadrant`` check, the ``sounds`` records")
def quadrant_check(params: dict[str, Any], clips) -> dict[str, Any]:
    """azimuth_absolute: the measured direction lies in the labelled quadrant."""
    (rec,) = measured_sounds(params, clips)
    got = None if rec is None else quadrant_of(rec["azimuth_deg"])
    ok = got == params["quadrant"]
    return {"quadrant": {"measured": got, "expected": params["quadrant"], "ok": ok}, "sounds": [rec], "valid": ok}


def elevation_class_of(elevation_deg: float, margin_deg: float) -> str:
    """``above`` / ``below`` beyond half the item's elevation magnitude, else ``ear``.

    Parameters
    ----------
    elevation_deg : float
        Measured elevation, degrees (+90 above).
    margin_deg : float
        The item's elevation magnitude, degrees.

    Returns
    -------
    str
        ``above``, ``below`` or ``ear``.
    """
    return "above" if elevation_deg >= margin_deg / 2 else "below" if elevation_deg <= -margin_deg / 2 else "ear"


@sections(MEASURED, checks="The ``elevation_class`` check, the ``sounds`` records")
def elevation_check(params: dict[str, Any], clips) -> dict[str, Any]:
    """elevation_absolute: the measured elevation is in the labelled class (split at half the level)."""
    (rec,) = measured_sounds(params, clips)
    got = None if rec is None else elevation_class_of(rec["elevation_deg"], params["margin_deg"])
    ok = got == params["elevation_class"]
    check = {"measured": got, "expected": params["elevation_class"], "ok": ok}
    return {"elevation_class": check, "sounds": [rec], "valid": ok}


class DirectionClasses:
    """The answer side of an absolute direction task, a mixin before its base class: one option per class of
    ``classes`` (key -> (anchor in deg, option text)), the item's class key in ``params[class_key]``."""

    level_unit = "deg"
    classes: ClassVar[dict[str, tuple[float, str]]]
    class_key: ClassVar[str]

    def draw_class(self, rng: np.random.Generator) -> str:
        """A class key, drawn uniformly (one draw).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's random stream.

        Returns
        -------
        str
            A key of ``classes``.
        """
        return list(self.classes)[int(rng.integers(len(self.classes)))]

    def qa(self, params, rng, *, slot):
        options = [text for _, text in self.classes.values()]
        return self.make_qa(self.classes[params[self.class_key]][1], options, rng, slot=slot)


@dataclass(frozen=True)
class DirectionConfig(SpatialConfig):
    """Config of a direction task: sources whose direction can be measured (:data:`DIRECTION_SOURCES`), the
    task's own level range (:meth:`check_levels`) and a room that fits a source up to twice the largest
    distance."""

    sources: tuple[str, ...] = DIRECTION_SOURCES

    def check_task(self, audio, key):
        self.check_levels(key)
        check_spatial(self, audio, key, max_distance_m=2 * max_distance(self.distance_m))

    def check_levels(self, key: str) -> None:
        """Refuse a level outside the task's range (each direction task states its own).

        Parameters
        ----------
        key : str
            The task's config path, for the message.

        Raises
        ------
        ParameterError
            A level (degrees) is outside the task's range.
        """
        raise NotImplementedError


@dataclass(frozen=True)
class MedianPlaneConfig(DirectionConfig):
    """Config of an elevation task: a listener height and near sources that leave room above and below."""

    listener_height_m: Dist = Dist.of((1.3, 1.5))
    # one room: high sources fit under every ceiling, so the room cannot predict the answer
    rooms: tuple[str, ...] = ("classroom",)
    distance_m: Dist = Dist.of((1.0, 1.5))
