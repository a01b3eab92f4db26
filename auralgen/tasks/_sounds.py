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
    """``n`` levels: ``level`` plus an independent rove of each, uniform in +-:data:`LEVEL_ROVE_DB`.

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream (``n`` draws).
    level : float
        The item's level, dB SPL (or LUFS: the rove is in dB either way).
    n : int, optional
        How many levels.

    Returns
    -------
    list of float
        The roved levels, same unit as ``level``.
    """
    return [float(level + rng.uniform(-LEVEL_ROVE_DB, LEVEL_ROVE_DB)) for _ in range(n)]


def check_stimuli(key: str, stimuli, allowed=STIMULI) -> None:
    """Refuse an empty list of stimulus kinds or a kind outside ``allowed`` (ParameterError, one line).

    Parameters
    ----------
    key : str
        The config path of the list, for the message.
    stimuli : sequence of str
        The configured stimulus kinds.
    allowed : sequence of str, optional
        The kinds the task accepts (default: every ``tones`` kind).
    """
    bad = [s for s in stimuli if s not in allowed]
    if bad or not stimuli:
        raise ParameterError(f"{key}={list(stimuli)!r} is invalid; allowed: a non-empty list from {list(allowed)}")


dist = bounded  # a distribution whose whole support lies within [low, high]


def max_of(d) -> float:
    """Largest value distribution ``d`` can return.

    Parameters
    ----------
    d : Dist
        A distribution with a bounded support.

    Returns
    -------
    float
        Its upper bound, in the distribution's unit.
    """
    return d.support()[1]


def min_of(d) -> float:
    """Smallest value distribution ``d`` can return.

    Parameters
    ----------
    d : Dist
        As in :func:`max_of`.

    Returns
    -------
    float
        Its lower bound, in the distribution's unit.
    """
    return d.support()[0]


def synth_sound(sound: dict[str, Any], sample_rate: int, full_scale_db_spl: float, ramp_s: float) -> np.ndarray:
    """One sound at its level with raised-cosine ramps (1-D float64).

    Parameters
    ----------
    sound : dict of str to Any
        A sound of the module docstring's form (its ``level_db_spl`` in dB SPL, ``duration_s`` in seconds).
    sample_rate : int
        Hz.
    full_scale_db_spl : float
        dB SPL of digital RMS 1.0.
    ramp_s : float
        Onset and offset ramp, seconds.

    Returns
    -------
    ndarray, shape (samples,)
        float64, digital full scale 1.0.
    """
    x = TONES.render(sound, sample_rate)
    x = set_level_db_spl(x, sound["level_db_spl"], full_scale_db_spl=full_scale_db_spl)
    return apply_ramps(x, sample_rate=sample_rate, ramp_s=ramp_s)


def render_sounds(params: dict[str, Any], *, dither_seed: int | None = None) -> np.ndarray:
    """The clip ``[1, n]`` float32 of ``params['sounds']``.

    With ``dither_seed`` the clip is quantised to the 24-bit grid with TPDF dither (so
    tones below one LSB survive quantisation as measurable narrowband energy).

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz``, ``full_scale_db_spl`` (dB SPL of RMS 1.0), ``clip_s`` and ``ramp_s`` (seconds), ``sounds``.
    dither_seed : int or None, optional
        Seed of the TPDF dither; None: no quantisation.

    Returns
    -------
    ndarray, shape (1, samples)
        float32, ``round(clip_s * sample_rate_hz)`` samples.

    Raises
    ------
    ParameterError
        The clip's peak reaches digital full scale.
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
    """Draw a stimulus kind (unless ``kind`` is given) and its spectral parameters (no timing, no level).

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream.
    stimuli : sequence of str
        The kinds to draw from, uniformly.
    freq : Dist
        The (fundamental) frequency's distribution, Hz.
    n_harmonics : int
        Harmonics of a ``harmonic`` sound.
    kind : str or None, optional
        The kind, not drawn.

    Returns
    -------
    dict of str to Any
        ``kind`` and its spectral fields (``freq_hz`` in Hz, ``n_harmonics``, ``noise_seed``, ...).
    """
    kind = Choice(tuple(stimuli)).sample(rng) if kind is None else kind
    return TONES.draw(rng, kind, key="stimuli", freq=freq, n_harmonics=n_harmonics)


def draw_clip(rng: np.random.Generator, source, duration_s: float, *, at_start: bool = False) -> dict[str, Any]:
    """A piece of a recording of the run's ``source`` (kind ``clip``), long enough for ``duration_s``
    (``at_start``: from the file's start, its own attack).

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream.
    source : SourceConfig
        The run's ``source`` settings (a recorded corpus).
    duration_s : float
        The longest piece the item reads, seconds.
    at_start : bool, optional
        Read from the file's start.

    Returns
    -------
    dict of str to Any
        The ``clip`` sound: ``kind`` and the corpus entry (file, hash, license, offset in seconds).
    """
    from auralgen.sounds.corpus import load_corpus

    return TONES.draw(rng, "clip", corpus=load_corpus(source), duration_s=duration_s, at_start=at_start)


def check_recorded(key: str, cfg, audio, fields=("stimuli", "freq_hz", "n_harmonics")) -> bool:
    """With a recorded source, the synthesis ``fields`` a recording replaces keep their defaults
    (an override would be ignored, so it is refused); returns whether the source is recorded.

    Parameters
    ----------
    key : str
        The task's config path, for the message.
    cfg : TaskConfig
        The task's config.
    audio : AudioConfig
        The audio settings (their ``source``).
    fields : tuple of str, optional
        The config fields a recording replaces.

    Returns
    -------
    bool
        True when the source is recorded (and the fields are at their defaults).
    """
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
    """Onsets of two sounds: lead-in, sound 1, gap, sound 2, all inside ``clip_s``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream: the gap, then the lead-in (not drawn when it has no room).
    d1, d2 : float
        The sounds' durations, seconds.
    gap, lead : Dist
        The gap's and the lead-in's distributions, seconds.
    clip_s : float
        The clip's length, seconds.

    Returns
    -------
    tuple of (float, float)
        The two onsets, seconds.
    """
    g = float(gap.sample(rng))
    room = clip_s - d1 - g - d2
    lo = min_of(lead)
    hi = min(max_of(lead), room)
    t0 = float(rng.uniform(lo, hi)) if hi > lo else lo
    return t0, t0 + d1 + g


def check_fits(key: str, worst_s: float, clip_s: float) -> None:
    """Refuse a clip shorter than the longest sounds, gap and lead-in need (ParameterError, one line).

    Parameters
    ----------
    key : str
        The task's config path, for the message.
    worst_s : float
        The longest time the sounds may need, seconds.
    clip_s : float
        The clip's length, seconds.
    """
    if worst_s > clip_s + 1e-9:
        raise ParameterError(
            f"{key}.clip_s={clip_s} is too short for the longest sounds, gap and lead-in ({worst_s:.3f} s); allowed: "
            f"clip_s >= {worst_s:.3f}"
        )


def sound_windows(params) -> list[tuple[int, int]]:
    """Sample ranges of each sound's steady part (ramps excluded).

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz``, ``ramp_s`` and ``sounds`` (each ``onset_s`` and ``duration_s``, seconds).

    Returns
    -------
    list of (int, int)
        ``(start, stop)`` sample indices of the clip, one per sound.
    """
    sr = int(params["sample_rate_hz"])
    r = n_samples(params["ramp_s"], sr)
    out = []
    for s in params["sounds"]:
        a = n_samples(s["onset_s"], sr)
        out.append((a + r, a + n_samples(s["duration_s"], sr) - r))
    return out
