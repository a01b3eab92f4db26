"""loudness_relative: the same sound twice; is the second louder, softer or the same?

Difficulty: the level difference in dB. Both intervals carry the *same* stimulus (same
kind, frequency and, for noise, the same waveform), so frequency-dependent loudness
(equal-loudness contours) cannot give the answer away; the mean level is roved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import tones as listen
from auralgen.tasks import _sounds
from auralgen.tasks._compare import CompareConfig, CompareTask, within
from auralgen.tasks.base import RELATIVE_FEATURES, AuditSpec, Measurement, register

TOLERANCE_DB = 0.3


@dataclass(frozen=True)
class LoudnessRelativeConfig(CompareConfig):
    name: str = "loudness_relative"
    levels: tuple[float, ...] = (0, 4, 8, 12, 24, 48)
    level_db_spl: Dist = Dist.of((50.0, 75.0))
    difference_unit: ClassVar[str] = "dB"

    def level_headroom(self) -> float:
        return max(self.levels) / 2.0


@register
class LoudnessRelative(CompareTask):
    name = "loudness_relative"
    # level is the attribute: every level measure of the clip (RMS, peak, integrated loudness) and of its
    # two parts follows the difference asked about, so each is a declared cue, not a shortcut; so is the clip's crest
    # factor (the louder sound's peak over both sounds' energy: 3 dB lower for equal levels than for 48 dB apart;
    # the nuisance control read 54.8 % from it alone on 1,005 items)
    audit = AuditSpec(
        (
            *RELATIVE_FEATURES,
            "sounds.*.level_db_spl",
            "delta.level_db_spl",
            "audio.rms_dbfs",
            "audio.peak_dbfs",
            "audio.loudness_lufs",
            "audio.crest_db",
            "audio.delta_level_db",
            "row.flac_bytes",
            "audio.delta_duration_s",
            "audio.active_s",
        ),
    )
    listener = staticmethod(listen.loudness_relative)
    # the default pair spans 26-99 dB SPL (a 50-75 dB SPL mean +-24 dB): full scale 116 dB SPL keeps the loudest
    # sound's peak below 1.0 (the mean at -54 dBFS RMS); the common presentation (100) would clip it
    presentation_full_scale_db_spl = 116.0
    # recorded sounds: their crest factor (up to 30 dB, CREST["clip"]) over the loudest 99 dB SPL
    presentation_full_scale_recorded_db_spl = 130.0
    attribute = "loudness"
    human_threshold = (
        1.0,
        "dB",
        "Jesteadt, Wier & Green 1977, JASA 61(1) 169-177: about 1 dB at 40 dB SL (0.5 dB at 80 dB SL)",
    )
    level_unit = "dB"
    Config = LoudnessRelativeConfig
    answers = {"up": "Louder", "down": "Softer", "same": "The same"}
    questions = (
        "Two sounds are played one after the other. Is the second sound louder, softer, or the same loudness as the "
        "first?",
        "Compared with the first sound, is the second one louder, softer, or equally loud?",
        "How does the loudness of the second sound compare with the first?",
    )

    def make_pair(self, rng, base, direction, delta_db):
        mean = float(self.level.sample(rng))
        half = self.sign(direction) * delta_db / 2.0
        d = float(self.tone.sample(rng))
        a = {**base, "duration_s": d, "level_db_spl": mean - half}
        b = {**base, "duration_s": d, "level_db_spl": mean + half}
        return a, b, {"mean_level_db_spl": mean}

    def measure(self, params, clips):
        from auralgen.measure import level_db_spl

        fs = params["full_scale_db_spl"]
        lv = [level_db_spl(clips[0][0, a:b], full_scale_db_spl=fs) for a, b in _sounds.sound_windows(params)]
        expected = self.sign(params["direction"]) * params["difference"]
        rec = within("level_difference_db", lv[1] - lv[0], expected, TOLERANCE_DB)
        out = {"level_db_spl": [round(v, 3) for v in lv], "level_difference_db": rec, "valid": rec["ok"]}
        if params["sounds"][0]["kind"] == "clip":  # a recording: its BS.1770 loudness difference too (pyloudnorm)
            from auralgen.synth.levels import loudness_lufs

            sr = params["sample_rate_hz"]
            parts = [clips[0][0, a:b].astype(np.float64) for a, b in _sounds.sound_windows(params)]
            # one common gain (the louder part at -10 dBFS RMS) keeps both above BS.1770's -70 LUFS
            # absolute gate and leaves their difference as it is
            gain = 10 ** (-10 / 20) / max(float(np.sqrt(np.mean(x**2))) for x in parts)
            lu = [loudness_lufs(gain * x, sr) for x in parts]
            out["loudness_difference_lu"] = lu_rec = within(
                "loudness_difference_lu", lu[1] - lu[0], expected, TOLERANCE_DB
            )
            out["valid"] = bool(rec["ok"] and lu_rec["ok"])
        return Measurement.from_dict(out)
