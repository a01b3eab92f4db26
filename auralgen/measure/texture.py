"""Texture measurements: the grains of a texture and its event density, read from the audio.

Grains are stretches where the 1 ms energy envelope stays within :data:`THRESHOLD_DB` of the
loudest grain; each grain's time is the energy centroid of its stretch, and the density of a run
of grains is ``(n - 1) / (t_last - t_first)`` events per second -- the mean rate between the
first and the last grain, exact for the textures of :mod:`auralgen.synth.textures`.
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.measure.common import as_mono, check_rate, moving_average

THRESHOLD_DB = -40.0
FRAME_S = 0.001
MIN_GAP_S = 0.002  # stretches closer than this are one grain


def grain_times(x, sample_rate) -> np.ndarray:
    """Times (s) of the grains in ``x``: energy centroids of the active stretches.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The texture; channels are averaged.
    sample_rate : float
        Sample rate of ``x`` in Hz.

    Returns
    -------
    ndarray, shape (grains,), float64
        Grain times in seconds from the start of ``x``, increasing; empty for silence.

    Examples
    --------
    >>> x = np.zeros(8000); x[1000:1040] = 1.0; x[3000:3040] = 1.0  # centroids: samples 1019.5 and 3019.5
    >>> [round(float(t), 4) for t in grain_times(x, 8000)]
    [0.1274, 0.3774]
    """
    sr = check_rate(sample_rate)
    p = as_mono(x) ** 2
    env = moving_average(p, max(1, int(round(FRAME_S * sr))))
    if env.max() <= 0:
        return np.zeros(0)
    active = env >= env.max() * 10 ** (THRESHOLD_DB / 10)
    edges = np.diff(np.concatenate([[0], active.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    gap = int(round(MIN_GAP_S * sr))
    keep = np.concatenate([[True], starts[1:] - stops[:-1] >= gap])
    starts, stops = starts[keep], stops[np.append(keep[1:], True)]
    c = np.concatenate(([0.0], np.cumsum(p)))
    ct = np.concatenate(([0.0], np.cumsum(p * np.arange(p.size))))
    mass = c[stops] - c[starts]
    return (ct[stops] - ct[starts]) / np.maximum(mass, 1e-300) / sr


def density_hz(times) -> float:
    """Events per second between the first and the last grain (NaN for fewer than 2).

    Parameters
    ----------
    times : array_like, shape (grains,)
        Grain times in seconds, increasing (as :func:`grain_times` returns them).

    Returns
    -------
    float
        Events per second; NaN for fewer than 2 grains or no time between the first and the last.
    """
    t = np.asarray(times, dtype=np.float64)
    if t.size < 2 or t[-1] <= t[0]:
        return math.nan
    return float((t.size - 1) / (t[-1] - t[0]))
