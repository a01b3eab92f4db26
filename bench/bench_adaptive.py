"""Adaptive evaluation on simulated observers and on the reference DSP listener.

The goal is stated against the ceiling: in every setting the trials factor (how many times fewer trials
than the fixed grid QUEST+ needs for the same interval) is at least 90 % of ``design_bound`` -- the
most any placement of trials could reach knowing the observer, per trial, asymptotically -- with at
least 90 % coverage of the 95 % interval. Beside it, a reference at the budget: ``knowing_placement``,
the factor of tracks with the same posterior, interval, stop rule and budget whose every trial is
placed knowing the observer (greedy; not a bound). Prints:

(1) per observer setting: which bound applies and why (lapse free, or known where the prior pins it),
    the measured factor, the bound, the share of the bound, the knowing placement's factor and the share
    of it, coverage, median trials, and the test-retest of pairs of runs with two seeds (share of pairs
    whose intervals overlap, median |log10| ratio);
(2) the shallow, lapsing observer at several trial budgets (``--budgets``): factor and shares per budget;
(3) per failing-observer kind (:class:`~auralgen.evaluation.adaptive.observers.FailingObserver` on the
    150 cents / slope 2 / lapse 0.02 observer): coverage (for a fixed answer: no threshold reported),
    runs without a threshold and why, median trials and questions, the factor in questions and its share;
(4) the asymptotic bound's own design run at the budget (``knowing_placement`` with ``design_bound``'s
    ``weights``): the share of trials it puts at the threshold, its factor, coverage, trials, interval;
(5) a real run of ``model=dsp`` on pitch_relative, and the same listener with its answer replaced by a
    guess with probability 0.1 and 0.2.

    .venv/bin/python bench/bench_adaptive.py     # full: 200 runs per setting, 100 per failing kind (~half a CPU-hour)
    .venv/bin/python bench/bench_adaptive.py --runs 30 --fail-runs 30 --grid-runs 20 --budgets 80,160 --skip-dsp
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auralgen.evaluation.adapters import build_adapter
from auralgen.evaluation.adaptive import FlipAdapter, QuestSettings, SimulatedObserver, run_adaptive
from auralgen.evaluation.adaptive.domain import LevelDomain
from auralgen.evaluation.adaptive.observers import FailingObserver
from auralgen.evaluation.adaptive.session import build_task
from auralgen.evaluation.adaptive.simulate import (
    adaptive_runs,
    design_bound,
    grid_runs,
    knowing_placement,
    trials_ratio,
)
from bench import results  # noqa: E402

PITCH = LevelDomain(50 / 16, 1200.0, "cents")
GRID = (50, 100, 200, 400, 1200)
GRID_N = (16, 32, 64, 128)  # trials per grid value of the grid rows the factor is read from
SETTINGS = [(500.0, 1.2, 0.04), (150.0, 3.5, 0.0), (150.0, 2.0, 0.02), (20.0, 2.0, 0.0)]  # the hardest first
FAILURES = [("refuse", 0.05), ("refuse", 0.2), ("same", 0.1), ("first", 0.1), ("position", 0.1), ("drift", 0.08)]
GOAL = 0.9  # share of the bound, and coverage
MEANINGFUL = 100.0  # a larger bound means the grid hardly measures the threshold (it lies past the grid): no share


def which_bound(obs: SimulatedObserver, stimuli) -> tuple[float | None, str, str]:
    """``(bound, "free" | "known", why)``: the design bound that applies to ``obs``."""
    free = design_bound(obs, GRID, stimuli, lapse_free=True)["factor"]
    known = design_bound(obs, GRID, stimuli, lapse_free=False)["factor"]
    if free is None:
        return known, "known", "lapse 0 is the edge of the lapse grid: the prior pins it, free asymptotics fail"
    if abs(free / known - 1) < 0.05:
        return free, "free", f"free and known agree ({free:.3g}x, {known:.3g}x): the lapse costs both designs alike"
    return (
        known,
        "known",
        (
            f"free {free:.3g}x assumes the lapse learnt; in a track's budget its posterior stays "
            "near the 0-0.06 prior, which pins it"
        ),
    )


def measure(obs, settings: QuestSettings, runs: int, grid_runs_n: int, *, cost: str = "trials") -> tuple[dict, dict]:
    """``(adaptive summary, trials ratio)``; ``cost="questions"`` counts unanswered questions too."""
    a = adaptive_runs(obs, settings, n_runs=runs)
    grid = _grid(obs.threshold, obs.slope, obs.lapse, grid_runs_n, max(settings.lapses))
    basis = dict(a, trials_median=a["questions_median"]) if cost == "questions" else a
    return a, trials_ratio(basis, grid)


def knowing(obs, settings: QuestSettings, runs: int, grid_runs_n: int) -> dict:
    """The reference at the budget: :func:`knowing_placement`'s tracks (each trial placed knowing ``obs``)."""
    grid = _grid(obs.threshold, obs.slope, obs.lapse, grid_runs_n, max(settings.lapses))
    return knowing_placement(obs, settings, grid, n_runs=runs)


