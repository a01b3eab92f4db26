"""Two-interval comparison tasks: sound A, gap, sound B; is B higher/louder/longer than A?

Everything except the probed attribute is drawn independently of the answer: the
stimulus kind and frequency (shared by both sounds), the levels (roved per sound,
except in the loudness task), the gap, the lead-in and which sound is the larger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.qa import QA
from auralgen.core.random import Dist
from auralgen.tasks import _sounds
from auralgen.tasks.base import RECORDED_TOO, AudioConfig, Level, Task, TaskConfig, require
from auralgen.tasks.design import SameAtZero

CREST = {"pure": math.sqrt(2.0), "harmonic": 4.0, "noise": 6.0, "clip": 31.6}  # peak / RMS bounds per stimulus kind


@dataclass(frozen=True)
class CompareConfig(TaskConfig):
    """The config of a comparison of two tones (pitch, loudness, duration): its fields and its checks.

    What differs between these tasks is a hook each: the unit of a difference (``difference_unit``),
    the stimuli allowed, how far the pair reaches above the base frequency (:meth:`freq_factor`) and
    the mean level (:meth:`level_headroom`), how much shorter the shortest sound is
    (:meth:`shortest_factor`) and how long the longest pair lasts (:meth:`longest_pair_s`).
    """

    stimuli: tuple[str, ...] = ("pure", "harmonic", "noise")
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 250.0, "high": 1000.0})
    n_harmonics: int = 5
    tone_s: Dist = Dist.of((0.6, 1.0))
    gap_s: Dist = Dist.of((0.3, 0.6))
    lead_s: Dist = Dist.of((0.1, 0.5))
    level_db_spl: Dist = Dist.of((60.0, 70.0))
    clip_s: float = 4.0
    ramp_s: float = 0.02
    difference_unit: ClassVar[str] = "percent"  # the unit of a level, as the task's ``level_unit``
    allowed_stimuli: ClassVar[tuple[str, ...]] = _sounds.STIMULI

    def check_task(self, audio: AudioConfig, key: str) -> None:
        self.check_differences(key)
        _sounds.check_recorded(key, self, audio)
        _sounds.check_stimuli(f"{key}.stimuli", self.stimuli, self.allowed_stimuli)
        _sounds.dist(f"{key}.freq_hz", self.freq_hz, low=1e-9)
        for name in ("tone_s", "gap_s", "lead_s"):
            _sounds.dist(f"{key}.{name}", getattr(self, name), low=1e-9 if name == "tone_s" else 0.0)
        require(self.ramp_s >= 0, f"{key}.ramp_s={self.ramp_s} is negative; allowed: >= 0")
        require(self.n_harmonics >= 1, f"{key}.n_harmonics={self.n_harmonics} is too small; allowed: >= 1")
        require(
            2 * self.ramp_s <= _sounds.min_of(_sounds.dist(f"{key}.tone_s", self.tone_s)) * self.shortest_factor(),
            f"{key}.ramp_s={self.ramp_s} is longer than half the shortest sound; allowed: 2*ramp_s <= shortest sound",
        )
        self.check_nyquist(audio, key)
        self.check_loudest(audio, key)
        worst = _sounds.min_of(_sounds.dist(f"{key}.lead_s", self.lead_s)) + _sounds.max_of(
            _sounds.dist(f"{key}.gap_s", self.gap_s)
        )
        _sounds.check_fits(key, worst + self.longest_pair_s(), self.clip_s)

    def check_differences(self, key: str) -> None:
        """Every level is a difference >= 0 (the direction is drawn, not signed in the level)."""
        check_differences(self, key, self.difference_unit)

    def check_nyquist(self, audio: AudioConfig, key: str) -> None:
        """The highest tone (or harmonic) of a synthetic pair stays below Nyquist."""
        sr = self.sample_rate or audio.sample_rate
        top = _sounds.max_of(_sounds.dist(f"{key}.freq_hz", self.freq_hz, low=1e-9)) * self.freq_factor()
        if not audio.source.recorded and any(s in _sounds.PITCHED for s in self.stimuli):
            top_h = top * (self.n_harmonics if "harmonic" in self.stimuli else 1)
            require(
                top_h < sr / 2,
                f"{key}.freq_hz={self.freq_hz!r} reaches {top_h:.0f} Hz (highest tone or harmonic) at or above "
                f"Nyquist ({sr / 2:.0f} Hz); allowed: below Nyquist",
            )

    def check_loudest(self, audio: AudioConfig, key: str) -> None:
        """The loudest sound's peak (its level plus the stimulus' crest factor) stays below full scale."""
        loud = _sounds.max_of(_sounds.dist(f"{key}.level_db_spl", self.level_db_spl)) + self.level_headroom()
        crest = CREST["clip"] if audio.source.recorded else max(CREST[s] for s in self.stimuli)
        max_ok = audio.full_scale_db_spl - 20 * math.log10(crest)
        require(
            loud <= max_ok,
            f"{key}.level_db_spl={self.level_db_spl!r} reaches {loud:.1f} dB SPL, which clips at "
            f"full_scale_db_spl={audio.full_scale_db_spl}; allowed: at most {max_ok:.1f} dB SPL",
        )

    def freq_factor(self) -> float:
        """The highest tone of a pair over its base frequency (a hook: 1.0 unless the task moves frequency).

        Returns
        -------
        float
            A ratio >= 1, e.g. ``2 ** (max cents / 2400)`` for a pitch pair centred on the base.
        """
        return 1.0

    def level_headroom(self) -> float:
        """dB the louder sound of a pair may lie above ``level_db_spl`` (a hook: 0 unless the task moves level).

        Returns
        -------
        float
            dB, >= 0.
        """
        return 0.0

    def shortest_factor(self) -> float:
        """The shortest sound of a pair over the shortest ``tone_s`` (a hook: 1.0 unless the task moves duration).

        Returns
        -------
        float
            A ratio in (0, 1].
        """
        return 1.0

    def longest_pair_s(self) -> float:
        """The longest two sounds of a pair together (a hook: twice the longest ``tone_s`` here).

        Returns
        -------
        float
            Seconds.
        """
        return 2 * _sounds.max_of(_sounds.dist("tone_s", self.tone_s))


def check_differences(cfg: TaskConfig, key: str, unit: str) -> None:
    """Every level of ``cfg`` is a difference >= 0 in ``unit`` (the direction is drawn, not signed)."""
    require(
        all(v >= 0 for v in cfg.levels),
        f"{key}.levels={list(cfg.levels)!r} has a negative difference; allowed: {unit} >= 0",
    )


@dataclass(frozen=True)
class Drawn:
    """A distribution a task draws from: the config field it is read from and the bounds of its support."""

    field: str
    low: float | None = None
    high: float | None = None


# the distributions the comparison and binned tasks draw from, by the attribute each is parsed into
STANDARD_DRAWN = {
    "freq": Drawn("freq_hz", low=1e-9),
    "f0": Drawn("f0_hz", low=1e-9),
    "centroid": Drawn("centroid_hz", low=1e-9),
    "rise": Drawn("rise_s", low=1e-9),
    "tone": Drawn("tone_s", low=1e-9),
    "total": Drawn("total_s", low=1e-9),
    "span": Drawn("span_s", low=1e-9),
    "grain": Drawn("grain_s", low=1e-9),
    "gap": Drawn("gap_s", low=0.0),
    "lead": Drawn("lead_s", low=0.0),
    "duty": Drawn("duty", low=1e-9, high=0.5),
    "level": Drawn("level_db_spl"),
    "loudness": Drawn("loudness_lufs"),
}


def drawn_from(*names: str, **others: Drawn) -> dict[str, Drawn]:
    """A ``drawn`` table: the :data:`STANDARD_DRAWN` entries ``names``, then ``others``."""
    return {**{name: STANDARD_DRAWN[name] for name in names}, **others}


def parse_drawn(task: Task, drawn: dict[str, Drawn]) -> None:
    """Set each attribute of ``drawn`` on ``task`` to the distribution of its config field."""
    for attribute, spec in drawn.items():
        value = getattr(task.cfg, spec.field)
        setattr(task, attribute, _sounds.dist(spec.field, value, low=spec.low, high=spec.high))


class PairQuestion:
    """The question side every two-sound comparison shares, a mixin before the task's base class: the relative
    regime, the "same" answer at the zero level only, one option per direction (``answers``), the direction's
    draw and sign, and the pair's values and checks in ratio."""

    regime = "relative"
    sub_category = "relative_discrimination"
    Design = SameAtZero  # "The same" is the answer at the zero level only
    answers: ClassVar[dict[str, str]]  # direction -> option text; directions: up, down, same

    def draw_direction(self, rng: np.random.Generator, level: Level) -> str:
        return "same" if level.value == 0 else ("up", "down")[int(rng.integers(2))]

    @staticmethod
    def sign(direction: str) -> int:
        return {"up": 1, "down": -1, "same": 0}[direction]

    def ratio_step(self, level: Level, direction: str) -> float:
        """The factor between a pair's centre and each of its two values, ``sqrt(1 + level / 100)`` to the power
        of the direction's sign: the values ``centre / step`` and ``centre * step`` differ by the level (percent)."""
        return math.sqrt(1 + level.value / 100.0) ** self.sign(direction)

    def ratio_check(self, name: str, params: dict[str, Any], first: float, second: float, tol: float) -> dict:
        """The measured signed ratio difference of ``first`` and ``second`` (percent,
        :func:`signed_ratio_percent`) against the item's signed difference, as a :func:`within` record."""
        expected = self.sign(params["direction"]) * params["difference"]
        return within(name, signed_ratio_percent(first, second), expected, tol)

    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        return self.make_qa(self.answers[params["direction"]], list(self.answers.values()), rng, slot=slot)


