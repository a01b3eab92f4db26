"""audiogram: is a tone of frequency f at L dB HL in the first half, the second half, or absent?

The absolute pitch & loudness range of hearing, as in STAR-Bench. Levels are dB HL
(re ISO 389-7 free-field reference thresholds, see :mod:`auralgen.synth.levels`); the
difficulty index is the dB HL value. Out-of-range *probe* frequencies (e.g. 20 Hz and
16 kHz) are presented at fixed dB SPL levels, appended after the dB HL levels with
unit ``dB SPL``. The clip is quantised to the 24-bit grid with TPDF dither drawn from
a seed stored in ``params``, so the quietest tones (below one LSB) survive export as
measurable narrowband energy rather than rounding to digital silence.

**Labels are physical presence**, not audibility: "In the first half" means the tone is in the
first half of the audio at the stated level, whether or not a listener would hear it (a
-10 dB HL tone, or a 20 Hz probe at 40 dB SPL far below the ISO 389-7 threshold, is present and
labelled so). The options name where the tone is in the audio, never whether it is heard. The
dB HL scale assumes the documented playback calibration (``full_scale_db_spl``: digital full
scale = that many dB SPL, free field). The sample rate is the task's own (48 kHz by default) and
every frequency must sit at most :data:`MAX_NYQUIST_FRACTION` of Nyquist, so the 8 kHz tones and
16 kHz probes are representable well below it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Choice
from auralgen.listeners import tones as listen
from auralgen.synth.levels import db_hl_to_db_spl, peak_for_db_spl_sine
from auralgen.tasks import _sounds
from auralgen.tasks.base import AudioConfig, AuditSpec, Level, Measurement, Task, TaskConfig, register, require
from auralgen.tasks.design import CellLevel, Cells, LevelInfo

POSITIONS = ("first", "second", "absent")
ANSWERS = {"first": "In the first half", "second": "In the second half", "absent": "Not present"}
EDGE_S = 0.2  # a tone keeps this far from the clip edges and from the middle
MAX_NYQUIST_FRACTION = 0.75  # highest tone or probe frequency / Nyquist
KEY_FIELDS = ("freq_hz", "level_value", "level_unit", "position")  # the parameter tuple kept apart across splits


# Below -10 dB HL nobody hears a tone (audiometers stop there), and -10 dB HL at 4 kHz is already
# about -151 dBFS, under one LSB of the 24-bit export (kept measurable by dither): the calibrated
# range ends a margin below it.
MIN_LEVEL_DB_HL = -30.0


@dataclass(frozen=True)
class AudiogramConfig(TaskConfig):
    name: str = "audiogram"
    levels: tuple[float, ...] = tuple(range(-10, 111, 10))
    freqs_hz: tuple[float, ...] = (125, 177, 250, 354, 500, 707, 1000, 1414, 2000, 2828, 4000, 5657, 8000)
    probe_freqs_hz: tuple[float, ...] = (20, 16000)
    probe_levels_db_spl: tuple[float, ...] = (40, 60, 80)
    probe_items_per_level: int = 3
    tone_s: float = 1.0
    clip_s: float = 4.0
    ramp_s: float = 0.02
    sample_rate: int | None = 48000

    def check_task(self, audio: AudioConfig, key: str) -> None:
        sr = self.sample_rate or audio.sample_rate
        fs = audio.full_scale_db_spl
        require(len(self.freqs_hz) > 0, f"{key}.freqs_hz=[] is empty; allowed: a non-empty list of frequencies")
        require(
            min(self.levels) >= MIN_LEVEL_DB_HL,
            f"{key}.levels={list(self.levels)!r} reaches {min(self.levels)} dB HL, below the calibrated range; "
            f"allowed: >= {MIN_LEVEL_DB_HL:g} dB HL",
        )
        top = MAX_NYQUIST_FRACTION * sr / 2
        for f in (*self.freqs_hz, *self.probe_freqs_hz):
            require(
                20 <= f <= top,
                f"{key}.freqs_hz={f} is outside 20 Hz .. {top:.0f} Hz ({MAX_NYQUIST_FRACTION:g} of Nyquist at "
                f"sample_rate={sr}); allowed: 20 <= freq_hz <= {top:.0f}, or a higher sample_rate",
            )
        for f in self.freqs_hz:
            require(f <= 18000, f"{key}.freqs_hz={f} has no ISO 389-7 threshold; allowed: 20 .. 18000 Hz")
            loudest = db_hl_to_db_spl(max(self.levels), f)
            require(
                peak_for_db_spl_sine(loudest, full_scale_db_spl=fs) < 1.0,
                f"{key}.levels reaches {max(self.levels)} dB HL = {loudest:.1f} dB SPL at {f} Hz, which clips at "
                f"full_scale_db_spl={fs}; allowed: at most {fs - 3.02 - (loudest - max(self.levels)):.1f} dB HL there",
            )
        for lv in self.probe_levels_db_spl:
            require(
                peak_for_db_spl_sine(lv, full_scale_db_spl=fs) < 1.0,
                f"{key}.probe_levels_db_spl={lv} clips at full_scale_db_spl={fs}; allowed: below {fs - 3.02:.1f}",
            )
        require(
            self.probe_items_per_level >= 0,
            f"{key}.probe_items_per_level={self.probe_items_per_level} is negative; allowed: >= 0",
        )
        require(
            self.tone_s + 2 * EDGE_S <= self.clip_s / 2 and self.tone_s >= 2 * self.ramp_s,
            f"{key}.tone_s={self.tone_s} does not fit half of clip_s={self.clip_s} with {EDGE_S} s margins; allowed: "
            f"2*ramp_s <= tone_s <= clip_s/2 - {2 * EDGE_S}",
        )


def cells(freqs: tuple[float, ...]) -> tuple[tuple[float, str], ...]:
    """A level's (frequency, position) cells in the order the ``k``-th item takes them.

    Cell ``j`` has frequency ``j mod n_freqs`` and position ``j mod 3``; when ``n_freqs`` is a
    multiple of 3 that covers only a third of the cells, so each later round of
    ``lcm(n_freqs, 3)`` cells shifts the position by one and every cell is listed once.

    Parameters
    ----------
    freqs : tuple of float
        The level's tone frequencies, Hz.

    Returns
    -------
    tuple of (float, str)
        ``3 * len(freqs)`` cells ``(frequency in Hz, position)``, position one of :data:`POSITIONS`.

    Examples
    --------
    >>> cells((500, 1000))
    ((500.0, 'first'), (1000.0, 'second'), (500.0, 'absent'), (1000.0, 'first'), (500.0, 'second'), (1000.0, 'absent'))
    """
    cycle = math.lcm(len(freqs), 3)
    return tuple((float(freqs[j % len(freqs)]), POSITIONS[(j + j // cycle) % 3]) for j in range(3 * len(freqs)))


class AudiogramCells(Cells):
    """The audiogram's design: the dB HL levels x (frequency, position) cells, then the probe levels
    (dB SPL) x (probe frequency, position) cells. Within a level the positions stay balanced, and (with
    a number of frequencies prime to 3, e.g. 13) the items of one frequency and level sit at different
    positions, so a model audiogram can tell hearing from a bias towards one answer. One adaptive
    track per frequency of ``freqs_hz`` (no probes), on a linear dB HL axis, louder easier."""

    @classmethod
    def of(cls, task: Task) -> AudiogramCells:
        cfg = task.cfg
        tones = [
            CellLevel(
                float(v),
                LevelInfo(task.attribute, task.regime, task.level_unit),
                cfg.items_per_level,
                cells(tuple(cfg.freqs_hz)),
                "dB HL",
                "more {key}.freqs_hz",
            )
            for v in cfg.levels
        ]
        probes = []
        if cfg.probe_freqs_hz and cfg.probe_items_per_level:
            fix = "more {key}.probe_freqs_hz or {key}.probe_items_per_level=0"
            probes = [
                CellLevel(
                    float(v),
                    LevelInfo("pitch", task.regime, "dB SPL"),
                    cfg.probe_items_per_level,
                    cells(tuple(cfg.probe_freqs_hz)),
                    "dB SPL probe",
                    fix,
                )
                for v in cfg.probe_levels_db_spl
            ]
        tracks = tuple((f"{task.name}@{f:g}Hz", {"freqs_hz": (f,), "probe_freqs_hz": ()}) for f in cfg.freqs_hz)
        # hearing level is already logarithmic: a linear axis over the grid's dB HL range
        axis = {"low": float(min(cfg.levels)), "high": float(max(cfg.levels)), "scale": "lin", "easier": "larger"}
        cell_fields, names = ("freq_hz", "position"), "(frequency, level, position)"
        return cls(task.name, (*tones, *probes), cell_fields, names, KEY_FIELDS, tracks, axis)


@register
class Audiogram(Task):
    name = "audiogram"
    analyses = ("thresholds_by_frequency",)
    card_note = (
        "Labels are physical presence: the tone is in the stated half of the audio at the stated level, whether or "
        "not a listener would hear it (-10 dB HL tones and probes below the hearing threshold included). dB HL "
        "assumes the documented calibration: digital RMS 1.0 = `full_scale_db_spl` dB SPL, free field, re ISO 389-7. "
        "Every probe frequency is at most 0.75 of the Nyquist frequency of the task's sample rate (48 kHz by default)."
    )
    audit = AuditSpec(("position", "sounds.*", "audio.*", "row.flac_bytes"))
    listener = staticmethod(listen.audiogram)
    clips_heard = False  # a tone near threshold, or none at all, is the stimulus
    calibrated_level = True  # absolute level is the attribute: the run's full_scale_db_spl, not the presentation
    sub_category = "absolute_perception"
    attribute = "loudness"
    human_threshold = (
        0.0,
        "dB HL",
        "ISO 389-7 / ISO 7029: 0 dB HL is the median threshold of young otologically normal listeners",
    )
    regime = "absolute"
    level_unit = "dB HL"
    n_choices = 3
    Config = AudiogramConfig
    Design = AudiogramCells
    questions = (
        "A pure tone may be played in this clip. Is it in the first half, in the second half, or not present?",
        "Listen carefully: when does the tone occur in this recording, if at all?",
        "Is there a tone in this clip, and if so, in which half?",
    )

    def is_probe(self, level: int) -> bool:
        """Whether grid level ``level`` is a probe level (appended after the dB HL levels, in dB SPL).

        Parameters
        ----------
        level : int
            A grid index: the ``cfg.levels`` first, then the probe levels.

        Returns
        -------
        bool
            True for an index past ``cfg.levels``.
        """
        return level >= len(self.cfg.levels)

    def sample(self, rng: np.random.Generator, level: int | Level) -> dict[str, Any]:
        """An item at ``level``: of its cell (frequency, position) where the design gives one, else both
        drawn; off the grid (``index=None``), a tone (not a probe) at any hearing level."""
        level = self.as_level(level)
        probe = level.index is not None and self.is_probe(level.index)
        freqs = tuple(self.cfg.probe_freqs_hz if probe else self.cfg.freqs_hz)
        pick = float(Choice(freqs).sample(rng))  # drawn in both cases: the stream stays aligned
        drawn = POSITIONS[int(rng.integers(3))]
        freq, position = level.cell if level.cell is not None else (pick, drawn)
        value = level.value
        level_spl = value if probe else db_hl_to_db_spl(value, freq)
        half = self.cfg.clip_s / 2
        start = 0.0 if position != "second" else half
        onset = float(rng.uniform(start + EDGE_S, start + half - self.cfg.tone_s - EDGE_S))
        sounds = []
        if position != "absent":
            sounds.append(
                {
                    "kind": "pure",
                    "freq_hz": freq,
                    "n_harmonics": 1,
                    "onset_s": onset,
                    "duration_s": self.cfg.tone_s,
                    "level_db_spl": level_spl,
                }
            )
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            "freq_hz": freq,
            "level_value": value,
            "level_unit": "dB SPL" if probe else "dB HL",
            "level_db_spl": level_spl,
            "position": position,
            "dither_seed": int(rng.integers(2**31)),
            "sounds": sounds,
        }

    def eval_fields(self, params):
        """The tone's frequency and half, for the per-frequency threshold analysis."""
        if "freq_hz" not in params:
            return {}
        return {"frequency_hz": float(params["freq_hz"]), "tone_position": params.get("position", "")}

    def render(self, params):
        return [_sounds.render_sounds(params, dither_seed=params["dither_seed"])]

    def qa(self, params, rng, *, slot):
        answer = ANSWERS[params["position"]]
        return self.make_qa(answer, ANSWERS.values(), rng, slot=slot)

    def measure(self, params, clips):
        from auralgen.measure import tone_presence

        res = tone_presence(clips[0][0], params["sample_rate_hz"], params["freq_hz"])
        verdict = res.verdict if hasattr(res, "verdict") else res["verdict"]
        return Measurement.from_dict(
            {"presence": verdict, "expected": params["position"], "valid": verdict == params["position"]}
        )
