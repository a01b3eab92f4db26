"""``python -m auralgen.validation <dataset dir>``: the same audit as ``auralgen audit``
(auralgen/cli/audit.py); the report's text tables are ``AuditReport.table()`` (validation/report.py).

``python -m auralgen.validation controls TRAIN TEST [--json OUT]``: the learned controls
(:func:`auralgen.validation.controls.audit_controls`) trained on dataset TRAIN, tested on TEST; prints
the per-task table. Exit code 0 when clean, 1 when a control is flagged or a task has too few items
to be called clean, 2 (one ``error:`` line) when a path is not a dataset.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

from auralgen.validation.controls_cli import run_controls


def controls(argv: list[str]) -> int:
    """The ``controls`` subcommand (see the module docstring).

    Parameters
    ----------
    argv : list of str
        ``TRAIN TEST [--json OUT]``.

    Returns
    -------
    int
        0 when every control is clean, 1 when one is flagged or a task has too few items, 2 when a
        dataset cannot be read.
    """

    def verdict(args, report) -> int:
        print(report.table())
        if args.json:
            Path(args.json).write_text(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return 0 if report.ok else 1

    return run_controls(
        argv,
        prog="python -m auralgen.validation controls",
        description="learned audio-free controls: train on TRAIN, test on TEST",
        options={"--json": {"metavar": "OUT", "help": "also write the report as JSON to OUT"}},
        then=verdict,
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["controls"]:
        sys.exit(controls(sys.argv[2:]))
    sys.argv[1:1] = ["audit"]
    runpy.run_module("auralgen.cli", run_name="__main__", alter_sys=True)
