"""The audit's result: :class:`AuditReport` (JSON-able via ``to_dict``) and its text tables (``table``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SHOWN_FAILURES = 20
SHOWN_FEATURES = 3


@dataclass
class AuditReport:
    """Result of :func:`~auralgen.validation.audit.audit_dataset`; ``ok`` when no item fails and no audit flags."""

    path: str
    items: int = 0
    failures: list[dict] = field(default_factory=list)  # {id, task, split, level, shard, reasons, details}
    flags: list[dict] = field(default_factory=list)  # {audit, task, detail}
    balance: dict[str, dict] = field(default_factory=dict)
    shortcuts: dict[str, dict] = field(default_factory=dict)
    listener: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and not self.flags

    def reasons_of(self, item_id: str) -> set[str]:
        """The reasons item ``item_id`` failed.

        Parameters
        ----------
        item_id : str
            The item's ``id``.

        Returns
        -------
        set of str
            Its failure reasons (e.g. ``label``, ``clipped``); empty when it passed.
        """
        return {r for f in self.failures if f["id"] == item_id for r in f["reasons"]}

    def fail(self, item, problems: list[tuple[str, str]]) -> None:
        """Record the ``(reason, detail)`` problems of one item as its failure.

        Parameters
        ----------
        item : Decoded
            The row (:class:`~auralgen.validation.read.Decoded`).
        problems : list of (str, str)
            ``(reason, detail)`` pairs in the order found; a reason is listed once.
        """
        row = item.row
        reasons = list(dict.fromkeys(code for code, _ in problems))
        self.failures.append(
            {
                "id": row["id"],
                "task": row["task"],
                "split": row["split"],
                "level": row["level"],
                "shard": item.shard,
                "reasons": reasons,
                "details": [f"{c}: {d}" for c, d in problems],
            }
        )

    def flag(self, audit: str, task: str, detail: str) -> None:
        """Record a dataset-wide finding (a flag makes the report not ``ok``).

        Parameters
        ----------
        audit : str
            The audit that raised it, e.g. ``"listener"``.
        task : str
            The task it concerns.
        detail : str
            What was found, on one line.
        """
        self.flags.append({"audit": audit, "task": task, "detail": detail})

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (what the audit writes as JSON).

        Returns
        -------
        dict of str to object
            Every field, with ``ok``.
        """
        return {
            "path": self.path,
            "ok": self.ok,
            "items": self.items,
            "failures": self.failures,
            "flags": self.flags,
            "balance": self.balance,
            "shortcuts": self.shortcuts,
            "listener": self.listener,
            "notes": self.notes,
        }

    def table(self) -> str:
        """The human-readable tables: failures, flags, balance, shortcuts, listener accuracy.

        Returns
        -------
        str
            A headline (items, failing, flags, OK or FAIL), then each non-empty section.
        """
        out = [
            f"audit of {self.path}: {self.items} items, {len(self.failures)} failing, {len(self.flags)} flags -> "
            f"{'OK' if self.ok else 'FAIL'}"
        ]
        out += [f"note: {n}" for n in self.notes]
        for section in (_failure_lines, _flag_lines, _balance_lines, _shortcut_lines, _listener_lines):
            out += section(self)
        return "\n".join(out)


def _failure_lines(report: AuditReport) -> list[str]:
    if not report.failures:
        return []
    out = ["", "failures by task and reason:"]
    counts = Counter((f["task"], r) for f in report.failures for r in f["reasons"])
    out += [f"  {t:<20} {r:<18} {n:>5}" for (t, r), n in sorted(counts.items())]
    out += ["", f"first {min(SHOWN_FAILURES, len(report.failures))} failing items:"]
    for f in report.failures[:SHOWN_FAILURES]:
        out.append(f"  {f['id']:<22} {f['task']:<18} {f['split']:<6} level {f['level']:<3} {f['details'][0][:110]}")
    return out


def _flag_lines(report: AuditReport) -> list[str]:
    if not report.flags:
        return []
    return ["", "flags:"] + [f"  [{f['audit']}] {f['task']}: {f['detail']}" for f in report.flags]


def _balance_lines(report: AuditReport) -> list[str]:
    if not report.balance:
        return []
    out = ["", f"{'task':<20} {'answer positions':<22} {'p':>8}   answers (p)"]
    for t, b in report.balance.items():
        ans = ", ".join(f"{a}: {n}" for a, n in b["answers"].items())
        out.append(f"{t:<20} {str(b['positions']):<22} {b['position_p']:>8.3f}   {ans} ({b['answer_p']:.3f})")
    return out


def _shortcut_lines(report: AuditReport) -> list[str]:
    if not report.shortcuts:
        return []
    out = [
        "",
        "shortcut audit: CV accuracy of one non-target feature vs the majority rate "
        "(flag: lift >= margin and significant)",
        f"{'task':<20} {'n':>5} {'majority':>8}   top features (CV accuracy, lift, p)",
    ]
    for t, s in report.shortcuts.items():
        if "skipped" in s or "error" in s:
            out.append(f"{t:<20} {'skipped' if 'skipped' in s else 'error'}: {s.get('skipped') or s['error']}")
        elif "cues" in s:  # a role check (a dataset check's entry): how often the answer also holds another role
            shown = "; ".join(
                f"{'!' if r['flag'] else ''}{r['sub_question']}={r['cue']} {r['rate']:.2f} vs {r['chance']:.2f}"
                for r in s["cues"]
            )
            out.append(f"{t:<20} {shown}")
        elif "features" in s:
            top = [r for r in s["features"] if r["flag"]] or s["features"][:SHOWN_FEATURES]
            shown = "; ".join(
                f"{'!' if r['flag'] else ''}{r['feature']} {r['cv_accuracy']:.2f} ({r['lift']:+.2f}, p={r['p']:.1e})"
                for r in top
            )
            out.append(f"{t:<20} {s['n']:>5} {s['majority_rate']:>8.2f}   {shown}")
        else:  # another dataset check's entry: shown as it is
            out.append(f"{t:<20} {s}")
    return out


def _listener_lines(report: AuditReport) -> list[str]:
    if not report.listener:
        return []
    out = [
        "",
        "reference listener (audio only): accuracy per level",
        f"{'task':<20} {'level':>5} {'value':>10} {'unit':<8} {'n':>4} {'accuracy':>9}",
    ]
    for r in report.listener:
        out.append(
            f"{r['task']:<20} {r['level']:>5} {r['level_value']:>10g} {r['level_unit']:<8} "
            f"{r['n']:>4} {r['accuracy']:>9.1%}"
        )
    return out
