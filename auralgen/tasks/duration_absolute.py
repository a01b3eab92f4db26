"""duration_absolute: which range does a single sound's duration fall in?

Options are the bins delimited by ``bins_s`` (e.g. < 0.5 s, 0.5-1 s, 1-2 s, > 2 s).
Difficulty: the margin (percent, in ratio) of the duration from the nearest inner bin edge: a
large margin is easy, a small one is hard. Every item has exactly its level's margin (a bin drawn
uniformly, then one of its inner edges, the duration that margin above or below it), stored as
``margin_percent`` with the ``edge_side``; ``measure`` reads the margin back from the measured
segment (within :data:`TOLERANCE_S` mapped to percent). The stimulus, its level and its
onset are drawn independently of the answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import tones as listen
from auralgen.tasks import _sounds
from auralgen.tasks._binned import BinnedAbsoluteTask, check_margins, check_room, edge_text
from auralgen.tasks._compare import CREST, drawn_from
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, Task, TaskConfig, register, require

TOLERANCE_S = 0.015


@dataclass(frozen=True)
class DurationAbsoluteConfig(TaskConfig):
    unused_fields: ClassVar[dict[str, str]] = {
        "min_s": (
            "every duration sits at its level's margin from an inner bin edge; the shortest is bins_s[0] / (1 + margin)"
        ),
    }
    name: str = "duration_absolute"
    levels: tuple[float, ...] = (40, 20, 10, 5)
    bins_s: tuple[float, ...] = (0.5, 1.0, 2.0)
    min_s: float = 0.2
    max_s: float = 3.2
    stimuli: tuple[str, ...] = ("pure", "harmonic", "noise")
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 250.0, "high": 1000.0})
    n_harmonics: int = 5
    level_db_spl: Dist = Dist.of((60.0, 70.0))
    clip_s: float = 4.0
    ramp_s: float = 0.02

    def check_task(self, audio: AudioConfig, key: str) -> None:
        _sounds.check_stimuli(f"{key}.stimuli", self.stimuli)
        b = self.bins_s
        require(
            b[0] > 0 and all(hi > lo for lo, hi in zip(b, b[1:])) and self.max_s > b[-1],
            f"{key}.bins_s={list(b)!r} with max_s={self.max_s} is not increasing; allowed: 0 < bins_s... < max_s",
        )
        m = check_margins(key, self.levels)
        check_room(key, self.levels, b, "s")
        require(
            b[-1] * m <= self.max_s,
            f"{key}.max_s={self.max_s} is shorter than the longest duration {b[-1] * m:g} s (bins_s {b[-1]} s + "
            f"{max(self.levels)} %); allowed: max_s >= {b[-1] * m:g}",
        )
        shortest = b[0] / m
        require(
            2 * self.ramp_s <= shortest,
            f"{key}.ramp_s={self.ramp_s} is too long for the shortest duration {shortest:g} s (bins_s[0] {b[0]} s / "
            f"{m:g}); allowed: 2*ramp_s <= {shortest:g}",
        )
        _sounds.check_fits(key, self.max_s + 0.2, self.clip_s)
        sr = self.sample_rate or audio.sample_rate
        top = _sounds.max_of(_sounds.dist(f"{key}.freq_hz", self.freq_hz, low=1e-9)) * (
            self.n_harmonics if "harmonic" in self.stimuli else 1
        )
        require(
            top < sr / 2,
            f"{key}.freq_hz={self.freq_hz!r} reaches {top:.0f} Hz at or above Nyquist ({sr / 2:.0f} Hz); allowed: "
            "below Nyquist",
        )
        loud = _sounds.max_of(_sounds.dist(f"{key}.level_db_spl", self.level_db_spl))
        max_ok = audio.full_scale_db_spl - 20 * math.log10(max(CREST[s] for s in self.stimuli))
        require(
            loud <= max_ok,
            f"{key}.level_db_spl={self.level_db_spl!r} clips at full_scale_db_spl={audio.full_scale_db_spl}; allowed: "
            f"at most {max_ok:.1f} dB SPL",
        )


@register
class DurationAbsolute(BinnedAbsoluteTask):
    name = "duration_absolute"
    audit = AuditSpec(
        (
            "bin",
            "edge_side",  # which inner bin edge the item sits by: the outer bins have one, so it names the bin
            "sounds.0.duration_s",
            "audio.active_s",
            "audio.last_offset_s",
            # the one sound's span and its segment's length are its duration; at one level a longer tone holds
            # more energy in the fixed clip, so the clip's RMS and its crest factor (peak over RMS) follow it, its
            # BS.1770 loudness integrates the tone over 400 ms blocks (temporal integration), and the fixed onset
            # and offset ramps are a larger share of a shorter tone (its segment's RMS against its peak)
            "audio.span_s",
            "audio.delta_duration_s",
            "audio.rms_dbfs",
            "audio.crest_db",
            "audio.loudness_lufs",
            "audio.delta_level_db",
            "row.flac_bytes",
        ),
    )
    listener = staticmethod(listen.duration_absolute)
    attribute = "duration"
    bins_field = "bins_s"
    drawn = drawn_from("freq", "level")
    Config = DurationAbsoluteConfig
    questions = (
        "How long does the sound in this clip last?",
        "Listen to the sound. Which range does its duration fall in?",
        "Estimate the duration of the sound you hear.",
    )

    def bin_edges(self) -> tuple[float, ...]:
        return (0.0, *self.cfg.bins_s, self.cfg.max_s)  # outer ends: the range (max_s bounds the onset draw)

    eval_fields = Task.eval_fields  # states no difference: its evaluation records carry none

    def labels(self) -> list[str]:
        b = self.cfg.bins_s
        labels = [f"Shorter than {edge_text(b[0], 's')}"]
        labels += [f"Between {edge_text(lo, 's')} and {edge_text(hi, 's')}" for lo, hi in zip(b, b[1:])]
        return labels + [f"Longer than {edge_text(b[-1], 's')}"]

    def sample(self, rng: np.random.Generator, level: int) -> dict[str, Any]:
        level = self.as_level(level)
        k, side, duration = self.draw_bin(rng, level.value)
        sound = _sounds.draw_sound(rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics)
        sound["duration_s"] = duration
        sound["level_db_spl"] = float(self.level.sample(rng))
        sound["onset_s"] = float(
            rng.uniform(0.1, self.cfg.clip_s - self.cfg.max_s - 0.1)
        )  # independent of the duration
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            **self.bin_record(k, side, duration),
            "sounds": [sound],
        }

    def render(self, params):
        return [_sounds.render_sounds(params)]

    def measure(self, params, clips):
        """The sound's duration from its measured segment (within :data:`TOLERANCE_S` of the recipe,
        inside the labelled bin) and the margin that duration keeps from the nearest inner bin edge
        (equal to ``margin_percent`` within the duration tolerance mapped to percent)."""
        from auralgen.measure import segments

        segs = segments(clips[0][0], params["sample_rate_hz"])
        expected = params["sounds"][0]["duration_s"]
        measured = segs[0].offset_s - segs[0].onset_s if len(segs) == 1 else float("nan")
        ok = len(segs) == 1 and abs(measured - expected) <= TOLERANCE_S
        if ok:  # the measured duration must land in the labelled bin (edges widened by the tolerance)
            k = params["bin"]
            ok = self.in_bin(measured, k, TOLERANCE_S)
        margin = self.margin_check(measured, expected, TOLERANCE_S)
        return Measurement.from_dict(
            {
                "duration_s": round(measured, 4) if ok or len(segs) == 1 else None,
                "expected_s": round(expected, 4),
                "margin_percent": margin,
                "segments": len(segs),
                "tolerance_s": TOLERANCE_S,
                "valid": bool(ok and margin["ok"]),
            }
        )
