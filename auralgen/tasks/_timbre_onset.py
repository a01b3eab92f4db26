"""Shared pieces of the brightness and attack tasks: clips of sounds rendered by a recipe function,
placed in silence at their onsets, and the config checks they share."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from auralgen.core.random import Dist
from auralgen.synth import brightness, n_samples, place
from auralgen.tasks import _sounds
from auralgen.tasks.base import AudioConfig, TaskConfig, require

MIN_SAMPLE_RATE = 16000  # the brightness harmonics reach max_freq_hz; below 16 kHz bright sounds have no room
LOUDEST_LUFS = -20.0  # integrated loudness a sound may have without clipping (crest factors of these sounds < 10 dB)
MIN_STEADY_S = 0.4  # one BS.1770 block: the shortest stretch whose loudness is measured
# the dataset card's words for a pair's loudness rove (each sound's loudness from the item's, _sounds.roved)
ROVE_NOTE = (
    f"is the item's roved by +-{_sounds.LEVEL_ROVE_DB:g} dB on its own (the level JND is 0.5-1 dB, so no level "
    "measure follows the answer)"
)


@dataclass(frozen=True)
class OneToneConfig(TaskConfig):
    """Placement of the absolute tasks' one sound: a roved onset and loudness (LUFS) in a fixed-length clip."""

    lead_s: Dist = Dist.of((0.1, 1.0))
    loudness_lufs: Dist = Dist.of((-32.0, -24.0))
    clip_s: float = 2.5


@dataclass(frozen=True)
class TonePairConfig(TaskConfig):
    """Placement of the relative tasks' two sounds: a roved onset, gap and loudness (LUFS) in a fixed-length clip."""

    gap_s: Dist = Dist.of((0.3, 0.6))
    lead_s: Dist = Dist.of((0.1, 0.5))
    loudness_lufs: Dist = Dist.of((-32.0, -24.0))
    clip_s: float = 4.0


def sound_spans(params) -> list[tuple[int, int]]:
    """Sample ranges ``(start, stop)`` of each whole sound of ``params['sounds']``.

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz`` and ``sounds`` (``onset_s``, ``duration_s``, seconds).

    Returns
    -------
    list of (int, int)
        Sample indices of the clip, one pair per sound.
    """
    sr = int(params["sample_rate_hz"])
    out = []
    for s in params["sounds"]:
        a = n_samples(s["onset_s"], sr)
        out.append((a, a + n_samples(s["duration_s"], sr)))
    return out


def render_placed(params, render_one: Callable[[dict, int], np.ndarray]) -> np.ndarray:
    """The clip ``[1, n]`` float32: each sound (``render_one(sound, sample_rate)``) at its onset in silence.

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz``, ``clip_s`` and ``sounds``.
    render_one : callable
        ``(sound, sample_rate) -> ndarray``, one sound's 1-D samples.

    Returns
    -------
    ndarray, shape (1, samples)
        float32.
    """
    sr = int(params["sample_rate_hz"])
    segs = [(render_one(s, sr), a) for s, (a, _) in zip(params["sounds"], sound_spans(params))]
    return place(segs, n_samples(params["clip_s"], sr))[None, :].astype(np.float32)


def signed_percent(first: float, second: float) -> float:
    """``100 * (larger / smaller - 1)``, positive when ``second`` is the larger, negative otherwise
    (nan if either <= 0).

    Parameters
    ----------
    first, second : float
        Two positive values of one unit.

    Returns
    -------
    float
        Percent.

    Examples
    --------
    >>> signed_percent(100.0, 125.0), signed_percent(125.0, 100.0)
    (25.0, -25.0)
    """
    if not (first > 0 and second > 0):
        return math.nan
    ratio = second / first
    return 100.0 * (max(ratio, 1.0 / ratio) - 1.0) * (1.0 if ratio >= 1.0 else -1.0)


