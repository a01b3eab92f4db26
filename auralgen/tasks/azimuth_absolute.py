"""azimuth_absolute: is the sound front-left, front-right, back-left or back-right of the listener?

Difficulty: the margin (deg) that keeps the azimuth away from the quadrant boundaries
(0, +-90, 180 deg). Sources at ear level; received level normalised (see ``_spatial``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from auralgen.listeners import spatial as listen
from auralgen.tasks._direction import DirectionClasses, DirectionConfig, quadrant_check
from auralgen.tasks._spatial import AbsoluteLocalisation, with_tetra
from auralgen.tasks.base import SPATIAL_FEATURES, AuditSpec, Measurement, register, require

QUADRANTS = {
    "front_left": (0.0, "Front left"),
    "front_right": (-90.0, "Front right"),
    "back_left": (90.0, "Back left"),
    "back_right": (-180.0, "Back right"),
}


@dataclass(frozen=True)
class AzimuthAbsoluteConfig(DirectionConfig):
    unused_fields: ClassVar[dict[str, str]] = {"gap_s": "one sound per clip"}
    name: str = "azimuth_absolute"
    levels: tuple[float, ...] = (30, 15, 5)

    def cue_needs(self):
        return {"lateral": "the left/right of a quadrant answer", "front_back": "the front/back of a quadrant answer"}

    def check_levels(self, key):
        require(
            all(0 <= v < 45 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: margins 0 <= deg < 45",
        )


@register
class AzimuthAbsolute(DirectionClasses, AbsoluteLocalisation):
    name = "azimuth_absolute"
    audit = AuditSpec(
        (*SPATIAL_FEATURES, "margin_deg", "quadrant", "sounds.*.azimuth_deg"),
    )
    listener = with_tetra(listen.azimuth_absolute)
    attribute = "azimuth"
    n_choices = 4
    classes = QUADRANTS
    class_key = "quadrant"
    Config = AzimuthAbsoluteConfig
    questions = (
        "Where is the sound source relative to you: front left, front right, back left, or back right?",
        "From which direction does the sound come?",
        "Listen to the recording. In which quadrant around the listener is the sound source?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        margin = level.value
        quadrant = self.draw_class(rng)
        az = QUADRANTS[quadrant][0] + float(rng.uniform(margin, 90.0 - margin))
        sound = {"azimuth_deg": az, "elevation_deg": 0.0, "distance_m": float(self.distance.sample(rng))}
        return self.make_params(rng, [sound], quadrant=quadrant, margin_deg=margin)

    def measure(self, params, clips):
        return Measurement.from_dict(quadrant_check(params, clips))
