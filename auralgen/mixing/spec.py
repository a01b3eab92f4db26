"""Scaper-style mix specs: typed distributions for levels and timing, sampled per item.

A :class:`MixSpec` is built from one mixing mapping (``mixing=default`` is its field defaults,
``conf/mixing/*.yaml`` the other options), validated into :mod:`auralgen.core.random` distributions
(a bad value raises one :class:`~auralgen.core.errors.ParameterError` line naming key, value and what
is allowed), and draws, from the item's generator, everything a mix needs that a task does not fix itself:

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

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import Dist, Distribution, bounded
from auralgen.mixing.core import LEVEL_MODES

TIMINGS = ("free", "overlap", "sequential")
DIST_KEYS = ("reference_level", "relative_level", "duration_s", "lead_s", "gap_s", "overlap_s")
FIELDS = ("level_mode", "timing", "clip_s", "max_peak", *DIST_KEYS)
MAX_PEAK = 0.8913  # -1 dBFS (10**(-1/20) = 0.891251) to 4 digits, as the shipped mixing config has always had it


# the bounds of each distribution's support: (low, high)
BOUNDS = {
    "reference_level": (None, 0.0),
    "relative_level": (None, 0.0),
    "duration_s": (1e-3, None),
    "lead_s": (0.0, None),
    "gap_s": (0.0, None),
    "overlap_s": (0.0, None),
}


@dataclass(frozen=True)
class MixSpec:
    """Distributions of one mixing config (see the module docstring).

    The field defaults are the default mixing (``mixing=default``); a config value of a
    distribution field (a number, ``[low, high]`` or ``{dist: ...}``) becomes its distribution.
    """

    level_mode: str = "lufs"  # lufs (BS.1770) | db (dBFS RMS)
    timing: str = "free"  # free | overlap | sequential
    clip_s: float = 4.5  # mix length, s
    max_peak: float = MAX_PEAK  # -1 dBFS: one global gain scales the mix down to this peak
    reference_level: Dist = Dist.of((-30.0, -22.0))  # loudest sound, LUFS (roved)
    relative_level: Dist = Dist.of((-10.0, 0.0))  # each other sound re the loudest, LU (<= 0)
    duration_s: Dist = Dist.of((0.6, 1.2))  # each sound's length, s
    lead_s: Dist = Dist.of((0.1, 0.4))  # silence before the first sound (overlap / sequential), s
    gap_s: Dist = Dist.of((0.1, 0.4))  # sequential: silence between consecutive sounds, s
    overlap_s: Dist = Dist.of((0.1, 0.4))  # overlap: how far a sound starts before the previous one ends, s

    def __post_init__(self) -> None:
        for name in BOUNDS:
            object.__setattr__(self, name, _bounded_dist(name, getattr(self, name)))

    @classmethod
    def from_config(cls, key: str, cfg) -> MixSpec:
        """Validate a ``conf/mixing`` mapping; a key left out takes its default (:data:`DEFAULT_MIXING`).

        Parameters
        ----------
        key : str
            The config key of the mapping (e.g. ``task.mixing``), named in error messages.
        cfg : Mapping
            The mixing config: keys of :data:`FIELDS`; a distribution value is a number,
            ``[low, high]`` or ``{dist: ...}``.

        Returns
        -------
        MixSpec
            The validated spec, checked to fit two events in ``clip_s``.

        Raises
        ------
        ParameterError
            One line naming the bad key, its value and what is allowed.
        """
        if not hasattr(cfg, "keys"):
            raise ParameterError(f"{key}={cfg!r} is not a mapping; allowed: a mapping with keys {', '.join(FIELDS)}")
        unknown = [k for k in cfg.keys() if k not in FIELDS]
        if unknown:
            raise ParameterError(f"{key}.{unknown[0]}: unknown key; allowed keys: {', '.join(FIELDS)}")
        cfg = {**DEFAULT_MIXING, **{k: cfg[k] for k in cfg.keys()}}
        mode, timing = cfg["level_mode"], cfg["timing"]
        if mode not in LEVEL_MODES:
            raise ParameterError(f"{key}.level_mode={mode!r} is unknown; allowed: {list(LEVEL_MODES)}")
        if timing not in TIMINGS:
            raise ParameterError(f"{key}.timing={timing!r} is unknown; allowed: {list(TIMINGS)}")
        overlap = list(cfg["overlap_s"]) if isinstance(cfg["overlap_s"], tuple) else cfg["overlap_s"]
        if timing != "overlap" and overlap != DEFAULT_MIXING["overlap_s"]:  # config values arrive as plain lists/dicts
            raise ParameterError(
                f"{key}.overlap_s={overlap!r} is read only with timing=overlap (here timing={timing}); "
                f"allowed: mixing=overlap (or {key}.timing=overlap), or leave overlap_s at "
                f"{DEFAULT_MIXING['overlap_s']!r}"
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
            **{name: _bounded_dist(f"{key}.{name}", cfg[name], name) for name in BOUNDS},
        )
        spec.check_fits(key, 2)
        return spec

    # -- bounds -------------------------------------------------------------------------
    def longest_timeline_s(self, n_events: int) -> float:
        """Worst-case span of ``n_events`` events from 0 (lead-in included).

        Parameters
        ----------
        n_events : int
            How many events the timeline holds (>= 1).

        Returns
        -------
        float
            The longest span any draw can reach (s).
        """
        lead, dur = self.lead_s.support()[1], self.duration_s.support()[1]
        if self.timing == "free":
            return dur
        if self.timing == "sequential":
            return lead + n_events * dur + (n_events - 1) * self.gap_s.support()[1]
        return lead + n_events * dur - (n_events - 1) * self.overlap_s.support()[0]

    def check_fits(self, key: str, n_events: int) -> None:
        """Refuse a spec whose worst-case timeline of ``n_events`` events overruns ``clip_s``.

        Parameters
        ----------
        key : str
            The config key of the spec, named in error messages.
        n_events : int
            As for :meth:`longest_timeline_s`.

        Raises
        ------
        ParameterError
            When the worst case exceeds ``clip_s``, or (``timing="overlap"``) an overlap can reach
            the shortest duration.
        """
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
        """Absolute levels: one event (index 0) at the reference, the others relative to it.

        Parameters
        ----------
        rng, n_events
            As for :meth:`sample`.

        Returns
        -------
        list of float
            One level per event (LUFS or dBFS RMS, by ``level_mode``); the first is the reference.
        """
        ref = float(self.reference_level.sample(rng))
        return [ref] + [ref + float(self.relative_level.sample(rng)) for _ in range(n_events - 1)]

    def sample_durations(self, rng: np.random.Generator, n_events: int) -> list[float]:
        """Each event's length, drawn from ``duration_s``.

        Parameters
        ----------
        rng, n_events
            The item's generator and the number of events, as for :meth:`sample`.

        Returns
        -------
        list of float
            One duration per event (s).
        """
        return [float(self.duration_s.sample(rng)) for _ in range(n_events)]

    def sample_onsets(self, rng: np.random.Generator, durations_s) -> list[float]:
        """Onsets of events of ``durations_s`` (in timeline order) by ``timing``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's generator (:meth:`sample`).
        durations_s : sequence of float
            Each event's length (s), in timeline order.

        Returns
        -------
        list of float
            One onset per event (s from the start of the clip).
        """
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
        """Levels, durations and onsets of ``n_events`` events (JSON-able lists).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's generator.
        n_events : int
            Number of events.

        Returns
        -------
        dict of str to list of float
            ``levels`` (LUFS or dBFS RMS), ``durations_s`` and ``onsets_s`` (s), one value per event.
        """
        levels = self.sample_levels(rng, n_events)
        durations = self.sample_durations(rng, n_events)
        return {"levels": levels, "durations_s": durations, "onsets_s": self.sample_onsets(rng, durations)}


def _bounded_dist(key: str, value: Any, name: str | None = None) -> Dist:
    """``value`` parsed as the distribution of field ``name`` (default: ``key``), its support within
    :data:`BOUNDS`; ``key`` names it in a refusal."""
    if isinstance(value, Distribution):  # a distribution object given in Python: kept, its support checked
        value = Dist(value, value)
    dist = Dist.parse(key, list(value) if isinstance(value, tuple) else value)
    low, high = BOUNDS[name or key]
    bounded(key, dist, low=low, high=high)
    return dist


def _plain(value: Any) -> Any:
    value = value.plain if isinstance(value, Dist) else value
    return list(value) if isinstance(value, tuple) else value


DEFAULT_MIXING: dict[str, Any] = {f.name: _plain(f.default) for f in fields(MixSpec)}
"""The default mixing config as plain values: :class:`MixSpec`'s field defaults (the command line stores
them as the ``mixing/default`` config node, so that overrides such as ``task.mixing.clip_s=6`` find their keys)."""
