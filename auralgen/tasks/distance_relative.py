"""distance_relative: which of two sounds is closer?

Difficulty: the pair's distance ratio in dB, ``20 log10(far / near)`` (default 12, 9, 6, 3 dB:
ratios 4, 2.8, 2, 1.4). The nearer distance is roved (log-uniform over ``near_m``) so neither
distance alone answers it, and each sound's source level (at 1 m) is drawn independently from
``level_db_spl`` so the received level alone does not answer it either. Both sounds share the
source signal and direction.

Cues, per level (statistical room model, :func:`auralgen.rooms.scene.expected_drr_db`):

- **direct-to-reverberant ratio**: the nearer sound's DRR is higher by exactly the level (dB);
  this is the cue every level tests, and the one ``measure`` checks on the rendered impulse
  responses (:func:`auralgen.measure.drr_db`; measured steps are smaller than the statistical
  ones, median 6.8 dB at 12 dB and 2.7 dB at 3 dB). The reference listener does not read DRR
  yet (see the AuditSpec's reason).
- **level at fixed source power**: the direct sound is louder by the level (dB), but the source
  levels are roved over ``level_db_spl`` (20 dB by default) and beyond the critical distance the
  reverberant field dominates the received level, so level alone answers only part of the items,
  more at 12 dB than at 3 dB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.random import LogUniform
from auralgen.listeners import spatial as listen
from auralgen.tasks._spatial import MIN_DISTANCE_M, SpatialConfig, SpatialTask, check_spatial
from auralgen.tasks.base import DISTANCE_CUE_FEATURES, SPATIAL_FEATURES, AuditSpec, Measurement, register, require
from auralgen.tasks.distance_absolute import received_db

ANSWERS = {0: "The first sound", 1: "The second sound"}
MIN_DRR_STEP_DB = 0.0  # the nearer sound's measured DRR exceeds the farther one's by more than this


@dataclass(frozen=True)
class DistanceRelativeConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {"distance_m": "distances are set by the levels and near_m"}
    name: str = "distance_relative"
    levels: tuple = (12.0, 9.0, 6.0, 3.0)
    near_m: tuple = (1.0, 2.5)
    rooms: tuple = ("hall",)
    level_db_spl: Any = (50.0, 70.0)

    def check_task(self, audio, key):
        require(all(v > 0 for v in self.levels),
                f"{key}.levels={list(self.levels)!r} has a ratio <= 0 dB; allowed: distance ratios > 0 dB")  # fmt: skip
        require(len(self.near_m) == 2 and MIN_DISTANCE_M <= self.near_m[0] <= self.near_m[1],
                f"{key}.near_m={list(self.near_m)!r} is not a range; allowed: [low, high] with {MIN_DISTANCE_M} <= low <= high (m)")  # fmt: skip
        check_spatial(self, audio, key, max_distance_m=self.near_m[1] * 10 ** (max(self.levels) / 20))


@register
class DistanceRelative(SpatialTask):
    name = "distance_relative"
    spatial = True
    easier = "larger"  # a larger distance ratio (dB) is easier
    audit = AuditSpec(
        (
            *SPATIAL_FEATURES,
            *DISTANCE_CUE_FEATURES,
            "closer",
            "sounds.*.distance_m",
            "sounds.*.level_db_spl",
            "sounds.*.drr_db_expected",
            "delta.distance_m",
            "delta.drr_db_expected",
            "audio.delta_level_db",
        ),
        listener_easiest=None,
        reason="the DSP listener compares the two onset windows' levels; with source levels roved over 20 dB "
        "that rule (and its onset detection of a much quieter second sound) reaches about 70 % at 12 dB, "
        "while the task's cue, DRR, is confirmed on every item's rendered impulse responses by measure",
    )
    listener = staticmethod(listen.distance_relative)
    sub_category = "relative_localisation"
    attribute = "distance"
    regime = "relative"
    level_unit = "dB distance ratio"
    n_choices = 2
    Config = DistanceRelativeConfig
    questions = (
        "Two sounds are played one after the other from the same direction. Which one is closer to you?",
        "Listen to both sounds. Which sound source is nearer to the listener?",
        "Which of the two sounds comes from a closer source?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        closer = int(rng.integers(2))
        near = LogUniform(*self.cfg.near_m).sample(rng)
        far = near * 10 ** (level.value / 20)
        dists = [near, far] if closer == 0 else [far, near]
        az = float(rng.uniform(-180, 180))
        source = self.draw_source(rng)
        sounds = [{"azimuth_deg": az, "elevation_deg": 0.0, "distance_m": d, "source": dict(source)} for d in dists]
        params = self.make_params(
            rng, sounds, normalise=False, closer=closer, difference=level.value, difference_unit=self.level_unit
        )
        for s in params["sounds"]:  # each source's level at 1 m roved on its own: level alone does not answer
            s["level_db_spl"] = float(self.level.sample(rng))
        return params

    def eval_fields(self, params):
        """The pair's distance ratio (dB, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["difference"]), "difference_unit": str(params["difference_unit"])}

    def qa(self, params, rng, *, slot):
        answer = ANSWERS[params["closer"]]
        return self.make_qa(answer, ANSWERS.values(), rng, slot=slot)

    def measure(self, params, clips):
        """Each sound's DRR measured on the impulse response it was rendered with (rebuilt from
        ``params``), and its received level. Valid when the nearer sound's measured DRR exceeds the
        farther one's by more than :data:`MIN_DRR_STEP_DB`."""
        drrs = [rendered_drr_db(params, s) for s in params["sounds"]]
        levels = [received_db(params, clips, s) for s in params["sounds"]]
        closer = params["closer"]
        step = drrs[closer] - drrs[1 - closer]
        ok = step > MIN_DRR_STEP_DB
        return Measurement.from_dict({
            "drr_db": [{"measured": round(m, 3), "expected": s["drr_db_expected"]} for m, s in zip(drrs, params["sounds"])],
            "drr_step_db": {"measured": round(step, 3), "expected": params["difference"], "minimum": MIN_DRR_STEP_DB, "ok": bool(ok)},
            "received_level_db_spl": [round(v, 3) for v in levels],
            "valid": bool(ok),
        })  # fmt: skip


def rendered_drr_db(params: dict[str, Any], sound: dict[str, Any]) -> float:
    """DRR (dB, channels pooled) of the impulse response ``sound`` was rendered with."""
    from auralgen.measure import drr_db
    from auralgen.rooms.receivers import receiver_from_config
    from auralgen.rooms.scene import spatial_rir
    from auralgen.tasks._spatial import room_of

    rir = spatial_rir(room_of(params), sound["position_m"], receiver_from_config(params["receiver"]),
                      sample_rate=params["sample_rate_hz"], mode=params["mode"],
                      rng=np.random.default_rng(sound["rir_seed"]), backend=params.get("backend", "fast"))  # fmt: skip
    return float(drr_db(rir, params["sample_rate_hz"]))
