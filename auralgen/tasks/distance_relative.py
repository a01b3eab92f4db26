"""distance_relative: which of two sounds is closer?

Difficulty: the pair's distance ratio in dB, ``20 log10(far / near)`` (default 12, 9, 6, 3 dB:
ratios 4, 2.8, 2, 1.4). The nearer distance is roved (log-uniform over ``near_m``) so neither
distance alone answers it, and each sound's source level (at 1 m) is drawn independently from
``level_db_spl`` so the received level alone does not answer it either. Both sounds share the
source signal and direction; the room is one (the hall by default), so its reverberant field is
the same for both.

Cues, per level (statistical room model, :func:`auralgen.rooms.scene.expected_drr_db`):

- **direct-to-reverberant ratio** (every level tests it): the nearer sound's DRR is higher by
  exactly the level (dB). The diffuse field's level does not depend on the distance, so a
  sound's steady power over its own reverberant tail orders the pair whatever the source
  levels. ``measure`` checks it twice: on the rendered impulse responses
  (:func:`auralgen.measure.drr_db`; measured steps are smaller than the statistical ones,
  median ~7 dB at 12 dB and ~2.7 dB at 3 dB) and in the clip (steady power over tail power at
  the same delays after each onset, :func:`auralgen.listeners.distance.pair_excess_db`, on the
  known arrivals). The reference listener reads the same clip cue with onsets it finds itself.
- **level at fixed source power**: the direct sound is louder by the level (dB), but the source
  levels are roved over ``level_db_spl`` (20 dB by default, wider than the 12 dB easiest ratio)
  and beyond the critical distance (2.7 m in the hall) the reverberant field dominates the
  received level, so level alone answers only part of the items (~70 % at 12 dB, ~55 % at 3 dB).
- **spectrum and early reflections**: not a cue here (the hall has no air absorption; the
  same source signal and direction in both sounds), beyond what the DRR carries.

Sources are broadband noise and click trains by default: a periodic tone (harmonic complex) makes
the reverberant field modal, so its level, and the DRR read from it, swings by several dB; a
sweep's changing spectrum makes the steady and tail windows hear different bands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.random import Dist, LogUniform
from auralgen.listeners import distance as listen
from auralgen.rooms.images import FDL2
from auralgen.tasks import _sounds
from auralgen.tasks._distance import received_db
from auralgen.tasks._spatial import MIN_DISTANCE_M, RelativeLocalisation, SpatialConfig, check_spatial
from auralgen.tasks.base import DISTANCE_CUE_FEATURES, SPATIAL_FEATURES, AuditSpec, Measurement, register, require

ANSWERS = {0: "The first sound", 1: "The second sound"}
MIN_DRR_STEP_DB = 0.0  # the nearer sound's measured DRR exceeds the farther one's by more than this


@dataclass(frozen=True)
class DistanceRelativeConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {"distance_m": "distances are set by the levels and near_m"}
    name: str = "distance_relative"
    levels: tuple[float, ...] = (12.0, 9.0, 6.0, 3.0)
    near_m: tuple[float, float] = (1.0, 2.5)
    rooms: tuple[str, ...] = ("hall",)
    sources: tuple[str, ...] = ("noise", "clicks")
    level_db_spl: Dist = Dist.of((50.0, 70.0))

    def check_task(self, audio, key):
        require(
            all(v > 0 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} has a ratio <= 0 dB; allowed: distance ratios > 0 dB",
        )
        require(
            len(self.near_m) == 2 and MIN_DISTANCE_M <= self.near_m[0] <= self.near_m[1],
            f"{key}.near_m={list(self.near_m)!r} is not a range; allowed: [low, high] with {MIN_DISTANCE_M} <= low <= "
            "high (m)",
        )
        check_spatial(self, audio, key, max_distance_m=self.near_m[1] * 10 ** (max(self.levels) / 20))


@register
class DistanceRelative(RelativeLocalisation):
    name = "distance_relative"
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
        listener_floor=0.95,
    )
    listener = staticmethod(listen.distance_relative)
    attribute = "distance"
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
        ``params``), the clip's DRR order (steady power over reverberant tail power on the known
        arrivals, :func:`~auralgen.listeners.distance.pair_excess_db`) and the received levels.
        Valid when the nearer sound's measured DRR exceeds the farther one's by more than
        :data:`MIN_DRR_STEP_DB` and the clip orders the pair the same way."""
        drrs = [rendered_drr_db(params, s) for s in params["sounds"]]
        levels = [received_db(params, clips, s) for s in params["sounds"]]
        closer = params["closer"]
        step = drrs[closer] - drrs[1 - closer]
        sr = params["sample_rate_hz"]
        arrivals = tuple(
            _sounds.n_samples(s["onset_s"] + s["distance_m"] / SPEED_OF_SOUND_M_S, sr) + FDL2 for s in params["sounds"]
        )
        excess = listen.pair_excess_db(clips[0], sr, onsets=arrivals)
        clip_step = math.nan if excess is None else excess[closer] - excess[1 - closer]
        ok_rir, ok_clip = step > MIN_DRR_STEP_DB, bool(clip_step > 0)
        return Measurement.from_dict(
            {
                "drr_db": [
                    {"measured": round(m, 3), "expected": s["drr_db_expected"]} for m, s in zip(drrs, params["sounds"])
                ],
                "drr_step_db": {
                    "measured": round(step, 3),
                    "expected": params["difference"],
                    "minimum": MIN_DRR_STEP_DB,
                    "ok": bool(ok_rir),
                },
                "clip_excess_step_db": {"measured": round(clip_step, 3), "minimum": 0.0, "ok": ok_clip},
                "received_level_db_spl": [round(v, 3) for v in levels],
                "valid": bool(ok_rir and ok_clip),
            }
        )


def rendered_drr_db(params: dict[str, Any], sound: dict[str, Any]) -> float:
    """DRR (dB, channels pooled) of the impulse response ``sound`` was rendered with.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (room, receiver, ``sample_rate_hz``, ``mode``, ``backend``).
    sound : dict of str to Any
        One entry of ``params["sounds"]``: its ``position_m`` (metres) and ``rir_seed``.

    Returns
    -------
    float
        The direct-to-reverberant ratio of the re-computed impulse response, dB.
    """
    from auralgen.measure import drr_db
    from auralgen.rooms.receivers import receiver_from_config
    from auralgen.rooms.scene import spatial_rir
    from auralgen.tasks._spatial import room_of

    rir = spatial_rir(
        room_of(params),
        sound["position_m"],
        receiver_from_config(params["receiver"]),
        sample_rate=params["sample_rate_hz"],
        mode=params["mode"],
        rng=np.random.default_rng(sound["rir_seed"]),
        backend=params.get("backend", "fast"),
    )
    return float(drr_db(rir, params["sample_rate_hz"]))
