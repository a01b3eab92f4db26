"""elevation_absolute: is the sound above, at, or below ear level?

Difficulty: the elevation magnitude (deg) of sources above / below (ear-level sources are
at 0 deg). The KEMAR set has no direction below -40 deg, so levels are at most 40.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from auralgen.listeners import spatial as listen
from auralgen.tasks._direction import DirectionClasses, MedianPlaneConfig, elevation_check
from auralgen.tasks._spatial import AbsoluteLocalisation, with_tetra
from auralgen.tasks.base import SPATIAL_FEATURES, AuditSpec, Measurement, register, require

CLASSES = {"above": (1.0, "Above ear level"), "ear": (0.0, "At ear level"), "below": (-1.0, "Below ear level")}


@dataclass(frozen=True)
class ElevationAbsoluteConfig(MedianPlaneConfig):
    unused_fields: ClassVar[dict[str, str]] = {"gap_s": "one sound per clip"}
    name: str = "elevation_absolute"
    levels: tuple[float, ...] = (40, 30, 20)

    def cue_needs(self):
        return {"vertical": "an above/at/below ear level answer"}

    def check_levels(self, key):
        require(
            all(5 <= v <= 40 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: 5 <= deg <= 40 (KEMAR has no direction "
            "below -40 deg)",
        )


@register
class ElevationAbsolute(DirectionClasses, AbsoluteLocalisation):
    name = "elevation_absolute"
    audit = AuditSpec(
        (*SPATIAL_FEATURES, "elevation_class", "margin_deg", "sounds.*.elevation_deg"),
    )
    listener = with_tetra(listen.elevation_absolute)
    attribute = "elevation"
    n_choices = 3
    classes = CLASSES
    class_key = "elevation_class"
    Config = ElevationAbsoluteConfig
    questions = (
        "Is the sound source above your ear level, at ear level, or below it?",
        "Listen to the recording. What is the elevation of the sound source relative to the listener's ears?",
        "Does the sound come from above, from ear level, or from below?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        cls = self.draw_class(rng)
        el = CLASSES[cls][0] * level.value
        sound = {
            "azimuth_deg": float(rng.uniform(-180, 180)),
            "elevation_deg": el,
            "distance_m": float(self.distance.sample(rng)),
        }
        return self.make_params(rng, [sound], elevation_class=cls, margin_deg=level.value)

    def measure(self, params, clips):
        return Measurement.from_dict(elevation_check(params, clips))
