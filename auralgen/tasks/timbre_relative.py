"""timbre_relative: two notes one after the other; are they played by the same instrument?

An instrument here is a spectral envelope (mel cepstrum, :mod:`auralgen.synth.instruments`)
imposed on an excitation. Difficulty: the timbre distance of the two notes' recipes, in dB of
mel-cepstral distance (the Euclidean distance of their cepstra, i.e. of their smoothed spectral
envelopes). Level 0 is the same instrument, the two notes differing only by its natural roving
(each note its own partials' phases and an envelope jitter of :data:`~auralgen.tasks._notes.ROVING_DB` per coefficient);
the excitation's course in time (attack, swell, vibrato, FM index, the string's burst and loss, a
noise's realisation: ``shape_seed``) is the instrument's and shared by both notes, at every level,
so the two notes' time-frequency envelopes match frame by frame, not only over the whole note; a level ``L >
0`` moves the second instrument ``L`` dB from the
first in a random direction of cepstral space. The hardest non-zero default level (1 dB) is near
the human threshold for a change of spectral shape: in profile analysis a 1-2 dB change of one
component of a multi-tone complex is detected (Green 1988, *Profile Analysis*, Oxford UP; Green,
Mason & Kidd 1984, JASA 75:1163-1167), which spread over the mel bands is a cepstral distance
of the same size; the easiest (8 dB) is far above it.

Controlled (drawn independently of the answer, shared by both notes): the excitation (harmonic,
bowed, brass-like, FM, plucked string or noise-excited), the pitch (f0), the duration, the
integrated loudness (LUFS, BS.1770; each note's then roved on its own by +-2.5 dB,
:data:`auralgen.tasks._sounds.LEVEL_ROVE_DB`, so no level measure follows the answer) and the
notes' places in a fixed-length clip. The answer is "Same" only at level 0.

Label: the timbre distance measured from the audio (the mel cepstra of the two notes,
:func:`auralgen.measure.timbre.timbre_distance_db`) equals the level within
:data:`TOLERANCE_DB` + :data:`TOLERANCE_FRACTION` of the level, and so does the time-local one
(Hann frames of 1024 samples, :func:`~auralgen.measure.timbre.framewise_distance_db`) within
:data:`FRAMEWISE_TOLERANCE_DB` + :data:`TOLERANCE_FRACTION` of it; both notes' loudness within
:data:`TOLERANCE_LU`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Choice, Dist
from auralgen.listeners import timbre as listen
from auralgen.synth import instruments
from auralgen.synth.levels import loudness_lufs
from auralgen.tasks import _sounds
from auralgen.tasks._compare import PairQuestion, loudness_pair_header, within
from auralgen.tasks._notes import TOLERANCE_LU, check_notes, note_recipe, note_samples, render_notes
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, Task, TaskConfig, register, require

TOLERANCE_DB = 0.6  # measured distance vs the level: this + TOLERANCE_FRACTION * level
TOLERANCE_FRACTION = 0.1
FRAMEWISE_TOLERANCE_DB = 1.0  # time-local distance (Hann 1024 frames) vs the level: this + TOLERANCE_FRACTION * level
# above ~185 Hz the two lowest mel bands share one partial and the envelope there cannot be set (errors ~1-2 dB)
# loudest note allowed: peaks stay under full scale (plucked attacks reach ~25 dB above the loudness)


@dataclass(frozen=True)
class TimbreRelativeConfig(TaskConfig):
    name: str = "timbre_relative"
    levels: tuple[float, ...] = (0, 1, 2, 4, 8)
    excitations: tuple[str, ...] = instruments.EXCITATIONS
    f0_hz: Dist = Dist.of({"dist": "loguniform", "low": 110.0, "high": 180.0})
    spread_db: float = 2.0  # how far an instrument lies from its family template (per coefficient, SD)
    note_s: float = 0.6
    gap_s: Dist = Dist.of((0.3, 0.5))
    lead_s: Dist = Dist.of((0.1, 0.3))
    loudness_lufs: Dist = Dist.of((-38.0, -32.5))  # then roved by +-2.5 dB per note
    clip_s: float = 2.2

    def check_task(self, audio: AudioConfig, key: str) -> None:
        check_notes(self, audio, key, rove_db=_sounds.LEVEL_ROVE_DB)
        require(
            all(v >= 0 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} has a negative distance; allowed: dB >= 0",
        )
        require(self.spread_db >= 0, f"{key}.spread_db={self.spread_db} is negative; allowed: >= 0")
        worst = _sounds.max_of(_sounds.dist(f"{key}.lead_s", self.lead_s, low=0.0)) + _sounds.max_of(
            _sounds.dist(f"{key}.gap_s", self.gap_s, low=0.0)
        )
        _sounds.check_fits(key, worst + 2 * self.note_s, self.clip_s)


@register
class TimbreRelative(PairQuestion, Task):
    name = "timbre_relative"
    audit = AuditSpec(("direction", "difference", "row.level"))
    listener = staticmethod(listen.timbre_relative)
    attribute = "timbre"
    level_unit = "dB"
    n_choices = 2
    easier = "larger"
    Config = TimbreRelativeConfig
    answers = {"same": "Same instrument", "different": "Different instruments"}
    questions = (
        "Two notes are played one after the other at the same pitch and loudness. Are they played by the same "
        "instrument or by different instruments?",
        "Listen to the two notes. Do they come from the same instrument?",
        "Do the two notes in this clip have the same timbre (same instrument) or different timbres?",
    )
    card_note = (
        "timbre_relative: two notes of equal pitch, duration and loudness (LUFS) with a shared excitation (harmonic, "
        "bowed, brass-like, FM, plucked string or noise-excited) in a fixed-length clip; the level is the timbre "
        "distance of the two instruments in dB of mel-cepstral (MFCC) distance, 0 = the same instrument with only its "
        "natural roving, measured from the audio over the whole notes and frame by frame (Hann, 1024 samples): both "
        "notes share the excitation's course in time. The answer is 'Same instrument' only at level 0."
    )

    def __init__(self, cfg: TimbreRelativeConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.f0 = _sounds.dist("f0_hz", cfg.f0_hz, low=1e-9)
        self.gap = _sounds.dist("gap_s", cfg.gap_s, low=0.0)
        self.lead = _sounds.dist("lead_s", cfg.lead_s, low=0.0)
        self.loudness = _sounds.dist("loudness_lufs", cfg.loudness_lufs)

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        require(level.value >= 0, f"{self.name} level {level.value!r} is negative; allowed: dB >= 0")
        direction = "same" if level.value == 0 else "different"
        excitation = Choice(tuple(self.cfg.excitations)).sample(rng)
        family = list(instruments.FAMILIES)[int(rng.integers(len(instruments.FAMILIES)))]
        base = np.asarray(instruments.FAMILIES[family]) + rng.normal(0.0, self.cfg.spread_db, instruments.N_CEPS)
        u = rng.standard_normal(instruments.N_CEPS)
        other = base + level.value * u / np.linalg.norm(u)
        f0, lufs = float(self.f0.sample(rng)), float(self.loudness.sample(rng))
        shape_seed = int(rng.integers(2**31))  # one course in time for both notes: only the envelope may differ
        lufs2 = _sounds.roved(rng, lufs)  # each note's loudness roved on its own
        notes = [
            note_recipe(rng, excitation, f0, self.cfg.note_s, c, lu, shape_seed) for c, lu in zip((base, other), lufs2)
        ]
        t1, t2 = _sounds.two_interval_timing(
            rng, self.cfg.note_s, self.cfg.note_s, self.gap, self.lead, self.cfg.clip_s
        )
        notes[0]["onset_s"], notes[1]["onset_s"] = t1, t2
        return {
            **loudness_pair_header(self, direction, level.value),
            "family": family,
            "notes": notes,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return render_notes(params)

    def measure(self, params, clips):
        """The two notes' timbre distance (mel cepstra from the audio) against the level, and each
        note's loudness (LUFS) against the recipe's."""
        from auralgen.measure.timbre import framewise_distance_db, timbre_distance_db

        sr = int(params["sample_rate_hz"])
        a, b = note_samples(params, clips[0])
        diff = float(params["difference"])
        rec = within("timbre_distance_db", timbre_distance_db(a, b, sr), diff, TOLERANCE_DB + TOLERANCE_FRACTION * diff)
        frames = within(
            "framewise_distance_db",
            framewise_distance_db(a, b, sr),
            diff,
            FRAMEWISE_TOLERANCE_DB + TOLERANCE_FRACTION * diff,
        )
        lufs = [loudness_lufs(x, sr) for x in (a, b)]
        loud_ok = all(abs(v - nt["loudness_lufs"]) <= TOLERANCE_LU for v, nt in zip(lufs, params["notes"]))
        return Measurement.from_dict(
            {
                "timbre_distance_db": rec,
                "framewise_distance_db": frames,
                "loudness_lufs": [round(v, 3) for v in lufs],
                "valid": bool(rec["ok"] and frames["ok"] and loud_ok),
            }
        )

    def eval_fields(self, params):
        return {"difference": params["difference"], "difference_unit": "dB"}
