"""counting_relative: two sequences of short sounds; does the second hold more, fewer or the same number?

Difficulty: the difference in number of events (0 = the same number). The counts lie in
``[min_count, max_count]`` (default 1-10); the smaller is drawn uniformly from the counts that
leave room for the difference, and which sequence holds more is drawn independently.

Controlled (drawn independently of the answer): both sequences share one stimulus (kind,
frequency); each sequence's level, its span (``span_s``: first onset to last offset) and its
total sounding time (``total_s``, shared by its events, each event's duration jittered) are roved
independently and identically, so the span, sounding time and energy of a sequence do not grow
with its count (with a gap drawn per sequence, as before, the sequence with more events spanned
~0.37 s more); the events fill the span with equal gaps, and the sequences sit ``sep_s`` apart in
a fixed-length clip after a roved lead-in. More events in the same sounding time and span are
shorter and closer together -- the events of a sequence are what is counted. Counts start at 2:
one event has no span of its own.

Label: each sequence's events counted from its onsets (:func:`auralgen.measure.onsets.onset_times`,
split at the silence between the sequences); both counts must equal the recipe's.
Human counting of rapid tone sequences is accurate at slow rates and undercounts above about
6-8 tones per second (Garner 1951, J Exp Psychol 41:310-316); the default gaps keep the rates
below that, so the count difference is the difficulty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import counting as listen
from auralgen.tasks import _events, _sounds
from auralgen.tasks._compare import CompareTask, drawn_from, within
from auralgen.tasks.base import RELATIVE_FEATURES, AudioConfig, AuditSpec, Measurement, register, require

MIN_GAP_S = 0.06  # shortest silence between two events of a sequence


@dataclass(frozen=True)
class CountingRelativeConfig(_events.CountsConfig):
    name: str = "counting_relative"
    levels: tuple[float, ...] = (0, 1, 2, 3, 5)
    min_count: int = 2  # a sequence spans span_s whatever its count: one event cannot
    span_s: Dist = Dist.of((1.4, 1.8))  # first onset to last offset of a sequence, roved independently of its count
    sep_s: float = 2.4
    lead_s: Dist = Dist.of((0.1, 0.3))
    clip_s: float = 7.0

    def check_task(self, audio: AudioConfig, key: str) -> None:
        require(
            all(v >= 0 and float(v).is_integer() for v in self.levels),
            f"{key}.levels={list(self.levels)!r} holds a negative or fractional difference; allowed: whole counts >= 0",
        )
        _events.check_spectrum(key, self, audio)
        spans = _sounds.dist(f"{key}.span_s", self.span_s, low=1e-9)
        _events.check_counts(key, self, largest_gap_s=0.0)
        require(
            self.min_count >= 2,
            f"{key}.min_count={self.min_count}; allowed: >= 2 (a sequence spans span_s whatever its count)",
        )
        most = _sounds.max_of(_sounds.dist(f"{key}.total_s", self.total_s)) + self.max_count * self.ramp_s
        tightest = (_sounds.min_of(spans) - most) / (self.max_count - 1)
        require(
            tightest >= MIN_GAP_S,
            f"{key}.span_s={self.span_s!r} leaves {tightest:.3f} s between {self.max_count} events; allowed: a span "
            f"leaving >= {MIN_GAP_S} s",
        )
        span = _sounds.max_of(spans)
        require(
            max(self.levels) <= self.max_count - self.min_count,
            f"{key}.levels={list(self.levels)!r} exceeds the count range {self.min_count}-{self.max_count}; allowed: "
            f"at most {self.max_count - self.min_count}",
        )
        require(  # two events can lie a whole span apart: the sequences must be further apart
            self.sep_s > span,
            f"{key}.sep_s={self.sep_s} is not longer than the longest span ({span:.3f} s); allowed: sep_s > {span:.3f}",
        )
        _sounds.check_fits(
            key,
            _sounds.max_of(_sounds.dist(f"{key}.lead_s", self.lead_s, low=0.0)) + 2 * span + self.sep_s,
            self.clip_s,
        )


@register
class CountingRelative(_events.EventSequences, CompareTask):
    name = "counting_relative"
    # declared: the events (number, onsets, durations) are what is counted; in a span roved independently of the
    # count the gap between events shrinks as the count grows (a rate is a count per span), and at a sounding
    # time roved independently of the count each event is shorter (the first and last events' lengths,
    # audio.delta_duration_s): both inseparable from the count
    audit = AuditSpec(
        (
            *RELATIVE_FEATURES,
            "sequences.*.n_events",
            "sequences.*.onsets_s.*",
            "sequences.*.durations_s.*",
            "sequences.*.levels_db_spl.*",  # per event, like the onsets: the list's length is the count
            "sequences.*.gap_s",
            "audio.n_segments",
            "audio.delta_duration_s",
        ),
    )
    listener = staticmethod(listen.counting_relative)
    attribute = "counting"
    level_unit = "count"
    Config = CountingRelativeConfig
    answers = {"up": "More", "down": "Fewer", "same": "The same"}
    questions = (
        "Two sequences of sounds are played one after the other. Does the second sequence contain more sounds, fewer "
        "sounds, or the same number as the first?",
        "Count the sounds in each of the two sequences. Compared with the first, does the second have more, fewer, or "
        "the same number?",
        "How does the number of sounds in the second sequence compare with the number in the first?",
    )
    card_note = (
        "counting_relative: two sequences of 2-10 short sounds in one fixed-length clip; the level is the difference "
        "in number (0 = same), counted from the onsets. Stimulus shared; level, span (first onset to last offset, "
        "1.4-1.8 s) and total sounding time roved per sequence independently of the answer: more events share the "
        "same sounding time and the same span, closer together."
    )

    drawn = drawn_from("freq", "total", "span", "level", "lead")

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        """The ``k``-th item of a grid level takes stimulus kind ``stimuli[k % len(stimuli)]``: the kinds are
        stratified within each level, so no level (and no answer: the zero level's is its own) holds one kind
        more often by chance (a default-suite seed had 17 of 24 zero-level items harmonic, a shortcut)."""
        level = self.as_level(level)
        kind = None if level.k is None else tuple(self.cfg.stimuli)[level.k % len(self.cfg.stimuli)]
        lo, hi, diff = self.cfg.min_count, self.cfg.max_count, level.value
        require(
            diff >= 0 and float(diff).is_integer() and diff <= hi - lo,
            f"{self.name} level {diff!r} is not a whole count difference in [0, {hi - lo}]",
        )
        direction = self.draw_direction(rng, level)
        small = int(rng.integers(lo, hi - int(diff) + 1))
        counts = (small, small + int(diff)) if direction != "down" else (small + int(diff), small)
        spectrum = _events.draw_spectrum(
            rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics, kind, source=self.audio.source
        )
        start = float(self.lead.sample(rng))
        seqs = []
        for n in counts:
            total, span, lv = float(self.total.sample(rng)), float(self.span.sample(rng)), float(self.level.sample(rng))
            gap = (span - total - n * self.cfg.ramp_s) / (n - 1)  # the events fill the drawn span
            run = _events.counted_run(
                rng, spectrum, self.cfg, n=n, gap_s=gap, start_s=start, total_s=total, level_db_spl=lv
            )
            seqs.append(run)
            start = _events.end_s(seqs[-1]) + self.cfg.sep_s
        return {
            **self.pair_header(direction, diff),
            "sequences": seqs,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return _events.render_sequences(params)

    def measure(self, params, clips):
        """Each sequence's count of onsets (split in the middle of the silence between the
        sequences) against the recipe, and the signed count difference against the level."""
        from auralgen.measure.onsets import onset_times

        t = onset_times(clips[0][0], params["sample_rate_hz"])
        seqs = params["sequences"]
        cut = 0.5 * (_events.end_s(seqs[0]) + seqs[1]["onsets_s"][0])
        counts = [int(np.sum(t < cut)), int(np.sum(t >= cut))]
        ok = counts == [s["n_events"] for s in seqs]
        rec = within(
            "count_difference", float(counts[1] - counts[0]), self.sign(params["direction"]) * params["difference"], 0.0
        )
        return Measurement.from_dict({"count_difference": rec, "events": counts, "valid": bool(ok and rec["ok"])})

    def eval_fields(self, params):
        return {"difference": params["difference"], "difference_unit": "count"}
