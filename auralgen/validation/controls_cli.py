"""The command line the two commands running the learned controls share: ``TRAIN TEST`` and options.

``python -m auralgen.validation controls`` (the audit's verdict) and
``python -m auralgen.evaluation.controls_board`` (rows in the leaderboard) parse the same two
datasets, train and test the controls of :func:`~auralgen.validation.controls.audit_controls`
and report a dataset that cannot be read in one ``error:`` line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from auralgen.core.errors import AuralgenError

TRAIN_HELP = "dataset directory the controls are trained on (another seed of the suite, e.g. data/default_seed1)"
TEST_HELP = "dataset directory they are tested on, the models' dataset (e.g. data/default)"


def run_controls(
    argv: list[str] | None,
    *,
    prog: str,
    description: str,
    options: dict[str, dict[str, str]],
    then: Callable[[argparse.Namespace, object], int],
) -> int:
    """Parse ``TRAIN TEST`` and ``options``, run the controls, hand the report to ``then``.

    Parameters
    ----------
    argv : list of str or None
        The command's arguments (None: ``sys.argv[1:]``).
    prog, description : str
        The command's name and one-line description, for ``--help``.
    options : dict of str to dict
        Further options: flag to the keyword arguments of :meth:`argparse.ArgumentParser.add_argument`.
    then : callable
        ``then(args, report)`` with the parsed arguments and the
        :class:`~auralgen.validation.controls.ControlsReport`; returns the exit code. It may raise
        :class:`~auralgen.core.errors.AuralgenError` or ``OSError`` for a dataset it cannot read.

    Returns
    -------
    int
        ``then``'s exit code, or 2 after one ``error:`` line on standard error when a dataset cannot
        be read.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("train", help=TRAIN_HELP)
    parser.add_argument("test", help=TEST_HELP)
    for flag, spec in options.items():
        parser.add_argument(flag, **spec)
    args = parser.parse_args(argv)

    from auralgen.validation.controls import audit_controls

    try:
        return then(args, audit_controls(args.train, args.test))
    except (AuralgenError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
