"""Adaptive evaluation on simulated observers and on the reference DSP listener (issue 18).

Prints (1) per observer setting: coverage of the 95 % interval over ``--runs`` QUEST+ runs, median
bias, median trials and interval ratio; (2) the fixed-grid method on the same observer (pitch grid,
fit_psychometric) and the factor of trials the grid needs for the same interval ratio, beside that
factor's ceiling (``design_bound``: the grid's asymptotic variance of the threshold over that of the best
allocation of trials, chosen knowing the observer; lapse free, and lapse known); (3) a real
run of ``model=dsp`` on pitch_relative, and the same listener with its answer replaced by a guess
with probability 0.2 and 0.4 (the threshold at 75 % must rise; the Weibull scale stays).

    .venv/bin/python bench/bench_adaptive.py            # full table: 200 runs per setting
    .venv/bin/python bench/bench_adaptive.py --runs 40  # quicker
"""

from __future__ import annotations

import argparse
import math
import tempfile

from auralgen.evaluation.adapters import build_adapter
from auralgen.evaluation.adaptive import FlipAdapter, QuestSettings, SimulatedObserver, run_adaptive
from auralgen.evaluation.adaptive.domain import LevelDomain
from auralgen.evaluation.adaptive.session import build_task
from auralgen.evaluation.adaptive.simulate import adaptive_runs, design_bound, grid_runs, trials_ratio

PITCH = LevelDomain(50 / 16, 1200.0, "cents")
GRID = (50, 100, 200, 400, 1200)
SETTINGS = [(20.0, 2.0, 0.0), (150.0, 2.0, 0.02), (150.0, 3.5, 0.0), (500.0, 1.2, 0.04)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--grid-runs", type=int, default=40)
    args = ap.parse_args()
    settings = QuestSettings()
    print(f"QUEST+ on pitch domain {PITCH.low:g}-{PITCH.high:g} cents, guess 1/3, stop at CI ratio {settings.ci_ratio} "
          f"or {settings.max_trials} trials; {args.runs} runs per setting")  # fmt: skip
    print("threshold slope lapse | coverage  bias(x)  trials  CI-ratio | grid trials for that CI  factor | "
          "ceiling: lapse free  known")  # fmt: skip
    stimuli = [PITCH.to_value(u) for u in PITCH.axis(settings.n_levels)]
    for threshold, slope, lapse in SETTINGS:
        obs = SimulatedObserver(PITCH, threshold=threshold, slope=slope, lapse=lapse, chance=1 / 3)
        a = adaptive_runs(obs, settings, n_runs=args.runs)
        grid = [grid_runs(obs, GRID, n, n_runs=args.grid_runs, max_lapse=max(settings.lapses)) for n in (16, 32, 64)]
        r = trials_ratio(a, grid)
        g = "n/a" if r["factor"] is None else f"{r['grid_trials']:.0f}  {r['factor']:.2f}x"
        ceiling = [design_bound(obs, GRID, stimuli, lapse_free=free)["factor"] for free in (True, False)]
        c = "  ".join("n/a (lapse 0)" if f is None else f"{f:.3g}x" for f in ceiling)
        print(f"{threshold:9g} {slope:5g} {lapse:5g} | {a['coverage']:8.3f} {a['bias_ratio_median']:8.3f} "
              f"{a['trials_median']:7.0f} {a['ci_ratio_median']:8.2f} | {g:>24} | {c}")  # fmt: skip
    print("\nreference DSP listener, pitch_relative (seed 0); a flip p is a lapse p*2/3, so lapses up to 0.3 here:")
    task = build_task("pitch_relative")
    wide = QuestSettings(lapses=(0.0, 0.05, 0.1, 0.15, 0.2, 0.3))
    base = None
    for flip in (0.0, 0.1, 0.2):
        with tempfile.TemporaryDirectory() as out:
            dsp = build_adapter({"kind": "dsp"}, workdir=out)
            model = dsp if flip == 0 else FlipAdapter(dsp, flip, seed=0)
            t = run_adaptive([task], model, out=out, settings=wide, log=lambda s: None)["tracks"]["pitch_relative"]
        base = base or t
        shown = t.get("message") or f"{t['threshold']:.2f} cents (95 % CI {t['ci95'][0]:.2f}-{t['ci95'][1]:.2f})"
        # predicted: the unflipped curve reaching (c - g) / ((1 - flip)(1 - g)) of its way up
        f = (0.75 - 1 / 3) / ((1 - flip) * (2 / 3))
        pred = base["scale_median"] * (-math.log1p(-f)) ** (1 / base["slope_mean"]) if f < 1 else math.inf
        print(
            f"  flip={flip:.1f}: threshold at 75 % {shown}, {t['n_trials']} trials; predicted from flip=0 "
            f"{pred:.2f}; Weibull scale {t['scale_median']:.2f} cents, lapse {t['lapse_mean']:.3f}"
        )


if __name__ == "__main__":
    main()
