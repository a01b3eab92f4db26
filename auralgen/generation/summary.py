"""Run summaries: per task and level counts, validation outcome and speed (validation_report.json and the
console table)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def shard_levels(stats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-item stats of one shard, aggregated per task, split and level: what the journal keeps of a
    finished shard (a few records per shard, not one per item, so the journal of a million-item run
    stays small and its rewrite after every shard cheap). :func:`summarise` adds these up.

    Parameters
    ----------
    stats : list of dict
        One ``ItemResult.stat`` per item: task, split, level, level_value, resampled, redraws, dropped
        (the reason, or None) and worst_error.

    Returns
    -------
    list of dict
        One record per (task, split, level) in order of first appearance: counts of items, passed,
        resampled and dropped, the worst error (in the level's check unit), drop reasons and redraws
        by check.
    """
    rows: dict[tuple, dict[str, Any]] = {}
    for st in stats:
        key = (st["task"], st["split"], st["level"])
        r = rows.setdefault(
            key,
            {
                "task": st["task"],
                "split": st["split"],
                "level": st["level"],
                "level_value": st["level_value"],
                "items": 0,
                "passed": 0,
                "resampled": 0,
                "dropped": 0,
                "worst_error": 0.0,
                "drop_reasons": {},
                "redraws": {},
            },
        )
        r["items"] += 1
        r["resampled"] += st["resampled"]
        for check, n in st.get("redraws", {}).items():  # a journal from before 0.2.0 has none
            r["redraws"][check] = r["redraws"].get(check, 0) + n
        if st["dropped"]:
            r["dropped"] += 1
            why = st["dropped"][:120]
            r["drop_reasons"][why] = r["drop_reasons"].get(why, 0) + 1
        else:
            r["passed"] += 1
        r["worst_error"] = max(r["worst_error"], st["worst_error"])
    return list(rows.values())


def summarise(records: list[dict[str, Any]], tasks) -> dict[str, Any]:
    """Aggregate the per-level stats of all shards (:func:`shard_levels`; a record without ``levels``
    holds per-item ``items`` instead) into the validation report.

    Parameters
    ----------
    records : list of dict
        The journal records of the run's shards.
    tasks : mapping of str to Task
        The run's tasks by name (for each level's unit; a task not given gets ``""``).

    Returns
    -------
    dict of str to object
        ``levels`` (per task, split and level, sorted), ``totals`` (items, written, resampled,
        dropped), ``drop_reasons`` (``"task: reason"`` to count) and ``redraw_reasons`` (per task,
        check to count).
    """
    rows: dict[tuple, dict[str, Any]] = {}
    reasons: dict[str, int] = defaultdict(int)
    redraws: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rec in records:
        for part in rec["levels"] if "levels" in rec else shard_levels(rec["items"]):
            key = (part["task"], part["split"], part["level"])
            r = rows.setdefault(
                key,
                {k: part[k] for k in ("task", "split", "level", "level_value")}
                | {"items": 0, "passed": 0, "resampled": 0, "dropped": 0, "worst_error": 0.0},
            )
            for k in ("items", "passed", "resampled", "dropped"):
                r[k] += part[k]
            r["worst_error"] = max(r["worst_error"], part["worst_error"])
            for check, n in part["redraws"].items():
                redraws[part["task"]][check] += n
            for why, n in part["drop_reasons"].items():
                reasons[f"{part['task']}: {why}"] += n
    levels = sorted(rows.values(), key=lambda r: (r["task"], r["split"], r["level"]))
    for r in levels:
        task = tasks.get(r["task"])
        r["level_unit"] = task.design.level_info(r["level"]).unit if task else ""
        r["worst_error"] = round(r["worst_error"], 4)
    totals = {
        "items": sum(r["items"] for r in levels),
        "written": sum(r["passed"] for r in levels),
        "resampled": sum(r["resampled"] for r in levels),
        "dropped": sum(r["dropped"] for r in levels),
    }
    return {
        "levels": levels,
        "totals": totals,
        "drop_reasons": dict(sorted(reasons.items())),
        "redraw_reasons": {t: dict(sorted(c.items())) for t, c in sorted(redraws.items())},
    }


def summary_table(report: dict[str, Any], seconds: dict[str, float], wall_s: float, rendered: int) -> str:
    """A plain-text table: per task and level, items / passed / re-sampled / dropped, then speed.

    Per task, ``worker time`` is the wall time its items took, added up over all workers (``seconds``):
    more than the run's wall time when several workers run; ``items/s per worker`` divides by it. The
    last line gives the run's own wall time and rate.

    Parameters
    ----------
    report : dict of str to object
        :func:`summarise`'s report.
    seconds : dict of str to float
        Worker time per task, in seconds (a task resumed from finished shards has none).
    wall_s : float
        The run's wall time, in seconds.
    rendered : int
        Items rendered by this run (resumed shards excluded).

    Returns
    -------
    str
        The table, lines joined by newlines, without a trailing newline.
    """
    head = (
        f"{'task':<20} {'split':<8} {'level':>10} {'unit':<8} {'items':>6} {'passed':>6} {'resamp':>6} "
        f"{'dropped':>7} {'worst err':>9}"
    )
    lines = [head, "-" * len(head)]
    per_task: dict[str, int] = defaultdict(int)
    for r in report["levels"]:
        per_task[r["task"]] += r["items"]
        lines.append(
            f"{r['task']:<20} {r['split']:<8} {r['level_value']:>10g} {r['level_unit']:<8} {r['items']:>6} "
            f"{r['passed']:>6} {r['resampled']:>6} {r['dropped']:>7} {r['worst_error']:>9g}"
        )
    lines.append("-" * len(head))
    for task, n in per_task.items():
        s = seconds.get(task, 0.0)
        lines.append(
            f"{task:<20} {n:>6} items   worker time {s:7.2f} s"
            + (f"   {n / s:8.1f} items/s per worker" if s > 0 else "   (resumed)")
        )
    t = report["totals"]
    rate = rendered / wall_s if wall_s > 0 else 0.0
    lines.append(
        f"total: {t['items']} items, {t['written']} written, {t['resampled']} re-sampled, {t['dropped']} dropped; "
        f"{rendered} rendered in {wall_s:.1f} s ({rate:.1f} items/s)"
    )
    return "\n".join(lines)
