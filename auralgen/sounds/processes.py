"""Palette ``reorder``: continuous processes cut into segments (task ``temporal_reorder``).

A process runs for ``3 * segment_s`` seconds; its recipe is the item's params (``process``,
``sample_rate_hz``, ``segment_s``, ``extent`` in 0..1, ``start`` in 0..1 and ``seed``).
:meth:`Process.draw` draws ``start`` and ``seed``; :func:`render_process` rebuilds the whole
signal (1-D float64, unscaled) from the params alone.

===========  ================================================================================
process      signal
===========  ================================================================================
sweep        log sweep over ``4 * extent`` octaves from 150..600 Hz (top kept below Nyquist)
filling      noise through a resonance rising ``2.3 * extent`` octaves (a vessel filling)
approaching  pink noise growing ``24 * extent`` dB louder and brighter
bouncing     impacts over the whole process, intervals shrinking to ``1 - 0.75 * extent`` and amplitude
             falling ``24 * extent`` dB
scale        ascending notes, 4 per segment, a step of 1..4 semitones (``extent``)
===========  ================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.signal import butter, sosfilt

from auralgen.sounds.base import SoundKind, palette, register_sound_kind
from auralgen.synth import apply_ramps, impact, n_samples, noise, sweep, tone

BOUNCE_DROP_DB = 24.0  # a bouncing process falls this many dB x extent from first to last impact
SWEEP_TOP = 0.45  # a sweep ends at most at this fraction of the sample rate (Nyquist is 0.5)


class Process(SoundKind):
    palettes = ("reorder",)

    def draw(self, rng: np.random.Generator, **_: Any) -> dict[str, Any]:
        return {
            "start": float(rng.uniform()),  # where in its range the process starts (fraction)
            "seed": int(rng.integers(2**31)),
        }

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        dur = 3 * spec["segment_s"]
        rng = np.random.default_rng(spec["seed"])
        return self.signal(dur, n_samples(dur, sample_rate), spec["extent"], spec["start"], rng, sample_rate)

    def signal(self, dur: float, n: int, e: float, s0: float, rng, sr: int) -> np.ndarray:
        """The process's whole signal; each process kind implements it.

        Parameters
        ----------
        dur : float
            Duration, in seconds (three segments).
        n : int
            Length, in samples (``round(dur * sr)``).
        e : float
            The recipe's ``extent``, 0..1 (how far the process moves).
        s0 : float
            The recipe's ``start``, 0..1 (where in its range the process starts).
        rng : numpy.random.Generator
            Generator seeded from the recipe's ``seed``.
        sr : int
            Sampling rate, in Hz.

        Returns
        -------
        ndarray, shape (n,), float64
            The unscaled signal.
        """
        raise NotImplementedError


@register_sound_kind
class Sweep(Process):
    kind = "sweep"
    label = "the rising sweep"

    def signal(self, dur, n, e, s0, rng, sr):
        # lowered where needed so that the top stays at SWEEP_TOP of the sample rate (below Nyquist)
        f0 = min(150.0 * 4**s0, SWEEP_TOP * sr / 2 ** (4 * e))
        return sweep(f0, f0 * 2 ** (4 * e), dur, sample_rate=sr, method="log")[:n]


@register_sound_kind
class Filling(Process):
    kind = "filling"
    label = "the filling vessel"

    def signal(self, dur, n, e, s0, rng, sr):
        f_lo = 300.0 * 1.5**s0
        return _moving_resonance(noise(dur, sample_rate=sr, rng=rng), f_lo, f_lo * 2 ** (2.3 * e), sr)


@register_sound_kind
class Approaching(Process):
    kind = "approaching"
    label = "the approaching source"

    def signal(self, dur, n, e, s0, rng, sr):
        x = noise(dur, sample_rate=sr, rng=rng, color="pink")
        t = np.arange(n) / n
        bright = _moving_lowpass(x, 800.0 * 2 ** (3 * e * t), sr)
        return bright * 10 ** (24 * e * (t - 1) / 20)


@register_sound_kind
class Bouncing(Process):
    kind = "bouncing"
    label = "the bouncing object"

    def signal(self, dur, n, e, s0, rng, sr):
        """Impacts from 0.05 s to the end: the interval shrinks to ``1 - 0.75 * extent`` of its start
        and the amplitude falls ``BOUNCE_DROP_DB * extent`` dB over the whole process, both
        exponentially in time, so every segment holds impacts (a fixed per-impact ratio would let the
        impacts die out within the first two segments and leave the last one digitally silent)."""
        x = np.zeros(n)
        t, interval0 = 0.05, 0.45 * (0.8 + 0.4 * s0)
        while t < dur - 0.05:
            amp = 10.0 ** (-BOUNCE_DROP_DB * e * (t / dur) / 20.0)
            hit = amp * impact(700.0, 0.03, min(0.12, dur - t), sample_rate=sr)
            i = n_samples(t, sr)
            x[i : i + len(hit)] += hit[: n - i]
            t += interval0 * (1.0 - 0.75 * e) ** (t / dur)
        return x


@register_sound_kind
class Scale(Process):
    kind = "scale"
    label = "the ascending scale"

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        seg, sr = spec["segment_s"], sample_rate
        n = n_samples(3 * seg, sr)
        step = max(1, round(4 * spec["extent"]))
        f0 = 220.0 * 2 ** (spec["start"] / 2)
        note = n_samples(seg / 4, sr)
        notes = [
            apply_ramps(tone(f0 * 2 ** (step * k / 12), seg / 4, sample_rate=sr), sample_rate=sr, ramp_s=0.01)
            for k in range(12)
        ]
        x = np.concatenate(notes)
        return x[:n] if len(notes) * note >= n else np.pad(x, (0, n - len(notes) * note))


@register_sound_kind
class RecordingSteps(SoundKind):
    """A recording (``source=folder|hf|clips``) played three times, each time ``step_cents`` higher
    (librosa; ``12 * extent`` semitones over the three), one play per segment: the order is in
    the pitch alone (the task sets every segment to the same RMS)."""

    kind = "recording"
    label = "the rising recording"
    palettes = ("reorder",)

    def draw(self, rng: np.random.Generator, *, corpus=None, segment_s: float = 1.0, **_: Any) -> dict[str, Any]:
        from auralgen.core.errors import ParameterError

        if corpus is None:
            raise ParameterError("process='recording' needs a recorded source; allowed: source=folder|hf|clips")
        return corpus.pick(rng, duration_s=segment_s)

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        from auralgen.sounds.corpus import read_entry
        from auralgen.sounds.transforms import stretch_shift

        seg = spec["segment_s"]
        x = read_entry(spec, sample_rate, seg)
        step = 1200.0 * spec["extent"] / 2  # cents between consecutive segments
        return np.concatenate([stretch_shift(x, sample_rate, duration_s=seg, shift_cents=k * step) for k in (-1, 0, 1)])


REORDER = palette("reorder")
PROCESSES = tuple(k for k in REORDER.kinds() if k != "recording")  # the synthesized processes


def render_process(p: dict[str, Any]) -> np.ndarray:
    """The whole process (1-D float64, 3 segments long) from its params.

    Parameters
    ----------
    p : dict of str to Any
        The item's params: ``process``, ``sample_rate_hz`` (Hz), ``segment_s`` (seconds), ``extent``,
        ``start`` and ``seed`` (plus the file fields of a recording).

    Returns
    -------
    ndarray, shape (samples,), float64
        The unscaled signal, ``3 * segment_s`` seconds long.
    """
    return REORDER.render(p, p["sample_rate_hz"], kind=p["process"], key="process")


def _frames(x: np.ndarray, sr: int, frame_s: float = 0.02):
    hop = n_samples(frame_s, sr)
    return hop, range(0, len(x), hop)


def _moving_resonance(x: np.ndarray, f_start: float, f_end: float, sr: int) -> np.ndarray:
    """Band-pass ``x`` with a centre frequency gliding exponentially (frame-wise, overlap-free state carry)."""
    out = np.zeros_like(x)
    hop, starts = _frames(x, sr)
    zi = None
    for a in starts:
        frac = a / len(x)
        fc = f_start * (f_end / f_start) ** frac
        sos = butter(2, [fc / 1.15, fc * 1.15], btype="bandpass", fs=sr, output="sos")
        if zi is None:
            zi = np.zeros((sos.shape[0], 2))
        out[a : a + hop], zi = sosfilt(sos, x[a : a + hop], zi=zi)
    return out


def _moving_lowpass(x: np.ndarray, cutoffs: np.ndarray, sr: int) -> np.ndarray:
    out = np.zeros_like(x)
    hop, starts = _frames(x, sr)
    zi = np.zeros((1, 2))
    for a in starts:
        sos = butter(2, min(float(cutoffs[a]), sr / 2 * 0.95), fs=sr, output="sos")
        out[a : a + hop], zi = sosfilt(sos, x[a : a + hop], zi=zi)
    return out
