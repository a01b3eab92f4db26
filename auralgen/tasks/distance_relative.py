"""distance_relative: which of two sounds is closer?

Difficulty: the pair of distances, given by the nearer one (default 1, 4, 6, 8 m) and
``pair_gap_m`` (default 1 m: pairs 1-2, 4-5, 6-7, 8-9 m). Both sounds share the source
signal and direction; the source level is fixed at 1 m, so level and DRR are the cues.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from auralgen.listeners import spatial as listen
from auralgen.tasks._spatial import SpatialConfig, SpatialTask, check_spatial
from auralgen.tasks.base import DISTANCE_CUE_FEATURES, SPATIAL_FEATURES, AuditSpec, Measurement, register, require
from auralgen.tasks.distance_absolute import received_db

ANSWERS = {0: "The first sound", 1: "The second sound"}


@dataclass(frozen=True)
class DistanceRelativeConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {"distance_m": "distances are set by the levels and pair_gap_m"}
    name: str = "distance_relative"
    levels: tuple = (1, 4, 6, 8)
    pair_gap_m: float = 1.0
    rooms: tuple = ("hall",)

    def check_task(self, audio, key):
        require(all(v >= 0.5 for v in self.levels) and self.pair_gap_m > 0,
                f"{key}.levels={list(self.levels)!r}, pair_gap_m={self.pair_gap_m}: allowed: distances >= 0.5 m and a positive gap")  # fmt: skip
        check_spatial(self, audio, key, max_distance_m=max(self.levels) + self.pair_gap_m)


@register
class DistanceRelative(SpatialTask):
    name = "distance_relative"
    spatial = True
    audit = AuditSpec(
        (
            *SPATIAL_FEATURES,
            *DISTANCE_CUE_FEATURES,
            "closer",
            "sounds.*.distance_m",
            "sounds.*.drr_db_expected",
            "delta.distance_m",
            "delta.drr_db_expected",
            "audio.delta_level_db",
        ),
        listener_easiest="min",
    )
    listener = staticmethod(listen.distance_relative)
    sub_category = "relative_localisation"
    attribute = "distance"
    regime = "relative"
    level_unit = "m"
    n_choices = 2
    Config = DistanceRelativeConfig
    questions = (
        "Two sounds are played one after the other from the same direction. Which one is closer to you?",
        "Listen to both sounds. Which sound source is nearer to the listener?",
        "Which of the two sounds comes from a closer source?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        near = level.value
        closer = int(rng.integers(2))
        dists = [near, near + self.cfg.pair_gap_m] if closer == 0 else [near + self.cfg.pair_gap_m, near]
        az = float(rng.uniform(-180, 180))
        source = self.draw_source(rng)
        sounds = [{"azimuth_deg": az, "elevation_deg": 0.0, "distance_m": d, "source": dict(source)} for d in dists]
        # the stimulus difference for psychometric fits: the pair's distance ratio in dB (larger = easier)
        ratio_db = 20 * math.log10((near + self.cfg.pair_gap_m) / near)
        return self.make_params(
            rng, sounds, normalise=False, closer=closer, difference=ratio_db, difference_unit="dB distance ratio"
        )

    def eval_fields(self, params):
        """The pair's distance ratio (dB, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["difference"]), "difference_unit": str(params["difference_unit"])}

    def qa(self, params, rng, *, slot):
        answer = ANSWERS[params["closer"]]
        return self.make_qa(answer, ANSWERS.values(), rng, slot=slot)

    def measure(self, params, clips):
        levels = [received_db(params, clips, s) for s in params["sounds"]]
        closer = params["closer"]
        ok = levels[closer] > levels[1 - closer]
        return Measurement.from_dict(
            {"received_level_db_spl": [round(v, 3) for v in levels], "closer_is_louder": bool(ok), "valid": bool(ok)}
        )
