"""Onset envelopes of a given 10-90 % rise time (the attack tasks' sounds).

The envelope rises linearly in amplitude from 0 to 1 over ``rise_s / 0.8`` seconds (so it
crosses 10 % and 90 % of its steady value exactly ``rise_s`` apart), holds 1, and falls with a
raised-cosine release of ``release_s``. The carrier (a pure tone at its steady level) is the same
for every envelope of an item, so only the onset differs.
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.synth.levels import set_loudness_lufs
from auralgen.synth.signals import n_samples, tone

RISE_SPAN = 0.8  # the 10 %..90 % part of a linear ramp: rise time = 0.8 x ramp length


def attack_envelope(n: int, sample_rate: int, *, rise_s: float, release_s: float) -> np.ndarray:
    """Gain ``[n]``: linear ramp of ``rise_s / 0.8`` s, steady 1, raised-cosine release of ``release_s``.

    Parameters
    ----------
    n : int
        Length of the envelope, in samples.
    sample_rate : int
        Sampling rate, in Hz.
    rise_s : float
        10-90 % rise time, in seconds (the linear ramp lasts ``rise_s / 0.8`` s).
    release_s : float
        Length of the raised-cosine release at the end, in seconds (0 for none).

    Returns
    -------
    ndarray, shape (n,), float64
        The gain, from 0 up to 1 and back down to 0 at the last sample when there is a release.

    Raises
    ------
    ParameterError
        If ``rise_s`` is not positive or the ramp plus the release is longer than ``n`` samples.

    Examples
    --------
    >>> g = attack_envelope(100, 1000, rise_s=0.008, release_s=0.01)
    >>> float(g[0]), float(g[5]), float(g[50]), float(g[-1])
    (0.0, 0.5, 1.0, 0.0)
    """
    ramp = rise_s / RISE_SPAN * sample_rate  # in samples (fractional)
    rel = n_samples(release_s, sample_rate)
    if not (math.isfinite(ramp) and ramp > 0) or ramp + rel > n:
        raise ParameterError(
            f"rise_s={rise_s!r} with release_s={release_s!r} does not fit {n} samples; "
            "allowed: 0 < rise_s/0.8 + release_s <= duration"
        )
    g = np.minimum(np.arange(n, dtype=np.float64) / ramp, 1.0)
    if rel:
        g[n - rel :] *= 0.5 * (1.0 + np.cos(np.pi * np.arange(1, rel + 1) / rel))
    return g


def render_attack(sound: dict, sample_rate: int) -> np.ndarray:
    """One sound of an attack recipe: a pure tone at its loudness under :func:`attack_envelope`.

    The carrier is set to ``loudness_lufs`` before the envelope is applied, so ``loudness_lufs`` is
    the loudness of the steady part.

    Parameters
    ----------
    sound : dict
        The recipe: ``freq_hz`` (Hz), ``phase_rad`` (radians), ``duration_s``, ``rise_s`` and
        ``release_s`` (seconds) and ``loudness_lufs`` (LUFS).
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    ndarray, shape (samples,), float64
        The sound, ``round(duration_s * sample_rate)`` samples long.
    """
    carrier = tone(sound["freq_hz"], sound["duration_s"], sample_rate=sample_rate, phase_rad=sound["phase_rad"])
    carrier = set_loudness_lufs(carrier, sample_rate, sound["loudness_lufs"])
    gain = attack_envelope(len(carrier), sample_rate, rise_s=sound["rise_s"], release_s=sound["release_s"])
    return carrier * gain
