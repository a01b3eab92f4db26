"""Shared pieces of the non-spatial tasks: a clip is a list of sounds placed in silence.

The sounds are the ``tones`` palette (:mod:`auralgen.sounds.tones`); this module adds their
timing, level and ramps, and places them in the clip.

A sound is a JSON-able dict::

    {"kind": "pure"|"harmonic"|"noise", "freq_hz": f, "n_harmonics": k, "noise_seed": s,
     "onset_s": t0, "duration_s": d, "level_db_spl": L}

and a clip's params carry ``sample_rate_hz``, ``full_scale_db_spl``, ``clip_s``,
``ramp_s`` and ``sounds``. :func:`render_sounds` rebuilds the clip from those alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from auralgen.core.errors import ParameterError
from auralgen.core.random import Choice, bounded
from auralgen.sounds.tones import PITCHED, STIMULI, TONES
from auralgen.synth import apply_ramps, n_samples, place
from auralgen.synth.levels import set_level_db_spl

__all__ = ["PITCHED", "STIMULI", "n_samples"]  # re-exported for the tasks
LSB_24 = 2.0**-23


# Each sound of a comparison whose attribute is not level is set to the item's level plus its own rove,
# uniform in +-LEVEL_ROVE_DB: a level difference of up to 5 dB between the two sounds, about 5-10 times
# the level JND of these sounds (0.5-1 dB; Jesteadt, Wier & Green 1977, JASA 61:169-177), so that no level
# measure (RMS, peak, LUFS) of either sound, or their difference, follows the answer; the small level
# offset a spectrum or an onset ramp brings at equal loudness (0.06-0.17 dB) is buried in it.
LEVEL_ROVE_DB = 2.5


def roved(rng: np.random.Generator, level: float, n: int = 2) -> list[float]:
    """``n`` levels: ``level`` plus an independent rove of each, uniform in +-:data:`LEVEL_ROVE_DB`."""
    return [float(level + rng.uniform(-LEVEL_ROVE_DB, LEVEL_ROVE_DB)) for _ in range(n)]


def check_stimuli(key: str, stimuli, allowed=STIMULI) -> None:
    bad = [s for s in stimuli if s not in allowed]
    if bad or not stimuli:
        raise ParameterError(f"{key}={list(stimuli)!r} is invalid; allowed: a non-empty list from {list(allowed)}")


dist = bounded  # a distribution whose whole support lies within [low, high]


def max_of(d) -> float:
    """Largest value distribution ``d`` can return."""
    return d.support()[1]


def min_of(d) -> float:
    """Smallest value distribution ``d`` can return."""
    return d.support()[0]


def synth_sound(sound: dict[str, Any], sample_rate: int, full_scale_db_spl: float, ramp_s: float) -> np.ndarray:
    """One sound at its level with raised-cosine ramps (1-D float64)."""
    x = TONES.render(sound, sample_rate)
    x = set_level_db_spl(x, sound["level_db_spl"], full_scale_db_spl=full_scale_db_spl)
    return apply_ramps(x, sample_rate=sample_rate, ramp_s=ramp_s)


def render_sounds(params: dict[str, Any], *, dither_seed: int | None = None) -> np.ndarray:
    """The clip ``[1, n]`` float32 of ``params['sounds']``.

    With ``dither_seed`` the clip is quantised to the 24-bit grid with TPDF dither (so
    tones below one LSB survive quantisation as measurable narrowband energy).
    """
    sr = int(params["sample_rate_hz"])
    fs_db = float(params["full_scale_db_spl"])
    total = n_samples(params["clip_s"], sr)
    segs = [(synth_sound(s, sr, fs_db, params["ramp_s"]), n_samples(s["onset_s"], sr)) for s in params["sounds"]]
    x = place(segs, total) if segs else np.zeros(total)
    if dither_seed is not None:
        rng = np.random.default_rng(dither_seed)
        u1 = rng.uniform(-0.5, 0.5, total)
        u2 = rng.uniform(-0.5, 0.5, total)
        x, peak = _dither(x, u1, u2, LSB_24)
    else:
        peak = float(np.max(np.abs(x))) if total else 0.0
    if peak >= 1.0:
        loud = max(s["level_db_spl"] for s in params["sounds"])
        raise ParameterError(
            f"level_db_spl={loud:.1f} clips (peak {peak:.3f}) at full_scale_db_spl={fs_db}; allowed: lower levels or a "
            "higher full_scale_db_spl"
        )
    return x[None, :].astype(np.float32)


@njit(cache=True)
def _dither(x, u1, u2, lsb):  # pragma: no cover - compiled
    """``(np.round(x / lsb + (u1 + u2)) * lsb, its peak magnitude)`` in one pass: the TPDF-dithered
    24-bit grid, element by element numpy's arithmetic (the same numbers)."""
    out = np.empty(x.size)
    peak = 0.0
    for i in range(x.size):
        v = np.rint(x[i] / lsb + (u1[i] + u2[i])) * lsb
        out[i] = v
        peak = max(peak, abs(v))
    return out, peak


