"""Headphone screening: the antiphase test of Woods, Siegel, Traer & McDermott (2017).

Woods, K. J. P., Siegel, M. H., Traer, J., & McDermott, J. H. (2017). Headphone screening to
facilitate web-based auditory experiments. *Attention, Perception, & Psychophysics*, 79(7),
2064-2072. doi:10.3758/s13414-017-1361-2

Each trial plays three 200 Hz tones (1 s, raised-cosine on/off ramps, 0.5 s apart); the listener
says which is the **quietest**. One tone is 6 dB softer than the other two (the answer); one of the
two louder tones is played in antiphase between the ears (the right channel inverted). Over
headphones the antiphase tone sounds as loud as the other; over loudspeakers the two channels
partly cancel in the air, so it tends to sound quietest and the listener answers it. As published:
**6 trials, pass with at least 5 correct**. No data trial is stored before a participant passes;
one who fails sees the end of the study.
"""

from __future__ import annotations

import numpy as np

from auralgen.synth.levels import peak_for_db_spl_sine

__all__ = ["N_TRIALS", "OPTIONS", "PASS_CORRECT", "QUESTION", "passed", "screening_trial"]

N_TRIALS = 6
PASS_CORRECT = 5
FREQ_HZ = 200.0
TONE_S = 1.0
RAMP_S = 0.1
GAP_S = 0.5
TRIAL_S = 3 * TONE_S + 2 * GAP_S  # one screening trial: three tones, two gaps (seconds)
QUIET_DB = -6.0
LEVEL_DB_SPL = 70.0
QUESTION = "Which of the three tones was the quietest?"
OPTIONS = ("The first tone", "The second tone", "The third tone")


def _tone(sample_rate: int, gain: float, antiphase: bool) -> np.ndarray:
    t = np.arange(int(TONE_S * sample_rate)) / sample_rate
    x = np.sin(2 * np.pi * FREQ_HZ * t)
    ramp = int(RAMP_S * sample_rate)
    env = np.ones_like(x)
    env[:ramp] = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
    env[-ramp:] = env[:ramp][::-1]
    x = gain * peak_for_db_spl_sine(LEVEL_DB_SPL) * x * env
    return np.stack([x, -x if antiphase else x]).astype(np.float32)


def screening_trial(rng: np.random.Generator, sample_rate: int) -> tuple[np.ndarray, int]:
    """``(clip [2, samples], answer)``: the three tones of one trial and the position (0..2) of the
    quiet one; the positions of the quiet and of the antiphase tone are drawn from ``rng``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the quiet tone's and the antiphase tone's positions.
    sample_rate : int
        Sampling rate in Hz.

    Returns
    -------
    clip : ndarray, shape (2, samples), float32
        Three 1 s tones of 200 Hz with 0.5 s gaps (``4 * sample_rate`` samples), in full-scale units;
        the louder tones at 70 dB SPL under the full-scale convention, the quiet one 6 dB lower.
    answer : int
        Position (0, 1 or 2) of the quiet tone.

    Examples
    --------
    >>> clip, answer = screening_trial(np.random.default_rng(0), 8000)
    >>> clip.shape, answer in (0, 1, 2)
    ((2, 32000), True)
    """
    quiet = int(rng.integers(3))
    antiphase = int(rng.choice([k for k in range(3) if k != quiet]))
    gap = np.zeros((2, int(GAP_S * sample_rate)), dtype=np.float32)
    parts = []
    for k in range(3):
        gain = 10 ** (QUIET_DB / 20) if k == quiet else 1.0
        parts += ([gap] if k else []) + [_tone(sample_rate, gain, k == antiphase)]
    return np.concatenate(parts, axis=1), quiet


def passed(n_correct: int) -> bool:
    """The published criterion: at least :data:`PASS_CORRECT` of :data:`N_TRIALS` correct.

    Parameters
    ----------
    n_correct : int
        Screening trials answered correctly.

    Returns
    -------
    bool
        True if ``n_correct >= 5``.

    Examples
    --------
    >>> passed(5), passed(4)
    (True, False)
    """
    return n_correct >= PASS_CORRECT