class CompareTask(PairQuestion, Task):
    """Base of the relative tasks; subclasses set ``answers``, ``drawn`` and ``make_pair``."""

    n_choices = 3
    takes_sources = RECORDED_TOO  # a recorded sound is moved by a measured transform
    # the distributions the task draws from, each an attribute of the task (the hook for what differs)
    drawn: ClassVar[dict[str, Drawn]] = drawn_from("freq", "tone", "gap", "lead", "level")

    def __init__(self, cfg: TaskConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        parse_drawn(self, self.drawn)

    def begin(self, rng: np.random.Generator, level) -> tuple[Level, str]:
        """The item's level (a difference >= 0) and its direction, drawn (one draw unless the level is 0)."""
        level = self.as_level(level)
        require(level.value >= 0, f"{self.name} level {level.value!r} is negative; allowed: {self.level_unit} >= 0")
        return level, self.draw_direction(rng, level)

    def place_pair(self, rng: np.random.Generator, sounds: list[dict[str, Any]]) -> None:
        """Set the two sounds' onsets: a roved lead-in, the first sound, a roved gap, the second (one clip)."""
        first, second = sounds
        timing = (first["duration_s"], second["duration_s"], self.gap, self.lead, self.cfg.clip_s)
        first["onset_s"], second["onset_s"] = _sounds.two_interval_timing(rng, *timing)

    def sample(self, rng: np.random.Generator, level: int) -> dict[str, Any]:
        level, direction = self.begin(rng, level)
        if self.audio.source.recorded:  # the longest piece a pair may read from the file
            base = _sounds.draw_clip(rng, self.audio.source, self.max_source_s())
        else:
            base = _sounds.draw_sound(rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics)
        a, b, extra = self.make_pair(rng, base, direction, level.value)
        self.place_pair(rng, [a, b])
        return {
            **self.pair_header(direction, level.value),
            **extra,
            "sounds": [a, b],
        }

    def pair_header(self, direction: str, difference: float) -> dict[str, Any]:
        """The first params fields of a synthesised pair: its rendering settings, direction and difference."""
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            "direction": direction,
            "difference": difference,
        }

    def make_pair(self, rng, base: dict, direction: str, value: float) -> tuple[dict, dict, dict]:
        """The two sounds of a pair differing by ``value`` in ``direction`` (every subclass implements it).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's random stream (after the base sound's draws).
        base : dict
            The sound both share: a synthetic stimulus (``kind``, ``freq_hz``, ...) or a recording's piece.
        direction : str
            ``up`` (the second is the larger), ``down`` or ``same``.
        value : float
            The level: the difference, in the task's ``level_unit``, >= 0.

        Returns
        -------
        tuple of (dict, dict, dict)
            The first and second sound (each with ``duration_s`` and ``level_db_spl``; onsets are set
            afterwards) and extra params fields (e.g. ``base_freq_hz``).
        """
        raise NotImplementedError

    def max_source_s(self) -> float:
        """The longest piece of a recording one sound of a pair reads (the longest tone)."""
        return _sounds.max_of(self.tone)

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return [_sounds.render_sounds(params)]

    def window_pair(self, rng: np.random.Generator, level: Level, direction: str) -> tuple[float, list]:
        """A windowed pair: its centre value (drawn from ``self.base``) and each window's ``(start_s, value)``,
        after a roved lead-in (``self.lead``), ``cfg.window_s + cfg.sep_s`` apart, the values ``centre / step``
        and ``centre * step`` (:meth:`ratio_step`). Two draws, in that order."""
        base = float(self.base.sample(rng))
        step = self.ratio_step(level, direction)
        start = float(self.lead.sample(rng))
        period = self.cfg.window_s + self.cfg.sep_s
        return base, [(start + k * period, value) for k, value in enumerate((base / step, base * step))]


