"""Two-interval comparison tasks: sound A, gap, sound B; is B higher/louder/longer than A?

Everything except the probed attribute is drawn independently of the answer: the
stimulus kind and frequency (shared by both sounds), the levels (roved per sound,
except in the loudness task), the gap, the lead-in and which sound is the larger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from auralgen.core.qa import QA
from auralgen.tasks import _sounds as S
from auralgen.tasks.base import RECORDED_TOO, AudioConfig, Level, Task, TaskConfig, require

CREST = {"pure": math.sqrt(2.0), "harmonic": 4.0, "noise": 6.0, "clip": 31.6}  # peak / RMS bounds per stimulus kind


@dataclass(frozen=True)
class CompareConfig(TaskConfig):
    stimuli: tuple = ("pure", "harmonic", "noise")
    freq_hz: Any = field(default_factory=lambda: {"dist": "loguniform", "low": 250.0, "high": 1000.0})
    n_harmonics: int = 5
    tone_s: Any = (0.6, 1.0)
    gap_s: Any = (0.3, 0.6)
    lead_s: Any = (0.1, 0.5)
    level_db_spl: Any = (60.0, 70.0)
    clip_s: float = 4.0
    ramp_s: float = 0.02


class CompareTask(Task):
    """Base of the relative tasks; subclasses set ``answers`` and ``make_pair``."""

    regime = "relative"
    sub_category = "relative_discrimination"
    n_choices = 3
    zero_level_answer = True  # "The same" is the answer at the zero level only
    answers: ClassVar[dict[str, str]]  # direction -> option text; directions: up, down, same
    allowed_stimuli: ClassVar[tuple[str, ...]] = S.STIMULI
    takes_sources = RECORDED_TOO  # a recorded sound is moved by a measured transform

    def __init__(self, cfg: CompareConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.freq = S.dist("freq_hz", cfg.freq_hz, low=1e-9)
        self.tone = S.dist("tone_s", cfg.tone_s, low=1e-9)
        self.gap = S.dist("gap_s", cfg.gap_s, low=0.0)
        self.lead = S.dist("lead_s", cfg.lead_s, low=0.0)
        self.level = S.dist("level_db_spl", cfg.level_db_spl)

    # -- validation ------------------------------------------------------------
    @classmethod
    def check_differences(cls, cfg, key: str) -> None:
        """Every level is a difference >= 0 (the direction is drawn, not signed in the level)."""
        require(
            all(v >= 0 for v in cfg.levels),
            f"{key}.levels={list(cfg.levels)!r} has a negative difference; allowed: {cls.level_unit} >= 0",
        )

    @classmethod
    def validate_config(cls, cfg: CompareConfig, audio: AudioConfig, key: str) -> None:
        cls.check_differences(cfg, key)
        S.check_recorded(key, cfg, audio)
        S.check_stimuli(f"{key}.stimuli", cfg.stimuli, cls.allowed_stimuli)
        sr = cfg.sample_rate or audio.sample_rate
        freq = S.dist(f"{key}.freq_hz", cfg.freq_hz, low=1e-9)
        for name in ("tone_s", "gap_s", "lead_s"):
            S.dist(f"{key}.{name}", getattr(cfg, name), low=1e-9 if name == "tone_s" else 0.0)
        require(cfg.ramp_s >= 0, f"{key}.ramp_s={cfg.ramp_s} is negative; allowed: >= 0")
        require(cfg.n_harmonics >= 1, f"{key}.n_harmonics={cfg.n_harmonics} is too small; allowed: >= 1")
        require(
            2 * cfg.ramp_s <= S.min_of(S.dist(f"{key}.tone_s", cfg.tone_s)) * cls.shortest_factor(cfg),
            f"{key}.ramp_s={cfg.ramp_s} is longer than half the shortest sound; allowed: 2*ramp_s <= shortest sound",
        )
        top = S.max_of(freq) * cls.freq_factor(cfg)
        if not audio.source.recorded and any(s in S.PITCHED for s in cfg.stimuli):
            top_h = top * (cfg.n_harmonics if "harmonic" in cfg.stimuli else 1)
            require(
                top_h < sr / 2,
                f"{key}.freq_hz={cfg.freq_hz!r} reaches {top_h:.0f} Hz (highest tone or harmonic) at or above Nyquist ({sr / 2:.0f} Hz); allowed: below Nyquist",
            )
        loud = S.max_of(S.dist(f"{key}.level_db_spl", cfg.level_db_spl)) + cls.level_headroom(cfg)
        crest = CREST["clip"] if audio.source.recorded else max(CREST[s] for s in cfg.stimuli)
        max_ok = audio.full_scale_db_spl - 20 * math.log10(crest)
        require(
            loud <= max_ok,
            f"{key}.level_db_spl={cfg.level_db_spl!r} reaches {loud:.1f} dB SPL, which clips at full_scale_db_spl={audio.full_scale_db_spl}; allowed: at most {max_ok:.1f} dB SPL",
        )
        worst = S.min_of(S.dist(f"{key}.lead_s", cfg.lead_s)) + S.max_of(S.dist(f"{key}.gap_s", cfg.gap_s))
        worst += cls.longest_pair_s(cfg)
        S.check_fits(key, worst, cfg.clip_s)

    @classmethod
    def freq_factor(cls, cfg) -> float:
        return 1.0

    @classmethod
    def level_headroom(cls, cfg) -> float:
        return 0.0

    @classmethod
    def shortest_factor(cls, cfg) -> float:
        return 1.0

    @classmethod
    def longest_pair_s(cls, cfg) -> float:
        return 2 * S.max_of(S.dist("tone_s", cfg.tone_s))

    # -- sampling ------------------------------------------------------------
    def draw_direction(self, rng: np.random.Generator, level: Level) -> str:
        return "same" if level.value == 0 else ("up", "down")[int(rng.integers(2))]

    def sample(self, rng: np.random.Generator, level: int) -> dict[str, Any]:
        level = self.as_level(level)
        direction = self.draw_direction(rng, level)
        if self.audio.source.recorded:  # the longest piece a pair may read from the file
            base = S.draw_clip(rng, self.audio.source, self.max_source_s())
        else:
            base = S.draw_sound(rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics)
        a, b, extra = self.make_pair(rng, base, direction, level.value)
        t1, t2 = S.two_interval_timing(rng, a["duration_s"], b["duration_s"], self.gap, self.lead, self.cfg.clip_s)
        a["onset_s"], b["onset_s"] = t1, t2
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            "direction": direction,
            "difference": level.value,
            **extra,
            "sounds": [a, b],
        }

    def make_pair(self, rng, base: dict, direction: str, value: float) -> tuple[dict, dict, dict]:
        raise NotImplementedError

    def max_source_s(self) -> float:
        """The longest piece of a recording one sound of a pair reads (the longest tone)."""
        return S.max_of(self.tone)

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return [S.render_sounds(params)]

    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        return self.make_qa(self.answers[params["direction"]], list(self.answers.values()), rng, slot=slot)

    def expected_answers(self, level_value: float, options: list[str]) -> set[str]:
        """ "The same" exactly at difference 0, one of the two directions elsewhere."""
        same = self.answers["same"]
        return {same} if level_value == 0 else set(self.answers.values()) - {same}

    @staticmethod
    def sign(direction: str) -> int:
        return {"up": 1, "down": -1, "same": 0}[direction]


def check_config(cls):
    """Attach ``cls.validate_config`` as the Config's ``check_task`` hook."""

    def check(self, audio, key):
        cls.validate_config(self, audio, key)

    cls.Config.check_task = check
    return cls


