"""``auralgen audit <dataset dir> [--json report.json] [--no-listener]``: audit an exported dataset.

Prints the audit tables; writes nothing unless ``--json`` is given. Exit code 0 when every
item passes and no audit flags, 1 otherwise, 2 (with one ``error:`` line) when the path is
not a dataset. ``python -m auralgen.validation <dir>`` is the same command.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="auralgen audit", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="an exported dataset directory (holds data/<task>/*.parquet)")
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    parser.add_argument("--no-listener", action="store_true", help="skip the reference listener")
    args = parser.parse_args(argv)

    from auralgen.errors import AuralgenError
    from auralgen.validation.audit import audit_dataset

    try:
        report = audit_dataset(args.dataset, listen=not args.no_listener)
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report.to_dict(), fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
    return 0 if report.ok else 1
