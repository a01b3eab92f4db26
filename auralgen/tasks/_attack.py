"""The attack family: pure tones with a linear onset ramp (:mod:`auralgen.synth.attack`), their config
checks, rendering and the measured rise times shared by attack_relative and attack_absolute."""

from __future__ import annotations

import math

import numpy as np

from auralgen.measure.attack import rise_time_s
from auralgen.synth import attack as attack_synth
from auralgen.synth import loudness_lufs, n_samples
from auralgen.tasks import _sounds, _timbre_onset
from auralgen.tasks.base import AudioConfig, require

PRE_ONSET_S = 0.01  # silence before each sound included in its rise-time window


def check_attack(cfg, audio: AudioConfig, key: str, shortest_s: float, longest_s: float, *, relative: bool) -> None:
    """Config checks of the attack tasks: rise times ``shortest_s..longest_s`` measurable and fitting the
    sounds with a steady part of at least one BS.1770 block, carrier below Nyquist, loudness, clip length.

    Parameters
    ----------
    cfg : TaskConfig
        An attack task's config.
    audio : AudioConfig
        The audio settings the task renders with.
    key : str
        The task's config path, for messages.
    shortest_s, longest_s : float
        The shortest and longest rise time the config asks for, seconds.
    relative : bool
        A two-sound (relative) task.
    """
    _timbre_onset.check_common(cfg, key, relative=relative)
    sr = int(cfg.sample_rate or audio.sample_rate)
    freq = _sounds.dist(f"{key}.freq_hz", cfg.freq_hz, low=1e-9)
    require(
        200.0 <= _sounds.min_of(freq) and _sounds.max_of(freq) < 0.4 * sr,
        f"{key}.freq_hz={cfg.freq_hz!r} is out of range; allowed: 200 Hz (the Hilbert envelope needs cycles within the "
        f"ramp) .. {0.4 * sr:g} Hz",
    )
    require(
        shortest_s >= 1.5 / _sounds.min_of(freq),
        f"{key}: the shortest rise time {shortest_s * 1000:.2f} ms (rise_s and levels) is under 1.5 carrier periods; "
        f"allowed: >= {1500.0 / _sounds.min_of(freq):.2f} ms",
    )
    require(cfg.release_s >= 0, f"{key}.release_s={cfg.release_s} is negative; allowed: >= 0")
    steady = (
        _sounds.min_of(_sounds.dist(f"{key}.tone_s", cfg.tone_s)) - longest_s / attack_synth.RISE_SPAN - cfg.release_s
    )
    require(
        steady >= _timbre_onset.MIN_STEADY_S,
        f"{key}: the longest rise time {longest_s * 1000:.1f} ms leaves {steady:.3f} s of steady sound in the shortest "
        f"tone_s; allowed: >= {_timbre_onset.MIN_STEADY_S} s (longer tone_s or shorter rises)",
    )


def render_attack_clip(params) -> np.ndarray:
    """The clip of an attack item: each tone with its linear onset ramp at its onset in silence.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``sample_rate_hz``, ``clip_s``, ``sounds``).

    Returns
    -------
    ndarray, shape (1, samples)
        float32.
    """
    return _timbre_onset.render_placed(params, attack_synth.render_attack)


def measured_rises(params, x: np.ndarray) -> list[float]:
    """Each sound's measured rise time (s), from :data:`PRE_ONSET_S` before its onset to its end.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe.
    x : ndarray, shape (samples,)
        The mono clip, float64.

    Returns
    -------
    list of float
        Seconds, one per sound.
    """
    sr = int(params["sample_rate_hz"])
    pre = n_samples(PRE_ONSET_S, sr)
    return [rise_time_s(x[max(a - pre, 0) : b], sr) for a, b in _timbre_onset.sound_spans(params)]


def steady_loudness(params, x: np.ndarray) -> list[float]:
    """Each sound's loudness (LUFS) over its steady part: the same stretch after every sound's onset,
    from the end of the longest ramp to the start of the release.

    Parameters
    ----------
    params, x
        As in :func:`measured_rises`.

    Returns
    -------
    list of float
        LUFS, one per sound.
    """
    sr = int(params["sample_rate_hz"])
    skip = max(int(math.ceil(s["rise_s"] / attack_synth.RISE_SPAN * sr)) for s in params["sounds"])
    return [
        loudness_lufs(x[a + skip : b - n_samples(s["release_s"], sr)], sr)
        for s, (a, b) in zip(params["sounds"], _timbre_onset.sound_spans(params))
    ]