def loudness_pair_header(task: Task, direction: str, difference: float) -> dict[str, Any]:
    """The first params fields of a pair set in loudness (LUFS) rather than in calibrated level: the sample rate,
    the clip length, the direction and the difference."""
    return {
        "sample_rate_hz": task.sample_rate,
        "clip_s": task.cfg.clip_s,
        "direction": direction,
        "difference": difference,
    }


def pair_extremes(cfg: TaskConfig, key: str, name: str) -> tuple[float, float]:
    """The lowest and highest value of a ratio pair (:meth:`PairQuestion.ratio_step`) centred in the distribution
    of config field ``name``, at the largest level: its lowest centre over ``sqrt(1 + level / 100)``, its highest
    times it."""
    half = math.sqrt(1 + max(cfg.levels) / 100.0)
    centre = _sounds.dist(f"{key}.{name}", getattr(cfg, name), low=1e-9)
    return _sounds.min_of(centre) / half, _sounds.max_of(centre) * half


def check_two_windows(key: str, cfg: TaskConfig) -> None:
    """The longest lead-in, two windows of ``cfg.window_s`` and the ``cfg.sep_s`` between them fit the clip."""
    lead = _sounds.max_of(_sounds.dist(f"{key}.lead_s", cfg.lead_s, low=0.0))
    _sounds.check_fits(key, lead + 2 * cfg.window_s + cfg.sep_s, cfg.clip_s)


def within(name: str, measured: float, expected: float, tol: float) -> dict[str, Any]:
    """A measured-vs-expected record with its verdict."""
    ok = math.isfinite(measured) and abs(measured - expected) <= tol
    shown = round(measured, 4) if math.isfinite(measured) else None
    return {"measured": shown, "expected": round(expected, 4), "tolerance": tol, "ok": bool(ok)}


def signed_ratio_percent(first: float, second: float) -> float:
    """``100 * (larger / smaller - 1)``, positive when ``second`` is the larger (NaN if either is not > 0)."""
    if not (math.isfinite(first) and math.isfinite(second) and first > 0 and second > 0):
        return math.nan
    return math.copysign(100.0 * (max(first, second) / min(first, second) - 1.0), second - first)
