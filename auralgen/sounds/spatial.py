"""Palette ``spatial``: dry source signals of the spatial tasks (unit RMS before the room).

A recipe is ``{"kind", "duration_s", "seed", ...kind fields}``; the task chooses the kind and
the duration, :meth:`SpatialKind.draw` draws the seed and the kind's fields, and
:func:`source_signal` rebuilds the signal from the dict alone.

=========  ===============  =====================================================================
kind       fields           signal
=========  ===============  =====================================================================
noise      --               pink noise, 100 Hz - min(8 kHz, Nyquist)
harmonic   ``f0_hz``        complex of up to 30 harmonics below Nyquist, f0 150-400 Hz
chirp      ``up``           log sweep 200 Hz <-> min(6 kHz, Nyquist - 100 Hz), up or down
clicks     ``rate_hz``      click train 6-16 per second, smoothed by a 9-point Hann (no ramps);
           (``pulse_taps``) a ``pulse_taps``-point Hann instead (3: single-sample clicks)
file       ``path``         a WAV/FLAC file of ``sources_dir`` (:mod:`auralgen.sounds.files`)
=========  ===============  =====================================================================
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.memo import BoundedMemo
from auralgen.sounds.base import SoundKind, palette, register_sound_kind
from auralgen.synth import apply_ramps, click_train, harmonic_complex, sweep
from auralgen.synth.palette import SPATIAL_CLICK_RATE_HZ, SPATIAL_F0_HZ, spatial_harmonics, spatial_noise_band
from auralgen.synth.signals import noise_at_fast_length


class SpatialKind(SoundKind):
    """A spatial source: the seed is drawn for every kind (the noise uses it), then the fields."""

    palettes = ("spatial",)
    ramped = True  # raised-cosine ramps of the task's ``ramp_s`` (clicks need none)

    def draw(self, rng: np.random.Generator, *, duration_s: float, **constraints: Any) -> dict[str, Any]:
        spec: dict[str, Any] = {"kind": self.kind, "duration_s": float(duration_s), "seed": int(rng.integers(2**31))}
        spec.update(self.fields(rng, **constraints))
        return spec

    def fields(self, rng: np.random.Generator, **constraints: Any) -> dict[str, Any]:
        """The kind's own recipe fields, drawn after the seed (none for the base).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's generator.
        **constraints : Any
            The task's constraints (e.g. ``files`` for the ``file`` kind).

        Returns
        -------
        dict of str to Any
            The fields (e.g. ``f0_hz`` in Hz, ``rate_hz`` in clicks per second).
        """
        return {}


@register_sound_kind
class Noise(SpatialKind):
    kind = "noise"
    label = "the noise"
    tags = frozenset({"continuous"})

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        """Pink band noise shaped at the next fast FFT length (``scipy.fft.next_fast_len``) and cut to
        the recipe's length: a drawn duration of a prime number of samples costs one fast FFT pair, not
        Bluestein's (~5x slower); a length that is already fast (e.g. 1.5 s at 16 kHz) is unchanged."""
        rng = np.random.default_rng(spec["seed"])
        band = spatial_noise_band(sample_rate)
        return noise_at_fast_length(spec["duration_s"], sample_rate=sample_rate, rng=rng, color="pink", band_hz=band)


HARMONIC_BLOCK = 64  # the harmonic kind's sines by angle addition over blocks of this many samples (see
# synth.harmonic_complex): ~15x faster than a sine per sample, equal within ~3e-12 of the peak


@register_sound_kind
class Harmonic(SpatialKind):
    kind = "harmonic"
    label = "the harmonic tone"
    tags = frozenset({"pitched", "continuous"})

    def fields(self, rng, **_: Any) -> dict[str, Any]:
        return {"f0_hz": float(rng.uniform(*SPATIAL_F0_HZ))}

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return harmonic_complex(
            spec["f0_hz"],
            spec["duration_s"],
            sample_rate=sample_rate,
            n_harmonics=spatial_harmonics(spec["f0_hz"], sample_rate),
            block=HARMONIC_BLOCK,
        )


@register_sound_kind
class Chirp(SpatialKind):
    kind = "chirp"
    label = "the chirp"
    tags = frozenset({"continuous"})

    def fields(self, rng, **_: Any) -> dict[str, Any]:
        return {"up": bool(rng.integers(2))}

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        lo, hi = 200.0, min(6000.0, sample_rate / 2 - 100)
        a, b = (lo, hi) if spec["up"] else (hi, lo)
        return sweep(a, b, spec["duration_s"], sample_rate=sample_rate, method="log")


@register_sound_kind
class Clicks(SpatialKind):
    kind = "clicks"
    label = "the click train"
    tags = frozenset({"impulsive"})
    ramped = False

    def fields(self, rng, **_: Any) -> dict[str, Any]:
        return {"rate_hz": float(rng.uniform(*SPATIAL_CLICK_RATE_HZ))}

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        x = click_train(spec["rate_hz"], spec["duration_s"], sample_rate=sample_rate)
        taps = int(spec.get("pulse_taps", 9))  # a Hann-smoothed click: 9 taps (null at 4 kHz at 16 kHz) unless stated
        return np.convolve(np.roll(x, taps // 2), np.hanning(taps), mode="same")


SPATIAL = palette("spatial")
SYNTH_KINDS = ("noise", "harmonic", "chirp", "clicks")  # the synthesized kinds ("file" needs sources_dir)


MEMO_SIZE = 16  # synthesized dry signals kept per process (a few MB): an item renders and measures the same ones
_MEMO = BoundedMemo(MEMO_SIZE)


def source_signal(spec: dict[str, Any], sample_rate: int, *, ramp_s: float) -> np.ndarray:
    """The dry source signal (1-D float64, unit RMS) of a source recipe; read-only.

    A task renders an item's sources, then its measurement rebuilds the same dry signals: the last
    :data:`MEMO_SIZE` synthesized ones (kinds of :data:`SYNTH_KINDS`, a pure function of the recipe)
    are kept and returned again, the same array, not a copy, so it cannot be written to. A ``file``
    source is read each time.

    Parameters
    ----------
    spec : dict of str to Any
        A recipe of the ``spatial`` palette.
    sample_rate : int
        Sampling rate, in Hz.
    ramp_s : float
        Length of each raised-cosine ramp, in seconds (kinds without ramps ignore it).

    Returns
    -------
    ndarray, shape (samples,), float64
        The signal, ``round(duration_s * sample_rate)`` samples, unit RMS, read-only.

    Raises
    ------
    ParameterError
        If the kind is unknown or the signal is silent.
    """
    if spec.get("kind") not in SYNTH_KINDS:  # a file source is read each time
        return _unit_rms(spec, sample_rate, ramp_s)
    key = (json.dumps(spec, sort_keys=True, default=repr), int(sample_rate), float(ramp_s))
    return _MEMO.get(key, lambda: _unit_rms(spec, sample_rate, ramp_s))


def _unit_rms(spec: dict[str, Any], sample_rate: int, ramp_s: float) -> np.ndarray:
    """The recipe's signal, ramped where its kind is, scaled to unit RMS (read-only)."""
    sound = SPATIAL.sound_kind(spec["kind"], key="source.kind")
    x = sound.render(spec, sample_rate)
    if sound.ramped:
        x = apply_ramps(x, sample_rate=sample_rate, ramp_s=ramp_s)
    r = math.sqrt(float(np.mean(x**2)))
    if r <= 0:
        raise ParameterError(f"source {spec!r} is silent; allowed: a non-silent source")
    y = x / r
    y.setflags(write=False)
    return y
