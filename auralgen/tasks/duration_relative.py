"""duration_relative: two sounds; is the second longer, shorter or the same duration?

Difficulty: percent difference (longer = shorter * (1 + p/100)). The pair is centred
(geometrically) on a duration drawn independently of the answer; levels are roved per
sound; both sounds share the stimulus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from auralgen.core.random import Dist
from auralgen.listeners import tones as listen
from auralgen.tasks import _sounds
from auralgen.tasks._compare import CompareConfig, CompareTask
from auralgen.tasks.base import RELATIVE_FEATURES, AuditSpec, Measurement, register

TOLERANCE_S = 0.015  # per sound, measured by energy envelope (ramps shorten it by ~5 ms)


@dataclass(frozen=True)
class DurationRelativeConfig(CompareConfig):
    name: str = "duration_relative"
    levels: tuple[float, ...] = (0, 20, 50, 100, 150, 200)
    tone_s: Dist = Dist.of((0.3, 0.7))
    gap_s: Dist = Dist.of((0.3, 0.5))
    lead_s: Dist = Dist.of((0.1, 0.4))

    def shortest_factor(self) -> float:
        return 1.0 / math.sqrt(1 + max(self.levels) / 100.0)

    def longest_pair_s(self) -> float:
        r = math.sqrt(1 + max(self.levels) / 100.0)
        return _sounds.max_of(_sounds.dist("tone_s", self.tone_s)) * (r + 1.0 / r)


@register
class DurationRelative(CompareTask):
    name = "duration_relative"
    audit = AuditSpec(
        (
            *RELATIVE_FEATURES,
            "sounds.*.duration_s",
            "delta.duration_s",
            "sounds.1.onset_s",
            "delta.onset_s",
            "audio.active_s",
            "audio.delta_duration_s",
            "audio.last_offset_s",
            "audio.rms_dbfs",
            # the clip's integrated loudness sums each sound's energy, which grows with its length: beside the
            # parts' levels it measures the durations (the nuisance control: 40.0 % with it, 36.6 % without, on
            # 1,005 items, honest chance 34.2 %)
            "audio.loudness_lufs",
            "row.flac_bytes",
        ),
    )
    listener = staticmethod(listen.duration_relative)
    attribute = "duration"
    human_threshold = (
        10.0,
        "percent",
        "Abel 1972, JASA 51(4B) 1219-1223: Weber fractions of about 0.1 for tone and noise bursts",
    )
    level_unit = "percent"
    Config = DurationRelativeConfig
    answers = {"up": "Longer", "down": "Shorter", "same": "The same"}
    questions = (
        "Two sounds are played one after the other. Is the second sound longer, shorter, or the same duration as the "
        "first?",
        "Compared with the first sound, does the second sound last longer, shorter, or equally long?",
        "How does the duration of the second sound compare with the first?",
    )

    def make_pair(self, rng, base, direction, percent):
        centre = float(self.tone.sample(rng))
        r = math.sqrt(1 + percent / 100.0) ** self.sign(direction)
        a = {**base, "duration_s": centre / r, "level_db_spl": float(self.level.sample(rng))}
        b = {**base, "duration_s": centre * r, "level_db_spl": float(self.level.sample(rng))}
        if base["kind"] == "clip":  # one piece of the recording, time-stretched to both durations
            a["source_s"] = b["source_s"] = centre
        return a, b, {"centre_duration_s": centre}

    def measure(self, params, clips):
        from auralgen.measure import segments

        segs = segments(clips[0][0], params["sample_rate_hz"])
        expected = [s["duration_s"] for s in params["sounds"]]
        measured = [s.offset_s - s.onset_s for s in segs]
        ok = len(measured) == 2 and all(abs(m - e) <= TOLERANCE_S for m, e in zip(measured, expected))
        return Measurement.from_dict(
            {
                "durations_s": [round(m, 4) for m in measured],
                "expected_s": [round(e, 4) for e in expected],
                "tolerance_s": TOLERANCE_S,
                "valid": bool(ok),
            }
        )
