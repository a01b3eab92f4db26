"""Results of one run (``results.json`` + plots); the leaderboard is :mod:`.leaderboard`.

``results.json`` holds, besides :func:`~auralgen.evaluation.metrics.score`'s AA/ACR tables:

``accounting``   per task and overall: ``asked`` (item x rotation pairs), ``answered``,
                 ``ok``, ``unparseable``, ``refusal``, ``multiple``, ``error`` (no reply after
                 retries), ``judged`` -- ``asked == answered + error`` always holds and
                 ``answered == ok + unparseable + refusal + multiple``. Every non-``ok``
                 answer is scored wrong; none leaves a denominator. Next to the counts:
                 ``correct``, ``accuracy_over_asked`` (``correct / asked``: an error counts
                 wrong, as in ``scores``) and ``accuracy_over_answered`` (``correct /
                 answered``: errors left out), so a failing model is never silently a bad one.
``psychometric`` per relative task (``regime == "relative"``): a Weibull fit of accuracy vs
                 ``level_value`` (x = 0 excluded; psignifit 4, see :mod:`.psychometrics`; guess
                 rate ``1/options``, not the honest chance of ``scores``, see :func:`psychometrics`) with
                 the threshold at ``eval.criterion`` -- the ``x`` where the stored curve
                 (``scale``, ``slope``, ``chance``, ``lapse``) reaches it, as ``threshold_definition``
                 says -- and its 95 % credible interval
                 (``ci95``; an end beyond the tested range is ``null`` with ``ci95_open``
                 true), and unit. ``threshold`` is a number only within the tested range;
                 else ``null`` with ``threshold_bound`` ``"below"`` ("< lowest level") or
                 ``"above"`` (no threshold within the tested range).
``<task>``       for every task declaring the ``thresholds_by_frequency`` analysis
                 (``Task.analyses``; today the audiogram, whose results key is its name):
                 from its items in the task's own level unit (dB HL; probe items in other
                 units are left out), per frequency (``frequency_hz``) the lowest level
                 reaching the criterion (``null``: none did). The key is written, empty,
                 when the run has none of the task's items. ``<task>_levels`` (when the
                 caller stores :func:`frequency_levels`): per frequency the lowest and
                 highest level tested, so that "heard at the lowest level" and "not heard
                 at the highest level" read as bounds, not thresholds.

Non-finite thresholds are written as ``null`` with their ``threshold_status``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.tasks.base import task_class, task_names

from .metrics import RECORD_STATUSES
from .plots import plot_audiogram, plot_psychometric, plot_task_bars
from .psychometrics import PsychometricFit, audiogram_thresholds, fit_psychometric, level_ranges

THRESHOLD_DEFINITION = "where the stored curve weibull(x; scale, slope, chance, lapse) reaches the criterion"
COUNTS = ("asked", "answered", *RECORD_STATUSES, "judged", "correct")


def accounting(records: list[dict]) -> dict:
    """Counts and both accuracies per task and overall (see the module docstring).

    Parameters
    ----------
    records : list of dict
        Scoring records, one per item and presentation, with ``task``, ``status`` and ``correct``.

    Returns
    -------
    dict
        ``{"overall": counts, "by_task": {task: counts}}``; counts hold the :data:`COUNTS`, ``error_rate``
        and both accuracies (proportions in [0, 1], None without a denominator).
    """
    by_task: dict[str, dict] = defaultdict(lambda: dict.fromkeys(COUNTS, 0))
    for rec in records:
        for key in ("__all__", rec["task"]):
            c = by_task[key]
            c["asked"] += 1
            c[rec["status"]] += 1
            c["answered"] += rec["status"] != "error"
            c["judged"] += bool(rec.get("judged"))
            c["correct"] += bool(rec["correct"])
    overall = by_task.pop("__all__", dict.fromkeys(COUNTS, 0))
    for c in (overall, *by_task.values()):
        c["error_rate"] = c["error"] / c["asked"] if c["asked"] else None
        c["accuracy_over_asked"] = c["correct"] / c["asked"] if c["asked"] else None
        c["accuracy_over_answered"] = c["correct"] / c["answered"] if c["answered"] else None
    return {"overall": overall, "by_task": dict(sorted(by_task.items()))}


def safe_name(text: str) -> str:
    """``text`` as a file-name part: letters, digits, ``_``, ``-`` and ``.`` only.

    Parameters
    ----------
    text : str
        Any text, e.g. a task name with its unit.

    Returns
    -------
    str
        Runs of other characters replaced by ``_``, ends stripped of ``_`` and ``.``; ``"x"`` when nothing is left.

    Examples
    --------
    >>> safe_name("duration_relative (dB HL)")
    'duration_relative_dB_HL'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.") or "x"


