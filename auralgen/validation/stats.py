"""The statistics of the audio-free controls (:mod:`auralgen.validation.controls`): Wilson
intervals, one-sided binomial tests, the minimum detectable effect and Holm's correction.
"""

from __future__ import annotations

import math

from scipy import stats

__all__ = ["ALPHA", "POWER", "holm", "min_detectable_effect", "p_above", "wilson"]

ALPHA = 0.05  # a control's excess over chance + MARGIN counts when significant at this level (Holm, per task)
POWER = 0.8  # the minimum detectable effect is the excess found with this probability


def wilson(correct: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of ``correct / n`` (``(0, 1)`` when ``n == 0``).

    Parameters
    ----------
    correct, n : int >= 0
        Correct answers and answers.
    z : float > 0
        Standard-normal quantile of the interval; the default gives 95 %.

    Returns
    -------
    tuple of float
        ``(low, high)``, accuracies in [0, 1].
    """
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))


def p_above(correct: int, n: int, chance: float) -> float:
    """One-sided binomial p-value of ``correct`` out of ``n`` against accuracy ``chance``.

    Parameters
    ----------
    correct, n : int >= 0
        Correct answers and answers.
    chance : float in [0, 1]
        Accuracy of the null hypothesis.

    Returns
    -------
    float
        ``P(X >= correct)`` for ``X ~ Binomial(n, chance)``; 1 when ``n == 0`` or ``chance >= 1``.
    """
    if n == 0 or chance >= 1.0:
        return 1.0
    return float(stats.binom.sf(correct - 1, n, chance))


def min_detectable_effect(n: int, chance: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest accuracy above ``chance`` a one-sided exact binomial test detects.

    Parameters
    ----------
    n : int >= 0
        Test items.
    chance : float in [0, 1]
        Accuracy of the null hypothesis.
    alpha : float in (0, 1)
        Significance level of the test.
    power : float in (0, 1)
        Probability of detecting the effect.

    Returns
    -------
    float
        Accuracy excess over ``chance`` (``1 - chance`` when no accuracy would be detected).
    """
    if n == 0 or chance >= 1.0:
        return 1.0 - min(chance, 1.0)
    critical = int(stats.binom.isf(alpha, n, chance)) + 1  # smallest count with P(X >= count) <= alpha
    while critical > 0 and stats.binom.sf(critical - 2, n, chance) <= alpha:
        critical -= 1
    if critical > n:
        return 1.0 - chance
    lo, hi = chance, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if stats.binom.sf(critical - 1, n, mid) >= power else (mid, hi)
    return hi - chance


def holm(pvalues: dict[str, float], alpha: float = ALPHA) -> set[str]:
    """The hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``.

    Parameters
    ----------
    pvalues : dict of str to float
        p-value per hypothesis name.
    alpha : float in (0, 1)
        Family-wise error rate.

    Returns
    -------
    set of str
        The rejected hypotheses.

    Examples
    --------
    >>> sorted(holm({"a": 0.001, "b": 0.02, "c": 0.04, "d": 0.5}))
    ['a']
    >>> sorted(holm({"a": 0.001, "b": 0.015, "c": 0.02, "d": 0.02}))
    ['a', 'b', 'c', 'd']
    """
    rejected: set[str] = set()
    for rank, (key, p) in enumerate(sorted(pvalues.items(), key=lambda kv: kv[1])):
        if p > alpha / (len(pvalues) - rank):
            break
        rejected.add(key)
    return rejected
