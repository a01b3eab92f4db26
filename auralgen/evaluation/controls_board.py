"""``python -m auralgen.evaluation.controls_board TRAIN TEST [--leaderboard PATH]``: the learned
audio-free controls beside the models (``make eval`` runs it).

Trains the four controls of :mod:`auralgen.validation.controls` on dataset TRAIN (another seed of
the same suite), tests them on every item of dataset TEST (the dataset the models are evaluated
on), prints their per-task table and stores them in the leaderboard (:func:`~.leaderboard.update_controls`):
every run on TEST gets one row per control, marked *audio-free control*. Exit code 0 (the
controls' verdict is shown, not enforced: ``python -m auralgen.validation controls`` enforces it),
2 with one ``error:`` line when a path is not a dataset.
"""

from __future__ import annotations

import argparse
import sys

from auralgen.core.errors import AuralgenError

from .items import dataset_fingerprint
from .leaderboard import update_controls

__all__ = ["main"]


def main(argv: list[str] | None = None, *, log=print) -> int:
    """Run the controls and store them (see the module docstring); returns the exit code.

    Parameters
    ----------
    argv : list of str or None, optional
        ``TRAIN TEST [--leaderboard PATH]``; None reads ``sys.argv``.
    log : callable, optional
        Called with each line of output (the controls' table, the leaderboard written).

    Returns
    -------
    int
        0 when the controls ran and were stored, 2 when a path is not a dataset.
    """
    parser = argparse.ArgumentParser(
        prog="python -m auralgen.evaluation.controls_board",
        description="learned audio-free controls as leaderboard rows",
    )
    parser.add_argument("train", help="dataset the controls are trained on (e.g. data/default_seed1)")
    parser.add_argument("test", help="dataset they are tested on, the models' dataset (e.g. data/default)")
    parser.add_argument("--leaderboard", default="results/leaderboard.md", help="leaderboard markdown to update")
    args = parser.parse_args(argv)

    from auralgen.validation.controls import audit_controls

    try:
        fingerprint = dataset_fingerprint(args.test)
        report = audit_controls(args.train, args.test)
    except (AuralgenError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    log(report.table())
    log(f"wrote {update_controls(args.leaderboard, report.to_dict(), fingerprint)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