def _at_budget(share, factor, k: dict) -> float | None:
    """The share of the knowing placement's factor (None where the asymptotic bound gives no share)."""
    return None if share is None or factor is None or not k["factor"] else factor / k["factor"]


@cache
def _grid(threshold: float, slope: float, lapse: float, runs: int, max_lapse: float) -> list[dict]:
    """The grid rows of the healthy observer (shared by the budgets and the failing kinds built on it)."""
    obs = SimulatedObserver(PITCH, threshold=threshold, slope=slope, lapse=lapse, chance=1 / 3)
    return [grid_runs(obs, GRID, n, n_runs=runs, max_lapse=max_lapse) for n in GRID_N]


def _fmt(x, spec: str, none: str = "n/a") -> str:
    return none if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def _goal(share, met: bool) -> str:
    """The goal column: ``met``, ``NOT met``, or ``no share`` where the bound gives none."""
    return "no share" if share is None else "met" if met else "NOT met"


def _times(x) -> str:
    """A factor as ``"  2.90x"``, or ``"   n/a"`` when there is none."""
    return "   n/a" if x is None else f"{x:6.2f}x"


def settings_table(args, settings: QuestSettings, stimuli, rows: list[dict], done) -> None:
    """Prints the table and appends its rows to ``rows``, calling ``done()`` after each."""
    print(
        "(1) threshold slope lapse | bound(which) | factor  bound  share | knowing: factor share | "
        "coverage trials | retest agree  |log10|"
    )
    whys = []
    for threshold, slope, lapse in SETTINGS:
        obs = SimulatedObserver(PITCH, threshold=threshold, slope=slope, lapse=lapse, chance=1 / 3)
        bound, kind, why = which_bound(obs, stimuli)
        a, r = measure(obs, settings, args.runs, args.grid_runs)
        share = None if r["factor"] is None or bound is None or bound > MEANINGFUL else r["factor"] / bound
        k = knowing(obs, settings, args.runs, args.grid_runs)
        at = _at_budget(share, r["factor"], k)
        met = _met(share, a["coverage"])
        print(
            f"{threshold:11g} {slope:5g} {lapse:5g} | {_fmt(bound, '9.3g')}x ({kind}) | {_times(r['factor'])} "
            f"{_fmt(bound, '6.3g')}x {_fmt(share, '6.0%')} | {_times(k['factor'])} {_fmt(at, '6.0%')} | "
            f"{a['coverage']:8.3f} {a['trials_median']:6.0f} | "
            f"{a['retest_agree']:12.3f} {a['retest_log10_median']:7.3f}  {_goal(share, met)}"
        )
        past = (
            "; the threshold lies past the grid's hardest value, which hardly measures it: no share"
            if (bound is not None and bound > MEANINGFUL)
            else ""
        )
        whys.append(f"  {threshold:g}/{slope:g}/{lapse:g}: lapse {kind} -- {why}{past}")
        rows.append(
            _row(
                f"{threshold:g}/{slope:g}/{lapse:g}",
                a,
                r,
                bound,
                share,
                lapse=kind,
                why=why + past,
                met=met,
                **_knowing_cells(k, at),
            )
        )
        done()
    print("which bound and why:", *whys, sep="\n")


