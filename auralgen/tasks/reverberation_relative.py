"""reverberation_relative: the same sound heard twice in the same room; is the second more reverberant, less,
or the same?

Difficulty: the reverberation-time difference in percent, ``100 * (T_long / T_short - 1)``, where T
is T20 (ISO 3382-1) read from the clip's decay after each dry sound ends. Both sounds are the same
dry sound (a pink-noise burst or a click train by default: broadband, so the decay is measurable
in every band at once; a harmonic tone's modal decay swings by several percent) at the same
source and receiver positions in the same room, with the same late-reverberation noise seed; only
the walls' absorption differs, solved per sound so that the clip's T20 is the recipe's
(:mod:`auralgen.tasks._reverb`). The pair is centred geometrically on a reverberation time drawn
log-uniformly from ``rt60_s`` independently of the answer, and which sound is the more reverberant
is drawn uniformly. The more reverberant sound also has the lower direct-to-reverberant ratio
(less absorption, more reverberant energy): that is part of what "more reverberant" means here.

Controlled: each sound (dry sound plus its decay in its slot) has the item's integrated loudness
(LUFS, BS.1770), the same duration and the same dry signal; sounds start at fixed slots of a fixed
clip (``clip_s``) whose slots hold the longest decay the config can ask for.

``measure`` reads each sound's T20 from the clip (from where its dry sound's end reaches the
receiver to the end of its slot) and its loudness; the item is valid when the measured difference
equals the level within :data:`TOLERANCE_PERCENT` times ``1 + level / 100`` (signed by the labelled
direction), the loudness
difference is at most :data:`TOLERANCE_LU`, and, at a level above 0, the impulse responses agree:
the more reverberant sound's response has the longer T20 (Schroeder) and the lower DRR.

Levels: the just-noticeable difference of reverberance is 5 % of the early decay time (ISO
3382-1:2009, Annex A, Table A.1: "perceived reverberance, EDT, JND 5 %"); the hardest default
level, 5 %, sits there; 40 % is easy; 0 is the "same" level (the two sounds are identical).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import LogUniform
from auralgen.listeners import reverb as listen
from auralgen.tasks import _reverb
from auralgen.tasks._compare import PairQuestion, within
from auralgen.tasks._reverb import REVERB_AUDIO_FEATURES
from auralgen.tasks._timbre_onset import signed_percent
from auralgen.tasks.base import RELATIVE_FEATURES, AuditSpec, Measurement, register, require

TOLERANCE_PERCENT = 0.5  # measured T20 difference vs the level: this many percentage points times T_long / T_short
# (the solver holds each T20 to 0.2 %, so the ratio is off by at most 0.4 % of itself)
TOLERANCE_LU = 0.1  # the two sounds' measured integrated loudness may differ by this much (LU)


@dataclass(frozen=True)
class ReverberationRelativeConfig(_reverb.ReverbConfig):
    name: str = "reverberation_relative"
    levels: tuple[float, ...] = (0, 5, 10, 20, 40)
    rt60_s: tuple[float, float] = (0.35, 0.9)  # the pair's geometric centre, log-uniform (clip T20, s)
    clip_s: float = 3.6

    def check_task(self, audio, key):
        require(
            all(v >= 0 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} has a negative difference; allowed: percent >= 0",
        )
        require(
            len(self.rt60_s) == 2 and 0 < self.rt60_s[0] <= self.rt60_s[1],
            f"{key}.rt60_s={list(self.rt60_s)!r} is not a range; allowed: [low, high] with 0 < low <= high (s)",
        )
        half = math.sqrt(1 + max(self.levels) / 100.0)
        _reverb.check_reverb(
            self, audio, key, n_sounds=2, lowest_s=self.rt60_s[0] / half, highest_s=self.rt60_s[1] * half
        )


@register
class ReverberationRelative(PairQuestion, _reverb.ReverbTask):
    name = "reverberation_relative"
    n_sounds = 2
    audit = AuditSpec(
        (*RELATIVE_FEATURES, "sounds.*.rt60_s", "delta.rt60_s", *REVERB_AUDIO_FEATURES),
        listener_floor=0.95,
    )
    listener = staticmethod(listen.reverberation_relative)
    attribute = "reverberation"
    human_threshold = (5.0, "percent", "ISO 3382-1:2009, Annex A: subjective limen of early decay time 5 %")
    level_unit = "percent"
    n_choices = 3
    easier = "larger"
    Config = ReverberationRelativeConfig
    answers = {"up": "More reverberant", "down": "Less reverberant", "same": "Equally reverberant"}
    questions = (
        "The same sound is played twice. Compared with the first time, does the second sound more reverberant, less "
        "reverberant, or equally reverberant?",
        "Listen to the two sounds. Is the second one more reverberant (a longer, more echoing decay) than the first, "
        "less, or the same?",
        "How does the reverberation of the second sound compare with that of the first?",
    )
    card_note = (
        "Both sounds are the same dry sound (noise burst or click train) at the same place in the same room, with the "
        "same integrated loudness (LUFS), duration and slot in a fixed-length clip; only the walls' absorption "
        "differs. "
        "The level is the difference in reverberation time (T20, ISO 3382-1) in percent, measured from each sound's "
        "decay in the clip; 'more reverberant' means the longer reverberation time (and the lower DRR)."
    )

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        direction = self.draw_direction(rng, level)
        centre = LogUniform(*self.cfg.rt60_s).sample(rng)
        step = self.ratio_step(level, direction)
        return self.base_params(
            rng, [centre / step, centre * step], direction=direction, difference=float(level.value), base_rt60_s=centre
        )

    def eval_fields(self, params):
        """The reverberation-time difference (percent, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["difference"]), "difference_unit": "percent"}

    def measure(self, params, clips):
        recs = [self.sound_record(params, clips, s) for s in params["sounds"]]
        t = [r["rt60_s"] for r in recs]
        sign = self.sign(params["direction"])
        tol = round(TOLERANCE_PERCENT * (1 + params["difference"] / 100.0), 4)
        diff = within("rt60_difference_percent", signed_percent(t[0], t[1]), sign * params["difference"], tol)
        loud = within("loudness_difference_lu", recs[1]["loudness_lufs"] - recs[0]["loudness_lufs"], 0.0, TOLERANCE_LU)
        rir_ok = True
        if sign:  # the impulse responses order the pair the same way: longer T20, lower DRR
            more, less = (recs[1], recs[0]) if sign > 0 else (recs[0], recs[1])
            rir_ok = bool(more["rir_rt60_s"] > less["rir_rt60_s"] and more["drr_db"] < less["drr_db"])
        return Measurement.from_dict(
            {
                "rt60_s": [_reverb.finite(v) for v in t],
                "rt60_difference_percent": diff,
                "loudness_lufs": [_reverb.finite(r["loudness_lufs"], 3) for r in recs],
                "loudness_difference_lu": loud,
                "rir_rt60_s": [_reverb.finite(r["rir_rt60_s"]) for r in recs],
                "drr_db": [_reverb.finite(r["drr_db"], 3) for r in recs],
                "nominal_rt60_s": [_reverb.finite(r["nominal_rt60_s"]) for r in recs],
                "rir_order_ok": rir_ok,
                "valid": bool(diff["ok"] and loud["ok"] and rir_ok),
            }
        )
