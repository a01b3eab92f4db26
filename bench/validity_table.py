"""The per-task validity table of the docs (Controls and honest chance): controls, listener, kept / re-drawn / dropped.

Generates ``suite=validity`` at seed 0 (the tested set) and seed 1 (the controls' training set),
each skipped when its ``manifest.json`` exists, audits seed 0 (reference listener included:
:func:`auralgen.validation.audit.audit_dataset`), trains the learned controls on seed 1 and tests
them on seed 0 (:func:`auralgen.validation.controls.audit_controls`), and prints the exact
commands, then ONE markdown table, one row per task, read from those report objects and from
seed 0's ``validation_report.json``:

===================  ==========================================================================
n                    test items of the task (the controls' ``n``)
stated / honest      chance: mean ``1/options``; the best of the answer-text prior, the position
                     prior (both trained on seed 1) and ``1/options`` (``ControlsReport``)
text / words /       each control's accuracy with its 95 % Wilson interval: (a) answer-text prior,
meta / pos           (b) option-text model, (c) metadata kNN, (d) position prior
MDE                  the smallest excess over the honest chance detectable at this ``n``
controls             the task's verdict: ``clean``, ``fail`` or ``too few items``
listener easiest     the reference listener's accuracy at the task's easiest level
                     (``AuditSpec.listener_easiest``; without one, every level)
listener zero        its accuracy where the difference is zero (``–``: the task has no such level)
kept / re-drawn /    from ``validation_report.json``: items written, re-draws (an item whose
dropped              measurement contradicted its label, drawn again), items dropped, with the
                     checks that failed on re-draws and the drop reasons
label confirmed      share of kept items whose measurement confirms the label: the audit's
                     ``label`` and ``measurement`` checks both pass
===================  ==========================================================================

Run ``python bench/validity_table.py [TEST_DIR [TRAIN_DIR]] [--workers N] [-- OVERRIDE ...]``
(defaults ``data/validity`` and ``data/validity_seed1``; overrides go to both generations, e.g.
a smaller suite for a quick look). It takes ~2 min per seed to generate on an idle machine, then
the audit.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen.tasks.base import task_class  # noqa: E402
from auralgen.validation.audit import audit_dataset  # noqa: E402
from auralgen.validation.controls import CONTROLS, audit_controls  # noqa: E402

CONFIRMS = ("label", "measurement")  # the audit's checks that compare the label with the audio
SHORT = {"text_prior": "text", "option_text": "words", "metadata": "meta", "position_prior": "pos", "nuisance": "audio"}


def generate_command(out: str, seed: int, overrides: list[str], workers: int | None) -> list[str]:
    """The ``generate.py`` command line of one seed."""
    suite = [] if any(o.startswith("suite=") for o in overrides) else ["suite=validity"]
    cmd = [sys.executable, "generate.py", *suite, *overrides, f"seed={seed}", f"out={out}", "progress=false"]
    return cmd + ([f"workers={workers}"] if workers else [])


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def listener_cells(name: str, levels: list[dict]) -> tuple[str, str]:
    """(easiest, zero) cells of the task's listener rows (``AuditReport.listener``): the easiest level in the
    task's main unit, or every level where the task names no easiest end."""
    if not levels:
        return "–", "–"
    unit = Counter(r["level_unit"] for r in levels).most_common(1)[0][0]
    rows = sorted((r for r in levels if r["level_unit"] == unit), key=lambda r: r["level_value"])
    zero = [r for r in rows if r["level_value"] == 0]
    zero_cell = "–" if not zero else f"{_pct(zero[0]['accuracy'])} (n={zero[0]['n']})"
    spec = task_class(name).audit.listener_easiest
    if spec is None:  # every level, in grid order, a group per run of one unit (mixture: LU, s, LU, s)
        groups: list[tuple[str, list[str]]] = []
        for r in sorted(levels, key=lambda r: r.get("level", 0)):
            if not groups or groups[-1][0] != r["level_unit"]:
                groups.append((r["level_unit"], []))
            groups[-1][1].append(f"{r['level_value']:g}: {_pct(r['accuracy'])}")
        return "per level " + " / ".join(f"({u}) {'; '.join(cells)}" for u, cells in groups), zero_cell
    easy = rows[0] if spec == "min" else rows[-1]
    return f"{_pct(easy['accuracy'])} at {easy['level_value']:g} {unit} (n={easy['n']})", zero_cell


def generation_counts(validation_report: dict) -> dict[str, dict]:
    """Per task from a generation's ``validation_report.json``: kept, re-drawn, dropped and drop reasons."""
    out: dict[str, dict] = defaultdict(lambda: {"kept": 0, "redrawn": 0, "dropped": 0, "reasons": {}, "checks": {}})
    for r in validation_report["levels"]:
        c = out[r["task"]]
        c["kept"] += r["passed"]
        c["redrawn"] += r["resampled"]
        c["dropped"] += r["dropped"]
    for key, n in validation_report["drop_reasons"].items():
        task, _, why = key.partition(": ")
        out[task]["reasons"][why] = n
    for task, checks in validation_report.get("redraw_reasons", {}).items():
        out[task]["checks"] = dict(checks)
    return dict(out)