def _finite(v):
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v


def fit_to_json(fit: PsychometricFit, unit: str) -> dict:
    """The results record of a fit; non-finite numbers and interval ends beyond the tested range are ``null``.

    Parameters
    ----------
    fit : PsychometricFit
        A fit of :func:`~.psychometrics.fit_psychometric`.
    unit : str
        The unit of the fit's ``x`` (e.g. ``cents``), stored with it.

    Returns
    -------
    dict
        JSON-able: threshold, ``ci95``, ``ci95_open``, status, bound, the curve's parameters and the data.
    """
    opens = [fit.ci_low_open, fit.ci_high_open] if not math.isnan(fit.ci_low) else [False, False]
    return {
        "threshold": _finite(fit.threshold),
        "ci95": [None if opens[0] else _finite(fit.ci_low), None if opens[1] else _finite(fit.ci_high)],
        "ci95_open": opens,
        "threshold_status": fit.threshold_status,
        "threshold_bound": fit.threshold_bound,
        "threshold_definition": THRESHOLD_DEFINITION,
        "unit": unit,
        "criterion": fit.criterion,
        "chance": fit.chance,
        "scale": fit.scale,
        "slope": fit.slope,
        "lapse": fit.lapse,
        "converged": fit.converged,
        "x": list(fit.x),
        "n_correct": list(fit.n_correct),
        "n_total": list(fit.n_total),
        "n_excluded": fit.n_excluded,
    }


def fit_from_json(d: dict) -> PsychometricFit:
    """A :class:`PsychometricFit` back from :func:`fit_to_json` (for plots across runs); open interval
    ends come back as ``0`` / ``inf``.

    Parameters
    ----------
    d : dict
        A record written by :func:`fit_to_json`.

    Returns
    -------
    PsychometricFit
        The fit; ``null`` numbers come back as ``nan``.
    """
    opens = d.get("ci95_open", [False, False])

    def num(v, default):
        return default if v is None else float(v)

    return PsychometricFit(
        threshold=num(d["threshold"], math.nan),
        slope=d["slope"],
        lapse=d["lapse"],
        criterion=d["criterion"],
        ci_low=0.0 if opens[0] else num(d["ci95"][0], math.nan),
        ci_high=math.inf if opens[1] else num(d["ci95"][1], math.nan),
        converged=d["converged"],
        scale=d["scale"],
        chance=d["chance"],
        threshold_status=d["threshold_status"],
        x=tuple(d["x"]),
        n_correct=tuple(d["n_correct"]),
        n_total=tuple(d["n_total"]),
        n_excluded=d["n_excluded"],
        threshold_bound=d.get("threshold_bound"),
    )


