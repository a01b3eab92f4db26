"""Palette ``tones``: the stimuli of the two-interval and single-sound tasks.

A recipe holds the spectral fields only; timing (``onset_s``, ``duration_s``) and level
(``level_db_spl``) are added by the task, and level and ramps are applied by
:func:`auralgen.tasks._sounds.synth_sound`.

=========  ==============================================  ===========================
kind       recipe fields                                   signal (unscaled)
=========  ==============================================  ===========================
pure       ``freq_hz``, ``n_harmonics`` (= 1)              sine at ``freq_hz``
harmonic   ``freq_hz``, ``n_harmonics`` (from the config)  equal-amplitude complex
noise      ``noise_seed``, ``color`` (``pink``)            seeded noise
=========  ==============================================  ===========================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from auralgen.sounds.base import SoundKind, palette, register_sound_kind
from auralgen.synth import harmonic_complex, noise, tone


class _Pitched(SoundKind):
    palettes = ("tones",)
    tags = frozenset({"pitched"})

    def draw(self, rng: np.random.Generator, *, freq, n_harmonics: int, **_: Any) -> dict[str, Any]:
        """``freq`` is a distribution of the fundamental (Hz)."""
        return {
            "kind": self.kind,
            "freq_hz": float(freq.sample(rng)),
            "n_harmonics": int(n_harmonics) if self.kind == "harmonic" else 1,
        }


@register_sound_kind
class Pure(_Pitched):
    kind = "pure"
    label = "the pure tone"

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return tone(spec["freq_hz"], spec["duration_s"], sample_rate=sample_rate)


@register_sound_kind
class Harmonic(_Pitched):
    kind = "harmonic"
    label = "the harmonic tone"

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return harmonic_complex(
            spec["freq_hz"], spec["duration_s"], sample_rate=sample_rate, n_harmonics=spec["n_harmonics"]
        )


@register_sound_kind
class Noise(SoundKind):
    kind = "noise"
    label = "the noise"
    palettes = ("tones",)

    def draw(self, rng: np.random.Generator, **_: Any) -> dict[str, Any]:
        return {"kind": self.kind, "noise_seed": int(rng.integers(2**31)), "color": "pink"}

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        rng = np.random.default_rng(spec["noise_seed"])
        return noise(spec["duration_s"], sample_rate=sample_rate, rng=rng, color=spec.get("color", "white"))


TONES = palette("tones")
STIMULI = tuple(k for k in TONES.kinds() if k != "clip")  # the synthesized ones (clip: a recorded source)
PITCHED = TONES.kinds("pitched")


@register_sound_kind
class Clip(SoundKind):
    """A piece of a recorded file (``source=clips|folder|hf``; :mod:`auralgen.sounds.corpus`),
    optionally moved in pitch (``shift_cents``) and time (read ``source_s``, stretched to
    ``duration_s``) by :func:`auralgen.sounds.transforms.stretch_shift`; a SoundFont note
    (``source=soundfont``) is played at the shifted pitch instead. The task measures the
    result; the recipe holds the file, its hash, license and offset, so it re-renders bit for bit."""

    kind = "clip"
    label = "the recording"
    palettes = ("tones",)
    tags = frozenset({"file"})

    def draw(
        self, rng: np.random.Generator, *, corpus, duration_s: float, at_start: bool = False, **_: Any
    ) -> dict[str, Any]:
        return {"kind": self.kind, **corpus.pick(rng, duration_s=duration_s, at_start=at_start)}

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        from auralgen.sounds.corpus import plays_shifted, read_entry
        from auralgen.sounds.transforms import stretch_shift

        d, shift = spec["duration_s"], spec.get("shift_cents", 0.0)
        if plays_shifted(spec):  # a sampled note is played at the shifted pitch, not processed
            x = read_entry(spec, sample_rate, spec.get("source_s", d), shift_cents=shift)
            return stretch_shift(x, sample_rate, duration_s=d)
        x = read_entry(spec, sample_rate, spec.get("source_s", d))
        return stretch_shift(x, sample_rate, duration_s=d, shift_cents=shift)
