"""tempo_relative: two pulse sequences one after the other; is the second faster, slower or the same?

Difficulty: the tempo difference in percent (faster tempo = slower tempo x (1 + level / 100)).
The hardest non-zero default level (3 %) sits inside the human tempo-discrimination JND of
~2-5 % for isochronous sequences (Drake & Botte 1993, Perception & Psychophysics 54:277-286);
the easiest (25 %) is far above it; level 0 is the "same" level.

Controlled (drawn independently of the answer): the pair is centred (geometrically) on a base
tempo; both sequences share one stimulus (kind, frequency) and one window length ``window_s``,
in the same place of a fixed-length clip (lead-in roved, sequences ``sep_s`` apart); each
sequence's level and duty cycle (pulse length / interval) are roved independently and
identically, so its loudness and its sounding time (``duty x window_s``) do not depend on which
is faster, nor does the pulse length say it reliably; the phase of each pulse grid in its window
is roved, so the number of pulses varies by one at a given tempo. The faster sequence has more
pulses in its window -- that is its tempo.

Label: each sequence's tempo measured from its onsets (least-squares inter-onset interval,
:func:`auralgen.measure.onsets.ioi_tempo_bpm`); the signed difference equals the level within
:data:`TOLERANCE_PERCENT` (+2 % of the level).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import tempo as listen
from auralgen.tasks import _events, _sounds
from auralgen.tasks._compare import CompareTask, Drawn, check_differences, check_two_windows, drawn_from, pair_extremes
from auralgen.tasks.base import RELATIVE_FEATURES, AudioConfig, AuditSpec, Measurement, register, require

TOLERANCE_PERCENT = 0.3  # absolute part of the allowed error of the measured tempo difference
MAX_ONSET_ERROR_S = 0.002  # every onset within this of the isochronous grid fitted to its sequence


@dataclass(frozen=True)
class TempoRelativeConfig(_events.PulsesConfig):
    name: str = "tempo_relative"
    levels: tuple[float, ...] = (0, 3, 6, 12, 25)
    base_bpm: Dist = Dist.of({"dist": "loguniform", "low": 90.0, "high": 160.0})
    window_s: float = 2.5
    sep_s: float = 1.2
    lead_s: Dist = Dist.of((0.1, 0.3))
    clip_s: float = 6.8

    def check_task(self, audio: AudioConfig, key: str) -> None:
        check_differences(self, key, "percent")
        _events.check_spectrum(key, self, audio)
        slowest, fastest = pair_extremes(self, key, "base_bpm")
        duty = _sounds.dist(f"{key}.duty", self.duty, low=1e-9, high=0.5)
        slow_ioi, fast_ioi = 60.0 / slowest, 60.0 / fastest
        need = (_events.MIN_PULSES + _sounds.max_of(duty)) * slow_ioi + self.ramp_s
        require(
            self.window_s >= need,
            f"{key}.window_s={self.window_s} holds fewer than {_events.MIN_PULSES} pulses at the slowest tempo "
            f"{60 / slow_ioi:.1f} BPM; allowed: window_s >= {need:.3f}",
        )
        require(
            self.sep_s > slow_ioi,
            f"{key}.sep_s={self.sep_s} is not longer than the slowest interval {slow_ioi:.3f} s, so the two sequences "
            f"do not separate; allowed: sep_s > {slow_ioi:.3f}",
        )
        require(
            _sounds.min_of(duty) * fast_ioi >= 2 * self.ramp_s,
            f"{key}.ramp_s={self.ramp_s} is longer than half the shortest pulse ({_sounds.min_of(duty) * fast_ioi:.4f} "
            "s); "
            "allowed: 2*ramp_s <= shortest pulse",
        )
        check_two_windows(key, self)


@register
class TempoRelative(_events.EventSequences, CompareTask):
    name = "tempo_relative"
    audit = AuditSpec(
        (
            *RELATIVE_FEATURES,
            *_events.PULSE_FEATURES,
        ),
    )
    listener = staticmethod(listen.tempo_relative)
    attribute = "tempo"
    human_threshold = (
        2.0,
        "percent",
        "Drake & Botte 1993, Percept. Psychophys. 54(3) 277-286: about 2 % at inter-onset intervals of 300-800 ms",
    )
    level_unit = "percent"
    Config = TempoRelativeConfig
    answers = {"up": "Faster", "down": "Slower", "same": "The same"}
    questions = (
        "Two sequences of sounds are played one after the other. Is the tempo of the second sequence faster, slower, "
        "or the same as the first?",
        "Listen to the two pulse sequences. Compared with the first, is the second one faster, slower, or at the same "
        "tempo?",
        "How does the rate of the beats in the second sequence compare with the first sequence?",
    )
    card_note = (
        "tempo_relative: two isochronous pulse sequences in fixed windows of one fixed-length clip; the level is the "
        "tempo difference in percent (0 = same tempo), measured from each sequence's inter-onset intervals. Stimulus, "
        "window and position are shared; level and duty cycle (hence loudness and sounding time) are roved per "
        "sequence independently of the answer; the pulse-grid phase is roved."
    )

    drawn = drawn_from("freq", "duty", "level", "lead", base=Drawn("base_bpm", low=1e-9))

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level, direction = self.begin(rng, level)
        spectrum = _events.draw_spectrum(
            rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics, source=self.audio.source
        )
        base, windows = self.window_pair(rng, level, direction)
        seqs = []
        for start, bpm in windows:
            duty, lv = float(self.duty.sample(rng)), float(self.level.sample(rng))
            seqs.append(
                _events.pulse_train(
                    rng,
                    spectrum,
                    bpm=bpm,
                    start_s=start,
                    window_s=self.cfg.window_s,
                    duty=duty,
                    level_db_spl=lv,
                    ramp_s=self.cfg.ramp_s,
                )
            )
        return {
            **self.pair_header(direction, level.value),
            "base_bpm": base,
            "sequences": seqs,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return _events.render_sequences(params)

    def measure(self, params, clips):
        """Each sequence's tempo from its own onsets (split at the second window's start), its pulse
        count, its regularity, and the signed tempo difference in percent against the level."""
        from auralgen.measure.onsets import ioi_regularity, ioi_tempo_bpm, onset_times

        t = onset_times(clips[0][0], params["sample_rate_hz"])
        seqs = params["sequences"]
        cut = seqs[1]["onsets_s"][0] - 0.5 * (seqs[1]["onsets_s"][0] - _events.end_s(seqs[0]))
        groups = (t[t < cut], t[t >= cut])
        bpm = [ioi_tempo_bpm(g) for g in groups]
        counts_ok = all(g.size == s["n_events"] for g, s in zip(groups, seqs))
        jitter = max(ioi_regularity(g) for g in groups)
        rec = self.ratio_check(
            "tempo_difference_percent", params, *bpm, TOLERANCE_PERCENT + 0.02 * params["difference"]
        )
        ok = rec["ok"] and counts_ok and jitter <= MAX_ONSET_ERROR_S
        return Measurement.from_dict(
            {
                "tempo_difference_percent": rec,
                "bpm": [round(b, 3) for b in bpm],
                "events": [int(g.size) for g in groups],
                "max_onset_error_s": round(jitter, 5),
                "valid": bool(ok),
            }
        )

    def eval_fields(self, params):
        return {"difference": params["difference"], "difference_unit": "percent"}