def psychometrics(records: list[dict], *, criterion: float, n_boot: int, seed: int | None = None) -> dict:
    """Per relative task (and unit), a psychometric fit of accuracy vs the stimulus difference.

    ``n_boot = 0`` skips the intervals; ``seed`` is not used (the fit draws no random numbers).

    The fit's guess rate stays the mean ``1/options`` of the task's items: it is the per-item
    probability that a model which knows nothing (no audio, no answer prior) picks the right
    option, which is what the psychometric function's lower asymptote models. The honest chance
    of ``scores`` (the best audio-free rule, :mod:`.chance`) is a property of the item set, not of
    an observer, and would misplace the curve's floor (a model with no text preference does not
    start at it).

    The difference is the item's ``difference`` when its task records one (a quantity that
    grows as the item gets easier, e.g. the distance ratio of a distance pair in dB), else
    its ``level_value``. A task whose levels come in several units (one per sub-question)
    gets one fit per unit, keyed ``"<task> (<unit>)"``.

    Parameters
    ----------
    records : list of dict
        Scoring records, one per item and presentation (``task``, ``correct``, ``level_value``, ...).
    criterion : float
        Accuracy in (0, 1) defining the threshold.
    n_boot : int
        0 skips the credible intervals.
    seed : int or None, optional
        Unused.

    Returns
    -------
    dict of str to dict
        Task (or ``"<task> (<unit>)"``) to its :func:`fit_to_json` record, or a ``not_fitted`` record with
        its ``reason``.
    """
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for rec in records:
        if rec.get("regime") == "relative" and rec.get("level_value") is not None:
            groups[(rec["task"], rec.get("difference_unit") or rec.get("level_unit", ""))].append(rec)
    units: dict[str, set] = defaultdict(set)
    for task, unit in groups:
        units[task].add(unit)
    by_task = {(task if len(units[task]) == 1 else f"{task} ({unit})"): recs for (task, unit), recs in groups.items()}
    out = {}
    for task, recs in sorted(by_task.items()):
        x = np.asarray([r.get("difference", r["level_value"]) for r in recs], dtype=float)
        ok = np.asarray([r["correct"] for r in recs], dtype=float)
        levels = np.unique(x[np.isfinite(x)])
        k = np.asarray([ok[x == lv].sum() for lv in levels])
        n = np.asarray([(x == lv).sum() for lv in levels])
        chance = float(np.mean([1.0 / r["n_options"] for r in recs]))
        unit = recs[0].get("difference_unit") or recs[0].get("level_unit", "")
        try:
            fit = fit_psychometric(np.abs(levels), k, n, chance=chance, criterion=criterion, n_boot=n_boot)
        except ParameterError as exc:
            out[task] = {"threshold": None, "threshold_status": "not_fitted", "reason": str(exc), "unit": unit}
            continue
        out[task] = fit_to_json(fit, unit)
    return out


FREQUENCY_THRESHOLDS = "thresholds_by_frequency"  # the analysis a task names in Task.analyses


def frequency_tasks() -> list[str]:
    """Names of the tasks declaring the per-frequency threshold analysis (each its own results key).

    Returns
    -------
    list of str
        Task names, in :func:`~auralgen.tasks.base.task_names` order.
    """
    return [name for name in task_names() if FREQUENCY_THRESHOLDS in task_class(name).analyses]


def thresholds_by_frequency(records: list[dict], task: str, *, criterion: float) -> dict:
    """``{frequency_hz (str): threshold or None}`` from ``task``'s items in its level unit, or ``{}``.

    A cell (frequency, level) counts as heard when the model's accuracy, averaged over the
    tone positions present in the cell (first half, second half, absent), reaches the
    criterion, with items at two positions at least: a bias towards one answer ("Not
    present", "first half") then scores at most 50 % and earns no threshold.

    Parameters
    ----------
    records : list of dict
        Scoring records, one per item and presentation (``task``, ``correct``, ``level_value``, ...).
    task : str
        A task of :func:`frequency_tasks`.
    criterion : float
        Accuracy in (0, 1) a level must reach to count as heard (``eval.criterion``).

    Returns
    -------
    dict of str to float or None
        Frequency in Hz (formatted ``"1000"``) to the threshold in the task's level unit (dB HL), None where
        no level reached the criterion; empty without items of ``task``.
    """
    unit = task_class(task).level_unit
    recs = [r for r in records if r["task"] == task and r.get("level_unit") == unit and "frequency_hz" in r]
    if not recs:
        return {}
    return {
        f"{f:g}": v
        for f, v in audiogram_thresholds(recs, criterion=criterion, group_key="tone_position", min_groups=2).items()
    }


def frequency_analyses(records: list[dict], *, criterion: float) -> dict[str, dict]:
    """``{task: thresholds_by_frequency(...)}`` for every task of :func:`frequency_tasks`.

    Parameters
    ----------
    records, criterion
        As in :func:`thresholds_by_frequency`.

    Returns
    -------
    dict of str to dict
        Task name to its :func:`thresholds_by_frequency`.
    """
    return {task: thresholds_by_frequency(records, task, criterion=criterion) for task in frequency_tasks()}