def budget_table(args, settings: QuestSettings, stimuli, rows: list[dict], done) -> None:
    """Prints the table and appends its rows to ``rows``, calling ``done()`` after each."""
    obs = SimulatedObserver(PITCH, threshold=500.0, slope=1.2, lapse=0.04, chance=1 / 3)
    bound, kind, _ = which_bound(obs, stimuli)
    free = design_bound(obs, GRID, stimuli, lapse_free=True)["factor"]
    print(f"\n(2) 500/1.2/0.04 by trial budget (bound {bound:.3g}x lapse {kind}; {free:.3g}x lapse free):")
    print("budget | factor  share | knowing: factor share | coverage trials CI-ratio")
    for budget in args.budgets:
        a, r = measure(obs, dataclasses.replace(settings, max_trials=budget), args.runs, args.grid_runs)
        share = None if r["factor"] is None else r["factor"] / bound
        k = knowing(obs, dataclasses.replace(settings, max_trials=budget), args.runs, args.grid_runs)
        at = _at_budget(share, r["factor"], k)
        print(
            f"{budget:6d} | {_times(r['factor'])} {_fmt(share, '6.0%')} | {_times(k['factor'])} {_fmt(at, '6.0%')} | "
            f"{a['coverage']:8.3f} {a['trials_median']:6.0f} {a['ci_ratio_median']:8.2f}"
        )
        met = _met(share, a["coverage"])
        rows.append(
            _row(
                f"500/1.2/0.04 at {budget} trials",
                a,
                r,
                bound,
                share,
                lapse=kind,
                budget=budget,
                met=met,
                **_knowing_cells(k, at),
            )
        )
        done()


def design_table(args, settings: QuestSettings, stimuli, rows: list[dict], done) -> None:
    """The asymptotic bound's own design, run at the budget (QUEST+'s posterior and stop rule, trials placed
    by ``design_bound``'s best allocation, knowing the observer); appends its rows to ``rows``."""
    print("\n(4) the bound's own design at the budget: share of trials within 0.05 decade of the threshold,")
    print("    factor | coverage trials CI-ratio")
    for threshold, slope, lapse in SETTINGS[:3]:
        obs = SimulatedObserver(PITCH, threshold=threshold, slope=slope, lapse=lapse, chance=1 / 3)
        bound, kind, _ = which_bound(obs, stimuli)
        weights = design_bound(obs, GRID, stimuli, lapse_free=kind == "free")["weights"]
        near = sum(w for w, v in zip(weights, stimuli) if abs(math.log10(v / threshold)) <= 0.05)
        grid = _grid(obs.threshold, obs.slope, obs.lapse, args.grid_runs, max(settings.lapses))
        k = knowing_placement(obs, settings, grid, n_runs=args.fail_runs, weights=weights)
        share = None if k["factor"] is None else k["factor"] / bound
        print(
            f"{threshold:g}/{slope:g}/{lapse:g}: {near:5.0%} | {_times(k['factor'])} ({_fmt(share, '.0%')} of "
            f"{bound:.3g}x) | {k['coverage']:8.3f} {k['trials_median']:6.0f} {k['ci_ratio_median']:8.2f}"
        )
        row = {"name": f"{threshold:g}/{slope:g}/{lapse:g}", "bound": bound, "lapse": kind, "share": share}
        row |= {"near_threshold": near, "runs": args.fail_runs, "met": None}
        row |= {key: k[key] for key in ("factor", "coverage", "trials_median", "ci_ratio_median")}
        rows.append({key: (None if isinstance(v, float) and not math.isfinite(v) else v) for key, v in row.items()})
        done()


