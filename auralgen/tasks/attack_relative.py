"""attack_relative: two tones separated by a gap; does the second start more sharply, more softly or the same?

Difficulty: the rise-time ratio in percent, ``100 * (r_soft / r_sharp - 1)`` of the envelopes' 10-90 %
rise times (a log scale: each level multiplies the ratio). Both sounds are the same pure tone (frequency
and starting phase roved per item), of the same duration, the same release and the same steady-state
loudness (the carrier is set to ``loudness_lufs`` before the onset envelope, so the steady parts are
equal in LUFS; the total energy differs by the few ms of ramp). Only the onset ramp differs
(:mod:`auralgen.synth.attack`). The pair is centred geometrically on a rise time drawn independently of
the answer, and which sound is sharper is drawn uniformly. The clip length is fixed (``clip_s``).

``measure`` reads each sound's rise time from its Hilbert envelope
(:func:`auralgen.measure.attack.rise_time_s`); the item is valid when the measured ratio equals the level
within :data:`TOLERANCE_LOG` (in log ratio) and the steady parts' loudness differs by at most
:data:`TOLERANCE_LU`.

Levels: the human rise-time difference limen is roughly 20-30 % of the reference rise time (a Weber
fraction of ~0.2-0.3 for rise times of tens of ms; van Heuven & van den Broecke 1979, "Auditory
discrimination of rise and decay times in tone and noise bursts", J. Acoust. Soc. Am. 66(5), 1308-1315;
figure as we recall it, not re-checked against the paper). The default hardest level, 25 %, sits there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import attack as listen
from auralgen.tasks import _sounds
from auralgen.tasks._attack import check_attack, measured_rises, render_attack_clip, steady_loudness
from auralgen.tasks._compare import (
    CompareTask,
    check_differences,
    drawn_from,
    loudness_pair_header,
    pair_extremes,
    within,
)
from auralgen.tasks._timbre_onset import ROVE_NOTE, TonePairConfig
from auralgen.tasks.base import RELATIVE_FEATURES, AudioConfig, AuditSpec, Measurement, register

TOLERANCE_LOG = 0.03  # |ln(measured ratio) - ln(level ratio)|: ~3 % (each rise time is measured within ~1.3 %)
TOLERANCE_LU = 0.1  # the steady parts' measured loudness may differ by this much (LU)


@dataclass(frozen=True)
class AttackRelativeConfig(TonePairConfig):
    name: str = "attack_relative"
    levels: tuple[float, ...] = (0, 25, 50, 100, 200, 400)
    rise_s: Dist = Dist.of({"dist": "loguniform", "low": 0.008, "high": 0.04})
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 500.0, "high": 2000.0})
    release_s: float = 0.03
    tone_s: Dist = Dist.of((0.9, 1.1))

    def check_task(self, audio: AudioConfig, key: str) -> None:
        check_differences(self, key, "percent")
        check_attack(self, audio, key, *pair_extremes(self, key, "rise_s"), relative=True)


@register
class AttackRelative(CompareTask):
    name = "attack_relative"
    # no level feature is a target: each sound's steady loudness is roved (_sounds.LEVEL_ROVE_DB), which buries the
    # 0.06 dB less energy the slower ramp holds at the same steady level
    audit = AuditSpec(
        (*RELATIVE_FEATURES, "sounds.*.rise_s", "delta.rise_s"),
    )
    listener = staticmethod(listen.attack_relative)
    attribute = "attack"
    level_unit = "percent"
    easier = "larger"
    Config = AttackRelativeConfig
    answers = {"up": "More sharply", "down": "More softly", "same": "The same"}
    questions = (
        "Two tones are played one after the other. Does the second tone start more sharply, more softly, or the same "
        "as the first?",
        "Listen to the onsets of the two sounds. Compared with the first, does the second begin more sharply, more "
        "softly, or the same?",
        "How does the attack of the second sound compare with the attack of the first?",
    )
    card_note = (
        "Both sounds are the same pure tone with the same duration and release; each one's steady-state loudness "
        f"(LUFS of the steady part) {ROVE_NOTE}; only the onset ramp differs. The level is the ratio of the "
        "envelopes' 10-90 % rise times in percent, measured from each sound's Hilbert envelope; 'more sharply' means "
        "a shorter rise time."
    )

    drawn = drawn_from("rise", "freq", "tone", "gap", "lead", "loudness")

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level, direction = self.begin(rng, level)  # up: the second sound is the sharper
        centre = float(self.rise.sample(rng))
        step = self.ratio_step(level, direction)
        d = float(self.tone.sample(rng))
        common = {
            "freq_hz": float(self.freq.sample(rng)),
            "phase_rad": float(rng.uniform(0.0, 2 * math.pi)),
            "duration_s": d,
            "release_s": self.cfg.release_s,
        }
        lufs = _sounds.roved(rng, float(self.loudness.sample(rng)))
        sounds = [
            {**common, "rise_s": centre * step, "loudness_lufs": lufs[0]},
            {**common, "rise_s": centre / step, "loudness_lufs": lufs[1]},
        ]
        self.place_pair(rng, sounds)
        return {
            **loudness_pair_header(self, direction, level.value),
            "base_rise_s": centre,
            "sounds": sounds,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return [render_attack_clip(params)]

    def eval_fields(self, params):
        """The rise-time ratio (percent, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["difference"]), "difference_unit": "percent"}

    def measure(self, params, clips):
        x = clips[0][0].astype(np.float64)
        r = measured_rises(params, x)
        lufs = steady_loudness(params, x)
        got = math.log(r[0] / r[1]) if all(v > 0 for v in r) else math.nan  # > 0: the second is sharper
        want = self.sign(params["direction"]) * math.log1p(params["difference"] / 100.0)
        rec = within("rise_log_ratio", got, want, TOLERANCE_LOG)
        want_lu = params["sounds"][1]["loudness_lufs"] - params["sounds"][0]["loudness_lufs"]  # roved apart
        loud = within("steady_loudness_difference_lu", lufs[1] - lufs[0], want_lu, TOLERANCE_LU)
        return Measurement.from_dict(
            {
                "rise_ms": [round(v * 1000, 4) for v in r],
                "rise_log_ratio": rec,
                "difference_percent": round(100 * math.expm1(abs(got)), 3) if math.isfinite(got) else None,
                "steady_lufs": [round(v, 3) for v in lufs],
                "steady_loudness_difference_lu": loud,
                "valid": bool(rec["ok"] and loud["ok"]),
            }
        )
