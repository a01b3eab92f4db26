"""pitch_relative: two tones separated by a gap; is the second higher, lower or the same?

Difficulty: the pitch difference in cents. The pair is centred (geometrically) on a
base frequency drawn independently of the answer; the two levels are roved
independently, so the higher tone is not more often the louder, nor the first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from auralgen.core.random import Dist
from auralgen.listeners import tones as listen
from auralgen.tasks import _sounds
from auralgen.tasks._compare import CompareConfig, CompareTask, within
from auralgen.tasks.base import RELATIVE_FEATURES, AuditSpec, Measurement, register, require

MAX_DIFFERENCE_CENTS = 4800  # four octaves: any larger pair leaves the audible range
TOLERANCE_CENTS = 3.0  # absolute part of the allowed measurement error
F0_WINDOW_S = 0.25  # analysis window of each tone


@dataclass(frozen=True)
class PitchRelativeConfig(CompareConfig):
    name: str = "pitch_relative"
    levels: tuple[float, ...] = (0, 50, 100, 200, 400, 1200)
    stimuli: tuple[str, ...] = ("pure", "harmonic")
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 200.0, "high": 800.0})
    difference_unit: ClassVar[str] = "cents"
    allowed_stimuli: ClassVar[tuple[str, ...]] = _sounds.PITCHED

    def check_differences(self, key: str) -> None:
        super().check_differences(key)
        require(
            max(self.levels) <= MAX_DIFFERENCE_CENTS,
            f"{key}.levels={list(self.levels)!r} reaches {max(self.levels)} cents; "
            f"allowed: 0 <= levels <= {MAX_DIFFERENCE_CENTS} cents (four octaves)",
        )

    def freq_factor(self) -> float:
        return 2.0 ** (max(self.levels) / 2400.0)


@register
class PitchRelative(CompareTask):
    name = "pitch_relative"
    audit = AuditSpec(
        (*RELATIVE_FEATURES, "sounds.*.freq_hz", "delta.freq_hz", "sounds.*.shift_cents", "delta.shift_cents"),
    )
    listener = staticmethod(listen.pitch_relative)
    attribute = "pitch"
    human_threshold = (
        3.5,
        "cents",
        "Wier, Jesteadt & Green 1977, JASA 61(1) 178-184: about 0.2 % of frequency at 1 kHz, 40 dB SL",
    )
    level_unit = "cents"
    Config = PitchRelativeConfig
    answers = {"up": "Higher", "down": "Lower", "same": "The same"}
    questions = (
        "Two tones are played one after the other. Is the pitch of the second tone higher, lower, or the same as the "
        "first?",
        "Listen to the two sounds. Compared with the first sound, is the second one higher in pitch, lower, or the "
        "same?",
        "How does the pitch of the second tone compare with the pitch of the first tone?",
    )

    def make_pair(self, rng, base, direction, cents):
        if base["kind"] == "clip":  # a recording shifted by -/+ half the difference (librosa), then measured
            # each copy's length drawn on its own: a recording's decay shifted down rings a little longer above
            # the -60 dB floor than shifted up (up to 0.1 s), which two equal cuts would let say the direction
            da, db = float(self.tone.sample(rng)), float(self.tone.sample(rng))
            half = self.sign(direction) * cents / 2.0 + 0.0  # + 0.0: no "-0.0" in the recipe
            a = {**base, "shift_cents": -half, "duration_s": da, "level_db_spl": float(self.level.sample(rng))}
            b = {**base, "shift_cents": half, "duration_s": db, "level_db_spl": float(self.level.sample(rng))}
            return a, b, {}
        g = base.get("freq_hz", 0.0)
        step = 2.0 ** (self.sign(direction) * cents / 2400.0)
        d = float(self.tone.sample(rng))
        a = {**base, "freq_hz": g / step, "duration_s": d, "level_db_spl": float(self.level.sample(rng))}
        b = {**base, "freq_hz": g * step, "duration_s": d, "level_db_spl": float(self.level.sample(rng))}
        return a, b, {"base_freq_hz": g}

    def measure(self, params, clips):
        from auralgen.measure import cents, f0_hz

        sr = params["sample_rate_hz"]
        half = int(F0_WINDOW_S * sr / 2)  # the tones are stationary: a centred window suffices
        mids = [((a + b) // 2, min(half, (b - a) // 2)) for a, b in _sounds.sound_windows(params)]
        f = [f0_hz(clips[0][0, m - h : m + h], sr) for m, h in mids]
        expected = self.sign(params["direction"]) * params["difference"]
        tracked = all(math.isfinite(v) and v > 0 for v in f)  # a recording may have no pitch to track
        got = cents(f[0], f[1]) if tracked else math.nan
        rec = within("cents", got, expected, max(TOLERANCE_CENTS, 0.02 * params["difference"]))
        return Measurement.from_dict(
            {"f0_hz": [round(v, 3) if math.isfinite(v) else None for v in f], "cents": rec, "valid": rec["ok"]}
        )
