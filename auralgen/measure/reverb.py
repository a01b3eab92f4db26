"""Reverberation read from a clip: the decay after a sound ends, and where sounds start and stop decaying.

:mod:`auralgen.measure.room` measures an impulse response; this module measures a *clip*, a dry
sound heard in a room. After the dry sound stops, the clip holds the room's decay alone: for an
impulsive sound it is the impulse response itself, for a noise burst the ISO 3382-1 interrupted-noise
decay (whose ensemble mean is the Schroeder integral of the response, so it falls at the same rate).
:func:`decay_rt60_s` backward-integrates that stretch and fits T20 (ISO 3382-1: -5 to -25 dB,
extrapolated to 60 dB) with :func:`auralgen.measure.room.rt60_schroeder`.

A listener does not know where a sound ends: :func:`decay_start` finds it from the energy envelope
(the last moment the envelope is near its maximum), :func:`rises` the onsets of the sounds of a clip
(jumps of the envelope far above its recent minimum, which a reverberant tail never makes).

Examples
--------
>>> sr = 8000; rng = np.random.default_rng(0)
>>> x = np.zeros(2 * sr); x[800:2400] = rng.standard_normal(1600)
>>> t = np.arange(2 * sr - 2400) / sr
>>> x[2400:] = rng.standard_normal(t.size) * 10 ** (-3 * t / 0.6)
>>> round(decay_rt60_s(x, sr, 2400), 1)
0.6
>>> abs(decay_start(x, sr, 0) - 2400) < 200
True
>>> [abs(i - 800) <= 8 for i in rises(x, sr)]
[True]
"""

from __future__ import annotations

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_channels, check_positive, check_rate, moving_average
from auralgen.measure.room import rt60_schroeder

ENVELOPE_S = 0.02  # energy envelope window of decay_start and rises (s)
NEAR_MAX_DB = 3.0  # decay_start: the decay begins where the envelope last sits within this of its maximum
RISE_DB = 30.0  # rises: an onset lifts the envelope this far above its minimum over the preceding RISE_LOOKBACK_S
RISE_LOOKBACK_S = 0.1
MIN_SOUND_S = 0.1  # rises: onsets closer than this belong to one sound


def _envelope_db(x, sample_rate: float, start: int, stop: int | None) -> np.ndarray:
    energy = np.sum(as_channels(x)[:, start:stop].astype(np.float64) ** 2, axis=0)
    if energy.size == 0 or energy.max() <= 0:
        raise ParameterError(f"x[{start}:{stop}] is silent or empty; allowed: a stretch holding a sound")
    env = moving_average(energy, max(int(ENVELOPE_S * sample_rate), 1))
    return 10.0 * np.log10(np.maximum(env, env.max() * 1e-15))


def decay_rt60_s(
    x, sample_rate, start: int, stop: int | None = None, *, decay_db: float = 20.0, start_db: float = -5.0
) -> float:
    """Reverberation time (s) of the decay in ``x[..., start:stop]`` (a clip after its sound ended).

    ``x`` is ``[n]`` or ``[channels, n]`` (channel energies summed); the stretch is
    backward-integrated and T20 (``decay_db`` = 20; 30 for T30; EDT: ``start_db=0, decay_db=10``) fitted from
    ``start_db`` (-5 dB) as in :func:`auralgen.measure.room.rt60_schroeder`, which raises when the stretch
    does not decay ``decay_db - start_db + 10`` dB (35 dB for T20; a sound still playing, or a noise floor).

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The clip (channel energies summed).
    sample_rate : float
        Sample rate of ``x`` in Hz.
    start : int
        First sample of the decay (index into ``x``).
    stop : int or None, optional
        End of the decay (exclusive sample index); ``None`` for the end of ``x``.
    decay_db : float, optional
        Evaluation range in dB, in [10, 50].
    start_db : float, optional
        Where the fit starts on the decay curve, dB in [-10, 0].

    Returns
    -------
    float
        The reverberation time in seconds (extrapolated to a 60 dB decay).

    Raises
    ------
    ParameterError
        If the stretch is shorter than 2 samples or does not decay far enough to fit.
    """
    sr = check_rate(sample_rate)
    seg = as_channels(x)[:, int(start) : stop]
    if seg.shape[1] < 2:
        raise ParameterError(f"x[{start}:{stop}] is shorter than 2 samples; allowed: a decay to measure")
    return rt60_schroeder(seg.astype(np.float64), sr, decay_db=decay_db, start_db=start_db)


def decay_start(x, sample_rate, start: int, stop: int | None = None, *, near_db: float = NEAR_MAX_DB) -> int:
    """Sample index (in ``x``) where the sound in ``x[..., start:stop]`` starts to decay.

    That is the end of the last :data:`ENVELOPE_S` window whose energy is within ``near_db`` of the
    stretch's maximum.

    Parameters
    ----------
    x, sample_rate
        As in :func:`decay_rt60_s`.
    start : int
        First sample of the searched stretch.
    stop : int or None, optional
        End of the stretch (exclusive); ``None`` for the end of ``x``.
    near_db : float, optional
        How far (dB) below the stretch's maximum still counts as the sound playing; > 0.

    Returns
    -------
    int
        The sample index in ``x`` where the decay begins.

    Raises
    ------
    ParameterError
        If the stretch is empty or silent.
    """
    sr = check_rate(sample_rate)
    env = _envelope_db(x, sr, int(start), stop)
    last = int(np.flatnonzero(env >= env.max() - check_positive("near_db", near_db))[-1])
    return int(start) + last + 1


def rises(x, sample_rate, *, rise_db: float = RISE_DB, n: int | None = None) -> list[int]:
    """Onsets (sample indices, in time order) of the sounds of ``x``.

    An onset is where the envelope first stands ``rise_db`` above its minimum over the preceding
    :data:`RISE_LOOKBACK_S` (and within ``rise_db`` of the clip's maximum); onsets within
    :data:`MIN_SOUND_S` of the previous one are dropped. With ``n``, the ``n`` onsets that rise highest
    above their preceding minimum: a sound that starts out of silence, rather than a click of a train
    rising out of the decay of the click before.

    Parameters
    ----------
    x, sample_rate
        As in :func:`decay_rt60_s`.
    rise_db : float, optional
        The jump in dB above the preceding minimum that makes an onset.
    n : int or None, optional
        Keep only the ``n`` highest-rising onsets; ``None`` keeps all.

    Returns
    -------
    list of int
        Onset sample indices in ``x``, increasing.

    Raises
    ------
    ParameterError
        If ``x`` is silent.
    """
    sr = check_rate(sample_rate)
    env = _envelope_db(x, sr, 0, None)
    back = max(int(RISE_LOOKBACK_S * sr), 1)
    padded = np.concatenate([np.full(back, env.min()), env])
    floor = np.lib.stride_tricks.sliding_window_view(padded[:-1], back).min(axis=1)
    lift = env - floor
    hits = np.flatnonzero((lift >= rise_db) & (env >= env.max() - rise_db))
    out: list[int] = []
    for i in hits:
        if not out or i - out[-1] >= MIN_SOUND_S * sr:
            out.append(int(i))
    if n is not None:
        out = sorted(sorted(out, key=lambda i: -lift[i])[: int(n)])
    # the envelope's window is centred: its leading edge (half a window on) meets the rise first
    half = max(int(ENVELOPE_S * sr), 1) // 2
    return [min(i + half, env.size - 1) for i in out]


__all__ = ["decay_rt60_s", "decay_start", "rises"]
