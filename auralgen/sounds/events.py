"""Palette ``events``: distinct synthesized sound events for mixtures, with short names.

A recipe is ``{"kind": ..., "duration_s": d, ...kind fields}``; :func:`draw_sound` draws the
fields from the item's generator and :func:`synth_sound` rebuilds the raw (unscaled) mono
signal from the dict alone. Levels are not set here: the mixer sets them
(:mod:`auralgen.mixing.core`).

==========  =======================  ===================================================
kind        name in options          signal
==========  =======================  ===================================================
harmonic    the harmonic tone        6-harmonic complex, f0 150-400 Hz, 20 ms ramps
noise       the noise burst          pink noise (seeded, fast FFT length), 10 ms ramps
sweep       the rising sweep         log sweep up ~2.5-3.5 octaves from 250-500 Hz, 20 ms ramps
clicks      the click train          3-kHz 2-ms clicks at 8-14 per second, from the onset
knocks      the knocking sequence    decaying 250-500 Hz knocks at 2.5-4.5 per second
==========  =======================  ===================================================

Every kind has temporal structure (onsets, a chirp, a random waveform or ramps), so
cross-correlation finds where it starts in a mix. ``clicks`` and ``knocks`` are
*impulsive*: their last event may end before the nominal offset.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import LogUniform, Uniform
from auralgen.sounds.base import SoundKind, palette, register_sound_kind
from auralgen.sounds.corpus import RecordingKind, sound_name
from auralgen.synth import apply_ramps, harmonic_complex, impact, n_samples, sweep
from auralgen.synth.palette import (
    CLICK_DECAY_S,
    CLICK_HZ,
    CLICK_LENGTH_S,
    CLICK_RATE_HZ,
    HARMONIC_F0_HZ,
    KNOCK_DECAY_S,
    KNOCK_HZ,
    KNOCK_LENGTH_S,
    KNOCK_RATE_HZ,
    N_HARMONICS,
    SWEEP_OCTAVES,
    SWEEP_START_HZ,
)
from auralgen.synth.signals import noise_at_fast_length

MIN_SAMPLE_RATE = 16000  # the sweep's and clicks' top frequencies stay below Nyquist
HARMONIC_BLOCK = 64  # the harmonic tone's sines by angle addition over blocks of this many samples
# (synth.harmonic_complex): several times faster than a sine per sample, equal within ~1e-11 of the peak
SWEEP_BLOCK = 64  # the rising sweep's sines by rotation over blocks of this many samples (synth.sweep):
# ~5x faster than a sine per sample, equal within ~1e-10 of the amplitude


class _Event(SoundKind):
    palettes = ("events",)
    tags = frozenset({"continuous"})

    def draw(self, rng: np.random.Generator, *, duration_s: float, **_: Any) -> dict[str, Any]:
        return {"kind": self.kind, "duration_s": float(duration_s), **self.fields(rng)}

    def fields(self, rng: np.random.Generator) -> dict[str, Any]:
        """The kind's spectral / rhythmic fields (never its level or onset)."""
        raise NotImplementedError


class _Continuous(_Event):
    """A sound with raised-cosine ramps of ``ramp_s`` on its :meth:`signal`."""

    ramp_s: float

    def signal(self, spec, sample_rate: int) -> np.ndarray:
        raise NotImplementedError

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return apply_ramps(self.signal(spec, sample_rate), sample_rate=sample_rate, ramp_s=self.ramp_s)


@register_sound_kind
class Harmonic(_Continuous):
    kind = "harmonic"
    label = "the harmonic tone"
    ramp_s = 0.02

    def fields(self, rng):
        return {"f0_hz": LogUniform(*HARMONIC_F0_HZ).sample(rng)}

    def signal(self, spec, sample_rate: int) -> np.ndarray:
        return harmonic_complex(
            spec["f0_hz"], spec["duration_s"], sample_rate=sample_rate, n_harmonics=N_HARMONICS, block=HARMONIC_BLOCK
        )


@register_sound_kind
class Noise(_Continuous):
    kind = "noise"
    label = "the noise burst"
    ramp_s = 0.01

    def fields(self, rng):
        return {"noise_seed": int(rng.integers(2**31))}

    def signal(self, spec, sample_rate: int) -> np.ndarray:
        """Pink noise shaped at a fast FFT length (5-smooth, at least the sound's): its first ``n`` samples,
        scaled to unit RMS (an arbitrary length, e.g. a prime, transforms many times slower)."""
        rng = np.random.default_rng(spec["noise_seed"])
        x = noise_at_fast_length(spec["duration_s"], sample_rate=sample_rate, rng=rng, color="pink")
        return x / float(np.sqrt(np.mean(x**2)))


