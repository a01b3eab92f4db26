"""The texture family: streams of short irregular grains (:mod:`auralgen.synth.textures`), their
config fields and checks, rendering and measurement, shared by texture_relative and texture_absolute."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Choice, Dist
from auralgen.synth import textures
from auralgen.synth.levels import loudness_lufs
from auralgen.synth.signals import n_samples, place
from auralgen.tasks import _sounds
from auralgen.tasks.base import AudioConfig, TaskConfig, require

TOLERANCE_LU = 0.2

LOUDEST_LUFS = -30.0  # grains are peaky (sparse crackle: peaks ~25 dB above the integrated loudness)


@dataclass(frozen=True)
class GrainConfig(TaskConfig):
    """The grain and loudness fields both texture tasks have."""

    grain_kinds: tuple[str, ...] = textures.GRAIN_KINDS
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 500.0, "high": 3000.0})
    grain_s: Dist = Dist.of((0.002, 0.005))
    jitter: float = 0.25
    loudness_lufs: Dist = Dist.of((-40.0, -34.0))


def check_grains(
    cfg, audio: AudioConfig, key: str, *, densest_hz: float, sparsest_hz: float, window: tuple[str, float] | None = None
) -> None:
    """Grain kinds, tone below Nyquist, grains separated at the densest rate, at least
    :data:`~auralgen.synth.textures.MIN_GRAINS` in a window at the sparsest (``window``: the config key
    and the shortest window, default ``window_s``), loudness below clipping.

    Parameters
    ----------
    cfg, audio, key
        The task's config, its audio settings and its config path (for messages).
    densest_hz, sparsest_hz : float
        The highest and lowest grain rate the config asks for, grains per second.
    window : tuple of (str, float) or None, optional
        The config key of the window and its shortest length, seconds.
    """
    bad = [k for k in cfg.grain_kinds if k not in textures.GRAIN_KINDS]
    require(
        cfg.grain_kinds and not bad,
        f"{key}.grain_kinds={list(cfg.grain_kinds)!r} is invalid; allowed: a non-empty list from "
        f"{list(textures.GRAIN_KINDS)}",
    )
    sr = cfg.sample_rate or audio.sample_rate
    top = _sounds.max_of(_sounds.dist(f"{key}.freq_hz", cfg.freq_hz, low=1e-9))
    require(
        top < sr / 2,
        f"{key}.freq_hz={cfg.freq_hz!r} reaches {top:g} Hz at or above Nyquist ({sr / 2:g} Hz); allowed: below Nyquist",
    )
    require(0 <= cfg.jitter < 0.5, f"{key}.jitter={cfg.jitter}; allowed: 0 <= jitter < 0.5")
    grain = _sounds.dist(f"{key}.grain_s", cfg.grain_s, low=1e-9)
    min_ioi = (1 - 2 * cfg.jitter) / densest_hz
    require(
        2 * _sounds.max_of(grain) <= min_ioi,
        f"{key}.grain_s={cfg.grain_s!r} overlaps at {densest_hz:.1f} grains/s (shortest interval {min_ioi:.4f} s); "
        "allowed: grains at most half the shortest interval",
    )
    need = (textures.MIN_GRAINS + 1) / sparsest_hz
    name, shortest = window or ("window_s", cfg.window_s)
    require(
        shortest >= need,
        f"{key}.{name}={getattr(cfg, name)!r} holds fewer than {textures.MIN_GRAINS} grains at {sparsest_hz:.2f} /s; "
        "allowed: "
        f"{name} >= {need:.3f}",
    )
    loud = _sounds.max_of(_sounds.dist(f"{key}.loudness_lufs", cfg.loudness_lufs))
    require(
        loud <= LOUDEST_LUFS,
        f"{key}.loudness_lufs={cfg.loudness_lufs!r} may clip; allowed: at most {LOUDEST_LUFS} LUFS",
    )


def draw_grain(rng: np.random.Generator, kinds, freq, grain) -> dict[str, Any]:
    """The grain shared by a texture (pair). Draws: kind, frequency, size.

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream.
    kinds : sequence of str
        Grain kinds to draw from.
    freq, grain : Dist
        The grain's frequency (Hz) and length (seconds) distributions.

    Returns
    -------
    dict of str to Any
        ``kind``, ``freq_hz`` (Hz) and ``grain_s`` (seconds).
    """
    kind = Choice(tuple(kinds)).sample(rng)
    return {"kind": kind, "freq_hz": float(freq.sample(rng)), "grain_s": float(grain.sample(rng))}


def render_textures(params: dict[str, Any]) -> list[np.ndarray]:
    """The clip ``[1, n]`` float32 of ``params['textures']`` placed at their ``start_s``.

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz``, ``clip_s`` (seconds) and ``textures`` (each with ``start_s``, seconds).

    Returns
    -------
    list of ndarray
        One clip, shape (1, samples), float32.
    """
    sr = int(params["sample_rate_hz"])
    segs = [(textures.render_texture(t, sr), n_samples(t["start_s"], sr)) for t in params["textures"]]
    return [place(segs, n_samples(params["clip_s"], sr))[None, :].astype(np.float32)]


def texture_samples(params: dict[str, Any], clip: np.ndarray) -> list[np.ndarray]:
    """Each texture's window of ``clip``.

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz`` and ``textures`` (``start_s``, ``window_s``, seconds).
    clip : ndarray, shape (1, samples)
        The rendered clip (flattened).

    Returns
    -------
    list of ndarray
        One float64 array, shape (samples,), per texture.
    """
    sr = int(params["sample_rate_hz"])
    x = np.asarray(clip, dtype=np.float64).reshape(-1)
    return [
        x[n_samples(t["start_s"], sr) : n_samples(t["start_s"], sr) + n_samples(t["window_s"], sr)]
        for t in params["textures"]
    ]


def measure_window(x: np.ndarray, texture: dict, sr: int) -> tuple[float, bool]:
    """A window's measured density and whether its grain count and loudness match the recipe.

    Parameters
    ----------
    x : ndarray, shape (samples,)
        The texture's window.
    texture : dict
        Its recipe (``n_grains``, ``loudness_lufs``).
    sr : int
        Sample rate, Hz.

    Returns
    -------
    tuple of (float, bool)
        Grains per second, and whether the count and the loudness (within ``TOLERANCE_LU``) match.
    """
    from auralgen.measure.texture import density_hz, grain_times

    t = grain_times(x, sr)
    ok = t.size == texture["n_grains"] and abs(loudness_lufs(x, sr) - texture["loudness_lufs"]) <= TOLERANCE_LU
    return density_hz(t), bool(ok)
