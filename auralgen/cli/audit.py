"""``auralgen audit <dataset dir> [--controls TRAIN] [--json report.json] [--no-listener]``: audit a dataset.

Prints the audit tables; writes nothing unless ``--json`` is given. With ``--controls TRAIN``
(another dataset of the same suite, e.g. another seed) it also trains the learned audio-free
controls (:func:`auralgen.validation.controls.audit_controls`) on TRAIN and tests them on the
dataset. Exit code 0 when every item passes and nothing is flagged, 1 otherwise, 2 (with one
``error:`` line) when a path is not a dataset. ``python -m auralgen.validation <dir>`` is the same command.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    """Audit the dataset the command line names, print the tables and return the exit code.

    Parameters
    ----------
    argv : list of str or None, optional
        The arguments after ``auralgen audit``; None reads ``sys.argv``.

    Returns
    -------
    int
        0 when every item passes and no control is flagged, 1 otherwise, 2 when a path is not a dataset.
    """
    parser = argparse.ArgumentParser(prog="auralgen audit", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="an exported dataset directory (holds data/<task>/*.parquet)")
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    parser.add_argument("--no-listener", action="store_true", help="skip the reference listener")
    parser.add_argument(
        "--controls", metavar="TRAIN", help="train the learned controls on dataset TRAIN, test on this one"
    )
    args = parser.parse_args(argv)

    from auralgen.core.errors import AuralgenError
    from auralgen.validation.audit import audit_dataset
    from auralgen.validation.controls import audit_controls

    try:
        report = audit_dataset(args.dataset, listen=not args.no_listener)
        controls = audit_controls(args.controls, args.dataset) if args.controls else None
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.table())
    result = report.to_dict()
    if controls is not None:
        print("\n" + controls.table())
        result["controls"] = controls.to_dict()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
    return 0 if report.ok and (controls is None or controls.ok) else 1
