"""brightness_absolute: is one harmonic complex dark, neutral or bright (by its spectral centroid)?

The classes are centroid ranges delimited by ``bins_hz`` (default: dark below 500 Hz, neutral
500-2000 Hz, bright above 2000 Hz; the option texts state the ranges). Difficulty: the margin
(percent, in ratio) of the sound's centroid from the nearest class boundary. Every item has exactly
its level's margin (a class drawn uniformly, then one of its inner edges, the centroid that margin
inside it), stored as ``margin_percent`` with ``edge_side``; ``measure`` reads the centroid back
from the audio (within :data:`TOLERANCE_RATIO`) and the margin from it. F0 (an integer period), the
harmonic phases, the duration, the onset and the integrated loudness (LUFS) are roved independently
of the answer; the clip length is fixed (``clip_s``).

Levels: the hardest default margin, 5 %, is near the human spectral-centroid difference limen of a
few percent (Allen & Oxenham 2014, J. Acoust. Soc. Am. 135(3), 1371-1379; see brightness_relative).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import brightness as listen
from auralgen.measure.brightness import spectral_centroid_hz
from auralgen.synth import brightness as brightness_synth
from auralgen.synth import loudness_lufs
from auralgen.tasks import _sounds, _timbre_onset
from auralgen.tasks._binned import BinnedAbsoluteTask, between_labels, check_three_bins, edge_text
from auralgen.tasks._compare import drawn_from
from auralgen.tasks._timbre_onset import OneToneConfig
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, register

TOLERANCE_RATIO = 0.005  # the measured centroid may differ from the recipe's by 0.5 %
NAMES = ("Dark", "Neutral", "Bright")


@dataclass(frozen=True)
class BrightnessAbsoluteConfig(OneToneConfig):
    name: str = "brightness_absolute"
    levels: tuple[float, ...] = (60, 30, 15, 5)
    bins_hz: tuple[float, ...] = (500.0, 2000.0)
    f0_hz: Dist = Dist.of({"dist": "loguniform", "low": 100.0, "high": 200.0})
    max_freq_hz: float = 7000.0
    tone_s: Dist = Dist.of((0.6, 1.0))
    ramp_s: float = 0.02

    def check_task(self, audio: AudioConfig, key: str) -> None:
        b = self.bins_hz
        m = check_three_bins(key, "bins_hz", b, self.levels, "centroids", NAMES, "Hz")
        _timbre_onset.check_brightness(self, audio, key, b[0] / m, b[1] * m, relative=False)


@register
class BrightnessAbsolute(BinnedAbsoluteTask):
    name = "brightness_absolute"
    # Declared cues: the clip's RMS, peak and crest factor (peak/RMS) follow the spectral tilt, and are
    # driven by brightness itself. RMS at a roved LUFS: RMS minus LUFS is the K-weighting's high shelf,
    # a high-frequency energy measure. Crest factor: a dark complex has a few harmonics carrying its
    # energy (near a sinusoid), a bright one tens. `python bench/brightness_crest.py` (600 items): the items' own
    # crest factors span 3.7-5.6 dB (dark) and 6.8-10.4 dB (bright), 5-95 %; per item, the highest of 32
    # random phase draws has a median of 5.8 dB for dark items and the lowest a median of 6.6 dB for bright
    # ones, and no dark item reaches the bright items' median (8.6 dB). No phase roving equalises it; only
    # chirp (Schroeder) phases, audible themselves, would bring a bright complex down to a dark one's.
    audit = AuditSpec(
        (
            "bin",
            "edge_side",
            "sounds.0.centroid_hz",
            "sounds.0.tilt_db_per_octave",
            "audio.rms_dbfs",
            "audio.peak_dbfs",
            "audio.crest_db",
            "audio.delta_level_db",  # the one sound's own RMS and peak: the clip's, above
        ),
    )
    listener = staticmethod(listen.brightness_absolute)
    attribute = "brightness"
    easier = "larger"
    bins_field = "bins_hz"
    drawn = drawn_from("f0", "tone", "lead", "loudness")
    Config = BrightnessAbsoluteConfig
    questions = (
        "Is the tone colour of this sound dark, neutral, or bright?",
        "Listen to the sound. How bright is its timbre?",
        "Classify the brightness of the sound you hear.",
    )
    card_note = (
        "A single harmonic complex whose spectral tilt sets its spectral centroid (magnitude-weighted mean frequency); "
        "the class is the centroid range the option text states (dark / neutral / bright). F0, duration, onset and "
        "integrated loudness (LUFS) are roved independently of the class; the level is the centroid's margin in "
        "percent from the nearest class boundary."
    )

    def labels(self) -> list[str]:
        return between_labels(NAMES, "spectral centroid", *(edge_text(v, "Hz") for v in self.cfg.bins_hz))

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        k, side, centroid = self.draw_bin(rng, level.value)
        sr = self.sample_rate
        period = brightness_synth.period_samples(float(self.f0.sample(rng)), sr)
        h = brightness_synth.harmonic_numbers(period, sr, self.cfg.max_freq_hz)
        sound = {
            "period_samples": period,
            "f0_hz": sr / period,
            "max_freq_hz": self.cfg.max_freq_hz,
            "phase_seed": int(rng.integers(2**31)),
            "duration_s": float(self.tone.sample(rng)),
            "loudness_lufs": float(self.loudness.sample(rng)),
            "centroid_hz": centroid,
            "tilt_db_per_octave": brightness_synth.tilt_for_centroid(h, sr / period, centroid),
        }
        sound["onset_s"] = float(self.lead.sample(rng))
        return {
            "sample_rate_hz": sr,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            **self.bin_record(k, side, centroid),
            "sounds": [sound],
        }

    def render(self, params):
        ramp_s = params["ramp_s"]
        return [_timbre_onset.render_placed(params, lambda s, sr: brightness_synth.render_tilted(s, sr, ramp_s))]

    def measure(self, params, clips):
        """The centroid of the sound's steady part: within :data:`TOLERANCE_RATIO` of the recipe's, inside
        the labelled class, and at the recipe's margin from the nearest boundary (tolerance mapped to percent)."""
        sr = params["sample_rate_hz"]
        x = clips[0][0].astype(np.float64)
        ((a, b),) = _sounds.sound_windows(params)
        c = spectral_centroid_hz(x[a:b], sr)
        expected = params["sounds"][0]["centroid_hz"]
        tol = TOLERANCE_RATIO * expected
        k = params["bin"]
        ok = abs(c - expected) <= tol and self.in_bin(c, k)
        margin = self.margin_check(c, expected, tol)
        ((s0, s1),) = _timbre_onset.sound_spans(params)
        lufs = loudness_lufs(x[s0:s1], sr)
        loud_ok = abs(lufs - params["sounds"][0]["loudness_lufs"]) <= 0.1
        return Measurement.from_dict(
            {
                "centroid_hz": round(c, 3),
                "expected_hz": round(expected, 3),
                "margin_percent": margin,
                "loudness_lufs": round(lufs, 3),
                "valid": bool(ok and margin["ok"] and loud_ok),
            }
        )
