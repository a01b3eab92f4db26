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

import sys

from auralgen.validation.controls_cli import run_controls

from .items import dataset_fingerprint
from .leaderboard import update_controls

__all__ = ["main"]


def main(argv: list[str] | None = None, *, log=print) -> int:
    """Run the controls and store them (see the module docstring).

    Parameters
    ----------
    argv : list of str or None
        ``TRAIN TEST [--leaderboard PATH]`` (None: ``sys.argv[1:]``).
    log : callable
        Called with each line to show (the table, then the leaderboard written).

    Returns
    -------
    int
        0, or 2 after one ``error:`` line when a path is not a dataset.
    """

    def store(args, report) -> int:
        fingerprint = dataset_fingerprint(args.test)
        log(report.table())
        log(f"wrote {update_controls(args.leaderboard, report.to_dict(), fingerprint)}")
        return 0

    return run_controls(
        argv,
        prog="python -m auralgen.evaluation.controls_board",
        description="learned audio-free controls as leaderboard rows",
        options={"--leaderboard": {"default": "results/leaderboard.md", "help": "leaderboard markdown to update"}},
        then=store,
    )


if __name__ == "__main__":
    sys.exit(main())
