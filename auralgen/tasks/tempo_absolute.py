"""tempo_absolute: is a pulse sequence slow, moderate or fast?

Options are the tempo bins delimited by ``bins_bpm`` (default: below 75, 75 to 135, above 135
events per minute; the edges are conventions, roughly Adagio / Moderato-Allegro / Presto, set by
config). Difficulty: the margin (percent, in ratio) of the tempo from the nearest inner bin edge,
as in duration_absolute: every item has exactly its level's margin (a bin drawn uniformly, then one
of its inner edges, the tempo that margin above or below it). The hardest default margin (4 %)
is near the human tempo JND of ~2-5 % (Drake & Botte 1993, Perception & Psychophysics
54:277-286); the easiest (30 %) far above it.

Controlled (drawn independently of the answer): the stimulus (kind, frequency), its level, the
span of the pulses (first onset to last offset: ``span_s`` rounded to whole intervals, so its
mean does not move with the tempo) and its place in the fixed-length clip (uniform), hence the lead
and trail silences (with pulses in a fixed window they grew with the interval: 51 % from them, chance
33.5 %), and the duty cycle (pulse length / interval), so the sounding time (about
``duty x span``), the clip's RMS and its FLAC size carry little tempo. The number of pulses in
the span grows with the tempo -- that is the tempo.

Label: the tempo measured from the onsets (least-squares inter-onset interval,
:func:`auralgen.measure.onsets.ioi_tempo_bpm`) within :data:`TOLERANCE_BPM` of the recipe, inside
the labelled bin, and its margin equal to the level within that tolerance mapped to percent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import tempo as listen
from auralgen.tasks import _events, _sounds
from auralgen.tasks._binned import BinnedAbsoluteTask, bin_names, check_bins, range_labels
from auralgen.tasks._compare import drawn_from
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, register, require

TOLERANCE_BPM = 0.3
MAX_ONSET_ERROR_S = 0.002  # every onset within this of the isochronous grid fitted to the sequence
EDGE_S = 0.1  # the window starts at least this after the clip's start and ends this before its end


@dataclass(frozen=True)
class TempoAbsoluteConfig(_events.PulsesConfig):
    name: str = "tempo_absolute"
    levels: tuple[float, ...] = (30, 15, 8, 4)
    bins_bpm: tuple[float, ...] = (75.0, 135.0)
    span_s: Dist = Dist.of((2.6, 3.4))  # first onset to last offset, roved apart from the tempo (then whole intervals)
    clip_s: float = 5.0

    def check_task(self, audio: AudioConfig, key: str) -> None:
        _events.check_spectrum(key, self, audio)
        b = self.bins_bpm
        m = check_bins(key, "bins_bpm", b, self.levels, "BPM")
        duty = _sounds.dist(f"{key}.duty", self.duty, low=1e-9, high=0.5)
        slow_ioi, fast_ioi = 60.0 / (b[0] / m), 60.0 / (b[-1] * m)
        span = _sounds.dist(f"{key}.span_s", self.span_s, low=1e-9)
        need = (_events.MIN_PULSES - 1 + _sounds.max_of(duty)) * slow_ioi + self.ramp_s
        require(
            _sounds.min_of(span) >= need,
            f"{key}.span_s={self.span_s!r} holds fewer than {_events.MIN_PULSES} pulses at the slowest tempo "
            f"{b[0] / m:.1f} "
            f"BPM; allowed: span_s >= {need:.3f}",
        )
        require(
            _sounds.min_of(duty) * fast_ioi >= 2 * self.ramp_s,
            f"{key}.ramp_s={self.ramp_s} is longer than half the shortest pulse ({_sounds.min_of(duty) * fast_ioi:.4f} "
            "s); "
            "allowed: 2*ramp_s <= shortest pulse",
        )
        _sounds.check_fits(key, _sounds.max_of(span) + slow_ioi + 2 * EDGE_S, self.clip_s)


def pulses_in_span(
    rng: np.random.Generator,
    spectrum: dict,
    *,
    bpm: float,
    span_s: float,
    duty: float,
    level_db_spl: float,
    ramp_s: float,
) -> dict[str, Any]:
    """Isochronous pulses at ``bpm`` (onsets from 0) whose span, first onset to last offset, is a whole
    number of intervals next to ``span_s``: the one below or the one above, drawn (one draw) so that
    the span's mean is ``span_s`` whatever the interval (plain rounding would favour the longer span at
    slow tempi); at least :data:`~auralgen.tasks._events.MIN_PULSES` pulses. The span is drawn, not
    the window, so lead and trail silences do not grow with the interval.

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the span (one uniform draw).
    spectrum : dict
        The pulses' sound fields (kind, frequency, ...), copied into the result.
    bpm : float
        Tempo, beats per minute.
    span_s : float
        Mean span, first onset to last offset, seconds.
    duty : float
        Sounding fraction of each inter-onset interval, in (0, 0.5] (the config bounds it).
    level_db_spl : float
        Level of every pulse, dB SPL.
    ramp_s : float
        Onset/offset ramp, seconds (added to each pulse's duration).

    Returns
    -------
    dict of str to Any
        ``spectrum`` plus ``bpm``, ``ioi_s``, ``duty``, ``n_events``, ``onsets_s`` (from 0, seconds),
        ``durations_s`` (seconds) and ``levels_db_spl`` (dB SPL), one entry per pulse.
    """
    ioi = 60.0 / bpm
    pulse = duty * ioi + ramp_s
    n = max(_events.MIN_PULSES, int(math.floor((span_s - pulse) / ioi + float(rng.uniform()))) + 1)
    return {
        **spectrum,
        "bpm": float(bpm),
        "ioi_s": ioi,
        "duty": float(duty),
        "n_events": n,
        "onsets_s": [k * ioi for k in range(n)],
        "durations_s": [pulse] * n,
        "levels_db_spl": [float(level_db_spl)] * n,
    }


@register
class TempoAbsolute(_events.EventSequences, BinnedAbsoluteTask):
    name = "tempo_absolute"
    audit = AuditSpec(
        (
            "bin",
            "edge_side",
            "margin_percent",
            *_events.PULSE_FEATURES,
            # the span is a whole number of intervals plus one pulse: within its bounded range it moves in
            # steps of one interval, coarser at a slow tempo, so its spread follows the interval; BS.1770 gates
            # 400 ms blocks, and how many fall between pulses 0.4-1.1 s apart follows the interval too, so the
            # gated loudness against the RMS reads the tempo
            "audio.span_s",
            "audio.loudness_lufs",
        ),
    )
    listener = staticmethod(listen.tempo_absolute)
    attribute = "tempo"
    bins_field = "bins_bpm"
    drawn = drawn_from("freq", "duty", "level", "span")
    Config = TempoAbsoluteConfig
    questions = (
        "Is the tempo of this pulse sequence slow, moderate, or fast?",
        "Listen to the sequence of sounds. Which tempo range does it fall in?",
        "How fast are the beats in this clip?",
    )
    card_note = (
        "tempo_absolute: one isochronous pulse sequence in a fixed window of a fixed-length clip; the answer is its "
        "tempo bin (events per minute), the level the tempo's margin in percent from the nearest bin edge, measured "
        "from the inter-onset intervals. Stimulus, level, window position, grid phase and duty cycle (hence sounding "
        "time, RMS and file size) are roved independently of the answer."
    )

    def labels(self) -> list[str]:
        b = self.cfg.bins_bpm
        return range_labels(bin_names(("Slow", "Moderate", "Fast"), "Tempo", b), b, "BPM")

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        k, side, bpm = self.draw_bin(rng, level.value)
        spectrum = _events.draw_spectrum(
            rng, self.cfg.stimuli, self.freq, self.cfg.n_harmonics, source=self.audio.source
        )
        duty, lv = float(self.duty.sample(rng)), float(self.level.sample(rng))
        seq = pulses_in_span(
            rng,
            spectrum,
            bpm=bpm,
            span_s=float(self.span.sample(rng)),
            duty=duty,
            level_db_spl=lv,
            ramp_s=self.cfg.ramp_s,
        )
        span = seq["onsets_s"][-1] + seq["durations_s"][-1]
        start = float(rng.uniform(EDGE_S, self.cfg.clip_s - EDGE_S - span))  # the sounding region's place
        seq["onsets_s"] = [start + t for t in seq["onsets_s"]]
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            **self.bin_record(k, side, bpm),
            "sequences": [seq],
        }

    def render(self, params):
        return _events.render_sequences(params)

    def measure(self, params, clips):
        """The tempo from the onsets (within :data:`TOLERANCE_BPM`, inside the labelled bin), the
        pulse count, the onsets' regularity and the margin from the nearest inner bin edge."""
        from auralgen.measure.onsets import ioi_regularity, ioi_tempo_bpm, onset_times

        t = onset_times(clips[0][0], params["sample_rate_hz"])
        seq = params["sequences"][0]
        bpm = ioi_tempo_bpm(t)
        k = params["bin"]
        ok = (
            t.size == seq["n_events"]
            and math.isfinite(bpm)
            and abs(bpm - seq["bpm"]) <= TOLERANCE_BPM
            and self.in_bin(bpm, k, TOLERANCE_BPM)
        )
        jitter = ioi_regularity(t)
        margin = self.margin_check(bpm, seq["bpm"], TOLERANCE_BPM)
        return Measurement.from_dict(
            {
                "bpm": round(bpm, 4) if math.isfinite(bpm) else None,
                "expected_bpm": round(seq["bpm"], 4),
                "margin_percent": margin,
                "events": int(t.size),
                "max_onset_error_s": round(jitter, 5),
                "tolerance_bpm": TOLERANCE_BPM,
                "valid": bool(ok and margin["ok"] and jitter <= MAX_ONSET_ERROR_S),
            }
        )
