"""Scaper-style mix specs: typed distributions for levels and timing, sampled per item.

A :class:`MixSpec` is built from one mapping of ``conf/mixing/*.yaml`` (validated into
:mod:`auralgen.random` distributions; a bad value raises one
:class:`~auralgen.errors.ParameterError` line naming key, value and what is allowed) and
draws, from the item's generator, everything a mix needs that a task does not fix itself:

* ``reference_level`` — level of the loudest component (LUFS or dBFS RMS; roved);
* ``relative_level`` — each other component's level re the reference (LU or dB, <= 0);
* ``duration_s`` — each component's length;
* the timeline (*temporal dislocation*), by ``timing``:

  ``free``        each onset independently uniform in ``[0, clip_s - duration]``;
  ``overlap``     each event starts ``overlap_s`` before the previous one ends;
  ``sequential``  each event starts ``gap_s`` after the previous one ends.

  ``lead_s`` is the silence before the first event of ``overlap``/``sequential``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.errors import ParameterError
from auralgen.mixing.core import DEFAULT_MAX_PEAK, LEVEL_MODES
from auralgen.random import bounded

TIMINGS = ("free", "overlap", "sequential")
DIST_KEYS = ("reference_level", "relative_level", "duration_s", "lead_s", "gap_s", "overlap_s")
FIELDS = ("level_mode", "timing", "clip_s", "max_peak", *DIST_KEYS)


@dataclass(frozen=True)
class MixSpec:
    """Distributions of one mixing config (see the module docstring)."""

    level_mode: str
    timing: str
    clip_s: float
    max_peak: float
    reference_level: Any
    relative_level: Any
    duration_s: Any
    lead_s: Any
    gap_s: Any
    overlap_s: Any

    @classmethod
    def from_config(cls, key: str, cfg) -> MixSpec:
        """Validate a ``conf/mixing`` mapping (``key`` names it in messages)."""
        if not hasattr(cfg, "keys"):
            raise ParameterError(f"{key}={cfg!r} is not a mapping; allowed: a mapping with keys {', '.join(FIELDS)}")
        unknown = [k for k in cfg.keys() if k not in FIELDS]
        missing = [k for k in FIELDS if k not in cfg.keys()]
        if unknown:
            raise ParameterError(f"{key}.{unknown[0]}: unknown key; allowed keys: {', '.join(FIELDS)}")
        if missing:
            raise ParameterError(f"{key}.{missing[0]} is missing; allowed keys: {', '.join(FIELDS)}")
        mode, timing = cfg["level_mode"], cfg["timing"]
        if mode not in LEVEL_MODES:
            raise ParameterError(f"{key}.level_mode={mode!r} is unknown; allowed: {list(LEVEL_MODES)}")
        if timing not in TIMINGS:
            raise ParameterError(f"{key}.timing={timing!r} is unknown; allowed: {list(TIMINGS)}")
        overlap = list(cfg["overlap_s"]) if isinstance(cfg["overlap_s"], tuple) else cfg["overlap_s"]
        if timing != "overlap" and overlap != DEFAULT_MIXING["overlap_s"]:  # config values arrive as plain lists/dicts
            raise ParameterError(
                f"{key}.overlap_s={overlap!r} is read only with timing=overlap (here timing={timing}); "
                f"allowed: mixing=overlap (or {key}.timing=overlap), or leave overlap_s at {DEFAULT_MIXING['overlap_s']!r}"
            )
        clip_s, max_peak = cfg["clip_s"], cfg["max_peak"]
        if isinstance(clip_s, bool) or not isinstance(clip_s, (int, float)) or not clip_s > 0:
            raise ParameterError(f"{key}.clip_s={clip_s!r} is invalid; allowed: a number > 0 (s)")
        if isinstance(max_peak, bool) or not isinstance(max_peak, (int, float)) or not 0 < max_peak <= 1:
            raise ParameterError(f"{key}.max_peak={max_peak!r} is out of range; allowed: 0 < max_peak <= 1")
        spec = cls(
            level_mode=mode,
            timing=timing,
            clip_s=float(clip_s),
            max_peak=float(max_peak),
            reference_level=bounded(f"{key}.reference_level", cfg["reference_level"], high=0.0),
            relative_level=bounded(f"{key}.relative_level", cfg["relative_level"], high=0.0),
            duration_s=bounded(f"{key}.duration_s", cfg["duration_s"], low=1e-3),
            lead_s=bounded(f"{key}.lead_s", cfg["lead_s"], low=0.0),
            gap_s=bounded(f"{key}.gap_s", cfg["gap_s"], low=0.0),
            overlap_s=bounded(f"{key}.overlap_s", cfg["overlap_s"], low=0.0),
        )
        spec.check_fits(key, 2)
        return spec

    # -- bounds -------------------------------------------------------------------------
    def longest_timeline_s(self, n_events: int) -> float:
        """Worst-case span of ``n_events`` events from 0 (lead-in included)."""
        lead, dur = self.lead_s.support()[1], self.duration_s.support()[1]
        if self.timing == "free":
            return dur
        if self.timing == "sequential":
            return lead + n_events * dur + (n_events - 1) * self.gap_s.support()[1]
        return lead + n_events * dur - (n_events - 1) * self.overlap_s.support()[0]

    def check_fits(self, key: str, n_events: int) -> None:
        worst = self.longest_timeline_s(n_events)
        if worst > self.clip_s + 1e-9:
            raise ParameterError(
                f"{key}.clip_s={self.clip_s} is too short for {n_events} events with timing={self.timing} "
                f"({worst:.3f} s worst case); allowed: clip_s >= {worst:.3f}"
            )
        if self.timing == "overlap" and self.overlap_s.support()[1] >= self.duration_s.support()[0]:
            raise ParameterError(
                f"{key}.overlap_s={self.overlap_s!r} can reach the shortest duration_s "
                f"({self.duration_s.support()[0]}); allowed: overlap_s < shortest duration_s"
            )

    # -- sampling -----------------------------------------------------------------------
    def sample_levels(self, rng: np.random.Generator, n_events: int) -> list[float]:
        """Absolute levels: one event (index 0) at the reference, the others relative to it."""
        ref = float(self.reference_level.sample(rng))
        return [ref] + [ref + float(self.relative_level.sample(rng)) for _ in range(n_events - 1)]

    def sample_durations(self, rng: np.random.Generator, n_events: int) -> list[float]:
        return [float(self.duration_s.sample(rng)) for _ in range(n_events)]

    def sample_onsets(self, rng: np.random.Generator, durations_s) -> list[float]:
        """Onsets of events of ``durations_s`` (in timeline order) by ``timing``."""
        if self.timing == "free":
            return [float(rng.uniform(0.0, max(self.clip_s - d, 0.0))) for d in durations_s]
        onsets, t = [], float(self.lead_s.sample(rng))
        for k in range(len(durations_s)):
            if k:
                step = self.gap_s if self.timing == "sequential" else self.overlap_s
                sign = 1.0 if self.timing == "sequential" else -1.0
                t = onsets[-1] + durations_s[k - 1] + sign * float(step.sample(rng))
            onsets.append(t)
        return onsets

    def sample(self, rng: np.random.Generator, n_events: int) -> dict[str, list[float]]:
        """Levels, durations and onsets of ``n_events`` events (JSON-able lists)."""
        levels = self.sample_levels(rng, n_events)
        durations = self.sample_durations(rng, n_events)
        return {"levels": levels, "durations_s": durations, "onsets_s": self.sample_onsets(rng, durations)}


DEFAULT_MIXING = {
    "level_mode": "lufs",
    "timing": "free",
    "clip_s": 4.5,
    "max_peak": DEFAULT_MAX_PEAK,
    "reference_level": [-30.0, -22.0],
    "relative_level": [-10.0, 0.0],
    "duration_s": [0.6, 1.2],
    "lead_s": [0.1, 0.4],
    "gap_s": [0.1, 0.4],
    "overlap_s": [0.1, 0.4],
}
"""The values of ``conf/mixing/default.yaml`` (used when a task is built without Hydra)."""
