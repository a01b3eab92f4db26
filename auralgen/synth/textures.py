"""Grain textures: short grains (noise or tone bursts) scattered in time at a given density.

A texture is a JSON-able dict::

    {"density_hz": 12.0, "jitter": 0.25, "grain": {"kind": "noise"|"tone", "freq_hz": 1000.0,
     "grain_s": 0.004}, "seed": 7, "start_s": 0.2, "window_s": 2.0, "loudness_lufs": -30.0,
     "n_grains": 23}

The ``seed`` fixes the grains' timing, levels and noise (:func:`grains_of`), so the recipe stays
small and carries no per-grain list whose length would tell the density.

The grains are irregular (each inter-onset interval is the mean ``1 / density_hz`` times
``1 + u`` with ``u`` uniform in ``+-jitter`` made zero-mean), so a texture sounds like crackle or
rain, not a pulse; but the span of its onsets is exactly ``(n - 1) / density_hz``, so the density
read from the audio (events per second between the first and the last grain) is the recipe's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.synth.levels import set_loudness_lufs
from auralgen.synth.signals import n_samples

GRAIN_KINDS = ("noise", "tone")
LEVEL_JITTER_DB = 2.0  # each grain's level: +- this (uniform), at every density
MIN_GRAINS = 3


def grain_onsets(
    rng: np.random.Generator, *, density_hz: float, window_s: float, grain_s: float, jitter: float, filled: bool = False
) -> list[float]:
    """Onsets of grains at ``density_hz`` filling ``window_s``.

    A uniformly drawn phase in the first interval, then ``n - 1`` jittered intervals whose mean is
    exactly ``1 / density_hz``. Draws: the phase, then the ``n - 1`` jitters.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the phase and the jitters.
    density_hz : float
        Mean grain rate, in grains per second.
    window_s : float
        Length of the window, in seconds.
    grain_s : float
        Length of one grain, in seconds (the last grain ends inside the window).
    jitter : float
        Half-width of the uniform relative jitter of each interval (0 gives a regular train).
    filled : bool, optional
        If true, no phase: the first grain sits at the window's start (a window of whole intervals
        plus a grain then ends with the last grain), and no draw is made for it.

    Returns
    -------
    list of float
        The onsets, in seconds from the window's start.

    Raises
    ------
    ParameterError
        If fewer than :data:`MIN_GRAINS` grains fit the window.
    """
    ioi = 1.0 / density_hz
    phase = 0.0 if filled else float(rng.uniform(0.0, 1.0)) * ioi
    n = int(math.floor((window_s - grain_s - phase) / ioi + 1e-9)) + 1
    if n < MIN_GRAINS:
        raise ParameterError(
            f"a {window_s:g} s window holds {n} grains at {density_hz:.2f} /s; allowed: at least {MIN_GRAINS}"
        )
    u = rng.uniform(-jitter, jitter, n - 1)
    u -= u.mean()
    steps = np.concatenate(([0.0], np.cumsum(ioi * (1.0 + u))))
    return [phase + float(t) for t in steps]


def grains_of(texture: dict[str, Any]) -> tuple[list[float], np.ndarray]:
    """The grains' onsets and levels of a texture recipe, from its ``seed``.

    Onsets by :func:`grain_onsets`, then one level per grain.

    Parameters
    ----------
    texture : dict
        A texture recipe (see the module docstring).

    Returns
    -------
    onsets : list of float
        Grain onsets, in seconds from the window's start.
    levels : ndarray, shape (n_grains,), float64
        Grain levels, in dB relative to the texture (uniform in +-:data:`LEVEL_JITTER_DB`).
    """
    rng = np.random.default_rng(int(texture["seed"]))
    onsets = grain_onsets(
        rng,
        density_hz=texture["density_hz"],
        window_s=texture["window_s"],
        grain_s=texture["grain"]["grain_s"],
        jitter=texture["jitter"],
        filled=bool(texture.get("filled", False)),
    )
    return onsets, rng.uniform(-LEVEL_JITTER_DB, LEVEL_JITTER_DB, len(onsets))


def draw_texture(
    rng: np.random.Generator,
    grain: dict,
    *,
    density_hz: float,
    start_s: float,
    window_s: float,
    jitter: float,
    loudness_lufs: float,
    filled: bool = False,
) -> dict[str, Any]:
    """A texture recipe (one draw: its seed, which fixes its grains' timing, levels and noise).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the recipe's seed (one draw).
    grain : dict
        The grain: ``kind`` (``"noise"`` or ``"tone"``), ``freq_hz`` (Hz, tone only) and ``grain_s`` (seconds).
    density_hz : float
        Mean grain rate, in grains per second.
    start_s : float
        Where the window starts in the item, in seconds (stored, not used here).
    window_s : float
        Length of the window, in seconds.
    jitter : float
        Half-width of the uniform relative jitter of each inter-onset interval.
    loudness_lufs : float
        Loudness of the rendered window, in LUFS.
    filled : bool, optional
        If true (stored only then), the grains start at the window's start (:func:`grain_onsets`).

    Returns
    -------
    dict
        The recipe, with ``n_grains`` filled in.
    """
    texture = {
        "density_hz": float(density_hz),
        "jitter": float(jitter),
        "grain": dict(grain),
        "seed": int(rng.integers(2**31)),
        "start_s": float(start_s),
        "window_s": float(window_s),
        "loudness_lufs": float(loudness_lufs),
    }
    if filled:
        texture["filled"] = True
    texture["n_grains"] = len(grains_of(texture)[0])
    return texture


def render_texture(texture: dict[str, Any], sample_rate: int) -> np.ndarray:
    """The texture's window (``window_s`` long) at its loudness.

    Parameters
    ----------
    texture : dict
        A texture recipe (see the module docstring).
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    ndarray, shape (samples,), float64
        The window, ``round(window_s * sample_rate)`` samples, at ``loudness_lufs`` LUFS.

    Raises
    ------
    ParameterError
        If the grain kind is not one of :data:`GRAIN_KINDS`.
    """
    g = texture["grain"]
    if g["kind"] not in GRAIN_KINDS:
        raise ParameterError(f"grain kind={g['kind']!r} is unknown; allowed: one of {list(GRAIN_KINDS)}")
    out = np.zeros(n_samples(texture["window_s"], sample_rate))
    m = n_samples(g["grain_s"], sample_rate)
    win = np.hanning(m + 2)[1:-1]
    onsets, levels = grains_of(texture)
    rng = np.random.default_rng(int(texture["seed"]) + 1)
    t = np.arange(m) / sample_rate
    for onset, lv in zip(onsets, levels):
        if g["kind"] == "noise":
            src = rng.standard_normal(m)
        else:
            src = math.sqrt(2.0) * np.sin(2 * np.pi * g["freq_hz"] * t + rng.uniform(0, 2 * np.pi))
        a = n_samples(onset, sample_rate)
        out[a : a + m] += 10.0 ** (lv / 20.0) * win * src
    return set_loudness_lufs(out, sample_rate, float(texture["loudness_lufs"]))
