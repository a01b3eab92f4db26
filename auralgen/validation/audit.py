"""Audits of an exported dataset directory: labels, audio sanity, balance, shortcuts, leakage.

:func:`audit_dataset` streams the parquet shards one row group at a time (the audio of the
whole dataset is never held in memory) and folds every row through a list of checks
(:class:`~auralgen.validation.read.Check`: ``observe`` each row, then ``finish`` into the report):

- the per-item checks of :mod:`auralgen.validation.checks` (label, measurement, clipped,
  silent, duplicate audio, duplicate parameters across splits, leak; ``bad_row`` from reading);
- per task: answer-position balance and option balance (chi-square, :mod:`~auralgen.validation.balance`);
- the checks a task declares over all of its items (``audit.dataset_checks``) and the shortcut
  audit (can one non-target feature alone predict the answer? see each task's
  ``audit.target_features``; :mod:`~auralgen.validation.shortcuts`);
- the reference listener's accuracy per level (:mod:`auralgen.validation.listener`), flagged when
  it stays below the task's ``audit.listener_floor`` at its easiest level.

Tasks are rebuilt from ``manifest.json`` (:func:`~auralgen.validation.read.tasks_for`).

Examples
--------
>>> report = audit_dataset("data/default")   # doctest: +SKIP
>>> report.ok, report.to_dict()["items"]      # doctest: +SKIP
"""

from __future__ import annotations

from collections import Counter, defaultdict

from auralgen.tasks.base import TASKS, task_class, task_names
from auralgen.validation.balance import AnswerBalance
from auralgen.validation.checks import AudioCheck, IdentityCheck, LabelCheck
from auralgen.validation.read import Check, Observed, dataset_shards, iter_decoded, observe, tasks_for
from auralgen.validation.report import AuditReport
from auralgen.validation.shortcuts import FeatureShortcuts, TaskDatasetChecks

__all__ = [
    "AuditReport",
    "audit_dataset",
    "default_checks",
    "iter_decoded",
]  # iter_decoded: validation.listener reads it here

LISTENER_MIN_ITEMS = (
    5  # a task's listener floor (AuditSpec.listener_floor) is checked from this many items at its easiest level
)


def audit_dataset(path, *, listen: bool = True) -> AuditReport:
    """Run every audit on the exported dataset at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        An exported dataset directory (``data/<task>/*.parquet``).
    listen : bool
        Also run the reference listeners (accuracy per task and level).

    Returns
    -------
    AuditReport
        Balance, shortcut and listener results, and the flags they raise.

    Raises
    ------
    ParameterError
        If ``path`` is not a dataset directory (no ``data/<task>/*.parquet``).
    """
    dataset_shards(path)
    tasks, notes = tasks_for(path)
    report = AuditReport(str(path), notes=notes)
    checks = default_checks(listen=listen)
    for item in iter_decoded(path):
        report.items += 1
        seen = observe(item, tasks)
        for check in checks:
            check.observe(seen)
        if seen.problems:
            report.fail(item, seen.problems)
    for check in checks:
        check.finish(report)
    return report


def default_checks(*, listen: bool = True) -> list[Check]:
    """The audit's checks, in the order they observe a row (so the order of an item's reasons)
    and finish (so the order of the report's flags: balance, shortcuts, listener).

    Parameters
    ----------
    listen : bool, optional
        Add the reference listener's accuracy check (default True).

    Returns
    -------
    list of Check
        Fresh check objects: label, identity, audio, answer balance, the tasks' dataset checks,
        feature shortcuts and (with ``listen``) listener accuracy.
    """
    checks = [LabelCheck(), IdentityCheck(), AudioCheck(), AnswerBalance(), TaskDatasetChecks(), FeatureShortcuts()]
    if listen:
        from auralgen.validation import listener

        checks.append(ListenerAccuracy(listener))
    return checks


class ListenerAccuracy(Check):
    """The reference listener's answer to every audible item it has an answerer for, counted per
    ``(task, level)``; a task below its ``audit.listener_floor`` at its easiest level is flagged."""

    def __init__(self, listener):
        self.listener = listener  # the module auralgen.validation.listener
        self.heard: dict[tuple, list] = defaultdict(lambda: [0, 0, None, None])  # n, correct, value, unit

    def listens(self, seen: Observed) -> bool:
        """Whether the row's task is known and binds a listener (``Task.listener`` is not None).

        Parameters
        ----------
        seen : Observed
            The row as the checks see it.

        Returns
        -------
        bool
            True when the reference listener can answer the row's task.
        """
        name = seen.row["task"]
        return name in TASKS and task_class(name).listener is not None

    def observe(self, seen: Observed) -> None:
        if not seen.audible or not self.listens(seen):
            return
        row, item = seen.row, seen.item
        rec = self.heard[(row["task"], row["level"])]
        rec[0] += 1
        got = self.listener.answer(
            row["task"],
            row["question"],
            list(row["options"]),
            item.clips,
            item.sample_rate,
            layout=row.get("channel_layout"),
        )
        rec[1] += int(got == row["answer_index"])
        rec[2], rec[3] = row["level_value"], row["level_unit"]

    def finish(self, report: AuditReport) -> None:
        for (name, level), (n, correct, value, unit) in sorted(self.heard.items()):
            report.listener.append(
                {
                    "task": name,
                    "level": level,
                    "level_value": value,
                    "level_unit": unit,
                    "n": n,
                    "correct": correct,
                    "accuracy": correct / n,
                }
            )
        for name in sorted({r["task"] for r in report.listener}):
            if name in task_names():  # a task this auralgen does not know: flagged by the shortcut audit
                _floor_flag(report, name, [r for r in report.listener if r["task"] == name])


def _floor_flag(report: AuditReport, name: str, recs: list[dict]) -> None:
    """Flag task ``name`` when the listener stays below its floor at the easiest level (``recs``: its levels)."""
    unit = Counter(r["level_unit"] for r in recs).most_common(1)[0][0]
    spec = task_class(name).audit
    if spec.listener_easiest is None:
        return
    pick = min if spec.listener_easiest == "min" else max
    easy = pick((r for r in recs if r["level_unit"] == unit), key=lambda r: r["level_value"])
    floor = spec.listener_floor
    if easy["n"] >= LISTENER_MIN_ITEMS and easy["accuracy"] < floor:
        report.flag(
            "listener",
            name,
            f"reference listener {easy['accuracy']:.0%} at the easiest level "
            f"({easy['level_value']:g} {unit}); expected >= {floor:.0%}",
        )
