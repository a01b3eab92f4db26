"""brightness_relative: two harmonic complexes separated by a gap; is the second brighter, darker or the same?

Difficulty: the spectral-centroid difference in percent, ``100 * (c_bright / c_dark - 1)``. Both sounds
are harmonic complexes of the same F0 (an integer period, roved per item), the same harmonics (up to
``max_freq_hz``), the same harmonic phases, the same duration and the same integrated loudness
(``loudness_lufs``, BS.1770 via pyloudnorm, roved per item); only the spectral tilt differs, solved
so that each sound's centroid is the recipe's (:mod:`auralgen.synth.brightness`). The pair is centred
geometrically on a centroid drawn independently of the answer, and which sound is brighter is drawn
uniformly, so neither position, level nor F0 predicts the answer. The clip length is fixed (``clip_s``).

With a recorded source (``source=clips|folder|hf|soundfont``) both sounds are one piece of a
recording, each through a second-order high shelf at the piece's own centroid
(:func:`auralgen.synth.brightness.high_shelf`) whose gain is solved (Brent's method) so that the
centroid of the sound's steady part -- the window ``measure`` reads -- is the piece's centroid times
``sqrt(1 + level / 100)`` for the brighter one and divided by it for the darker one, then both are
set to the drawn loudness. A difference the shelf cannot reach on that piece (+/- 36 dB) fails the
measurement, and the item is redrawn.

``measure`` reads each sound's spectral centroid from its steady part
(:func:`auralgen.measure.brightness.spectral_centroid_hz`); the item is valid when the measured
difference equals the level within :data:`TOLERANCE_PERCENT` (signed by the labelled direction) and
the two sounds' measured loudness differs by at most :data:`TOLERANCE_LU`.

Levels: human spectral-centroid difference limens are a few percent -- about 5 % for harmonic
complexes whose spectral envelope is shifted (Allen & Oxenham 2014, "Symmetric interactions and
interference between pitch and timbre", J. Acoust. Soc. Am. 135(3), 1371-1379; figure as we read it,
of the order of their centroid thresholds). The default hardest level, 5 %, sits there; 80 % is
easy; 0 is the "same" level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.qa import QA
from auralgen.core.random import Dist
from auralgen.listeners import brightness as listen
from auralgen.measure.brightness import spectral_centroid_hz
from auralgen.sounds.tones import TONES
from auralgen.synth import brightness as brightness_synth
from auralgen.synth import loudness_lufs, n_samples
from auralgen.tasks import _sounds, _timbre_onset
from auralgen.tasks._compare import CompareTask, check_differences, drawn_from, pair_extremes, within
from auralgen.tasks._timbre_onset import ROVE_NOTE, TonePairConfig
from auralgen.tasks.base import RELATIVE_FEATURES, AudioConfig, AuditSpec, Measurement, register

TOLERANCE_PERCENT = 0.5  # the measured centroid difference may differ from the level by this much (percentage points)
TOLERANCE_LU = 0.1  # the two sounds' measured integrated loudness may differ by this much (LU)


@dataclass(frozen=True)
class BrightnessRelativeConfig(TonePairConfig):
    name: str = "brightness_relative"
    levels: tuple[float, ...] = (0, 5, 10, 20, 40, 80)
    f0_hz: Dist = Dist.of({"dist": "loguniform", "low": 100.0, "high": 200.0})
    centroid_hz: Dist = Dist.of({"dist": "loguniform", "low": 500.0, "high": 1600.0})
    max_freq_hz: float = 6000.0
    tone_s: Dist = Dist.of((0.6, 1.0))
    ramp_s: float = 0.02

    def check_task(self, audio: AudioConfig, key: str) -> None:
        check_differences(self, key, "percent")
        if _sounds.check_recorded(key, self, audio, fields=("f0_hz", "centroid_hz", "max_freq_hz")):
            _timbre_onset.check_common(self, key, relative=True)  # the spectrum is the recording's, moved by a shelf
            return
        _timbre_onset.check_brightness(self, audio, key, *pair_extremes(self, key, "centroid_hz"), relative=True)


@register
class BrightnessRelative(CompareTask):
    name = "brightness_relative"
    # no level feature is a target: each sound's loudness is roved (_sounds.LEVEL_ROVE_DB), which buries the 0.17 dB
    # lower RMS a brighter sound has at equal loudness (K-weighting favours high frequencies)
    audit = AuditSpec(
        (
            *RELATIVE_FEATURES,
            "sounds.*.tilt_db_per_octave",
            "sounds.*.centroid_hz",
            "delta.tilt_db_per_octave",
            "delta.centroid_hz",
            "sounds.*.shelf_db",
            "delta.shelf_db",
        ),
    )
    listener = staticmethod(listen.brightness_relative)
    attribute = "brightness"
    human_threshold = (
        5.0,
        "percent",
        "Allen & Oxenham 2014, JASA 135(3) 1371-1379: spectral-centroid thresholds of a few percent",
    )
    # takes_sources: every kind, as CompareTask's (a recording through a high shelf solved for the centroid;
    # measured as before)
    level_unit = "percent"
    easier = "larger"
    Config = BrightnessRelativeConfig
    answers = {"up": "Brighter", "down": "Darker", "same": "The same"}
    questions = (
        "Two sounds are played one after the other. Is the second sound brighter, darker, or the same in timbre as "
        "the first?",
        "Listen to the two sounds. Compared with the first, does the second sound brighter, darker, or the same?",
        "How does the brightness (the sharpness of the tone colour) of the second sound compare with the first?",
    )
    card_note = (
        "Both sounds are harmonic complexes with the same F0, harmonics, phases and duration; each one's integrated "
        f"loudness (LUFS) {ROVE_NOTE}; only the spectral tilt differs. The level is the spectral-centroid difference "
        "in percent, measured from each sound's magnitude spectrum; 'brighter' means a higher spectral centroid."
    )

    drawn = drawn_from("f0", "centroid", "tone", "gap", "lead", "loudness")

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level, direction = self.begin(rng, level)
        if self.audio.source.recorded:
            return self._sample_recorded(rng, level, direction)
        sr = self.sample_rate
        period = brightness_synth.period_samples(float(self.f0.sample(rng)), sr)
        k = brightness_synth.harmonic_numbers(period, sr, self.cfg.max_freq_hz)
        centre = float(self.centroid.sample(rng))
        step = self.ratio_step(level, direction)
        d = float(self.tone.sample(rng))
        common = {
            "period_samples": period,
            "f0_hz": sr / period,
            "max_freq_hz": self.cfg.max_freq_hz,
            "phase_seed": int(rng.integers(2**31)),
            "duration_s": d,
        }
        lufs = _sounds.roved(rng, float(self.loudness.sample(rng)))
        sounds = []
        for c, lu in zip((centre / step, centre * step), lufs):
            sounds.append(
                {
                    **common,
                    "centroid_hz": c,
                    "tilt_db_per_octave": brightness_synth.tilt_for_centroid(k, sr / period, c),
                    "loudness_lufs": lu,
                }
            )
        self.place_pair(rng, sounds)
        return self._pair_params(direction, level, centre, sounds)

    def _sample_recorded(self, rng: np.random.Generator, level, direction: str) -> dict[str, Any]:
        """Both sounds one piece of a recording, shelved apart in centroid by the level (module docstring)."""
        sr, ramp = self.sample_rate, n_samples(self.cfg.ramp_s, self.sample_rate)
        d = float(self.tone.sample(rng))
        clip = {**_sounds.draw_clip(rng, self.audio.source, d), "duration_s": d}
        piece = TONES.render(clip, sr)
        c0 = spectral_centroid_hz(piece[ramp : len(piece) - ramp], sr)
        step = self.ratio_step(level, direction)
        lufs = _sounds.roved(rng, float(self.loudness.sample(rng)))
        corner = round(c0, 3) if math.isfinite(c0) else 1000.0
        sounds = [
            {
                **clip,
                "shelf_hz": corner,
                "shelf_db": shelf_gain_db(piece, sr, ramp, corner, c0 * f),
                "loudness_lufs": lu,
            }
            for f, lu in zip((1.0 / step, step), lufs)
        ]
        self.place_pair(rng, sounds)
        return self._pair_params(direction, level, round(c0, 3), sounds)

    def _pair_params(self, direction: str, level, base_centroid_hz: float, sounds: list[dict]) -> dict[str, Any]:
        return {
            "sample_rate_hz": self.sample_rate,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            "direction": direction,
            "difference": level.value,
            "base_centroid_hz": base_centroid_hz,
            "sounds": sounds,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        ramp_s = params["ramp_s"]
        if params["sounds"][0].get("kind") == "clip":
            return [
                _timbre_onset.render_placed(
                    params, lambda s, sr: brightness_synth.render_shelved(TONES.render(s, sr), s, sr, ramp_s)
                )
            ]
        return [_timbre_onset.render_placed(params, lambda s, sr: brightness_synth.render_tilted(s, sr, ramp_s))]

    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        return self.make_qa(self.answers[params["direction"]], list(self.answers.values()), rng, slot=slot)

    def eval_fields(self, params):
        """The centroid difference (percent, larger = easier) for a psychometric fit on it."""
        return {"difference": float(params["difference"]), "difference_unit": "percent"}

    def measure(self, params, clips):
        sr = params["sample_rate_hz"]
        x = clips[0][0].astype(np.float64)
        c = [spectral_centroid_hz(x[a:b], sr) for a, b in _sounds.sound_windows(params)]
        lufs = [loudness_lufs(x[a:b], sr) for a, b in _timbre_onset.sound_spans(params)]
        rec = within(
            "centroid_difference_percent",
            _timbre_onset.signed_percent(c[0], c[1]),
            self.sign(params["direction"]) * params["difference"],
            TOLERANCE_PERCENT,
        )
        want = params["sounds"][1]["loudness_lufs"] - params["sounds"][0]["loudness_lufs"]  # roved apart
        loud = within("loudness_difference_lu", lufs[1] - lufs[0], want, TOLERANCE_LU)
        return Measurement.from_dict(
            {
                "centroid_hz": [round(v, 3) for v in c],
                "centroid_difference_percent": rec,
                "loudness_lufs": [round(v, 3) for v in lufs],
                "loudness_difference_lu": loud,
                "valid": bool(rec["ok"] and loud["ok"]),
            }
        )


def shelf_gain_db(piece: np.ndarray, sample_rate: int, ramp: int, corner_hz: float, target_hz: float) -> float:
    """The high-shelf gain (dB, within :data:`auralgen.synth.brightness.SHELF_RANGE_DB`) that puts the
    centroid of ``piece``'s steady part (``ramp`` samples off each end) at ``target_hz``; the nearer
    end of the range when no gain reaches it (the measurement then rejects the item).

    Parameters
    ----------
    piece : ndarray, shape (samples,)
        The mono recording piece, digital full scale 1.0.
    sample_rate : int
        Hz.
    ramp : int
        Samples left out at each end (the onset and offset ramps).
    corner_hz : float
        The shelf's corner frequency, Hz.
    target_hz : float
        The wanted spectral centroid, Hz.

    Returns
    -------
    float
        The shelf gain, dB (0.0 when the piece's centroid already is ``target_hz`` or the target is not finite).
    """
    from scipy.optimize import brentq

    def err(g: float) -> float:
        return (
            spectral_centroid_hz(
                brightness_synth.high_shelf(piece, sample_rate, corner_hz, g)[ramp : len(piece) - ramp], sample_rate
            )
            - target_hz
        )

    lo, hi = brightness_synth.SHELF_RANGE_DB
    if (
        not math.isfinite(target_hz)
        or abs(target_hz - spectral_centroid_hz(piece[ramp : len(piece) - ramp], sample_rate)) < 1e-9
    ):
        return 0.0
    e_lo, e_hi = err(lo), err(hi)
    if not (math.isfinite(e_lo) and math.isfinite(e_hi)) or e_lo > 0 or e_hi < 0:
        return lo if e_lo > 0 else hi
    return round(float(brentq(err, lo, hi, xtol=1e-7)), 7)
