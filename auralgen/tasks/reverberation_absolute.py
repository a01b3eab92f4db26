"""reverberation_absolute: is a sound heard dry, in a room, or in a hall?

Options are the reverberation-time classes delimited by ``bins_s`` (default: dry below 0.3 s, room
0.3-1.2 s, hall above 1.2 s; the option texts give the ranges). Difficulty: the margin (percent,
in ratio) of the item's reverberation time from the nearest inner class boundary, as in
``duration_absolute``: a class is drawn uniformly, then one of its inner boundaries, and the
reverberation time sits the level's margin inside it (stored as ``margin_percent`` with
``edge_side``). A class must not depend on how the reverberation time is estimated: T20, T30 and
the early decay time (EDT), all ISO 3382-1 and read from the clip's decay after the dry sound ends,
each lie inside the labelled class, and the one nearest the boundary sits exactly at the margin
(on these curved decays T30 reads ~4 % above T20 and EDT ~13 % below). The room's absorption is
solved per item so that the clip's T20 is the recipe's (:mod:`auralgen.tasks._reverb`); the
recipe's T20 is moved until the nearest estimator sits at the margin.

Controlled: the dry sound (noise burst or click train by default), its duration, the room's
dimensions, the source-receiver distance and direction, and the integrated loudness (LUFS,
BS.1770, roved per item) are drawn independently of the class; the sound starts within a fixed
lead-in of a fixed-length clip (``clip_s``) that holds the longest decay the config can ask for.
The direct-to-reverberant ratio falls with the reverberation time (less absorption) and is part
of what the classes mean.

``measure`` reads the T20 from the clip (within :data:`TOLERANCE_FRACTION` of the recipe), T30 and
EDT (each of the three inside the labelled class), the margin the nearest of them keeps from the
nearest inner boundary (equal to ``margin_percent`` within :data:`MARGIN_TOLERANCE_PERCENT`), and
the sound's loudness.

Levels: the just-noticeable difference of reverberance is 5 % of the early decay time (ISO
3382-1:2009, Annex A, Table A.1); the hardest default margin, 5 %, sits at it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.listeners import reverb as listen
from auralgen.synth import n_samples
from auralgen.tasks import _reverb
from auralgen.tasks._binned import draw_at_margin, edge_text, margin_percent
from auralgen.tasks._compare import within
from auralgen.tasks._reverb import REVERB_AUDIO_FEATURES
from auralgen.tasks.base import AuditSpec, Measurement, register, require

TOLERANCE_FRACTION = 0.005  # measured T20 vs the recipe's (fraction); the solver holds it to 0.2 %
TOLERANCE_LU = 0.1  # measured loudness vs the item's (LU)
RETARGET_STEPS = 6  # solves that move the T20 target until the nearest estimator sits at the margin ...
RETARGET_TOLERANCE_PERCENT = 0.25  # ... within this (percentage points)
MARGIN_TOLERANCE_PERCENT = 1.5  # the nearest estimator's margin vs the level's (percentage points)
CLASS_NAMES = ("Dry", "Room", "Hall")


@dataclass(frozen=True)
class ReverberationAbsoluteConfig(_reverb.ReverbConfig):
    name: str = "reverberation_absolute"
    levels: tuple[float, ...] = (40, 20, 10, 5)
    bins_s: tuple[float, ...] = (0.3, 1.2)
    clip_s: float = 3.0  # the slot holds a decay of 2.4 s: a hall item's T20 sits above its EDT's margin

    def check_task(self, audio, key):
        b = self.bins_s
        require(
            len(b) == 2 and 0 < b[0] < b[1],
            f"{key}.bins_s={list(b)!r} is not two increasing boundaries; allowed: [dry/room, room/hall] with 0 < first "
            "< second (s)",
        )
        require(
            all(v >= 0 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} has a negative margin; allowed: percent >= 0",
        )
        m = 1 + max(self.levels) / 100.0
        require(
            b[0] * m < b[1] / m,
            f"{key}.levels={list(self.levels)!r}: a {max(self.levels)} % margin leaves no room in [{b[0]}, {b[1]}] s; "
            "allowed: a smaller margin or wider bins_s",
        )
        _reverb.check_reverb(self, audio, key, n_sounds=1, lowest_s=b[0] / m, highest_s=b[1] * m)


@register
class ReverberationAbsolute(_reverb.ReverbTask):
    name = "reverberation_absolute"
    n_sounds = 1
    audit = AuditSpec(
        (
            "bin",
            "edge_side",
            "margin_percent",
            "row.level",
            "sounds.0.rt60_s",
            *REVERB_AUDIO_FEATURES,
            # one sound in a room: its span to the -60 dB point is the sound plus its decay, and the decay
            # spreads the energy in time (a lower crest factor, a loudness the 400 ms blocks integrate longer)
            "audio.span_s",
            "audio.crest_db",
            "audio.loudness_lufs",
        ),
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
        "reverberation time measured from the sound's decay in the clip, and holds for each of T20, T30 and EDT (ISO "
        "3382-1); the level is the margin in percent of the estimator nearest a class boundary from it."
    )

    def edges(self) -> tuple[float, ...]:
        """Class boundaries with the outer ends (0 and the longest reverberation time a slot holds).

        Returns
        -------
        tuple of float
            Four edges in seconds of RT60, ascending.
        """
        return (0.0, *self.cfg.bins_s, _reverb.longest_rt60_s(self.cfg, 1))

    def bin_labels(self) -> list[str]:
        """The option texts, one per class (dry, room, hall), each naming its RT60 range in seconds.

        Returns
        -------
        list of str
            Three texts, shortest reverberation first.
        """
        lo, hi = self.cfg.bins_s
        return [
            f"{CLASS_NAMES[0]}: reverberation time below {edge_text(lo, 's')}",
            f"{CLASS_NAMES[1]}: reverberation time between {edge_text(lo, 's')} and {edge_text(hi, 's')}",
            f"{CLASS_NAMES[2]}: reverberation time above {edge_text(hi, 's')}",
        ]

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        """A class and an inner boundary, then the room: its T20 target is moved (:data:`RETARGET_STEPS`
        solves) until the estimator nearest that boundary (T20, T30 or EDT, measured on the solved
        sound) sits exactly the level's margin inside it, so every estimator gives the class."""
        level = self.as_level(level)
        edges = self.edges()
        k, side, rt = draw_at_margin(rng, edges, level.value)
        params = self.base_params(rng, [rt], bin=k, edge_side=side, margin_percent=round(margin_percent(rt, edges), 9))
        target = rt
        for _ in range(RETARGET_STEPS):
            est = list(_reverb.decay_estimates(_reverb.calibrated(params, target).wet, params).values())
            if not all(math.isfinite(v) and v > 0 for v in est):
                break  # an estimator cannot be read: measure() refuses the item
            nearest = min(est) if side == "low" else max(est)
            if abs(margin_percent(nearest, edges) - level.value) <= RETARGET_TOLERANCE_PERCENT:
                break
            target = min(max(target * rt / nearest, edges[k] * 1.0001), edges[k + 1] / 1.0001)
        params["sounds"][0]["rt60_s"] = float(target)
        return params

    def qa(self, params, rng, *, slot):
        labels = self.bin_labels()
        return self.make_qa(labels[params["bin"]], labels, rng, slot=slot)

    def eval_fields(self, params):
        """The margin from the nearest class boundary (percent, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["margin_percent"]), "difference_unit": "percent"}

    def measure(self, params, clips):
        """T20 against the recipe; T20, T30 and EDT each inside the labelled class; the margin of the
        estimator nearest an inner boundary equal to ``margin_percent`` (within
        :data:`MARGIN_TOLERANCE_PERCENT`); the loudness."""
        sound = params["sounds"][0]
        rec = self.sound_record(params, clips, sound)
        want, got = sound["rt60_s"], rec["rt60_s"]
        t20 = within("rt60_s", got, want, TOLERANCE_FRACTION * want)
        edges, k = self.edges(), params["bin"]
        sr = params["sample_rate_hz"]
        a = n_samples(sound["onset_s"], sr)
        est = _reverb.decay_estimates(clips[0].astype(np.float64), params, a, a + n_samples(params["slot_s"], sr))
        est["t20_s"] = got
        finite = all(math.isfinite(v) and v > 0 for v in est.values())
        in_bin = bool(finite and all(edges[k] <= v <= edges[k + 1] for v in est.values()))
        nearest = min(margin_percent(v, edges) for v in est.values()) if finite else math.nan
        margin = within("margin_percent", nearest, float(params["margin_percent"]), MARGIN_TOLERANCE_PERCENT)
        loud = within("loudness_lufs", rec["loudness_lufs"], params["loudness_lufs"], TOLERANCE_LU)
        return Measurement.from_dict(
            {
                "rt60_s": t20,
                "estimators_s": {n: _reverb.finite(v) for n, v in est.items()},
                "in_class": in_bin,
                "margin_percent": margin,
                "loudness_lufs": loud,
                "rir_rt60_s": _reverb.finite(rec["rir_rt60_s"]),
                "drr_db": _reverb.finite(rec["drr_db"], 3),
                "nominal_rt60_s": _reverb.finite(rec["nominal_rt60_s"]),
                "valid": bool(t20["ok"] and in_bin and margin["ok"] and loud["ok"]),
            }
        )
