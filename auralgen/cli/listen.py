"""``auralgen listen STUDY.yaml [--host H] [--port P]``: serve a listening test to people;
``auralgen listen report STUDY.yaml [--json OUT] [--leaderboard PATH]``: what they answered.

The study file is described in :mod:`auralgen.listen.study`; the app in :mod:`auralgen.listen.app`.
Needs the optional extra ``auralgen[listen]`` (Starlette, uvicorn). Exit code 2 with one ``error:``
line for a bad study file or a missing extra.
"""

from __future__ import annotations

import argparse
import json
import sys


def _serve(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="auralgen listen", description="serve a listening test (docs: tutorials/human-baselines.md)"
    )
    parser.add_argument("study", help="the study file (YAML)")
    parser.add_argument("--host", default="127.0.0.1", help="interface; off 127.0.0.1 links need the study token")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    from auralgen.listen.app import serve
    from auralgen.listen.study import load_study

    serve(load_study(args.study), host=args.host, port=args.port)
    return 0


def _report(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="auralgen listen report", description="per participant and pooled results")
    parser.add_argument("study", help="the study file (YAML) of the study that ran")
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT")
    parser.add_argument("--leaderboard", metavar="PATH", help="add the human row to this leaderboard (markdown)")
    args = parser.parse_args(argv)
    from auralgen.evaluation.leaderboard import update_human
    from auralgen.listen.report import human_entry, report_table, study_report
    from auralgen.listen.study import load_study

    report = study_report(load_study(args.study))
    print(report_table(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1, sort_keys=True)
            fh.write("\n")
    if args.leaderboard:
        print(f"leaderboard: {update_human(args.leaderboard, human_entry(report))}")
    return 0


def main(argv: list[str]) -> int:
    """Serve the study (``STUDY.yaml ...``) or report on it (``report STUDY.yaml ...``).

    Parameters
    ----------
    argv : list of str
        The arguments after ``auralgen listen``.

    Returns
    -------
    int
        0 when the server stopped or the report was written, 2 (one ``error:`` line) for a bad study file
        or a missing ``auralgen[listen]`` extra.
    """
    from auralgen.core.errors import AuralgenError

    try:
        return _report(argv[1:]) if argv[:1] == ["report"] else _serve(argv)
    except ModuleNotFoundError as exc:
        print(
            f"error: auralgen listen needs {exc.name}, which is absent; allowed: pip install 'auralgen[listen]'",
            file=sys.stderr,
        )
        return 2
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
