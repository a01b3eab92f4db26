"""The audit's text report (:func:`format_report`); ``python -m auralgen.validation <dataset dir>`` runs
``auralgen audit`` (auralgen/cli/audit.py), the command line that prints it.
"""

from __future__ import annotations

import sys
from collections import Counter

SHOWN_FAILURES = 20
SHOWN_FEATURES = 3


def format_report(report) -> str:
    """The human-readable tables of an :class:`~auralgen.validation.audit.AuditReport`."""
    out = [f"audit of {report.path}: {report.items} items, {len(report.failures)} failing, {len(report.flags)} flags -> "
           f"{'OK' if report.ok else 'FAIL'}"]  # fmt: skip
    out += [f"note: {n}" for n in report.notes]
    if report.failures:
        out += ["", "failures by task and reason:"]
        counts = Counter((f["task"], r) for f in report.failures for r in f["reasons"])
        out += [f"  {t:<20} {r:<18} {n:>5}" for (t, r), n in sorted(counts.items())]
        out += ["", f"first {min(SHOWN_FAILURES, len(report.failures))} failing items:"]
        for f in report.failures[:SHOWN_FAILURES]:
            out.append(f"  {f['id']:<22} {f['task']:<18} {f['split']:<6} level {f['level']:<3} {f['details'][0][:110]}")
    if report.flags:
        out += ["", "flags:"] + [f"  [{f['audit']}] {f['task']}: {f['detail']}" for f in report.flags]
    if report.balance:
        out += ["", f"{'task':<20} {'answer positions':<22} {'p':>8}   answers (p)"]
        for t, b in report.balance.items():
            ans = ", ".join(f"{a}: {n}" for a, n in b["answers"].items())
            out.append(f"{t:<20} {str(b['positions']):<22} {b['position_p']:>8.3f}   {ans} ({b['answer_p']:.3f})")
    if report.shortcuts:
        out += ["", "shortcut audit: CV accuracy of one non-target feature vs the majority rate (flag: lift >= margin and significant)",
                f"{'task':<20} {'n':>5} {'majority':>8}   top features (CV accuracy, lift, p)"]  # fmt: skip
        for t, s in report.shortcuts.items():
            if "skipped" in s or "error" in s:
                out.append(f"{t:<20} {'skipped' if 'skipped' in s else 'error'}: {s.get('skipped') or s['error']}")
                continue
            if "cues" in s:  # mixture: how often the named sound also holds another role
                shown = "; ".join(f"{'!' if r['flag'] else ''}{r['sub_question']}={r['cue']} {r['rate']:.2f} vs {r['chance']:.2f}"
                                  for r in s["cues"])  # fmt: skip
                out.append(f"{t:<20} {shown}")
                continue
            top = [r for r in s["features"] if r["flag"]] or s["features"][:SHOWN_FEATURES]
            shown = "; ".join(
                f"{'!' if r['flag'] else ''}{r['feature']} {r['cv_accuracy']:.2f} ({r['lift']:+.2f}, p={r['p']:.1e})"
                for r in top
            )
            out.append(f"{t:<20} {s['n']:>5} {s['majority_rate']:>8.2f}   {shown}")
    if report.listener:
        out += [
            "",
            "reference listener (audio only): accuracy per level",
            f"{'task':<20} {'level':>5} {'value':>10} {'unit':<8} {'n':>4} {'accuracy':>9}",
        ]
        for r in report.listener:
            out.append(
                f"{r['task']:<20} {r['level']:>5} {r['level_value']:>10g} {r['level_unit']:<8} {r['n']:>4} {r['accuracy']:>9.1%}"
            )
    return "\n".join(out)


if __name__ == "__main__":  # ``python -m auralgen.validation <dir>``: the former spelling of ``auralgen audit``
    import runpy

    sys.argv[1:1] = ["audit"]
    runpy.run_module("auralgen.cli", run_name="__main__", alter_sys=True)
