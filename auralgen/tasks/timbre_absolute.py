"""timbre_absolute: which instrument family does a note's timbre belong to?

The families are spectral-envelope templates (:data:`auralgen.synth.instruments.FAMILIES`:
string-like, brass-like, flute-like, reed-like), a regular simplex in mel-cepstral space, every
pair :data:`~auralgen.synth.instruments.FAMILY_DISTANCE_DB` (10 dB) apart. Difficulty: a morph
between the target family and another one (a foil drawn uniformly among the rest); the level is
the share of the target recipe in percent (100 = the template itself, 50 = the boundary), so the
note lies ``(level / 100 - 0.5) x 10 dB`` of cepstral distance inside its family's region. The
hardest default level (57 %, 0.7 dB inside the boundary) is below the human threshold for a
change of spectral shape (1-2 dB for one component, profile analysis: Green 1988, *Profile
Analysis*, Oxford UP); the easiest (100 %) is far from any boundary.

Controlled (drawn independently of the answer): the excitation (harmonic, bowed, brass-like, FM,
plucked string or noise-excited: the family is the envelope only, so the excitation carries no
cue), the pitch, the loudness (LUFS), the note's place in a fixed-length clip (duration fixed),
the natural roving of the envelope, and the foil.

Label: the mel cepstrum measured from the audio is nearest to the target's template, and its
share of the target (its place on the line from the foil's template to the target's,
:func:`share_percent`) equals the level within :data:`TOLERANCE_PERCENT`.
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
from auralgen.tasks._compare import within
from auralgen.tasks._notes import TOLERANCE_LU, check_notes, note_recipe, note_samples, render_notes
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, Task, TaskConfig, register, require

TOLERANCE_PERCENT = 5.0  # measured share of the target vs the level (percentage points)
EDGE_S = 0.1  # the note starts at least this after the clip's start and ends this before its end


@dataclass(frozen=True)
class TimbreAbsoluteConfig(TaskConfig):
    name: str = "timbre_absolute"
    levels: tuple[float, ...] = (100, 80, 65, 57)
    excitations: tuple[str, ...] = instruments.EXCITATIONS
    f0_hz: Dist = Dist.of({"dist": "loguniform", "low": 110.0, "high": 180.0})
    note_s: float = 0.6
    loudness_lufs: Dist = Dist.of((-36.0, -30.0))
    clip_s: float = 1.2

    def check_task(self, audio: AudioConfig, key: str) -> None:
        check_notes(self, audio, key)
        require(
            all(50 < v <= 100 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} leaves (50, 100]; allowed: 50 < percent of the target recipe <= 100",
        )
        _sounds.check_fits(key, self.note_s + 2 * EDGE_S, self.clip_s)


def share_percent(ceps, family: str, foil: str) -> float:
    """The share (percent) of ``family`` in a cepstrum on the morph toward ``foil``: 100 minus its
    projection on the line from the family's template to the foil's, in percent of their distance
    (the part of a deviation across that line, which does not move the note toward either, is left out).

    Parameters
    ----------
    ceps : array_like, shape (n_coefficients,)
        A note's mel cepstrum, as the family templates of :data:`auralgen.synth.instruments.FAMILIES`.
    family : str
        The labelled family.
    foil : str
        The family the note is morphed toward.

    Returns
    -------
    float
        Percent: 100 at the family's template, 0 at the foil's.
    """
    t, o = np.asarray(instruments.FAMILIES[family]), np.asarray(instruments.FAMILIES[foil])
    return float(100.0 * (1.0 - np.dot(np.asarray(ceps) - t, o - t) / np.dot(o - t, o - t)))


@register
class TimbreAbsolute(Task):
    name = "timbre_absolute"
    # audio.rms_dbfs: at one loudness (BS.1770, the level control) a note's RMS follows its spectral envelope
    # (the K-weighting's high shelf): family means -37.8 (flute-like) to -37.0 dBFS (brass-like) over the same LUFS
    # rove, which a metadata model reading RMS uses (30.8 % against 25.9 % on 1,600 items); it measures the cue
    # notes levelled in loudness: their RMS, whole or of the one segment, follows the spectral envelope
    audit = AuditSpec(("family", "foil", "margin_db", "notes.0.ceps.*", "audio.rms_dbfs", "audio.delta_level_db"))
    listener = staticmethod(listen.timbre_absolute)
    sub_category = "absolute_perception"
    attribute = "timbre"
    regime = "absolute"
    level_unit = "percent"
    n_choices = len(instruments.FAMILIES)
    easier = "larger"
    Config = TimbreAbsoluteConfig
    questions = (
        "Which instrument family does the timbre of this note sound most like?",
        "Listen to the note. Which family of instruments does its tone colour belong to?",
        "Judging by its timbre, which kind of instrument plays this note?",
    )
    card_note = (
        "timbre_absolute: one note in a fixed-length clip; the answer is the family (string-like, brass-like, "
        "flute-like, reed-like) whose spectral-envelope template its mel cepstrum (MFCC) is nearest to, measured from "
        "the audio; the level is the share of the target recipe in a morph toward another family (percent, 50 = the "
        "boundary). Excitation (harmonic, bowed, brass-like, FM, plucked, noise-excited), pitch, loudness (LUFS) and "
        "onset are roved independently of the answer; the family is the envelope only. At one loudness a note's RMS "
        "follows its envelope (family means within 0.8 dB), so RMS is counted as part of the cue, not as metadata."
    )

    def __init__(self, cfg: TimbreAbsoluteConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.f0 = _sounds.dist("f0_hz", cfg.f0_hz, low=1e-9)
        self.loudness = _sounds.dist("loudness_lufs", cfg.loudness_lufs)

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        require(
            50 < level.value <= 100, f"{self.name} level {level.value!r} leaves (50, 100]; allowed: 50 < percent <= 100"
        )
        names = list(instruments.FAMILIES)
        family = names[int(rng.integers(len(names)))]
        others = [n for n in names if n != family]
        foil = others[int(rng.integers(len(others)))]
        share = level.value / 100.0
        ceps = share * np.asarray(instruments.FAMILIES[family]) + (1 - share) * np.asarray(instruments.FAMILIES[foil])
        excitation = Choice(tuple(self.cfg.excitations)).sample(rng)
        f0, lufs = float(self.f0.sample(rng)), float(self.loudness.sample(rng))
        note = note_recipe(rng, excitation, f0, self.cfg.note_s, ceps, lufs)
        note["onset_s"] = float(rng.uniform(EDGE_S, self.cfg.clip_s - self.cfg.note_s - EDGE_S))
        return {
            "sample_rate_hz": self.sample_rate,
            "clip_s": self.cfg.clip_s,
            "family": family,
            "foil": foil,
            "share_percent": level.value,
            "margin_db": round((share - 0.5) * instruments.FAMILY_DISTANCE_DB, 9),
            "notes": [note],
        }

    def render(self, params):
        return render_notes(params)

    def qa(self, params, rng, *, slot):
        labels = [instruments.FAMILY_LABELS[n] for n in instruments.FAMILIES]
        return self.make_qa(instruments.FAMILY_LABELS[params["family"]], labels, rng, slot=slot)

    def measure(self, params, clips):
        """The note's mel cepstrum (from the audio): nearest template, share of the target
        (:func:`share_percent`) against the level, loudness against the recipe."""
        from auralgen.measure.timbre import mel_cepstrum, nearest

        sr = int(params["sample_rate_hz"])
        (x,) = note_samples(params, clips[0])
        names = list(instruments.FAMILIES)
        c = mel_cepstrum(x, sr)
        k, d = nearest(c, [instruments.FAMILIES[n] for n in names])
        rec = within(
            "share_percent",
            share_percent(c, params["family"], params["foil"]),
            params["share_percent"],
            TOLERANCE_PERCENT,
        )
        lufs = loudness_lufs(x, sr)
        ok = (
            rec["ok"]
            and names[k] == params["family"]
            and abs(lufs - params["notes"][0]["loudness_lufs"]) <= TOLERANCE_LU
        )
        return Measurement.from_dict(
            {
                "share_percent": rec,
                "nearest": names[k],
                "distances_db": [round(v, 3) for v in d],
                "loudness_lufs": round(lufs, 3),
                "valid": bool(ok),
            }
        )

    def eval_fields(self, params):
        return {"difference": params["share_percent"], "difference_unit": "percent"}