def confirmed_share(task: str, kept: int, audit) -> float | None:
    """Share of the task's ``kept`` items with no ``label`` or ``measurement`` failure in ``audit``."""
    bad = {f["id"] for f in audit.failures if f["task"] == task and set(f["reasons"]) & set(CONFIRMS)}
    return None if kept == 0 else (kept - len(bad)) / kept


def table(controls, audit, validation_report: dict) -> str:
    """The markdown table (see the module docstring) from the report objects."""
    counts = generation_counts(validation_report)
    listened = defaultdict(list)
    for r in audit.listener:
        listened[r["task"]].append(r)
    head = [
        "task",
        "n",
        "stated chance",
        "honest chance",
        *[f"{SHORT[c]} [95 % CI]" for c in CONTROLS],
        "MDE",
        "controls",
        "listener easiest",
        "listener zero",
        "kept / re-drawn / dropped",
        "label confirmed",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in controls.tasks:
        name = t["task"]
        ctl = [t["controls"][c] for c in CONTROLS]
        cells = [f"{_pct(c['accuracy'])} [{_pct(c['ci'][0])}, {_pct(c['ci'][1])}]" for c in ctl]
        easiest, zero = listener_cells(name, listened.get(name, []))
        g = counts.get(name, {"kept": 0, "redrawn": 0, "dropped": 0, "reasons": {}, "checks": {}})
        why = "; ".join(
            [
                *(f"re-drawn {n}× {c}" for c, n in sorted(g["checks"].items())),
                *(f"dropped {n}× {r}" for r, n in sorted(g["reasons"].items())),
            ]
        )
        row = [
            name,
            str(t["n"]),
            _pct(t["stated_chance"]),
            _pct(t["honest_chance"]),
            *cells,
            _pct(t["mde"]),
            t["status"],
            easiest,
            zero,
            f"{g['kept']} / {g['redrawn']} / {g['dropped']}" + (f" ({why})" if why else ""),
            _pct(confirmed_share(name, g["kept"], audit)),
        ]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None, *, log=print) -> str:
    """Generate (when missing), audit, print the commands and the table; returns the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test", nargs="?", default="data/validity", help="seed 0: the tested dataset")
    parser.add_argument("train", nargs="?", default="data/validity_seed1", help="seed 1: the controls' training set")
    parser.add_argument("--workers", type=int, default=None, help="generation workers (default: the config's)")
    parser.add_argument(
        "--results",
        default=None,
        help="also write the verdict and table to this file (the docs page reads bench/results/validity_table.md)",
    )
    parser.add_argument("overrides", nargs="*", help="after '--': generation overrides for both seeds")
    args = parser.parse_args(argv)
    commands = []
    for out, seed in ((args.test, 0), (args.train, 1)):
        cmd = generate_command(out, seed, args.overrides, args.workers)
        commands.append(shlex.join(["python", *cmd[1:]]))
        if not (Path(out) / "manifest.json").exists():
            subprocess.run([cmd[0], str(ROOT / cmd[1]), *cmd[2:]], check=True, stdout=subprocess.DEVNULL)
    commands.append(f"python -m auralgen.validation {shlex.quote(args.test)} --controls {shlex.quote(args.train)}")
    commands.append(
        shlex.join(
            ["python", "bench/validity_table.py", args.test, args.train]
            + (["--results", args.results] if args.results else [])
        )
    )
    audit = audit_dataset(args.test)
    controls = audit_controls(args.train, args.test)
    report = json.loads((Path(args.test) / "validation_report.json").read_text(encoding="utf-8"))
    out = table(controls, audit, report)
    log("Measured by (the generations are skipped when their manifest.json exists):\n")
    log("```\n" + "\n".join(commands) + "\n```\n")
    log(
        f"Controls trained on `{args.train}`, tested on `{args.test}`: verdict **{controls.verdict}**; "
        f"audit of `{args.test}`: {audit.items} items, {len(audit.failures)} failing, {len(audit.flags)} "
        "flags.\n"
    )
    log(out)
    if args.results:
        verdict = (
            f"Controls trained on `{args.train}`, tested on `{args.test}`: verdict **{controls.verdict}**; "
            f"audit of `{args.test}`: {audit.items} items, {len(audit.failures)} failing, {len(audit.flags)} "
            "flags."
        )
        write_results(Path(args.results), commands[-1], verdict, out)
    return out


def write_results(path: Path, command: str, verdict: str, table_md: str) -> None:
    """The docs page's validity table: who measured it, when, on what, then the verdict and the table."""
    import datetime as dt
    import platform

    stamp = (
        f"Measured by `{command}` on {dt.date.today().isoformat()} "
        f"({os.cpu_count()} cores, Python {platform.python_version()})."
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{stamp}\n\n{verdict}\n\n{table_md.rstrip()}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
