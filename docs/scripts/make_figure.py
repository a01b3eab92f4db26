"""Draw docs/images/psychometric.png: the psychometric curve of a simulated listener.

``python docs/scripts/make_figure.py``. A listener whose accuracy on ``pitch_relative`` (three options)
follows a known Weibull curve answers 40 questions at each of the task's default levels; the counts are
drawn from a seeded generator and fitted exactly as an evaluation fits a model's answers, then drawn
by the evaluation's own plot function. The same seed gives the same picture.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "images" / "psychometric.png"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from auralgen.evaluation.plots import plot_psychometric
    from auralgen.evaluation.psychometrics import fit_psychometric, weibull

    levels = np.array([25.0, 50.0, 100.0, 200.0, 400.0, 1200.0])  # cents
    p_true = weibull(levels, scale=90.0, slope=1.6, chance=1 / 3, lapse=0.08)
    n_total = np.full(levels.size, 40)
    n_correct = np.random.default_rng(0).binomial(n_total, p_true)
    fit = fit_psychometric(levels, n_correct, n_total, chance=1 / 3, n_boot=0)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    plot_psychometric({"simulated listener": fit}, OUT, x_label="pitch difference (cents)")
    print(f"threshold {fit.threshold:.0f} cents at {fit.criterion:.2f} accuracy; wrote docs/images/psychometric.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