@register_sound_kind
class Sweep(_Continuous):
    kind = "sweep"
    label = "the rising sweep"
    ramp_s = 0.02

    def fields(self, rng):
        f0 = LogUniform(*SWEEP_START_HZ).sample(rng)
        return {"f_start_hz": f0, "f_end_hz": f0 * 2.0 ** Uniform(*SWEEP_OCTAVES).sample(rng)}

    def signal(self, spec, sample_rate: int) -> np.ndarray:
        return sweep(
            spec["f_start_hz"],
            spec["f_end_hz"],
            spec["duration_s"],
            sample_rate=sample_rate,
            method="log",
            block=SWEEP_BLOCK,
        )


def _pulses(rate_hz: float, pulse: np.ndarray, n: int, sample_rate: int) -> np.ndarray:
    out = np.zeros(n)
    for k in range(int(math.ceil(n * rate_hz / sample_rate)) + 1):
        start = int(round(k * sample_rate / rate_hz))
        if start >= n:
            break
        m = min(len(pulse), n - start)
        out[start : start + m] += pulse[:m]
    return out


class _Impulsive(_Event):
    """Copies of one pulse at ``rate_hz`` from the onset (the last may end before the offset)."""

    tags = frozenset({"impulsive"})

    def pulse(self, spec, sample_rate: int) -> np.ndarray:
        raise NotImplementedError

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        n = n_samples(spec["duration_s"], sample_rate)
        return _pulses(spec["rate_hz"], self.pulse(spec, sample_rate), n, sample_rate)


@register_sound_kind
class Clicks(_Impulsive):
    kind = "clicks"
    label = "the click train"

    def fields(self, rng):
        return {"rate_hz": Uniform(*CLICK_RATE_HZ).sample(rng)}

    def pulse(self, spec, sample_rate: int) -> np.ndarray:
        return impact(CLICK_HZ, CLICK_DECAY_S, CLICK_LENGTH_S, sample_rate=sample_rate)


@register_sound_kind
class Knocks(_Impulsive):
    kind = "knocks"
    label = "the knocking sequence"

    def fields(self, rng):
        return {"rate_hz": Uniform(*KNOCK_RATE_HZ).sample(rng), "freq_hz": LogUniform(*KNOCK_HZ).sample(rng)}

    def pulse(self, spec, sample_rate: int) -> np.ndarray:
        return impact(spec["freq_hz"], KNOCK_DECAY_S, KNOCK_LENGTH_S, sample_rate=sample_rate)


EVENTS = palette("events")
NAMES = {k: v for k, v in EVENTS.labels().items() if k != "recording"}  # the synthesized events
KINDS = tuple(NAMES)
CONTINUOUS = EVENTS.kinds("continuous")


def draw_sound(rng: np.random.Generator, kind: str, duration_s: float) -> dict[str, Any]:
    """Draw the spectral / rhythmic fields of one ``kind`` (never its level or onset).

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's generator.
    kind : str
        One of :data:`KINDS`.
    duration_s : float
        Duration of the sound, in seconds.

    Returns
    -------
    dict of str to Any
        The recipe: ``kind``, ``duration_s`` and the kind's fields (frequencies in Hz, rates per second).
    """
    return EVENTS.draw(rng, kind, duration_s=duration_s)


def synth_sound(sound: dict[str, Any], sample_rate: int) -> np.ndarray:
    """The raw mono signal ``[n]`` (float64, unscaled) of one sound dict.

    Parameters
    ----------
    sound : dict of str to Any
        A recipe of :func:`draw_sound`.
    sample_rate : int
        Sampling rate, in Hz (at least :data:`MIN_SAMPLE_RATE`).

    Returns
    -------
    ndarray, shape (samples,), float64
        The sound, ``round(duration_s * sample_rate)`` samples, at its raw level.

    Raises
    ------
    ParameterError
        If ``sample_rate`` is below :data:`MIN_SAMPLE_RATE` or the kind is unknown.
    """
    if sample_rate < MIN_SAMPLE_RATE:
        raise ParameterError(
            f"sample_rate={sample_rate} is too low for the mixture sounds; allowed: >= {MIN_SAMPLE_RATE}"
        )
    return EVENTS.render(sound, sample_rate)


@register_sound_kind
class Recording(RecordingKind, SoundKind):
    """A piece of a recording of a labelled corpus (``source=folder|hf``), named by its class in
    the options ("the snare drum"); 10 ms raised-cosine ramps at the cut ends."""

    palettes = ("events",)
    ramp_s = 0.01

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return apply_ramps(self.piece(spec, sample_rate), sample_rate=sample_rate, ramp_s=self.ramp_s)


def event_name(sound: dict[str, Any]) -> str:
    """The option text of one sound: its class for a recording, else its kind's name.

    Parameters
    ----------
    sound : dict of str to Any
        A recipe of the ``events`` palette.

    Returns
    -------
    str
        E.g. ``"the rising sweep"`` or ``"the snare drum"``.
    """
    return sound_name(sound["label"]) if sound["kind"] == "recording" else NAMES[sound["kind"]]
