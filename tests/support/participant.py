"""A scripted participant of ``auralgen listen``: answers from the sound it was served, as a person would.

* screening: the quietest of the three tones as heard over headphones (one ear's RMS per tone);
* a test item: the task's reference DSP listener on the served WAV (the task found by its question);
* an adaptive pitch trial: the sign of the measured pitch change (no "same" zone: the level is never 0),
  answered right or wrong as a :class:`~auralgen.evaluation.adaptive.SimulatedObserver` with a known
  threshold decides at the value its own copy of the procedure asks for (QUEST+ is deterministic, so
  the copy asks what the server's does without the server telling it).
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.listen import screening
from auralgen.listen.sound import read_wav_bytes
from auralgen.listeners.common import mono, sound_segments
from auralgen.measure import f0_hz
from auralgen.tasks.base import task_class

TONE_STEP_S = screening.TONE_S + screening.GAP_S


def screening_choice(options: list[str], wav: bytes) -> int:
    """The shown position of the quietest tone (one ear, as over headphones)."""
    x, sr = read_wav_bytes(wav)
    n = int(screening.TONE_S * sr)
    rms = [
        float(np.sqrt(np.mean(x[0, int(k * TONE_STEP_S * sr) : int(k * TONE_STEP_S * sr) + n] ** 2))) for k in range(3)
    ]
    return options.index(screening.OPTIONS[int(np.argmin(rms))])


def task_of(question: str, names) -> str:
    """The task of ``names`` whose question templates hold ``question``."""
    return next(name for name in names if question in task_class(name).questions)


def listener_choice(question: str, options: list[str], wav: bytes, names=("pitch_relative",)) -> int:
    """The shown position the reference listener of the task (one of ``names``) picks from the served sound."""
    x, sr = read_wav_bytes(wav)
    return int(task_class(task_of(question, names)).listener(question, options, [x], sr))


def pitch_change_cents(wav: bytes) -> float:
    """The pitch change from the first to the second tone of a served pitch trial (cents)."""
    x, sr = read_wav_bytes(wav)
    m = mono(x)
    f = []
    for a, b in sound_segments(m, sr)[:2]:
        mid, h = (a + b) // 2, min(int(0.125 * sr), (b - a) // 2)
        f.append(f0_hz(m[mid - h : mid + h], sr))
    return 1200.0 * math.log2(f[1] / f[0])


def observer_choice(options: list[str], wav: bytes, correct: bool) -> int:
    """A pitch trial answered right (``correct``) or with the first wrong option shown."""
    truth = options.index("Higher" if pitch_change_cents(wav) > 0 else "Lower")
    return truth if correct else next(k for k in range(len(options)) if k != truth)
