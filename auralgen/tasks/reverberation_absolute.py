"""reverberation_absolute: is a sound heard dry, in a room, or in a hall?

Options are the reverberation-time classes delimited by ``bins_s`` (default: dry below 0.3 s, room
0.3-1.2 s, hall above 1.2 s; the option texts give the ranges). Difficulty: the margin (percent,
in ratio) of the item's reverberation time from the nearest inner class boundary, as in
``duration_absolute``: a class is drawn uniformly, then one of its inner boundaries, and the
reverberation time sits exactly the level's margin inside it (stored as ``margin_percent`` with
``edge_side``). The reverberation time is T20 (ISO 3382-1) read from the clip's decay after the
dry sound ends; the room's absorption is solved per item so that the clip's T20 is the recipe's
(:mod:`auralgen.tasks._reverb`).

Controlled: the dry sound (noise burst or click train by default), its duration, the room's
dimensions, the source-receiver distance and direction, and the integrated loudness (LUFS,
BS.1770, roved per item) are drawn independently of the class; the sound starts within a fixed
lead-in of a fixed-length clip (``clip_s``) that holds the longest decay the config can ask for.
The direct-to-reverberant ratio falls with the reverberation time (less absorption) and is part
of what the classes mean.

``measure`` reads the T20 from the clip (within :data:`TOLERANCE_FRACTION` of the recipe, inside
the labelled class) and the margin that T20 keeps from the nearest inner boundary (equal to
``margin_percent`` within the tolerance mapped to percent), and the sound's loudness.

Levels: the just-noticeable difference of reverberance is 5 % of the early decay time (ISO
3382-1:2009, Annex A, Table A.1); the hardest default margin, 5 %, sits at it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.listeners import reverb as listen
from auralgen.tasks import _reverb as R
from auralgen.tasks._compare import draw_at_margin, margin_check, margin_percent, within
from auralgen.tasks.base import AuditSpec, Measurement, register, require
from auralgen.tasks.reverberation_relative import REVERB_AUDIO_FEATURES

TOLERANCE_FRACTION = 0.005  # measured T20 vs the recipe's (fraction); the solver holds it to 0.2 %
TOLERANCE_LU = 0.1  # measured loudness vs the item's (LU)
CLASS_NAMES = ("Dry", "Room", "Hall")


@dataclass(frozen=True)
class ReverberationAbsoluteConfig(R.ReverbConfig):
    name: str = "reverberation_absolute"
    levels: tuple = (40, 20, 10, 5)
    bins_s: tuple = (0.3, 1.2)
    clip_s: float = 2.6

    def check_task(self, audio, key):
        b = self.bins_s
        require(len(b) == 2 and 0 < b[0] < b[1],
                f"{key}.bins_s={list(b)!r} is not two increasing boundaries; allowed: [dry/room, room/hall] with 0 < first < second (s)")  # fmt: skip
        require(all(v >= 0 for v in self.levels), f"{key}.levels={list(self.levels)!r} has a negative margin; allowed: percent >= 0")  # fmt: skip
        m = 1 + max(self.levels) / 100.0
        require(b[0] * m < b[1] / m,
                f"{key}.levels={list(self.levels)!r}: a {max(self.levels)} % margin leaves no room in [{b[0]}, {b[1]}] s; allowed: a smaller margin or wider bins_s")  # fmt: skip
        R.check_reverb(self, audio, key, n_sounds=1, lowest_s=b[0] / m, highest_s=b[1] * m)


def _fmt(s: float) -> str:
    return f"{s:g} s"


@register
class ReverberationAbsolute(R.ReverbTask):
    name = "reverberation_absolute"
    n_sounds = 1
    audit = AuditSpec(
        ("bin", "edge_side", "margin_percent", "row.level", "sounds.0.rt60_s", *REVERB_AUDIO_FEATURES),
        listener_easiest="max",
        listener_floor=0.95,
    )
    listener = staticmethod(listen.reverberation_absolute)
    sub_category = "absolute_perception"
    attribute = "reverberation"
    regime = "absolute"
    level_unit = "percent"
    n_choices = 3
    easier = "larger"
    Config = ReverberationAbsoluteConfig
    questions = (
        "Where was this sound recorded: somewhere dry, in a room, or in a hall?",
        "Listen to how the sound dies away. Which space does its reverberation suggest?",
        "How reverberant is the space this sound is heard in?",
    )
    card_note = (
        "One dry sound (noise burst or click train) in a room whose absorption sets the reverberation time; the room's "
        "size, the distance, the sound and its loudness (LUFS) are drawn independently of the class. The class is the "
        "reverberation time (T20, ISO 3382-1) measured from the sound's decay in the clip; the level is its margin in "
        "percent from the nearest class boundary."
    )

    def edges(self) -> tuple[float, ...]:
        """Class boundaries with the outer ends (0 and the longest reverberation time a slot holds)."""
        return (0.0, *self.cfg.bins_s, R.longest_rt60_s(self.cfg, 1))

    def bin_labels(self) -> list[str]:
        lo, hi = self.cfg.bins_s
        return [f"{CLASS_NAMES[0]}: reverberation time below {_fmt(lo)}",
                f"{CLASS_NAMES[1]}: reverberation time between {_fmt(lo)} and {_fmt(hi)}",
                f"{CLASS_NAMES[2]}: reverberation time above {_fmt(hi)}"]  # fmt: skip

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        k, side, rt = draw_at_margin(rng, self.edges(), level.value)
        return self.base_params(rng, [rt], bin=k, edge_side=side, margin_percent=round(margin_percent(rt, self.edges()), 9))  # fmt: skip

    def qa(self, params, rng, *, slot):
        labels = self.bin_labels()
        return self.make_qa(labels[params["bin"]], labels, rng, slot=slot)

    def eval_fields(self, params):
        """The margin from the nearest class boundary (percent, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["margin_percent"]), "difference_unit": "percent"}

    def measure(self, params, clips):
        rec = self.sound_record(params, clips, params["sounds"][0])
        want, got = params["sounds"][0]["rt60_s"], rec["rt60_s"]
        tol = TOLERANCE_FRACTION * want
        t20 = within("rt60_s", got, want, tol)
        edges = self.edges()
        k = params["bin"]
        in_bin = bool(math.isfinite(got) and edges[k] <= got <= edges[k + 1])
        margin = margin_check(got, want, edges, tol)
        loud = within("loudness_lufs", rec["loudness_lufs"], params["loudness_lufs"], TOLERANCE_LU)
        return Measurement.from_dict({
            "rt60_s": t20, "in_class": in_bin, "margin_percent": margin, "loudness_lufs": loud,
            "rir_rt60_s": R.finite(rec["rir_rt60_s"]), "drr_db": R.finite(rec["drr_db"], 3),
            "nominal_rt60_s": R.finite(rec["nominal_rt60_s"]),
            "valid": bool(t20["ok"] and in_bin and margin["ok"] and loud["ok"]),
        })  # fmt: skip