def failure_table(args, settings: QuestSettings, stimuli, rows: list[dict], done) -> None:
    """Prints the table and appends its rows to ``rows``, calling ``done()`` after each."""
    base = SimulatedObserver(PITCH, threshold=150.0, slope=2.0, lapse=0.02, chance=1 / 3)
    bound, kind, _ = which_bound(base, stimuli)
    print(f"\n(3) observers that fail like models (150/2/0.02; bound {bound:.3g}x lapse {kind}; factor in questions):")
    print("kind      rate | truth    coverage no-threshold(why)      | trials questions | factor  share")
    for name, rate in FAILURES:
        obs = FailingObserver(
            PITCH,
            threshold=150.0,
            slope=2.0,
            lapse=0.0 if name == "drift" else 0.02,
            chance=1 / 3,
            kind=name,
            rate=rate,
        )
        a, r = measure(obs, settings, args.fail_runs, args.grid_runs, cost="questions")
        share = None if r["factor"] is None else r["factor"] / bound
        why = ", ".join(f"{k} {v}" for k, v in sorted(a["no_threshold"].items())) or "-"
        print(
            f"{name:8s} {rate:5.2f} | {_fmt(obs.true_threshold, '7.1f', 'none')} {a['coverage']:8.3f} "
            f"{why:24s} | {a['trials_median']:6.0f} {a['questions_median']:9.0f} | {_times(r['factor'])} "
            f"{_fmt(share, '6.0%')}"
        )
        rows.append(
            _row(
                f"{name} {rate:g}", a, r, bound, share, lapse=kind, truth=obs.true_threshold, met=a["coverage"] >= GOAL
            )
        )
        done()


def _met(share, coverage) -> bool:
    """The goal: at least ``GOAL`` of the asymptotic bound and ``GOAL`` coverage."""
    return share is not None and share >= GOAL and coverage >= GOAL


def _knowing_cells(k: dict, at) -> dict:
    """The row's cells of the knowing placement."""
    return {"knowing_factor": k["factor"], "knowing_share": at, "knowing_trials": k["trials_median"]}


def _row(name: str, a: dict, r: dict, bound, share, **extra) -> dict:
    """One line of a table, as it goes to the results file (``None`` for a figure that does not exist)."""
    keep = (
        "runs",
        "coverage",
        "trials_median",
        "questions_median",
        "ci_ratio_median",
        "bias_ratio_median",
        "retest_pairs",
        "retest_agree",
        "retest_log10_median",
        "no_threshold",
    )
    row = {"name": name, "factor": r["factor"], "bound": bound, "share": share, **{k: a[k] for k in keep}, **extra}
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}


def _figures(rows: list[dict], part: str) -> list[dict]:
    """The results file's figures of one table: factor, share of the bound, coverage, median trials."""
    out = []
    for row in rows:
        n, note = row["runs"], f"{part}; lapse {row['lapse']}: the bound that applies"
        target = "share >= 90 %" if row["share"] is not None and part != PARTS["design"] else ""
        for key, unit, goal in (
            ("factor", "x", ""),
            ("share", "of the bound", target),
            ("knowing_factor", "x (knowing placement)", ""),
            ("knowing_share", "of the knowing placement's factor", ""),
            ("coverage", "", ">= 0.9"),
            ("trials_median", "trials", ""),
            ("questions_median", "questions", ""),
        ):
            if row.get(key) is not None:
                out.append(
                    results.figure(
                        f"{row['name']}: {key.replace('_median', '')}", row[key], unit, target=goal, note=note, n=n
                    )
                )
    return out


def _cell(x, spec: str, suffix: str = "") -> str:
    return "—" if x is None else format(x, spec) + suffix