def check_common(cfg, key: str, *, relative: bool) -> None:
    """Durations, loudness and (relative tasks) the two-interval clip length of a config.

    Parameters
    ----------
    cfg : TaskConfig
        A brightness or attack task's config.
    key : str
        Its config path, for messages.
    relative : bool
        A two-sound (relative) task: its sounds are roved apart and need a gap.
    """
    names = ("tone_s", "gap_s", "lead_s") if relative else ("tone_s", "lead_s")
    for name in names:
        _sounds.dist(f"{key}.{name}", getattr(cfg, name), low=1e-9 if name == "tone_s" else 0.0)
    rove = _sounds.LEVEL_ROVE_DB if relative else 0.0  # a relative task's sounds are roved apart
    loud = _sounds.max_of(_sounds.dist(f"{key}.loudness_lufs", cfg.loudness_lufs)) + rove
    require(
        loud <= LOUDEST_LUFS,
        f"{key}.loudness_lufs={cfg.loudness_lufs!r} may clip; allowed: at most {LOUDEST_LUFS - rove:g} LUFS",
    )
    longest = _sounds.max_of(_sounds.dist(f"{key}.tone_s", cfg.tone_s))
    worst = _sounds.max_of(_sounds.dist(f"{key}.lead_s", cfg.lead_s)) + longest
    if relative:
        worst = (
            _sounds.min_of(_sounds.dist(f"{key}.lead_s", cfg.lead_s))
            + _sounds.max_of(_sounds.dist(f"{key}.gap_s", cfg.gap_s))
            + 2 * longest
        )
    _sounds.check_fits(key, worst, cfg.clip_s)


def check_brightness(cfg, audio: AudioConfig, key: str, lowest_hz: float, highest_hz: float, *, relative: bool) -> None:
    """Config checks of the brightness tasks: the sample rate, harmonics below Nyquist, every centroid in
    ``[lowest_hz, highest_hz]`` reachable at both ends of the F0 range, ramps, loudness, clip length.

    Parameters
    ----------
    cfg, audio, key
        The task's config, its audio settings and its config path (for messages).
    lowest_hz, highest_hz : float
        The lowest and highest spectral centroid the config asks for, Hz.
    relative : bool
        A two-sound (relative) task.
    """
    check_common(cfg, key, relative=relative)
    sr = int(cfg.sample_rate or audio.sample_rate)
    require(sr >= MIN_SAMPLE_RATE, f"{key}.sample_rate={sr} is too low for brightness; allowed: >= {MIN_SAMPLE_RATE}")
    require(
        0 < cfg.max_freq_hz < 0.45 * sr,
        f"{key}.max_freq_hz={cfg.max_freq_hz} is out of range; allowed: 0 < max_freq_hz < {0.45 * sr:g} (0.45 x sample "
        "rate)",
    )
    f0 = _sounds.dist(f"{key}.f0_hz", cfg.f0_hz, low=1e-9)
    for f in (_sounds.min_of(f0), _sounds.max_of(f0)):
        p = brightness.period_samples(f, sr)
        require(
            sr / p < cfg.max_freq_hz,
            f"{key}.f0_hz={cfg.f0_hz!r} reaches max_freq_hz={cfg.max_freq_hz}; allowed: f0 below it",
        )
        lo, hi = brightness.centroid_range_hz(brightness.harmonic_numbers(p, sr, cfg.max_freq_hz), sr / p)
        require(
            lo <= lowest_hz and highest_hz <= hi,
            f"{key}: centroids {lowest_hz:.0f}..{highest_hz:.0f} Hz (from the centroids and levels) are out of reach "
            "at f0 "
            f"{sr / p:.1f} Hz with harmonics up to max_freq_hz={cfg.max_freq_hz}; allowed: centroids within "
            f"{lo:.0f}..{hi:.0f} Hz",
        )
    shortest = _sounds.min_of(_sounds.dist(f"{key}.tone_s", cfg.tone_s))
    require(
        shortest >= MIN_STEADY_S,
        f"{key}.tone_s={cfg.tone_s!r} holds sounds shorter than {MIN_STEADY_S} s; allowed: >= {MIN_STEADY_S}",
    )
    require(
        0 <= 2 * cfg.ramp_s <= shortest,
        f"{key}.ramp_s={cfg.ramp_s} is negative or longer than half the shortest sound; allowed: 0 <= 2*ramp_s <= "
        f"{shortest:g}",
    )
