"""azimuth_relative: do two sounds come from the same direction or from different directions?

Difficulty: the angular separation (deg) of the "different" pairs. Half of the items are
"same" pairs. Both sounds share the source signal, distance and elevation (ear level);
received levels are normalised to the same value, so loudness carries no cue.
"""

from __future__ import annotations

from dataclasses import dataclass

from auralgen.listeners import spatial as listen
from auralgen.tasks._direction import DirectionConfig, pair_check
from auralgen.tasks._spatial import RelativeLocalisation, with_tetra
from auralgen.tasks.base import SPATIAL_FEATURES, AuditSpec, Measurement, register, require

ANSWERS = {"same": "Same direction", "different": "Different directions"}


@dataclass(frozen=True)
class AzimuthRelativeConfig(DirectionConfig):
    name: str = "azimuth_relative"
    levels: tuple[float, ...] = (30, 60, 90, 120, 150, 180)
    clip_s: float = 3.0

    def cue_needs(self):
        return {
            "lateral": "telling directions anywhere around the listener apart",
            "front_back": "telling directions anywhere around the listener apart",
        }

    def check_levels(self, key):
        require(
            all(0 < v <= 180 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: 0 < deg <= 180",
        )


@register
class AzimuthRelative(RelativeLocalisation):
    name = "azimuth_relative"
    audit = AuditSpec(
        (*SPATIAL_FEATURES, "relation", "separation_deg", "sounds.*.azimuth_deg", "delta.azimuth_deg"),
    )
    listener = with_tetra(listen.relative_direction)
    attribute = "azimuth"
    human_threshold = (1.0, "deg", "Mills 1958, JASA 30(4) 237-246: minimum audible angle about 1 deg straight ahead")
    level_unit = "deg"
    n_choices = 2
    Config = AzimuthRelativeConfig
    questions = (
        "Two sounds are played one after the other. Do they come from the same direction or from different directions?",
        "Listen to both sounds. Are they at the same horizontal direction around the listener?",
        "Did the second sound come from the same direction as the first one?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        same = bool(rng.integers(2))
        sep = 0.0 if same else level.value * (1 if rng.integers(2) else -1)
        az = float(rng.uniform(-180, 180))
        d = float(self.distance.sample(rng))
        source = self.draw_source(rng)
        sounds = [
            {"azimuth_deg": az, "elevation_deg": 0.0, "distance_m": d, "source": source},
            {"azimuth_deg": az + sep, "elevation_deg": 0.0, "distance_m": d, "source": dict(source)},
        ]
        return self.make_params(rng, sounds, relation="same" if same else "different", separation_deg=abs(sep))

    def qa(self, params, rng, *, slot):
        answer = ANSWERS[params["relation"]]
        return self.make_qa(answer, ANSWERS.values(), rng, slot=slot)

    def measure(self, params, clips):
        return Measurement.from_dict(pair_check(params, clips))
