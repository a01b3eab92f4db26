"""QUEST+ over a task's level domain: the :class:`~auralgen.evaluation.procedure.Procedure` of mode=adaptive.

The model, prior and likelihood table are the ``questplus`` package's (Watson 2017,
"QUEST+: a general multidimensional Bayesian adaptive psychometric method", J. Vision 17(3):10;
``questplus`` 2023.1 by R. Hoechenberger, the implementation PsychoPy uses); the Bayesian update and
the stimulus placement (its ``min_entropy`` rule: least expected entropy of the whole posterior) are
its ``update`` and ``next_stim`` computed the same way on plain arrays -- the same values bit for bit,
several times faster than its labelled arrays. The model is its
log10-Weibull on the domain's axis ``u`` (larger = easier, see :mod:`.domain`)::

    p(u) = 1 - lapse - (1 - guess - lapse) * exp(-10 ** (slope * (u - t)))

which on a log domain is the Weibull of :func:`auralgen.evaluation.psychometrics.weibull` with
``scale = 10**t`` and the same ``slope``. ``guess`` is fixed at ``1 / n_choices`` (the task's
answerable options); ``t``, ``slope`` and ``lapse`` are free over a grid: ``t`` over the domain
widened by ``margin`` of its span on each side (so a threshold beyond the tested range is
representable), ``slope`` and ``lapse`` over small lists.

The reported threshold is the value where ``p`` reaches ``criterion`` (as in the fixed-grid fit):
per grid cell ``u_c = t + log10(-ln((1 - lapse - c) / (1 - guess - lapse))) / slope``; the estimate
is the posterior median of ``u_c`` and its 95 % interval the 2.5 and 97.5 % posterior quantiles.
Status: ``"beyond_range"`` when the posterior puts more than half its mass on ``u_c`` easier than
the domain's easiest value -- **no threshold within the tested range**: ``threshold`` is
``inf``, never a number (a model at chance ends here); ``"below_range"`` when the median is harder
than the domain's hardest value (read it as an upper bound); ``"ok"`` otherwise.

Stop rule (:meth:`QuestPlusProcedure.done`): at ``max_trials``, or from ``min_trials`` on when the
interval is narrow enough -- ``high / low <= ci_ratio`` on a log domain, ``high - low <= ci_width``
on a linear one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError

from ..procedure import ThresholdEstimate
from .domain import LevelDomain

__all__ = ["QuestPlusProcedure", "QuestSettings"]

NO_THRESHOLD = "no threshold within the tested range"
THRESHOLD_DEFINITION = (
    "posterior median of the value at which the observer's Weibull reaches the criterion; slope_mean, "
    "lapse_mean and scale_median are marginal summaries, not one curve through it"
)


@dataclass(frozen=True)
class QuestSettings:
    """Grids and stop rule of :class:`QuestPlusProcedure` (``conf/adaptive/default.yaml``)."""

    n_levels: int = 41  # stimulus values tried (evenly spaced on the axis)
    n_thresholds: int = 61  # threshold grid points
    margin: float = 0.5  # threshold grid: the domain widened by this share of its span on each side
    slopes: tuple = (0.5, 0.8, 1.25, 2.0, 3.2, 5.0, 8.0)  # per decade (log) or per domain span (lin)
    # lapse rates in steps of 0.01: with (0, 0.02, 0.05) a 0.04 lapser's interval covered it in 84 % of runs
    lapses: tuple = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06)
    criterion: float = 0.75
    ci_ratio: float = 2.0  # log domain: stop when the 95 % interval's high / low is at most this
    ci_width: float = 10.0  # lin domain (the audiogram, dB HL): stop when high - low is at most this; 0 = budget only
    min_trials: int = 12  # no stop on the interval before this many answered trials
    max_trials: int = 100  # trial budget per track (answered trials)
    max_questions: int = 0  # the whole run (every track, answered or not): stop asking after this many; 0 = no cap

    def check(self, key: str = "adaptive") -> None:
        """Refuse a setting out of range (one line naming it and what is allowed).

        Parameters
        ----------
        key : str, optional
            The config key of these settings, named in the error.

        Raises
        ------
        ParameterError
            The first setting out of range.
        """
        rules = [
            (self.n_levels >= 3, f"{key}.n_levels={self.n_levels!r}; allowed: >= 3"),
            (self.n_thresholds >= 3, f"{key}.n_thresholds={self.n_thresholds!r}; allowed: >= 3"),
            (self.margin >= 0, f"{key}.margin={self.margin!r}; allowed: >= 0"),
            (
                len(self.slopes) > 0 and all(s > 0 for s in self.slopes),
                f"{key}.slopes={list(self.slopes)!r}; allowed: positive numbers",
            ),
            (
                len(self.lapses) > 0 and all(0 <= v < 0.5 for v in self.lapses),
                f"{key}.lapses={list(self.lapses)!r}; allowed: numbers in [0, 0.5)",
            ),
            (0 < self.criterion < 1, f"{key}.criterion={self.criterion!r}; allowed: 0 < criterion < 1"),
            (self.ci_ratio > 1, f"{key}.ci_ratio={self.ci_ratio!r}; allowed: > 1"),
            (self.ci_width >= 0, f"{key}.ci_width={self.ci_width!r}; allowed: >= 0"),
            (self.max_questions >= 0, f"{key}.max_questions={self.max_questions!r}; allowed: 0 (no cap) or >= 1"),
            (
                1 <= self.min_trials <= self.max_trials,
                f"{key}.min_trials={self.min_trials!r}, max_trials={self.max_trials!r}; "
                "allowed: 1 <= min_trials <= max_trials",
            ),
        ]
        for ok, message in rules:
            if not ok:
                raise ParameterError(message)


def _questplus():
    try:
        import questplus
    except ImportError:
        raise ParameterError(
            "mode=adaptive needs the questplus package, which is absent; allowed: pip install 'auralgen[adaptive]'"
        ) from None
    return questplus


class QuestPlusProcedure:
    """QUEST+ on ``domain`` for a task with guess rate ``chance`` (see the module docstring).

    Examples
    --------
    >>> from auralgen.evaluation.adaptive.domain import LevelDomain
    >>> qp = QuestPlusProcedure(LevelDomain(5.0, 1200.0, "cents"), chance=1 / 3)
    >>> v = qp.next_level(); 5.0 <= v <= 1200.0
    True
    """

    def __init__(self, domain: LevelDomain, *, chance: float, settings: QuestSettings | None = None):
        settings = settings or QuestSettings()
        settings.check()
        if not 0 <= chance < settings.criterion:
            raise ParameterError(f"chance={chance!r}; allowed: 0 <= chance < criterion ({settings.criterion})")
        self.domain, self.chance, self.settings = domain, float(chance), settings
        self.stimuli = domain.axis(settings.n_levels)
        u0, u1 = float(self.stimuli[0]), float(self.stimuli[-1])
        pad = settings.margin * (u1 - u0)
        self.thresholds = np.linspace(u0 - pad, u1 + pad, settings.n_thresholds)
        per = 1.0 if domain.scale == "log" else 1.0 / (u1 - u0)
        self.slopes = np.asarray(settings.slopes, dtype=float) * per
        self.lapses = np.asarray(settings.lapses, dtype=float)
        self._qp = _questplus().QuestPlus(
            stim_domain={"intensity": self.stimuli},
            param_domain={
                "threshold": self.thresholds,
                "slope": self.slopes,
                "lower_asymptote": np.array([self.chance]),
                "lapse_rate": self.lapses,
            },
            outcome_domain={"response": ["Correct", "Incorrect"]},
            func="weibull",
            stim_scale="log10",
            stim_selection_method="min_entropy",
        )
        self._u_crit = self._criterion_axis()
        self._order = np.argsort(self._u_crit.ravel(), kind="stable")  # fixed: only the weights change
        dims = ("intensity", *self._qp.param_domain.keys())
        like = self._qp.likelihoods.sel(response="Correct").transpose(*dims).values
        self._p_correct = np.asarray(like, dtype=float).reshape(self.stimuli.size, -1)  # [stimulus, cell]
        self._post = np.asarray(self._qp.posterior.values, dtype=float).ravel().copy()  # the prior, then each update
        self.n_trials = 0

    def _criterion_axis(self) -> np.ndarray:
        """``u_c`` per (threshold, slope, lapse) cell; ``inf`` where the asymptote stays below the criterion."""
        t, b, d = np.meshgrid(self.thresholds, self.slopes, self.lapses, indexing="ij")
        c = self.settings.criterion
        q = (1.0 - d - c) / (1.0 - self.chance - d)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = t + np.log10(-np.log(q)) / b
        return np.where(q > 0, u, np.inf)

    # -- Procedure --------------------------------------------------------------------------
    def next_level(self) -> float:
        """The value (level unit) of least expected posterior entropy after the next trial (``questplus``'s rule).

        Returns
        -------
        float
            One of the stimulus grid's values, in the domain's unit.
        """
        return self.domain.to_value(float(self.stimuli[self._least_expected_entropy()]))

    def _least_expected_entropy(self) -> int:
        """Index of the stimulus of least expected posterior entropy: ``questplus``'s ``min_entropy`` rule
        (its ``next_stim``), computed the same way on plain arrays (``0 * log 0`` counts 0; the first of equals)."""
        post = self._post
        expected = np.zeros(self.stimuli.size)
        for like in (self._p_correct, 1.0 - self._p_correct):
            new = post * like
            pk = new.sum(axis=1)
            new /= pk[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                h = -np.nansum(new * np.log(new), axis=1)
            expected += pk * h
        return int(np.argmin(expected))

    def update(self, level: float, correct: bool) -> None:
        """Record the outcome at ``level`` (snapped to the nearest stimulus of the grid).

        Parameters
        ----------
        level : float
            The value asked, in the domain's unit.
        correct : bool
            Whether the answer was right.
        """
        k = int(np.argmin(np.abs(self.stimuli - self.domain.to_axis(level))))
        self._post = self._post * (self._p_correct[k] if correct else 1.0 - self._p_correct[k])
        self._post /= self._post.sum()
        self.n_trials += 1

    def done(self) -> bool:
        """Whether the stop rule holds (see the module docstring).

        Returns
        -------
        bool
            True at ``max_trials``, or from ``min_trials`` on once the 95 % interval is narrow enough.
        """
        if self.n_trials >= self.settings.max_trials:
            return True
        if self.n_trials < self.settings.min_trials:
            return False
        est = self.estimate()
        low, high = est.ci95
        if not (math.isfinite(low) and math.isfinite(high)):
            return False
        if self.domain.scale == "log":
            return high / low <= self.settings.ci_ratio
        return self.settings.ci_width > 0 and high - low <= self.settings.ci_width

    def estimate(self) -> ThresholdEstimate:
        """Posterior median and 95 % interval of the criterion threshold (see the module docstring).

        Returns
        -------
        ThresholdEstimate
            Threshold and interval in the domain's unit (``inf`` when beyond the range); ``posterior``
            holds ``status``, ``slope_mean``, ``lapse_mean``, ``scale_median`` and the domain.
        """
        post = self._post.reshape(self._u_crit.shape)
        u, w = self._u_crit.ravel(), post.ravel()
        q025, q50, q975 = _weighted_quantiles(u, w, (0.025, 0.5, 0.975), order=self._order)
        easy_u = self.domain.to_axis(self.domain.easy_value())
        hard_u = self.domain.to_axis(self.domain.hard_value())
        p_beyond = float(w[u > easy_u].sum() / w.sum())
        status = "beyond_range" if p_beyond > 0.5 else ("below_range" if q50 < hard_u else "ok")
        ends = sorted((self._value(q025), self._value(q975)))
        summary = {
            "status": status,
            "criterion": self.settings.criterion,
            "guess": self.chance,
            "p_beyond_range": round(p_beyond, 4),
            "domain": self.domain.to_dict(),
            "slope_mean": float(np.sum(post.sum(axis=(0, 2)) * self.slopes)),
            "lapse_mean": float(np.sum(post.sum(axis=(0, 1)) * self.lapses)),
            "scale_median": self._value(_weighted_quantiles(np.repeat(self.thresholds, post[0].size), w, (0.5,))[0]),
            "threshold_definition": THRESHOLD_DEFINITION,
        }
        if status == "beyond_range":
            summary["message"] = NO_THRESHOLD
            return ThresholdEstimate(
                math.inf, (min(ends[0], self.domain.easy_value()), math.inf), self.n_trials, summary
            )
        return ThresholdEstimate(self._value(q50), (ends[0], ends[1]), self.n_trials, summary)

    def marginal(self) -> dict:
        """The posterior of the criterion threshold on a coarse value grid (for reports and plots).

        Returns
        -------
        dict
            ``value``: 40 bin centres in the domain's unit; ``mass``: the posterior mass of each (sums to 1).
        """
        post = self._post
        edges = np.linspace(self.thresholds[0], self.thresholds[-1], 41)
        mass, _ = np.histogram(np.clip(self._u_crit.ravel(), edges[0], edges[-1]), bins=edges, weights=post)
        mids = (edges[:-1] + edges[1:]) / 2
        return {"value": [round(self._value(m), 6) for m in mids], "mass": [round(float(m), 6) for m in mass]}

    def _value(self, u: float) -> float:
        return math.inf if not math.isfinite(u) else float(self.domain.to_value(u))


def _weighted_quantiles(x: np.ndarray, w: np.ndarray, qs, *, order=None) -> list[float]:
    """Quantiles ``qs`` of the distribution putting mass ``w`` on ``x`` (linear between mid-masses;
    ``inf`` where the quantile falls in the mass at ``x = inf``); ``order`` sorts ``x`` if known."""
    order = np.argsort(x, kind="stable") if order is None else order
    xs, ws = x[order], w[order] / w.sum()
    finite = np.isfinite(xs)
    xf, wf = xs[finite], ws[finite]
    cdf = np.cumsum(wf) - wf / 2
    top = float(wf.sum())
    return [math.inf if (q > top or xf.size == 0) else float(np.interp(q, cdf, xf)) for q in qs]
