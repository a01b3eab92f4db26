"""attack_absolute: does one tone start sharply, moderately or softly (by its 10-90 % rise time)?

The classes are rise-time ranges delimited by ``bins_s`` (default: sharp below 10 ms, medium 10-60 ms,
soft above 60 ms; the option texts state the ranges in ms). Difficulty: the margin (percent, in ratio)
of the rise time from the nearest class boundary. Every item has exactly its level's margin (a class
drawn uniformly, then one of its inner edges, the rise time that margin inside it), stored as
``margin_percent`` with ``edge_side``; ``measure`` reads the rise time back from the Hilbert envelope
(within :data:`TOLERANCE_RATIO`) and the margin from it. The carrier frequency and phase, the duration,
the onset and the steady-state loudness (LUFS of the carrier) are roved independently of the answer;
the clip length is fixed (``clip_s``).

Levels: the hardest default margin, 12 %, is about half the human rise-time difference limen of
~20-30 % (van Heuven & van den Broecke 1979, J. Acoust. Soc. Am. 66(5), 1308-1315; see attack_relative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import attack as listen
from auralgen.tasks._attack import check_attack, measured_rises, render_attack_clip
from auralgen.tasks._binned import BinnedAbsoluteTask, between_labels, check_three_bins, edge_text
from auralgen.tasks._compare import drawn_from
from auralgen.tasks._timbre_onset import OneToneConfig
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, register

TOLERANCE_RATIO = 0.02  # the measured rise time may differ from the recipe's by 2 %
NAMES = ("Sharp", "Medium", "Soft")


@dataclass(frozen=True)
class AttackAbsoluteConfig(OneToneConfig):
    name: str = "attack_absolute"
    levels: tuple[float, ...] = (100, 50, 25, 12)
    bins_s: tuple[float, ...] = (0.01, 0.06)
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 500.0, "high": 2000.0})
    release_s: float = 0.03
    tone_s: Dist = Dist.of((0.9, 1.1))

    def check_task(self, audio: AudioConfig, key: str) -> None:
        b = self.bins_s
        m = check_three_bins(key, "bins_s", b, self.levels, "rise times", NAMES, "s")
        check_attack(self, audio, key, b[0] / m, b[1] * m, relative=False)


@register
class AttackAbsolute(BinnedAbsoluteTask):
    name = "attack_absolute"
    # a slower linear rise holds less energy below the same steady level: the RMS, and the crest factor
    # (peak over RMS, which no level roving moves), follow the rise time
    audit = AuditSpec(("bin", "edge_side", "sounds.0.rise_s", "audio.rms_dbfs", "audio.crest_db"))
    listener = staticmethod(listen.attack_absolute)
    attribute = "attack"
    easier = "larger"
    bins_field = "bins_s"
    drawn = drawn_from("freq", "tone", "lead", "loudness")
    Config = AttackAbsoluteConfig
    questions = (
        "Does this tone start sharply, moderately, or softly?",
        "Listen to the onset of the sound. How quickly does it rise to full level?",
        "Classify the attack of the sound you hear.",
    )
    card_note = (
        "A single pure tone whose onset is a linear amplitude ramp; the class is the range of the envelope's "
        "10-90 % rise time (measured from the Hilbert envelope) that the option text states. Carrier frequency, "
        "duration, onset and steady-state loudness (LUFS) are roved independently of the class; the level is the "
        "rise time's margin in percent from the nearest class boundary."
    )

    def labels(self) -> list[str]:
        return between_labels(NAMES, "rise time", *(edge_text(v * 1000, "ms") for v in self.cfg.bins_s))

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        k, side, rise = self.draw_bin(rng, level.value)
        sound = {
            "freq_hz": float(self.freq.sample(rng)),
            "phase_rad": float(rng.uniform(0.0, 2 * math.pi)),
            "duration_s": float(self.tone.sample(rng)),
            "release_s": self.cfg.release_s,
            "loudness_lufs": float(self.loudness.sample(rng)),
            "rise_s": rise,
            "onset_s": float(self.lead.sample(rng)),
        }
        return {
            "sample_rate_hz": self.sample_rate,
            "clip_s": self.cfg.clip_s,
            **self.bin_record(k, side, rise),
            "sounds": [sound],
        }

    def render(self, params):
        return [render_attack_clip(params)]

    def measure(self, params, clips):
        """The rise time of the sound's envelope: within :data:`TOLERANCE_RATIO` of the recipe's, inside the
        labelled class, and at the recipe's margin from the nearest boundary (tolerance mapped to percent)."""
        (r,) = measured_rises(params, clips[0][0].astype(np.float64))
        expected = params["sounds"][0]["rise_s"]
        tol = TOLERANCE_RATIO * expected
        k = params["bin"]
        ok = abs(r - expected) <= tol and self.in_bin(r, k)
        margin = self.margin_check(r, expected, tol)
        return Measurement.from_dict(
            {
                "rise_ms": round(r * 1000, 4) if math.isfinite(r) else None,
                "expected_ms": round(expected * 1000, 4),
                "margin_percent": margin,
                "valid": bool(ok and margin["ok"]),
            }
        )