def frequency_levels(records: list[dict]) -> dict[str, dict]:
    """``{"<task>_levels": {frequency_hz (str): [lowest, highest]}}`` tested, for every task of
    :func:`frequency_tasks` that has items in its level unit (the items :func:`thresholds_by_frequency` reads).

    Parameters
    ----------
    records : list of dict
        As in :func:`thresholds_by_frequency`.

    Returns
    -------
    dict of str to dict
        ``"<task>_levels"`` to frequency in Hz (str) to ``[lowest, highest]`` level, in the task's level unit.
    """
    out = {}
    for task in frequency_tasks():
        unit = task_class(task).level_unit
        recs = [r for r in records if r["task"] == task and r.get("level_unit") == unit and "frequency_hz" in r]
        if recs:
            out[f"{task}_levels"] = {f"{f:g}": list(pair) for f, pair in level_ranges(recs).items()}
    return out


def audiogram_levels(results: dict, task: str) -> dict[float, tuple[float, float]]:
    """The tested level range per frequency of ``task`` from ``results`` (``{}`` when not stored).

    Parameters
    ----------
    results : dict
        A run's results (``results.json``), holding ``<task>_levels`` (:func:`frequency_levels`).
    task : str
        A task of :func:`frequency_tasks`.

    Returns
    -------
    dict of float to (float, float)
        Frequency in Hz to the lowest and highest level tested, in the task's level unit.
    """
    return {float(f): (float(lo), float(hi)) for f, (lo, hi) in results.get(f"{task}_levels", {}).items()}


def write_plots(results: dict, plot_dir: Path) -> list[str]:
    """Per-task bars, psychometric curves and per-frequency thresholds of one run; returns the file names.

    Parameters
    ----------
    results : dict
        A run's results (``results.json``: ``model``, ``scores``, ``psychometric``, per-frequency keys).
    plot_dir : Path
        The folder the ``.png`` files are written to.

    Returns
    -------
    list of str
        The names of the files written, relative to ``plot_dir``.
    """
    label = results["model"]["label"]
    written = []
    plot_task_bars({label: results["scores"]}, plot_dir / "task_bars.png")
    written.append("task_bars.png")
    for task, fit in results["psychometric"].items():
        if fit.get("threshold_status") != "not_fitted":
            name = f"psychometric_{safe_name(task)}.png"
            plot_psychometric(
                {label: fit_from_json(fit)}, plot_dir / name, x_label=f"{task} difference ({fit['unit']})"
            )
            written.append(name)
    for task in frequency_tasks():
        if results.get(task):
            name = f"{safe_name(task)}.png"
            thresholds = {label: {float(f): v for f, v in results[task].items()}}
            plot_audiogram(thresholds, plot_dir / name, levels_by_model={label: audiogram_levels(results, task)})
            written.append(name)
    return written


def write_json(path: Path, obj) -> None:
    """Write ``obj`` as indented JSON through a temporary file renamed into place.

    Parameters
    ----------
    path : Path
        The JSON file.
    obj : object
        JSON-able; a non-finite float is refused (``ValueError``).
    """
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- leaderboard


def _pct(v, digits: int = 1) -> str:
    return "–" if v is None else f"{100 * v:.{digits}f}"


def _thr(fit: dict | None) -> str:
    """A threshold cell: a number with its 95 % interval inside the tested range, else the bound it is."""
    if not fit or fit.get("threshold_status") in (None, "not_fitted"):
        return "–"
    unit, status, xs = fit["unit"], fit["threshold_status"], fit["x"]
    if status == "below_range":
        return f"< {min(xs):g} {unit} (below the lowest level)"
    if status in ("beyond_range", "not_reached"):
        why = "; plateau below the criterion" if status == "not_reached" else ""
        return f"no threshold within the tested range (> {max(xs):g} {unit}{why})"
    if status == "undetermined" or fit["threshold"] is None:
        return "undetermined (zero-width interval)"
    lo, hi = fit["ci95"]
    low_open, high_open = fit.get("ci95_open", [False, False])
    low = f"< {min(xs):g}" if low_open else ("–" if lo is None else f"{lo:.3g}")
    high = f"> {max(xs):g}" if high_open else ("–" if hi is None else f"{hi:.3g}")
    ci = "" if lo is None and hi is None and not (low_open or high_open) else f" [{low}, {high}]"
    return f"{fit['threshold']:.3g}{ci} {unit}"