def within(name: str, measured: float, expected: float, tol: float) -> dict[str, Any]:
    """A measured-vs-expected record with its verdict."""
    ok = math.isfinite(measured) and abs(measured - expected) <= tol
    shown = round(measured, 4) if math.isfinite(measured) else None
    return {"measured": shown, "expected": round(expected, 4), "tolerance": tol, "ok": bool(ok)}


# -- absolute tasks: a value at an exact margin from a bin edge ------------------------------------
def bin_sides(k: int, n_bins: int) -> tuple[str, ...]:
    """The edges of bin ``k`` (of ``n_bins``) a value may sit near: ``"low"`` (its lower edge) for
    every bin but the first, ``"high"`` (its upper edge) for every bin but the last."""
    return (("low",) if k > 0 else ()) + (("high",) if k < n_bins - 1 else ())


def at_margin(edges: tuple[float, ...], k: int, side: str, margin_percent: float) -> float:
    """The value inside bin ``k`` of ``edges`` exactly ``margin_percent`` (in ratio) from its
    ``side`` edge: ``edges[k] * (1 + m)`` or ``edges[k + 1] / (1 + m)``."""
    m = 1 + margin_percent / 100.0
    return float(edges[k] * m if side == "low" else edges[k + 1] / m)


def draw_at_margin(rng: np.random.Generator, edges: tuple[float, ...], margin_percent: float) -> tuple[int, str, float]:
    """``(bin, side, value)``: a bin drawn uniformly, then one of its inner edges (:func:`bin_sides`)
    uniformly, and the value exactly ``margin_percent`` inside that edge. Two draws, in that order."""
    n = len(edges) - 1
    k = int(rng.integers(n))
    sides = bin_sides(k, n)
    side = sides[int(rng.integers(len(sides)))]
    return k, side, at_margin(edges, k, side, margin_percent)


def margin_percent(value: float, edges: tuple[float, ...]) -> float:
    """Margin (percent, in ratio) of ``value`` from the nearest *inner* bin edge of ``edges``
    (the outer ends are the range, not bin boundaries)."""
    return min(100.0 * (max(value / e, e / value) - 1.0) for e in edges[1:-1])


def margin_check(measured: float, expected: float, edges: tuple[float, ...], tolerance: float) -> dict[str, Any]:
    """The margin (:func:`margin_percent`) of a measured value against the recipe's, as a
    :func:`within` record whose tolerance is the value's ``tolerance`` mapped to percent (the
    larger margin change of ``expected -/+ tolerance``)."""
    want = margin_percent(expected, edges)
    tol = max(abs(margin_percent(expected + s * tolerance, edges) - want) for s in (-1, 1))
    got = margin_percent(measured, edges) if math.isfinite(measured) and measured > 0 else math.nan
    return within("margin_percent", got, want, round(tol, 4))


def signed_ratio_percent(first: float, second: float) -> float:
    """``100 * (larger / smaller - 1)``, positive when ``second`` is the larger (NaN if either is not > 0)."""
    if not (math.isfinite(first) and math.isfinite(second) and first > 0 and second > 0):
        return math.nan
    return math.copysign(100.0 * (max(first, second) / min(first, second) - 1.0), second - first)