def draw_sound(rng: np.random.Generator, stimuli, freq, n_harmonics: int, kind: str | None = None) -> dict[str, Any]:
    """Draw a stimulus kind (unless ``kind`` is given) and its spectral parameters (no timing, no level)."""
    kind = Choice(tuple(stimuli)).sample(rng) if kind is None else kind
    return TONES.draw(rng, kind, key="stimuli", freq=freq, n_harmonics=n_harmonics)


def draw_clip(rng: np.random.Generator, source, duration_s: float, *, at_start: bool = False) -> dict[str, Any]:
    """A piece of a recording of the run's ``source`` (kind ``clip``), long enough for ``duration_s``
    (``at_start``: from the file's start, its own attack)."""
    from auralgen.sounds.corpus import load_corpus

    return TONES.draw(rng, "clip", corpus=load_corpus(source), duration_s=duration_s, at_start=at_start)


def check_recorded(key: str, cfg, audio, fields=("stimuli", "freq_hz", "n_harmonics")) -> bool:
    """With a recorded source, the synthesis ``fields`` a recording replaces keep their defaults
    (an override would be ignored, so it is refused); returns whether the source is recorded."""
    if not audio.source.recorded:
        return False
    default = type(cfg)(name=cfg.name)
    for f in fields:
        if getattr(cfg, f) != getattr(default, f):
            raise ParameterError(
                f"{key}.{f}={getattr(cfg, f)!r} does not apply with source={audio.source.kind} (the sound is a "
                f"recording); allowed: the default {getattr(default, f)!r}"
            )
    return True


def two_interval_timing(rng, d1: float, d2: float, gap, lead, clip_s: float) -> tuple[float, float]:
    """Onsets of two sounds: lead-in, sound 1, gap, sound 2, all inside ``clip_s``."""
    g = float(gap.sample(rng))
    room = clip_s - d1 - g - d2
    lo = min_of(lead)
    hi = min(max_of(lead), room)
    t0 = float(rng.uniform(lo, hi)) if hi > lo else lo
    return t0, t0 + d1 + g


def check_fits(key: str, worst_s: float, clip_s: float) -> None:
    if worst_s > clip_s + 1e-9:
        raise ParameterError(
            f"{key}.clip_s={clip_s} is too short for the longest sounds, gap and lead-in ({worst_s:.3f} s); allowed: "
            f"clip_s >= {worst_s:.3f}"
        )


def sound_windows(params) -> list[tuple[int, int]]:
    """Sample ranges of each sound's steady part (ramps excluded)."""
    sr = int(params["sample_rate_hz"])
    r = n_samples(params["ramp_s"], sr)
    out = []
    for s in params["sounds"]:
        a = n_samples(s["onset_s"], sr)
        out.append((a + r, a + n_samples(s["duration_s"], sr) - r))
    return out
