"""counting_absolute: how many sounds does a sequence hold?

Options: every count of ``[min_count, max_count]`` (default 1-10), the same full list for every
item, so no option text or position says the answer (the plan deals every count equally often at
each level). Difficulty: the silent gap between consecutive events in ms (smaller = harder). The
hardest default gap (20 ms, with events of ~25-70 ms at ten events) puts up to ~12 events per
second, where human counting of tone sequences undercounts (accuracy falls above about 6-8 tones
per second, Garner 1951, J Exp Psychol 41:310-316); the easiest (300 ms) is a slow, countable rate.

Controlled (drawn independently of the answer): the stimulus (kind, frequency) and level, the sequence's
start in the fixed-length clip (drawn from the
same range for every count) and its total sounding time ``total_s``, which its events share (each
duration jittered by +- ``jitter``, so the onsets are not isochronous): the clip's sounding time,
RMS and FLAC size do not grow with the count. More events in the same sounding time are shorter
-- the events are what is counted.

Label: the number of onsets (:func:`auralgen.measure.onsets.onset_times`) equals the recipe's
count, and the smallest measured silence between events equals the level within
:data:`TOLERANCE_MS` (+5 % of the level).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.listeners import counting as listen
from auralgen.tasks import _events, _sounds
from auralgen.tasks._compare import within
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, Task, register, require

TOLERANCE_MS = 2.0
EDGE_S = 0.1  # the sequence starts at least this after the clip's start and ends this before its end


@dataclass(frozen=True)
class CountingAbsoluteConfig(_events.CountsConfig):
    name: str = "counting_absolute"
    levels: tuple[float, ...] = (300, 150, 75, 40, 20)
    clip_s: float = 4.0

    def check_task(self, audio: AudioConfig, key: str) -> None:
        require(
            all(v > 0 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} holds a gap <= 0 ms; allowed: gaps > 0 ms",
        )
        _events.check_spectrum(key, self, audio)
        span = _events.check_counts(key, self, largest_gap_s=max(self.levels) / 1000.0)
        _sounds.check_fits(key, span + 2 * EDGE_S, self.clip_s)


@register
class CountingAbsolute(_events.EventSequences, Task):
    name = "counting_absolute"
    audit = AuditSpec(
        (
            "count",
            "sequences.*.n_events",
            "sequences.*.onsets_s.*",
            "sequences.*.durations_s.*",
            "sequences.*.levels_db_spl.*",
            "audio.n_segments",
            "audio.last_offset_s",
            "audio.delta_duration_s",
            "audio.delta_level_db",
            # the span holds the n events and their n - 1 silent gaps, each as long as the level: at one gap
            # it grows with the count. With the gap fixed by the level, either the span or the sounding time
            # must follow the count; the sounding time is held fixed (drawn independently of the count)
            "audio.span_s",
            # each event has its onset and offset ramps: more events in the same sounding time, more of the
            # sound in ramps, a lower RMS under the same peak (the crest factor) and less of it above the
            # -60 dB threshold that measures the sounding time
            "audio.crest_db",
            "audio.active_s",
        ),
    )
    listener = staticmethod(listen.counting_absolute)
    sub_category = "absolute_perception"
    attribute = "counting"
    regime = "absolute"
    level_unit = "ms"
    easier = "larger"
    Config = CountingAbsoluteConfig
    questions = (
        "How many sounds do you hear in this clip?",
        "Count the sounds in the sequence. How many are there?",
        "Listen carefully: how many separate sounds are played?",
    )
    card_note = (
        "counting_absolute: one sequence of 1-10 short sounds in a fixed-length clip; the options are every count, "
        "the answer is the number of onsets measured; the level is the silent gap between events in ms (smaller = "
        "harder). Stimulus, level, start and total sounding time (shared by the events, so file size and RMS do not "
        "grow with the count) are roved independently of the answer; event durations are jittered."
    )

    def __init__(self, cfg: CountingAbsoluteConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.freq = _sounds.dist("freq_hz", cfg.freq_hz, low=1e-9)
        self.total = _sounds.dist("total_s", cfg.total_s, low=1e-9)
        self.level = _sounds.dist("level_db_spl", cfg.level_db_spl)
        self.room_s = cfg.clip_s - 2 * EDGE_S  # where any sequence of the grid fits

    @property
    def n_choices(self) -> int:  # type: ignore[override]
        return self.cfg.max_count - self.cfg.min_count + 1

    def labels(self) -> list[str]:
        """The option texts: every count from ``cfg.min_count`` to ``cfg.max_count``.

        Returns
        -------
        list of str
            The counts as decimal texts, ascending.
        """
        return [str(n) for n in range(self.cfg.min_count, self.cfg.max_count + 1)]

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        gap = level.value / 1000.0
        longest = _events.run_span_s(
            _sounds.max_of(self.total), self.cfg.max_count, max(max(self.cfg.levels) / 1000.0, gap), self.cfg.ramp_s
        )
        require(
            gap > 0 and longest <= self.room_s,
            f"{self.name} level {level.value!r} ms does not fit {self.cfg.max_count} events in "
            f"clip_s={self.cfg.clip_s}; allowed: 0 < gap <= the grid's largest",
        )
        n = int(rng.integers(self.cfg.min_count, self.cfg.max_count + 1))
        spectrum = _events.draw_spectrum(
            rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics, source=self.audio.source
        )
        start = float(rng.uniform(EDGE_S, EDGE_S + self.room_s - longest))  # the same range for every count
        total, lv = float(self.total.sample(rng)), float(self.level.sample(rng))
        seq = _events.counted_run(
            rng, spectrum, self.cfg, n=n, gap_s=gap, start_s=start, total_s=total, level_db_spl=lv
        )
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            "count": n,
            "gap_ms": level.value,
            "sequences": [seq],
        }

    def render(self, params):
        return _events.render_sequences(params)

    def qa(self, params, rng, *, slot):
        return self.make_qa(str(params["count"]), self.labels(), rng, slot=slot)

    def measure(self, params, clips):
        """The number of onsets against the count, and the smallest silence between events (ms)
        against the level."""
        from auralgen.measure import segments
        from auralgen.measure.onsets import FRAME_S, MIN_GAP_S, THRESHOLD_DB

        sr = params["sample_rate_hz"]
        segs = segments(clips[0][0], sr, threshold_db=THRESHOLD_DB, min_gap_s=MIN_GAP_S, frame_s=FRAME_S)
        n = params["count"]
        gaps = [1000.0 * (b.onset_s - a.offset_s) for a, b in zip(segs, segs[1:])]
        expected = params["gap_ms"]
        rec = within("gap_ms", min(gaps) if gaps else expected, expected, TOLERANCE_MS + 0.05 * expected)
        ok = len(segs) == n and rec["ok"]
        return Measurement.from_dict({"events": len(segs), "expected_events": n, "gap_ms": rec, "valid": bool(ok)})

    def eval_fields(self, params):
        return {"difference": params["gap_ms"], "difference_unit": "ms"}
