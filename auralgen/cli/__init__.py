"""The ``auralgen`` command: ``auralgen generate ...``, ``evaluate ...``, ``audit <dir>``, ``listen STUDY.yaml``.

Installed as a console script (pyproject.toml ``[project.scripts]``); ``python -m auralgen.cli`` is the
same command, and the repository's ``generate.py`` / ``evaluate.py`` call it. ``generate`` and
``evaluate`` take Hydra overrides (README); ``audit`` takes a dataset folder. Only this package
imports hydra and omegaconf.
"""

from __future__ import annotations

import sys

COMMANDS = {
    "generate": "generate a dataset (Hydra overrides, e.g. task=pitch_relative out=data/pitch)",
    "evaluate": "evaluate a model on a dataset (Hydra overrides, e.g. model=random data=data/default)",
    "audit": "audit an exported dataset: auralgen audit <dataset dir> [--json OUT] [--no-listener]",
    "listen": "a listening test for people: auralgen listen STUDY.yaml [--host H] | listen report STUDY.yaml",
}


def usage() -> str:
    """The command's usage text.

    Returns
    -------
    str
        A usage line and one line per command, newline-separated.
    """
    lines = ["usage: auralgen <command> [arguments]", "", "commands:"]
    return "\n".join(lines + [f"  {name:<9} {text}" for name, text in COMMANDS.items()])


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; returns its exit code (2 with one ``error:`` line for an unknown command,
    130 with one line when interrupted while starting).

    Parameters
    ----------
    argv : list of str or None, optional
        The command line after ``auralgen``: the command, then its arguments; None reads ``sys.argv``.

    Returns
    -------
    int
        The exit code: the subcommand's, 0 for ``--help``, 2 for a missing or unknown command, 130 when
        interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: command={command!r} is unknown; allowed: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    try:
        if command == "audit":
            from auralgen.cli.audit import main as run
        elif command == "listen":
            from auralgen.cli.listen import main as run
        elif command == "generate":
            from auralgen.cli.generate import main as run
        else:
            from auralgen.cli.evaluate import main as run
        return run(rest)
    except KeyboardInterrupt:  # Ctrl-C while starting up (a run in progress reports its own)
        print(INTERRUPTED, file=sys.stderr)
        return 130


INTERRUPTED = "error: interrupted; run the same command again (finished work is kept)"
