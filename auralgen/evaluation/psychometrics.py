"""Psychometric functions and model audiograms.

Accuracy on a relative task is modelled as a Weibull psychometric function of the stimulus
difference ``x > 0`` (cents, dB, percent, degrees, ...)::

    p(x) = gamma + (1 - gamma - lapse) * (1 - exp(-(x / scale) ** slope))

``gamma`` is the chance level (guess rate, fixed by the number of options), ``lapse`` the
share of trials lost at any difference (``0 <= lapse <= max_lapse``, by default
``(1 - chance) / 2``), ``scale`` and
``slope`` the position and steepness (on a log-``x`` axis the Weibull is a Gumbel sigmoid
whose steepness grows with ``slope``). Parameters are fitted by maximum likelihood on the
binomial counts (``scipy.optimize.minimize``, L-BFGS-B, several starts).

The threshold is the ``x`` at which the fitted curve reaches ``criterion``. It is reported
as ``math.inf`` with ``threshold_status``:

- ``"not_reached"`` -- the criterion lies at or above the fitted asymptote ``1 - lapse``;
- ``"beyond_range"`` -- the curve reaches it only above the largest tested ``x`` (no
  extrapolation upwards; data that stay at chance end here);
- ``"ok"`` otherwise (``"below_range"`` when it lies below the smallest tested ``x``: a
  finite value extrapolated downwards, to be read as an upper bound).

``x = 0`` (the "same" level of a relative task) is **excluded** from the fit: its correct
answer is a different response ("Same"), so it does not lie on the detection curve. The
number of excluded levels is reported as ``n_excluded``.

The confidence interval is a bootstrap percentile interval: binomial counts are resampled
(parametric: from the fitted curve; nonparametric: from the observed proportions), the
curve refitted, and the ``(1 - confidence) / 2`` quantiles of the thresholds taken, with
unreachable thresholds counted as ``inf`` (so ``ci_high`` may be ``inf``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from auralgen.errors import ParameterError

__all__ = ["PsychometricFit", "audiogram_thresholds", "fit_psychometric", "weibull"]

_SLOPE_BOUNDS = (0.3, 20.0)
_EPS = 1e-9


def weibull(x, *, scale: float, slope: float, chance: float, lapse: float) -> np.ndarray:
    """Weibull psychometric function (see the module docstring).

    Examples
    --------
    >>> float(weibull(2.0, scale=2.0, slope=3.0, chance=0.5, lapse=0.0)).__round__(3)
    0.816
    """
    x = np.asarray(x, dtype=float)
    f = 1.0 - np.exp(-((np.maximum(x, 0.0) / scale) ** slope))
    return chance + (1.0 - chance - lapse) * f


@dataclass(frozen=True)
class PsychometricFit:
    """A fitted psychometric function.

    Attributes
    ----------
    threshold : float
        Difference at which predicted accuracy equals ``criterion`` (units of ``x``);
        ``math.inf`` unless ``threshold_status`` is ``"ok"`` or ``"below_range"``.
    slope : float
        Weibull shape parameter (steepness on a log-x axis).
    lapse : float
        Fitted lapse rate; the asymptote is ``1 - lapse``.
    criterion : float
        Target accuracy.
    ci_low, ci_high : float
        Bootstrap percentile interval of the threshold (``nan`` when ``n_boot = 0``).
    converged : bool
        The optimizer reported success.
    scale : float
        Weibull scale (the x at which ``1 - 1/e`` of the way from chance to the asymptote is reached).
    chance : float
        Guess rate used.
    threshold_status : str
        ``"ok"``, ``"below_range"``, ``"beyond_range"`` or ``"not_reached"``.
    x, n_correct, n_total : tuple
        The data used for the fit (``x > 0`` only).
    n_excluded : int
        Levels with ``x = 0`` left out of the fit.
    """

    threshold: float
    slope: float
    lapse: float
    criterion: float
    ci_low: float
    ci_high: float
    converged: bool
    scale: float
    chance: float
    threshold_status: str
    x: tuple = ()
    n_correct: tuple = ()
    n_total: tuple = ()
    n_excluded: int = 0

    @property
    def finite(self) -> bool:
        """True when the threshold is a number (``ok`` or ``below_range``)."""
        return math.isfinite(self.threshold)

    def predict(self, x) -> np.ndarray:
        """Predicted accuracy at differences ``x``."""
        return weibull(x, scale=self.scale, slope=self.slope, chance=self.chance, lapse=self.lapse)


def _nll(theta, x, k, n, chance):
    """Binomial negative log-likelihood and its gradient in (log scale, log slope, lapse)."""
    log_scale, log_slope, lapse = theta
    slope = math.exp(log_slope)
    log_ratio = np.log(x) - log_scale
    u = np.exp(np.minimum(slope * log_ratio, 50.0))  # beyond 50, 1 - exp(-u) == 1
    e = np.exp(-u)
    span = 1.0 - chance - lapse
    p = np.clip(chance + span * (1.0 - e), _EPS, 1.0 - _EPS)
    nll = -float(np.sum(k * np.log(p) + (n - k) * np.log1p(-p)))
    dnll_dp = -(k / p - (n - k) / (1.0 - p))
    g = span * e * slope * u
    grad = np.array(
        [
            float(np.sum(dnll_dp * -g)),
            float(np.sum(dnll_dp * g * log_ratio)),
            float(np.sum(dnll_dp * -(1.0 - e))),
        ]
    )
    return nll, grad


def _mle(x, k, n, chance, max_lapse, starts):
    bounds = [
        (math.log(x.min() / 100.0), math.log(x.max() * 100.0)),
        (math.log(_SLOPE_BOUNDS[0]), math.log(_SLOPE_BOUNDS[1])),
        (0.0, max_lapse),
    ]
    best = None
    for start in starts:
        res = minimize(_nll, start, args=(x, k, n, chance), jac=True, method="L-BFGS-B", bounds=bounds)
        if best is None or res.fun < best.fun:
            best = res
    return best


def _threshold(scale, slope, lapse, chance, criterion, x_min, x_max) -> tuple[float, str]:
    asymptote = 1.0 - lapse
    if criterion >= asymptote - 1e-12:
        return math.inf, "not_reached"
    q = (criterion - chance) / (asymptote - chance)
    t = scale * (-math.log1p(-q)) ** (1.0 / slope)
    if t > x_max * (1.0 + 1e-9):
        return math.inf, "beyond_range"
    return t, ("below_range" if t < x_min else "ok")


def _validate(x, n_correct, n_total, chance, criterion, max_lapse, n_boot, confidence):
    x = np.asarray(x, dtype=float).ravel()
    k = np.asarray(n_correct, dtype=float).ravel()
    n = np.asarray(n_total, dtype=float).ravel()
    if not (x.shape == k.shape == n.shape):
        raise ParameterError(f"x, n_correct, n_total have lengths {x.size}, {k.size}, {n.size}; allowed: equal lengths")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ParameterError(f"x={x.tolist()!r} has negative or non-finite values; allowed: finite x >= 0")
    if np.any(n < 0) or np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ParameterError("n_correct/n_total are invalid; allowed: integers with 0 <= n_correct <= n_total")
    if not 0.0 <= chance < 1.0:
        raise ParameterError(f"chance={chance!r} is out of range; allowed: 0 <= chance < 1")
    if not chance < criterion < 1.0:
        raise ParameterError(f"criterion={criterion!r} is out of range; allowed: chance ({chance}) < criterion < 1")
    if not 0.0 <= max_lapse < 1.0 - chance:
        raise ParameterError(f"max_lapse={max_lapse!r} is out of range; allowed: 0 <= max_lapse < 1 - chance")
    if n_boot < 0:
        raise ParameterError(f"n_boot={n_boot!r} is out of range; allowed: >= 0")
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence={confidence!r} is out of range; allowed: 0 < confidence < 1")
    keep = (x > 0) & (n > 0)
    if np.count_nonzero(keep) < 2:
        raise ParameterError(
            f"only {np.count_nonzero(keep)} level(s) with x > 0 and trials; allowed: at least 2 to fit a curve"
        )
    return x[keep], k[keep], n[keep], int(np.count_nonzero((x == 0) & (n > 0)))


def fit_psychometric(
    x,
    n_correct,
    n_total,
    *,
    chance: float,
    criterion: float = 0.75,
    max_lapse: float | None = None,
    n_boot: int = 200,
    bootstrap: str = "parametric",
    confidence: float = 0.95,
    rng: np.random.Generator | None = None,
) -> PsychometricFit:
    """Fit a Weibull psychometric function to accuracy vs stimulus difference.

    Parameters
    ----------
    x : array_like of float >= 0, shape (m,)
        Stimulus difference per level; ``x = 0`` is excluded from the fit.
    n_correct, n_total : array_like of int, shape (m,)
        Correct answers and answers per level.
    chance : float in [0, 1)
        Guess rate (``1 / n_options``).
    criterion : float in (chance, 1)
        Accuracy defining the threshold.
    max_lapse : float in [0, 1 - chance), optional
        Upper bound of the lapse rate; default ``(1 - chance) / 2`` (the asymptote may sink
        halfway from chance to 1 -- audio-language models often plateau well below 1).
    n_boot : int >= 0
        Bootstrap refits for the confidence interval (0 skips it).
    bootstrap : {"parametric", "nonparametric"}
        Resample counts from the fitted curve or from the observed proportions.
    confidence : float in (0, 1)
        Coverage of the interval.
    rng : np.random.Generator, optional
        Source of the bootstrap samples; ``np.random.default_rng(0)`` when omitted.

    Returns
    -------
    PsychometricFit

    Examples
    --------
    >>> x = [5, 10, 20, 40, 80]
    >>> fit = fit_psychometric(x, [27, 33, 44, 49, 50], [50] * 5, chance=0.5, n_boot=0)
    >>> fit.threshold_status, 10 < fit.threshold < 30
    ('ok', True)
    """
    if bootstrap not in ("parametric", "nonparametric"):
        raise ParameterError(f"bootstrap={bootstrap!r} is unknown; allowed: parametric, nonparametric")
    if max_lapse is None:
        max_lapse = 0.5 * (1.0 - chance)
    xs, k, n, n_excluded = _validate(x, n_correct, n_total, chance, criterion, max_lapse, n_boot, confidence)
    rng = np.random.default_rng(0) if rng is None else rng
    return _fit(xs, k, n, n_excluded, chance, criterion, max_lapse, n_boot, bootstrap, confidence, rng)


def _fit(xs, k, n, n_excluded, chance, criterion, max_lapse, n_boot, bootstrap, confidence, rng) -> PsychometricFit:
    """:func:`fit_psychometric` on validated levels (``x > 0``, with trials)."""
    log_x = np.log(xs)
    starts = [(s, math.log(2.0), 0.02) for s in np.quantile(log_x, [0.25, 0.5, 0.75])] + [
        (float(log_x.max()) + 1.0, math.log(2.0), 0.02)
    ]
    res = _mle(xs, k, n, chance, max_lapse, starts)
    scale, slope, lapse = math.exp(res.x[0]), math.exp(res.x[1]), float(res.x[2])
    threshold, status = _threshold(scale, slope, lapse, chance, criterion, xs.min(), xs.max())
    ci_low = ci_high = math.nan
    if n_boot:
        p_source = (
            weibull(xs, scale=scale, slope=slope, chance=chance, lapse=lapse) if bootstrap == "parametric" else k / n
        )
        boots = _bootstrap(xs, n, p_source, tuple(res.x), chance, criterion, max_lapse, n_boot, rng)
        alpha = (1.0 - confidence) / 2.0
        ci_low, ci_high = (float(v) for v in np.quantile(boots, [alpha, 1.0 - alpha], method="inverted_cdf"))
    return PsychometricFit(
        threshold=float(threshold),
        slope=slope,
        lapse=lapse,
        criterion=criterion,
        ci_low=ci_low,
        ci_high=ci_high,
        converged=bool(res.success),
        scale=scale,
        chance=float(chance),
        threshold_status=status,
        x=tuple(float(v) for v in xs),
        n_correct=tuple(int(v) for v in k),
        n_total=tuple(int(v) for v in n),
        n_excluded=n_excluded,
    )


def _bootstrap(xs, n, p_source, start, chance, criterion, max_lapse, n_boot, rng) -> np.ndarray:
    """Thresholds of ``n_boot`` refits to counts drawn from ``p_source`` (each refit starts at ``start``)."""
    boots = np.empty(n_boot)
    for b in range(n_boot):
        kb = rng.binomial(n.astype(np.int64), np.clip(p_source, 0.0, 1.0)).astype(float)
        rb = _mle(xs, kb, n, chance, max_lapse, [start])
        boots[b] = _threshold(
            math.exp(rb.x[0]), math.exp(rb.x[1]), float(rb.x[2]), chance, criterion, xs.min(), xs.max()
        )[0]
    return boots


def audiogram_thresholds(
    records: Sequence[dict],
    *,
    criterion: float = 0.75,
    frequency_key: str = "frequency_hz",
    level_key: str = "level_value",
    min_items: int = 1,
    group_key: str | None = None,
    min_groups: int = 1,
) -> dict[float, float | None]:
    """A model audiogram: per frequency, the lowest level whose accuracy reaches ``criterion``.

    Parameters
    ----------
    records : sequence of dict
        One per answer, with ``frequency_key`` (Hz), ``level_key`` (dB HL) and ``correct``
        (an answer that is not ``status == "ok"`` counts as wrong).
    criterion : float in (0, 1)
        Accuracy a level must reach (``>=``) to count as heard.
    frequency_key, level_key : str
        Record keys holding the frequency in Hz and the level in dB HL.
    min_items : int >= 1
        Distinct items (record ``id``; each record counts as one item without ids) a
        frequency-level cell needs before it can pass: with one item asked under four
        rotations, a random model passes ~5 % of cells by luck.
    group_key : str, optional
        With it, a cell's accuracy is the mean of its groups' accuracies (balanced accuracy,
        e.g. over the tone positions) and the cell needs ``min_groups`` distinct groups.

    Returns
    -------
    dict
        ``{frequency_hz: threshold_db_hl}``, frequencies ascending; ``None`` where no
        tested level reached the criterion. The rule takes the lowest passing level even if
        a louder level failed (no monotonicity is imposed).

    Examples
    --------
    >>> recs = [dict(frequency_hz=1000, level_value=lv, correct=lv >= 20) for lv in (0, 10, 20, 30)]
    >>> audiogram_thresholds(recs)
    {1000.0: 20.0}
    """
    if not 0.0 < criterion < 1.0:
        raise ParameterError(f"criterion={criterion!r} is out of range; allowed: 0 < criterion < 1")
    if len(records) == 0:
        raise ParameterError("records is empty; allowed: at least one record")
    out: dict[float, float | None] = {}
    for f, lv, accuracy, n_items, n_groups in _cells(records, frequency_key, level_key, group_key):
        out.setdefault(f, None)
        if out[f] is None and accuracy >= criterion and n_items >= min_items and n_groups >= min_groups:
            out[f] = lv
    return out


def _cells(records, frequency_key: str, level_key: str, group_key: str | None):
    """``(frequency, level, accuracy, distinct items, distinct groups)`` per cell, by frequency then level;
    the accuracy is the mean of the groups' accuracies (one group without ``group_key``)."""
    try:
        freq = np.asarray([float(r[frequency_key]) for r in records])
        level = np.asarray([float(r[level_key]) for r in records])
        ok = np.asarray([bool(r["correct"]) and r.get("status", "ok") == "ok" for r in records])
    except KeyError as err:
        raise ParameterError(
            f"a record has no {err.args[0]!r}; required keys: {frequency_key}, {level_key}, correct"
        ) from None
    pairs, code = np.unique(np.stack([freq, level], axis=1), axis=0, return_inverse=True)
    code = code.ravel()
    ids = [r.get("id", i) for i, r in enumerate(records)]
    groups = [r.get(group_key) for r in records] if group_key else [None] * len(records)
    cells = []
    for c, (f, lv) in enumerate(pairs):
        idx = np.flatnonzero(code == c)
        by_group: dict = {}
        for i in idx:
            by_group.setdefault(groups[i], []).append(ok[i])
        accuracy = float(np.mean([np.mean(v) for v in by_group.values()]))
        cells.append((float(f), float(lv), accuracy, len({ids[i] for i in idx}), len(by_group)))
    return cells