def markdown(record: dict) -> str:
    """The tables of a results file as markdown (the docs page on adaptive thresholds includes it)."""
    heads = {
        "settings": "| observer (cents / slope / lapse) | bound (lapse) | factor | share of bound "
        "| knowing placement | share of it | coverage "
        "| median trials | retest: intervals agree | retest: median \\|log10\\| | goal |",
        "failing": "| kind, rate (on 150 / 2 / 0.02) | true threshold | coverage | no threshold (why) | median trials "
        "| median questions | factor (questions) | share of bound |",
        "budgets": "| 500 / 1.2 / 0.04 at | bound (lapse) | factor | share of bound | knowing placement "
        "| share of it | coverage | median trials | median CI ratio | goal |",
        "design": "| observer, trials placed by the bound's design | bound (lapse) | factor at the budget "
        "| share of bound | coverage | trials within 0.05 decade of the threshold | median trials | median CI ratio |",
    }
    out = []
    for key, rows in record["tables"].items():
        out += [heads[key], "|" + "---|" * heads[key].count(" | ") + "---|"] if rows else []
        for w in rows:
            bound = f"{_cell(w['bound'], '.3g', 'x')} ({w['lapse']})"
            common = [_cell(w["factor"], ".2f", "x"), _cell(w["share"], ".0%"), _cell(w["coverage"], ".3f")]
            at = [_cell(w.get("knowing_factor"), ".2f", "x"), _cell(w.get("knowing_share"), ".0%")]
            goal = "no share" if w["share"] is None else "met" if _met(w["share"], w["coverage"]) else "**not met**"
            if key == "settings":
                cells = [
                    w["name"],
                    bound,
                    *common[:2],
                    *at,
                    common[2],
                    _cell(w["trials_median"], ".0f"),
                    _cell(w["retest_agree"], ".2f"),
                    _cell(w["retest_log10_median"], ".3f"),
                    goal,
                ]
            elif key == "budgets":
                cells = [
                    f"{w['budget']} trials",
                    bound,
                    *common[:2],
                    *at,
                    common[2],
                    _cell(w["trials_median"], ".0f"),
                    _cell(w["ci_ratio_median"], ".2f"),
                    goal,
                ]
            elif key == "design":
                cells = [
                    w["name"],
                    bound,
                    *common,
                    _cell(w["near_threshold"], ".0%"),
                    _cell(w["trials_median"], ".0f"),
                    _cell(w["ci_ratio_median"], ".2f"),
                ]
            else:
                why = ", ".join(f"{k} {v}" for k, v in sorted(w["no_threshold"].items())) or "—"
                cells = [
                    w["name"],
                    _cell(w["truth"], ".1f", " cents") if w["truth"] else "none",
                    common[2],
                    why,
                    _cell(w["trials_median"], ".0f"),
                    _cell(w["questions_median"], ".0f"),
                    *common[:2],
                ]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    m = record["machine"]
    out.append(
        f"{max(r['runs'] for rows in record['tables'].values() for r in rows)} runs per row at most; measured by "
        f"`{record['command']}` on {record['recorded']} ({m['cores']} cores, {m['cpu']})."
    )
    return "\n".join(out) + "\n"


def dsp_runs() -> None:
    print("\n(5) reference DSP listener, pitch_relative (seed 0); a flip p is a lapse p*2/3, so lapses up to 0.3 here:")
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


TABLES = ("settings", "failing", "budgets", "design")


