"""The adaptive procedure on simulated observers: coverage, bias, and trials against a fixed grid.

:func:`adaptive_runs` runs ``n_runs`` QUEST+ tracks against one :class:`~.observers.SimulatedObserver`
(run ``r`` seeded ``(seed, r)``) and summarises them: share of 95 % intervals covering the true
threshold, median bias of ``log10(estimate / truth)``, median trials and interval ratio.
:func:`grid_runs` does the same for the fixed-grid method -- ``n_per_level`` trials at each
positive grid value, fitted by :func:`~auralgen.evaluation.psychometrics.fit_psychometric` with its
bootstrap interval -- and :func:`trials_ratio` finds how many grid trials reach the interval
ratio the adaptive runs reached, and divides by the adaptive trials.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..psychometrics import fit_psychometric
from .observers import SimulatedObserver
from .quest import QuestPlusProcedure, QuestSettings
from .session import run_track

__all__ = ["adaptive_runs", "grid_runs", "trials_ratio"]


def adaptive_runs(observer: SimulatedObserver, settings: QuestSettings, *, n_runs: int, seed: int = 0) -> dict:
    """Summary of ``n_runs`` adaptive tracks against ``observer`` (see the module docstring)."""
    covered, bias, trials, ratios, numbers = [], [], [], [], 0
    for r in range(n_runs):
        obs = replace(observer, seed=int(np.random.SeedSequence([seed, r]).generate_state(1)[0]))
        proc = QuestPlusProcedure(obs.domain, chance=obs.chance, settings=settings)
        est = run_track("sim", proc, obs.respond).procedure.estimate()
        low, high = est.ci95
        covered.append(low <= observer.threshold <= high)
        trials.append(est.n_trials)
        if math.isfinite(est.threshold):
            numbers += 1
            bias.append(math.log10(est.threshold / observer.threshold))
            ratios.append(high / low if math.isfinite(high) and low > 0 else math.inf)
    return {
        "threshold": observer.threshold, "slope": observer.slope, "lapse": observer.lapse, "chance": observer.chance,
        "runs": n_runs, "coverage": float(np.mean(covered)), "n_covered": int(np.sum(covered)),
        "finite": numbers, "bias_log10_median": float(np.median(bias)) if bias else math.nan,
        "bias_ratio_median": float(10 ** np.median(bias)) if bias else math.nan,
        "trials_median": float(np.median(trials)), "trials_mean": float(np.mean(trials)),
        "ci_ratio_median": float(np.median(ratios)) if ratios else math.inf,
    }  # fmt: skip


def grid_runs(observer: SimulatedObserver, grid, n_per_level: int, *, n_runs: int, max_lapse: float,
              n_boot: int = 100, seed: int = 0) -> dict:  # fmt: skip
    """Summary of ``n_runs`` fixed-grid measurements of ``observer`` (``n_per_level`` trials per value of ``grid``)."""
    grid = np.asarray([v for v in grid if v > 0], dtype=float)
    n = np.full(grid.size, int(n_per_level))
    p = np.array([observer.p_correct(v) for v in grid])
    ratios, covered = [], []
    for r in range(n_runs):
        rng = np.random.default_rng([seed, r, 1])
        k = rng.binomial(n, p)
        fit = fit_psychometric(grid, k, n, chance=observer.chance, criterion=observer.criterion,
                               max_lapse=max_lapse, n_boot=n_boot)  # fmt: skip
        ok = math.isfinite(fit.ci_high) and fit.ci_low > 0
        ratios.append(fit.ci_high / fit.ci_low if ok else math.inf)
        covered.append(fit.ci_low <= observer.threshold <= fit.ci_high)
    return {
        "n_per_level": int(n_per_level), "trials": int(n.sum()), "runs": n_runs,
        "ci_ratio_median": float(np.median(ratios)), "coverage": float(np.mean(covered)),
    }  # fmt: skip


def trials_ratio(adaptive: dict, grid_table: list[dict]) -> dict:
    """Grid trials needed to reach the adaptive median interval ratio, over the adaptive median trials.

    Each grid row ``(N, r)`` predicts the trials for the target ratio ``R`` by the ``1/sqrt(N)``
    law of an interval's log-width: ``N * (log r / log R) ** 2``; the estimate is the prediction of
    the row nearest the target (a row on each side of it brackets the estimate)."""
    target = adaptive["ci_ratio_median"]
    rows = [g for g in grid_table if math.isfinite(g["ci_ratio_median"]) and g["ci_ratio_median"] > 1]
    if not rows or not math.isfinite(target) or target <= 1:
        return {"target_ci_ratio": target, "grid_trials": None, "factor": None}
    near = min(rows, key=lambda g: abs(math.log(math.log(g["ci_ratio_median"]) / math.log(target))))
    needed = near["trials"] * (math.log(near["ci_ratio_median"]) / math.log(target)) ** 2
    return {"target_ci_ratio": target, "grid_trials": needed, "factor": needed / adaptive["trials_median"],
            "from_row": near["n_per_level"]}  # fmt: skip
