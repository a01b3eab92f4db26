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
    """Onsets (s, from the window's start) of grains at ``density_hz`` filling ``window_s``: a
    uniformly drawn phase in the first interval, then ``n - 1`` jittered intervals whose mean is
    exactly ``1 / density_hz``. Draws: the phase, then the ``n - 1`` jitters. ``filled``: no phase (the
    first grain at the window's start; a window of whole intervals plus a grain then ends with the last grain),
    no draw for it."""
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
    """The grains' onsets (s, from the window's start) and levels (dB) of a texture recipe, from its
    ``seed`` (onsets by :func:`grain_onsets`, then one level per grain)."""
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
    """A texture recipe (one draw: its seed, which fixes its grains' timing, levels and noise); ``filled``
    (stored only when true): the grains start at the window's start (:func:`grain_onsets`)."""
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
    """The texture's window (float64, ``window_s`` long) at its loudness (LUFS)."""
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
