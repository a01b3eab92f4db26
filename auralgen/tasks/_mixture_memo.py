"""A per-process memo of the mixture's sounds: one synthesis and one level measurement per sound recipe.

An item's sounds are synthesized when it is sampled (the mixer measures them), again when it is
rendered and again when its label is checked. The recipe (a JSON-able dict) fixes the signal, so
the memo returns the array computed the first time (read-only, so no caller can change it for the
next) and the level measured on it, both identical to a direct :func:`~auralgen.sounds.events.synth_sound`
and :func:`~auralgen.mixing.component_level`. It is bounded (:data:`MAX_SOUNDS` recipes, the
least recently used dropped first), so it holds a few items' worth of audio at most.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from auralgen.core.memo import BoundedMemo
from auralgen.mixing import component_level
from auralgen.sounds.events import synth_sound

MAX_SOUNDS = 32  # recipes kept; an item has at most a handful of sounds
_CACHE = BoundedMemo(MAX_SOUNDS)


def _key(sound: dict[str, Any], sample_rate: int) -> tuple[Any, int]:
    """The recipe's items (a recipe with a list or dict value: its JSON text) and the rate."""
    try:
        key = (tuple(sorted(sound.items())), int(sample_rate))
        hash(key)
    except TypeError:
        key = (json.dumps(sound, sort_keys=True), int(sample_rate))
    return key


def _entry(sound: dict[str, Any], sample_rate: int) -> dict[str, Any]:
    """The memo's entry of a recipe: its signal (a read-only copy, so a source's own cached array stays
    writeable) and the levels measured on it so far."""

    def make() -> dict[str, Any]:
        x = np.array(synth_sound(sound, int(sample_rate)))
        x.setflags(write=False)
        return {"signal": x, "levels": {}}

    return _CACHE.get(_key(sound, sample_rate), make)


def sound(sound: dict[str, Any], sample_rate: int) -> np.ndarray:
    """The raw signal of one sound recipe, as :func:`~auralgen.sounds.events.synth_sound` returns it (read-only).

    Parameters
    ----------
    sound : dict of str to Any
        A sound recipe (``kind``, ``duration_s`` and the kind's fields; ``level`` and ``onset_s`` may be
        present and are part of the key).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    ndarray, shape (samples,)
        The signal; not writeable (copy it to change it).

    Examples
    --------
    >>> s = {"kind": "sweep", "duration_s": 0.5, "f_start_hz": 300.0, "f_end_hz": 2400.0}
    >>> bool(np.array_equal(sound(s, 16000), synth_sound(s, 16000))), sound(s, 16000) is sound(s, 16000)
    (True, True)
    """
    return _entry(sound, sample_rate)["signal"]


def raw_level(sound: dict[str, Any], sample_rate: int, level_mode: str) -> float:
    """:func:`~auralgen.mixing.component_level` of the recipe's raw signal (LUFS or dBFS), measured once.

    Parameters
    ----------
    sound : dict of str to Any
        As in :func:`sound`.
    sample_rate : int
        Sampling rate (Hz).
    level_mode : {"lufs", "db"}
        The mixer's level rule.

    Returns
    -------
    float
        The level, the same number a direct ``component_level(synth_sound(sound, sr), sr, level_mode=...)`` gives.
    """
    entry = _entry(sound, sample_rate)
    levels = entry["levels"]
    if level_mode not in levels:
        levels[level_mode] = component_level(entry["signal"], int(sample_rate), level_mode=level_mode)
    return levels[level_mode]


def clear() -> None:
    """Empty the memo (tests use it to compare a cold and a warm computation)."""
    _CACHE.clear()
