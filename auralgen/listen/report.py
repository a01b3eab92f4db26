"""``auralgen listen report``: what the participants of a study did, per participant and pooled.

Only participants who passed the headphone screening count. **Fixed** trials: accuracy per task and
level value (pooled: all their trials together). **Adaptive** tracks: each participant's threshold
from their own trials, replayed through a fresh procedure built as during the session (posterior
median and 95 % interval of the 75 %-correct point; a value past the tested range is a bound, never a
number: :func:`~auralgen.evaluation.adaptive.session.track_summary`). Pooled: the mean of the
participants' thresholds on the track's axis (log10 of the value on a log domain, the value on a
linear one) with a 95 % t interval across participants (``n >= 2``; one participant: their own
interval); participants whose track ended in a bound are counted apart (``n_bounds``), not averaged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

from auralgen.core.errors import ParameterError
from auralgen.evaluation.adaptive.session import TrackResult, track_summary
from auralgen.evaluation.items import dataset_fingerprint

from .schedule import adaptive_tracks, new_procedure
from .store import Store
from .study import StudyConfig

__all__ = ["human_entry", "study_report", "report_table"]


def _fixed(rows: list[dict]) -> dict:
    cells: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in rows:
        cell = cells[r["task"]][float(r["level_value"])]
        cell[0], cell[1] = cell[0] + int(r["correct"]), cell[1] + 1
    return {
        task: {f"{lv:g}": {"correct": k, "n": n, "accuracy": k / n} for lv, (k, n) in sorted(levels.items())}
        for task, levels in sorted(cells.items())
    }


def _thresholds(study: StudyConfig, rows: list[dict], tracks: dict) -> dict:
    out = {}
    for name, task in tracks.items():
        mine = [r for r in rows if r["track"] == name]
        if not mine:
            continue
        proc = new_procedure(study, task)
        for r in mine:
            proc.update(r["level_value"], bool(r["correct"]))
        s = track_summary(TrackResult(name, proc, mine))
        out[name] = {k: s.get(k) for k in ("threshold", "ci95", "n_trials", "status", "message", "bound", "bound_side")}
        out[name].update(unit=task.level_unit, scale=proc.domain.scale, finished=proc.done())
    return out


def _pooled_threshold(per: list[dict]) -> dict:
    unit, scale = per[0]["unit"], per[0]["scale"]
    numbers = [p for p in per if p["threshold"] is not None]
    entry = {"unit": unit, "n": len(numbers), "n_bounds": len(per) - len(numbers), "threshold": None, "ci95": None}
    if not numbers:
        return entry
    to_axis = math.log10 if scale == "log" else float
    back = (lambda u: 10.0**u) if scale == "log" else float
    u = np.array([to_axis(p["threshold"]) for p in numbers])
    if len(u) == 1:
        lo, hi = numbers[0]["ci95"]
        return entry | {"threshold": numbers[0]["threshold"], "ci95": [lo, hi]}
    half = stats.t.ppf(0.975, len(u) - 1) * u.std(ddof=1) / math.sqrt(len(u))
    return entry | {"threshold": back(u.mean()), "ci95": [back(u.mean() - half), back(u.mean() + half)]}


def study_report(study: StudyConfig) -> dict:
    """Per participant and pooled results of ``study`` (see the module docstring).

    Parameters
    ----------
    study : StudyConfig
        The checked study whose ``out`` folder holds ``listen.sqlite``.

    Returns
    -------
    dict
        ``study``, ``seed``, ``n`` (participants counted), ``screened_out``, ``dataset`` (the fixed
        block's manifest SHA-256 and split, or None), ``participants`` (id to ``fixed`` accuracy per task
        and level and ``adaptive`` threshold per track, in the track's level unit) and ``pooled``.

    Raises
    ------
    ParameterError
        If ``study.out`` holds no ``listen.sqlite``.
    """
    if not study.db_path.exists():
        raise ParameterError(f"out={study.out!r} holds no listen.sqlite; allowed: the out folder of a study that ran")
    store = Store(study.db_path, read_only=True)
    try:
        people = [p for p in store.participants() if p["screening_passed"] == 1]
        tracks = adaptive_tracks(study)
        per, fixed_rows = {}, []
        for p in people:
            fixed = store.trials(p["pid"], "fixed")
            adaptive = store.trials(p["pid"], "adaptive")
            if not fixed and not adaptive:
                continue
            fixed_rows += fixed
            per[p["pid"]] = {
                "screening_correct": p["screening_correct"],
                "fixed": _fixed(fixed),
                "adaptive": _thresholds(study, adaptive, tracks),
            }
        screened_out = sum(1 for p in store.participants() if p["screening_passed"] == 0)
    finally:
        store.close()
    by_track = defaultdict(list)
    for p in per.values():
        for name, t in p["adaptive"].items():
            by_track[name].append(t)
    pooled = {"fixed": _fixed(fixed_rows), "adaptive": {n: _pooled_threshold(v) for n, v in by_track.items()}}
    dataset = None
    if study.fixed is not None:
        dataset = {"manifest_sha256": dataset_fingerprint(study.fixed.data), "split": study.fixed.split}
    return {
        "study": str(Path(study.out)),
        "seed": study.seed,
        "n": len(per),
        "screened_out": screened_out,
        "dataset": dataset,
        "participants": per,
        "pooled": pooled,
    }


def human_entry(report: dict) -> dict:
    """What the leaderboard shows of a study (:func:`auralgen.evaluation.leaderboard.update_human`): the pooled
    thresholds, and the pooled accuracy per task of the fixed block with the dataset it came from.

    Parameters
    ----------
    report : dict
        A study report, as :func:`study_report` returns it.

    Returns
    -------
    dict
        ``n``, ``seed``, ``study``, ``tracks`` (pooled thresholds per track) and, when the study had a
        fixed block, ``fixed`` (the dataset and ``by_task`` correct, n and accuracy).
    """
    entry = {"n": report["n"], "seed": report["seed"], "study": report["study"], "tracks": report["pooled"]["adaptive"]}
    dataset = report.get("dataset")
    if dataset and report["pooled"]["fixed"]:
        by_task = {}
        for task, levels in report["pooled"]["fixed"].items():
            k, n = sum(c["correct"] for c in levels.values()), sum(c["n"] for c in levels.values())
            by_task[task] = {"correct": k, "n": n, "accuracy": k / n}
        entry["fixed"] = {**dataset, "n": report["n"], "by_task": by_task}
    return entry


def _cell(t: dict) -> str:
    if t.get("threshold") is None:
        bound = t.get("bound")
        return f"{t.get('bound_side', '<')} {bound:g} {t['unit']}" if bound is not None else "no threshold"
    lo, hi = t["ci95"]
    return f"{t['threshold']:.3g} {t['unit']} [{lo:.3g}, {hi:.3g}]"


def report_table(report: dict) -> str:
    """The report as plain text: fixed accuracy per task and level, thresholds per track.

    Parameters
    ----------
    report : dict
        The study report to print (:func:`study_report`).

    Returns
    -------
    str
        A line of participant counts, then one line per task and per track, pooled first and then per
        participant; thresholds with their unit and 95 % interval, or the bound a track ended in.
    """
    lines = [f"{report['n']} participant(s) passed the screening ({report['screened_out']} screened out)"]
    rows = [("pooled", report["pooled"]["fixed"], report["pooled"]["adaptive"])]
    rows += [(pid, p["fixed"], p["adaptive"]) for pid, p in report["participants"].items()]
    for who, fixed, adaptive in rows:
        for task, levels in fixed.items():
            cells = ", ".join(f"{lv}: {c['correct']}/{c['n']}" for lv, c in levels.items())
            lines.append(f"{who:<10} fixed    {task}: {cells}")
        for name, t in adaptive.items():
            extra = f" (n = {t['n']}, {t['n_bounds']} bound(s))" if "n_bounds" in t else f" ({t['n_trials']} trials)"
            lines.append(f"{who:<10} adaptive {name}: {_cell(t)}{extra}")
    return "\n".join(lines)
