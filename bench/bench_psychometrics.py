"""Coverage and bias of psychometric thresholds on simulated observers.

An observer with a known Weibull curve (threshold at the criterion, slope, lapse; chance =
1/options) answers a fixed grid of stimulus differences, ``n_per_level`` binomial trials
per level. Each run is fitted with :func:`~auralgen.evaluation.psychometrics.fit_psychometric`
(the fit ``evaluate`` uses); the run's reported 95 % interval (open ends beyond the tested
range read as 0 / inf) covers the true threshold or not. Per setting the table gives the
runs, the coverage, the median bias of the estimate (posterior median - truth, over runs
whose threshold is a number), the median interval width (finite intervals), the runs whose
threshold was reported as a bound, and the seconds taken. Seeds are fixed: run ``r`` of
every setting draws from ``np.random.default_rng(r)``.

Run: ``.venv/bin/python bench/bench_psychometrics.py [runs]`` (default 200 runs per setting).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from auralgen.evaluation.psychometrics import fit_psychometric, weibull

X = np.array([5.0, 10.0, 20.0, 40.0])  # a task's level grid (e.g. duration_relative, %)
CRITERION = 0.75


@dataclass(frozen=True)
class Observer:
    """A simulated observer: true threshold (x at CRITERION), Weibull slope, lapse, options."""

    name: str
    threshold: float
    slope: float
    lapse: float
    n_options: int = 4
    n_per_level: int = 24

    @property
    def chance(self) -> float:
        return 1.0 / self.n_options

    @property
    def scale(self) -> float:
        q = (CRITERION - self.chance) / (1.0 - self.lapse - self.chance)
        return self.threshold / (-math.log1p(-q)) ** (1.0 / self.slope)

    def p_correct(self, x) -> np.ndarray:
        return weibull(x, scale=self.scale, slope=self.slope, chance=self.chance, lapse=self.lapse)


SETTINGS = (
    Observer("steep, low lapse, mid-range", threshold=14.0, slope=3.0, lapse=0.02),
    Observer("shallow, low lapse, mid-range", threshold=14.0, slope=1.2, lapse=0.02),
    Observer("steep, high lapse, mid-range", threshold=14.0, slope=3.0, lapse=0.15),
    Observer("shallow, high lapse, near lowest level", threshold=6.5, slope=1.5, lapse=0.1),
    Observer("steep, low lapse, near highest level", threshold=34.0, slope=3.0, lapse=0.02),
    Observer(
        "3 options, 12 trials per level, mid-range", threshold=14.0, slope=2.0, lapse=0.05, n_options=3, n_per_level=12
    ),
)


def simulate(observer: Observer, runs: int) -> dict:
    """Fit ``runs`` simulated runs of ``observer``; coverage, bias, width, bounds and seconds."""
    start = time.perf_counter()
    covered, bias, widths, bounds = 0, [], [], 0
    n = np.full(X.size, observer.n_per_level)
    for r in range(runs):
        k = np.random.default_rng(r).binomial(n, observer.p_correct(X))
        fit = fit_psychometric(X, k, n, chance=observer.chance, criterion=CRITERION)
        covered += fit.covers(observer.threshold)
        bounds += fit.threshold_bound is not None
        if fit.finite:
            bias.append(fit.threshold - observer.threshold)
        low, high = fit.interval()
        if math.isfinite(high - low):
            widths.append(high - low)
    return {
        "setting": observer.name,
        "runs": runs,
        "coverage": covered / runs,
        "median_bias": float(np.median(bias)) if bias else math.nan,
        "median_ci_width": float(np.median(widths)) if widths else math.nan,
        "bounds": bounds,
        "seconds": time.perf_counter() - start,
    }


def main(runs: int) -> None:
    print(f"grid x = {X.tolist()}, criterion {CRITERION}, true thresholds in the units of x")
    print("| setting | true threshold | runs | coverage | median bias | median CI width | bounds | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for observer in SETTINGS:
        s = simulate(observer, runs)
        print(
            f"| {s['setting']} | {observer.threshold:g} | {s['runs']} | {100 * s['coverage']:.1f} % | "
            f"{s['median_bias']:+.2f} | {s['median_ci_width']:.2f} | {s['bounds']} | {s['seconds']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
