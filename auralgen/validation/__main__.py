"""``python -m auralgen.validation <dataset dir>``: the same audit as ``auralgen audit``
(auralgen/cli/audit.py); the report's text tables are ``AuditReport.table()`` (validation/report.py).

``python -m auralgen.validation controls TRAIN TEST [--json OUT]``: the learned controls
(:func:`auralgen.validation.controls.audit_controls`) trained on dataset TRAIN, tested on TEST; prints
the per-task table. Exit code 0 when clean, 1 when a control is flagged or a task has too few items
to be called clean, 2 (one ``error:`` line) when a path is not a dataset.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path


def controls(argv: list[str]) -> int:
    """The ``controls`` subcommand (see the module docstring).

    Parameters
    ----------
    argv : list of str
        The arguments after ``controls``: ``TRAIN TEST [--json OUT]``.

    Returns
    -------
    int
        The exit code: 0 clean, 1 flagged or too few items, 2 when a path is not a dataset.
    """
    parser = argparse.ArgumentParser(
        prog="python -m auralgen.validation controls",
        description="learned audio-free controls: train on TRAIN, test on TEST",
    )
    parser.add_argument("train", help="dataset directory the controls are trained on (e.g. seed 0)")
    parser.add_argument("test", help="dataset directory they are tested on (e.g. seed 1)")
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    args = parser.parse_args(argv)

    from auralgen.core.errors import AuralgenError
    from auralgen.validation.controls import audit_controls

    try:
        report = audit_controls(args.train, args.test)
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["controls"]:
        sys.exit(controls(sys.argv[2:]))
    sys.argv[1:1] = ["audit"]
    runpy.run_module("auralgen.cli", run_name="__main__", alter_sys=True)
