"""The adaptive procedure on simulated observers: coverage, bias, and trials against a fixed grid.

:func:`adaptive_runs` runs ``n_runs`` QUEST+ tracks against one :class:`~.observers.SimulatedObserver`
(run ``r`` seeded ``(seed, r)``) and summarises them: share of 95 % intervals covering the true
threshold, median bias of ``log10(estimate / truth)``, median trials and interval ratio.
:func:`grid_runs` does the same for the fixed-grid method -- ``n_per_level`` trials at each
positive grid value, fitted by :func:`~auralgen.evaluation.psychometrics.fit_psychometric` with its
bootstrap interval -- and :func:`trials_ratio` finds how many grid trials reach the interval
ratio the adaptive runs reached, and divides by the adaptive trials. :func:`design_bound` is the
ceiling of that factor: the grid's asymptotic variance of the criterion threshold over the variance
of the best allocation of trials over the adaptive stimuli, chosen knowing the true observer.
:func:`knowing_placement` is a reference at the budget a track really has: the factor of tracks
with QUEST+'s posterior, interval and stop rule whose every trial is placed *knowing* the observer
(where the posterior variance of the criterion threshold is expected to shrink most, the expectation
taken over the true observer's answers). It is not a bound: a greedy placement, one trial ahead.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.optimize import minimize

from ..psychometrics import fit_psychometric
from .observers import SimulatedObserver
from .quest import QuestPlusProcedure, QuestSettings
from .session import Budget, run_track, track_summary

__all__ = ["adaptive_runs", "knowing_placement", "design_bound", "grid_runs", "trials_ratio"]


def adaptive_runs(observer: SimulatedObserver, settings: QuestSettings, *, n_runs: int, seed: int = 0) -> dict:
    """Summary of ``n_runs`` adaptive tracks against ``observer`` (see the module docstring).

    The truth is the observer's ``true_threshold`` (a :class:`~.observers.FailingObserver`'s) or its
    ``threshold``; where it is ``inf`` (an observer with no threshold) a run is covered when it reports none.
    Runs ``2k`` and ``2k + 1`` are a test-retest pair (two seeds, one observer): ``retest_agree`` is the
    share of pairs whose 95 % intervals overlap, ``retest_log10_median`` the median ``|log10|`` ratio of
    their thresholds. ``no_threshold`` counts why runs reported none.

    Parameters
    ----------
    observer : SimulatedObserver
        The simulated observer (its true threshold, slope, lapse and guess rate).
    settings : QuestSettings
        The procedure's grids and stop rule.
    n_runs : int
        Tracks to run (run ``r`` seeded from ``(seed, r)``).
    seed : int, optional
        The base seed.

    Returns
    -------
    dict
        ``coverage``, ``bias_log10_median``, ``trials_median``, ``ci_ratio_median``, ``retest_agree``, ...
    """
    truth = getattr(observer, "true_threshold", observer.threshold)
    covered, bias, trials, asked, ratios, numbers, reasons, ests = [], [], [], [], [], 0, {}, []
    for r in range(n_runs):
        obs = replace(observer, seed=int(np.random.SeedSequence([seed, r]).generate_state(1)[0]))
        summary, est = _simulated_track(obs, settings)
        low, high = (math.inf, math.inf) if summary["threshold"] is None else est.ci95
        covered.append(summary["threshold"] is None if math.isinf(truth) else low <= truth <= high)
        trials.append(est.n_trials)
        asked.append(summary["questions"]["asked"])
        ests.append((summary["threshold"], low, high))
        if summary["threshold"] is None:
            key = summary.get("status") if summary.get("status") != "ok" else "none"
            reasons[key] = reasons.get(key, 0) + 1
        elif math.isfinite(truth):
            numbers += 1
            bias.append(math.log10(est.threshold / truth))
            ratios.append(high / low if math.isfinite(high) and low > 0 else math.inf)
    return {
        "threshold": truth,
        "slope": observer.slope,
        "lapse": observer.lapse,
        "chance": observer.chance,
        "runs": n_runs,
        "coverage": float(np.mean(covered)),
        "n_covered": int(np.sum(covered)),
        "finite": numbers,
        "bias_log10_median": float(np.median(bias)) if bias else math.nan,
        "bias_ratio_median": float(10 ** np.median(bias)) if bias else math.nan,
        "trials_median": float(np.median(trials)),
        "trials_mean": float(np.mean(trials)),
        "questions_median": float(np.median(asked)),
        "ci_ratio_median": float(np.median(ratios)) if ratios else math.inf,
        "no_threshold": reasons,
        **_retest(ests),
    }


def _simulated_track(obs: SimulatedObserver, settings: QuestSettings):
    """``(track_summary, estimate)`` of one QUEST+ track answered by ``obs``."""
    proc = QuestPlusProcedure(obs.domain, chance=obs.chance, settings=settings)
    result = run_track("sim", proc, obs.respond, budget=Budget.of(settings))
    return track_summary(result), proc.estimate()


def _retest(ests: list[tuple]) -> dict:
    """Test-retest of consecutive pairs of runs (see :func:`adaptive_runs`)."""
    pairs = [(a, b) for a, b in zip(ests[0::2], ests[1::2]) if a[0] is not None and b[0] is not None]
    if not pairs:
        return {"retest_pairs": 0, "retest_agree": math.nan, "retest_log10_median": math.nan}
    agree = [a[1] <= b[2] and b[1] <= a[2] for a, b in pairs]
    logs = [abs(math.log10(a[0] / b[0])) for a, b in pairs]
    return {
        "retest_pairs": len(pairs),
        "retest_agree": float(np.mean(agree)),
        "retest_log10_median": float(np.median(logs)),
    }


def grid_runs(
    observer: SimulatedObserver,
    grid,
    n_per_level: int,
    *,
    n_runs: int,
    max_lapse: float,
    n_boot: int = 100,
    seed: int = 0,
) -> dict:
    """Summary of ``n_runs`` fixed-grid measurements of ``observer`` (``n_per_level`` trials per value of ``grid``).

    Parameters
    ----------
    observer : SimulatedObserver
        The simulated observer (its true threshold, slope, lapse and guess rate).
    grid : sequence of float
        The level values (the observer's unit); values <= 0 are left out.
    n_per_level : int
        Trials per positive grid value.
    n_runs : int
        Measurements to simulate (run ``r`` seeded from ``(seed, r, 1)``).
    max_lapse : float
        Largest lapse rate the fit may use (:func:`~auralgen.evaluation.psychometrics.fit_psychometric`).
    n_boot : int, optional
        Bootstrap resamples of each fit's interval.
    seed : int, optional
        The base seed.

    Returns
    -------
    dict
        ``n_per_level``, ``trials`` (per measurement), ``runs``, ``ci_ratio_median`` (median 95 %
        interval high / low) and ``coverage`` (share of intervals holding the true threshold).
    """
    grid = np.asarray([v for v in grid if v > 0], dtype=float)
    n = np.full(grid.size, int(n_per_level))
    p = np.array([observer.p_correct(v) for v in grid])
    ratios, covered = [], []
    for r in range(n_runs):
        rng = np.random.default_rng([seed, r, 1])
        k = rng.binomial(n, p)
        fit = fit_psychometric(
            grid, k, n, chance=observer.chance, criterion=observer.criterion, max_lapse=max_lapse, n_boot=n_boot
        )
        ok = math.isfinite(fit.ci_high) and fit.ci_low > 0
        ratios.append(fit.ci_high / fit.ci_low if ok else math.inf)
        covered.append(fit.ci_low <= observer.threshold <= fit.ci_high)
    return {
        "n_per_level": int(n_per_level),
        "trials": int(n.sum()),
        "runs": n_runs,
        "ci_ratio_median": float(np.median(ratios)),
        "coverage": float(np.mean(covered)),
    }


def trials_ratio(adaptive: dict, grid_table: list[dict]) -> dict:
    """Grid trials needed to reach the adaptive median interval ratio, over the adaptive median trials.

    Each grid row ``(N, r)`` predicts the trials for the target ratio ``R`` by the ``1/sqrt(N)``
    law of an interval's log-width: ``N * (log r / log R) ** 2``; the estimate is the prediction of
    the row nearest the target (a row on each side of it brackets the estimate).

    Parameters
    ----------
    adaptive : dict
        An :func:`adaptive_runs` summary (``ci_ratio_median``, ``trials_median``).
    grid_table : list of dict
        :func:`grid_runs` summaries at several ``n_per_level``.

    Returns
    -------
    dict
        ``target_ci_ratio``, ``grid_trials`` (predicted), ``factor`` (grid over adaptive trials) and
        ``from_row`` (the ``n_per_level`` used); ``grid_trials`` and ``factor`` None when no row or
        target is usable.
    """
    target = adaptive["ci_ratio_median"]
    rows = [g for g in grid_table if math.isfinite(g["ci_ratio_median"]) and g["ci_ratio_median"] > 1]
    if not rows or not math.isfinite(target) or target <= 1:
        return {"target_ci_ratio": target, "grid_trials": None, "factor": None}
    near = min(rows, key=lambda g: abs(math.log(math.log(g["ci_ratio_median"]) / math.log(target))))
    needed = near["trials"] * (math.log(near["ci_ratio_median"]) / math.log(target)) ** 2
    return {
        "target_ci_ratio": target,
        "grid_trials": needed,
        "factor": needed / adaptive["trials_median"],
        "from_row": near["n_per_level"],
    }


def _p_at(observer: SimulatedObserver, values, theta) -> np.ndarray:
    """``observer``'s accuracy at ``values`` with ``theta = (u_c, slope, lapse)`` in place of its own
    (``u_c``: the criterion threshold on the domain's axis)."""
    u_c, slope, lapse = theta
    obs = replace(observer, threshold=observer.domain.to_value(u_c), slope=slope, lapse=lapse)
    return np.array([obs.p_correct(v) for v in values])


def _fisher(observer: SimulatedObserver, values, free) -> np.ndarray:
    """Per-trial Fisher information ``[len(values), k, k]`` of a correct/incorrect answer at each value
    about ``(u_c, slope, lapse)[free]`` (central differences, step 1e-5 of each parameter's size)."""
    theta = np.array([observer.domain.to_axis(observer.threshold), observer.slope, observer.lapse])
    grads = []
    for k in free:
        h = np.zeros(3)
        h[k] = 1e-5 * max(1.0, abs(theta[k]))
        grads.append((_p_at(observer, values, theta + h) - _p_at(observer, values, theta - h)) / (2 * h[k]))
    g = np.stack(grads, axis=1)
    p = np.clip(_p_at(observer, values, theta), 1e-12, 1 - 1e-12)
    return g[:, :, None] * g[:, None, :] / (p * (1 - p))[:, None, None]


def _threshold_variance(weights, info) -> float:
    """Asymptotic variance (axis units squared, per trial) of ``u_c`` under the allocation ``weights``
    (a ridge of 1e-10 of ``M``'s mean diagonal keeps a near-singular ``M`` invertible: the best
    allocation for one quantity is often singular; ``inf`` where ``M`` carries no information)."""
    m = np.einsum("n,nij->ij", weights, info)
    scale = float(np.trace(m)) / m.shape[0]
    if not scale > 0:
        return math.inf
    var = float(np.linalg.inv(m + 1e-10 * scale * np.eye(m.shape[0]))[0, 0])
    return var if 0 < var < 1e12 else math.inf


def design_bound(observer: SimulatedObserver, grid, stimuli, *, lapse_free: bool = True) -> dict:
    """How many times fewer trials than the grid any procedure could need, knowing the true observer.

    Per trial, the asymptotic variance of the criterion threshold ``u_c`` (maximum likelihood, slope
    free, lapse free or known) is ``inv(M)[0, 0]`` with ``M`` the Fisher information averaged over the
    trials' values. For the grid (equal trials at each positive value of ``grid``) it is fixed; the best
    allocation over ``stimuli`` (a c-optimal design: weights found by L-BFGS from equal weights) is the
    least any placement can reach -- an adaptive procedure, which must first find the threshold, needs
    more. ``factor`` = grid variance / best variance, the trials ratio at equal interval width.
    Asymptotic, so at a true lapse of 0 (a bound of its prior) a free lapse is not a regular parameter:
    then ``factor`` is ``None`` and ``why`` says so.

    Parameters
    ----------
    observer : SimulatedObserver
        The simulated observer (its true threshold, slope, lapse and guess rate).
    grid : sequence of float
        The fixed grid's level values; values <= 0 are left out.
    stimuli : sequence of float
        The values an adaptive procedure may place trials at.
    lapse_free : bool, optional
        Whether the lapse rate is estimated (else known).

    Returns
    -------
    dict
        ``grid_var`` and ``best_var`` (per-trial variance of ``u_c``, axis units squared), ``factor``,
        ``weights`` (the best allocation's share of trials per value of ``stimuli``); or these None and
        ``why``.
    """
    if lapse_free and observer.lapse <= 0:
        return {
            "grid_var": None,
            "best_var": None,
            "factor": None,
            "weights": None,
            "why": "lapse 0 is a bound of the lapse's range: the asymptotics of a free lapse do not hold",
        }
    free = (0, 1, 2) if lapse_free else (0, 1)
    grid = [v for v in grid if v > 0]
    grid_var = _threshold_variance(np.full(len(grid), 1.0 / len(grid)), _fisher(observer, grid, free))
    info = _fisher(observer, stimuli, free)

    def objective(z):
        w = np.exp(z - z.max())
        return math.log(min(_threshold_variance(w / w.sum(), info), 1e12))

    fit = minimize(objective, np.zeros(len(stimuli)), method="L-BFGS-B")
    equal = np.full(len(stimuli), 1.0 / len(stimuli))
    best = np.exp(fit.x - fit.x.max())
    best = best / best.sum() if math.exp(fit.fun) <= _threshold_variance(equal, info) else equal
    best_var = _threshold_variance(best, info)
    return {"grid_var": grid_var, "best_var": best_var, "factor": grid_var / best_var, "weights": best.tolist()}


class _KnowingProcedure(QuestPlusProcedure):
    """QUEST+'s posterior, interval and stop rule, each trial placed knowing ``observer``: at the stimulus
    whose answer, drawn from the observer's true accuracy there, leaves the least expected posterior
    variance of ``u_c`` (a ``u_c`` past the threshold grid, or ``inf``, counts one grid step past its end)."""

    def __init__(self, observer: SimulatedObserver, settings: QuestSettings):
        super().__init__(observer.domain, chance=observer.chance, settings=settings)
        values = [observer.domain.to_value(float(u)) for u in self.stimuli]
        self._p_true = np.array([observer.p_correct(v) for v in values])
        step = float(self.thresholds[1] - self.thresholds[0])
        self._u_clip = np.clip(self._u_crit.ravel(), self.thresholds[0], self.thresholds[-1] + step)

    def next_level(self) -> float:
        expected = np.zeros(self.stimuli.size)
        for like, p in ((self._p_correct, self._p_true), (1.0 - self._p_correct, 1.0 - self._p_true)):
            new = self._post * like
            new /= new.sum(axis=1)[:, None]
            mean = new @ self._u_clip
            expected += p * (new @ self._u_clip**2 - mean**2)
        return self.domain.to_value(float(self.stimuli[int(np.argmin(expected))]))


class _AllocatedProcedure(QuestPlusProcedure):
    """QUEST+'s posterior, interval and stop rule, trials placed by a fixed allocation ``weights`` over the
    stimuli (trial ``n`` at the value furthest below its share ``(n + 1) * w``; the first of equals)."""

    def __init__(self, observer: SimulatedObserver, settings: QuestSettings, weights):
        super().__init__(observer.domain, chance=observer.chance, settings=settings)
        self._weights = np.asarray(weights, dtype=float) / float(np.sum(weights))
        self._counts = np.zeros(self.stimuli.size)

    def next_level(self) -> float:
        k = int(np.argmax((self._counts.sum() + 1) * self._weights - self._counts))
        self._counts[k] += 1
        return self.domain.to_value(float(self.stimuli[k]))


def knowing_placement(
    observer: SimulatedObserver,
    settings: QuestSettings,
    grid_table: list[dict],
    *,
    n_runs: int,
    seed: int = 0,
    weights=None,
) -> dict:
    """The trials factor of tracks that place every trial knowing the observer, at the same budget (a reference).

    :func:`design_bound` is asymptotic: its best allocation may put nearly every trial at the unknown
    threshold (for a steep observer without lapses, 98 % at one value), a design that cannot tell the
    slope and so leaves a posterior interval wide at any budget a track has. Here each of ``n_runs``
    tracks keeps QUEST+'s posterior, 95 % interval and stop rule (``settings``) and places each trial
    knowing the observer (``_KnowingProcedure``); the factor is read against ``grid_table`` as for the
    adaptive runs (:func:`trials_ratio`). It is a reference at the budget, not a bound: a greedy
    placement, one trial ahead, which does not learn a lapse it must estimate (QUEST+ beats it on a
    shallow, lapsing observer).

    Parameters
    ----------
    observer : SimulatedObserver
        The simulated observer (its true threshold, slope, lapse and guess rate).
    settings : QuestSettings
        The procedure's grids and stop rule.
    grid_table : list of dict
        :func:`grid_runs` summaries at several ``n_per_level``.
    n_runs : int
        Tracks to run (run ``r`` seeded from ``(seed, r)``, as :func:`adaptive_runs`).
    seed : int, optional
        The base seed.
    weights : sequence of float, optional
        Place the trials by this fixed allocation over the stimuli instead (e.g. :func:`design_bound`'s
        ``weights``: the asymptotic bound's own design, run at the budget).

    Returns
    -------
    dict
        ``trials_median``, ``ci_ratio_median``, ``coverage`` and :func:`trials_ratio`'s keys (``factor``).
    """
    trials, ratios, covered = [], [], []
    for r in range(n_runs):
        obs = replace(observer, seed=int(np.random.SeedSequence([seed, r]).generate_state(1)[0]))
        proc = _KnowingProcedure(obs, settings) if weights is None else _AllocatedProcedure(obs, settings, weights)
        run_track("knowing", proc, obs.respond, budget=Budget.of(settings))
        est = proc.estimate()
        low, high = est.ci95
        trials.append(est.n_trials)
        ratios.append(high / low if math.isfinite(high) and low > 0 else math.inf)
        covered.append(low <= observer.threshold <= high)
    summary = {
        "trials_median": float(np.median(trials)),
        "ci_ratio_median": float(np.median(ratios)),
        "coverage": float(np.mean(covered)),
    }
    return {**summary, **trials_ratio(summary, grid_table)}