def _tables(text: str) -> list[str]:
    names = [t for t in text.split(",") if t]
    bad = [t for t in names if t not in TABLES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"--tables {text!r}: allowed are {', '.join(TABLES)} (comma-separated)")
    return names


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200, help="QUEST+ runs per setting (pairs of them: the retest)")
    ap.add_argument("--grid-runs", type=int, default=40)
    ap.add_argument("--fail-runs", type=int, default=100, help="runs per failing-observer kind")
    ap.add_argument("--budgets", type=lambda s: [int(x) for x in s.split(",")], default=[80, 100, 120, 160])
    ap.add_argument("--skip-dsp", action="store_true")
    ap.add_argument(
        "--ci-ratio",
        type=float,
        default=QuestSettings.ci_ratio,
        help="the stop rule's interval ratio (a side experiment)",
    )
    ap.add_argument(
        "--max-trials",
        type=int,
        default=QuestSettings.max_trials,
        help="the trial budget (the budgets table sets its own)",
    )
    ap.add_argument(
        "--min-trials",
        type=int,
        default=QuestSettings.min_trials,
        help="no stop on the interval before this many answered trials",
    )
    ap.add_argument(
        "--results",
        type=Path,
        default=None,
        help="also write the figures there (bench/results/bench_adaptive.json for the full run)",
    )
    ap.add_argument("--tables", type=_tables, default=list(TABLES), help="which tables, e.g. settings,failing")
    ap.add_argument(
        "--render",
        type=Path,
        nargs="+",
        default=None,
        help="only rewrite the markdown beside these results files (e.g. bench/results/bench_adaptive.json)",
    )
    args = ap.parse_args()
    if args.render:
        for path in args.render:
            record = rederive(json.loads(path.read_text()))
            path.write_text(json.dumps(record, indent=2) + "\n")
            path.with_suffix(".md").write_text(markdown(record))
        return
    settings = QuestSettings(ci_ratio=args.ci_ratio, max_trials=args.max_trials, min_trials=args.min_trials)
    settings.check()
    print(
        f"QUEST+ on pitch domain {PITCH.low:g}-{PITCH.high:g} cents, guess 1/3, stop at CI ratio {settings.ci_ratio} "
        f"or {settings.max_trials} trials; {args.runs} runs per setting, {args.fail_runs} per failing kind, grid rows "
        f"of {args.grid_runs} runs; goal: "
        f"factor >= {GOAL:.0%} of the bound and coverage >= {GOAL:.0%}"
    )
    stimuli = [PITCH.to_value(u) for u in PITCH.axis(settings.n_levels)]
    tables: dict[str, list[dict]] = {}
    for key, table in (
        ("settings", lambda *a: settings_table(args, settings, stimuli, *a)),
        ("failing", lambda *a: failure_table(args, settings, stimuli, *a)),
        ("budgets", lambda *a: budget_table(args, settings, stimuli, *a)),
        ("design", lambda *a: design_table(args, settings, stimuli, *a)),
    ):
        if key in args.tables:  # the file is written after each row: a long run interrupted keeps what it measured
            tables[key] = []
            table(tables[key], lambda: _write(args, tables))
    if not args.skip_dsp:
        dsp_runs()


PARTS = {
    "settings": "per setting",
    "budgets": "500/1.2/0.04 by budget",
    "failing": "failing observers",
    "design": "the bound's own design at the budget",
}


def rederive(record: dict) -> dict:
    """``record`` with what is derived from its rows computed again (``met`` and the figures); the
    measured cells are kept as they are."""
    for key, rows in record["tables"].items():
        for row in rows:
            if key != "design":
                row["met"] = row["coverage"] >= GOAL if key == "failing" else _met(row["share"], row["coverage"])
    record["figures"] = [f for key, rows in record["tables"].items() for f in _figures(rows, PARTS[key])]
    return record


def _write(args, tables: dict[str, list[dict]]) -> None:
    if args.results is None:
        return
    figures = [f for key, rows in tables.items() for f in _figures(rows, PARTS[key])]
    command = " ".join(["python bench/bench_adaptive.py", *sys.argv[1:]])
    path = results.write("bench_adaptive", command, figures, out=args.results, extra={"tables": tables})
    path.with_suffix(".md").write_text(markdown(json.loads(path.read_text())))


if __name__ == "__main__":
    main()
