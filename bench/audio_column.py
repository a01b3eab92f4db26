"""The validity table with its audio-nuisance column: the per-task table of ``bench/validity_table.py``
joined with the large-n runs of ``bench/nuisance_table.py`` (train seed 1 -> test seed 0).

Each task's audio cell is ``accuracy [95 % CI] / honest chance (n, verdict)`` from the first nuisance
results file that has the task (later files given first win: pass a re-run after the runs it replaces).
A task in no file gets "not run". Writes the joined table with a header naming every source file and
its command line:

    python bench/audio_column.py bench/results/validity_table.md bench/results/nuisance_table_*.md \\
        --out bench/results/validity_table_audio.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

AUDIO_HEADER = "audio, seed 1 -> 0 [95 % CI] / honest (n, verdict)"
OWN_AUDIO = ("audio [95 % CI]", "audio at this n [95 % CI]")  # the validity run's own cell, renamed beside the large n


def table_rows(text: str) -> tuple[list[str], list[list[str]]]:
    """The header cells and the body rows of the first markdown table in ``text``."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    if len(lines) < 2:
        raise SystemExit("error: no markdown table found; allowed: a results file of bench/validity_table.py")
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    return cells[0], [row for row in cells[2:]]


def audio_cells(paths: list[Path]) -> tuple[dict[str, str], list[str]]:
    """``{task: cell}`` from nuisance results files (earlier paths win), and each file's command line."""
    cells: dict[str, str] = {}
    commands = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        first = text.splitlines()[0] if text else ""
        commands.append(f"- `{path.as_posix()}`: {first}")
        head, rows = table_rows(text)
        col = {name: i for i, name in enumerate(head)}
        for row in rows:
            task = row[col["task"]]
            if task in cells:
                continue
            cells[task] = (
                f"{row[col['audio [95 % CI]']]} / {row[col['honest chance']]} "
                f"(n={row[col['n']]}, {row[col['verdict']]})"
            )
    return cells, commands


def joined(validity: str, cells: dict[str, str]) -> str:
    """The validity table of ``validity`` with the audio column inserted after the position prior."""
    head, rows = table_rows(validity)
    at = next(i for i, name in enumerate(head) if name.startswith("pos")) + 1
    head = [OWN_AUDIO[1] if name == OWN_AUDIO[0] else name for name in head]
    out_head = [*head[:at], AUDIO_HEADER, *head[at:]]
    lines = ["| " + " | ".join(out_head) + " |", "|" + "---|" * len(out_head)]
    for row in rows:
        cell = cells.get(row[0], "not run")
        lines.append("| " + " | ".join([*row[:at], cell, *row[at:]]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("validity", help="a results file of bench/validity_table.py")
    parser.add_argument("nuisance", nargs="+", help="results files of bench/nuisance_table.py (earlier ones win)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    validity = Path(args.validity).read_text(encoding="utf-8")
    cells, commands = audio_cells([Path(p) for p in args.nuisance])
    intro = validity.split("\n|", 1)[0].rstrip()
    text = (
        f"{intro}\n\nThe audio column (the audio-nuisance control, trained on seed 1 and tested on seed 0) is read "
        "from "
        f"the large-n runs of `bench/nuisance_table.py`, joined by `python bench/audio_column.py`:\n\n"
        + "\n".join(commands)
        + "\n\n"
        + joined(validity, cells)
        + "\n"
    )
    Path(args.out).write_text(text, encoding="utf-8")
    missing = sorted(set(row[0] for row in table_rows(validity)[1]) - set(cells))
    print(
        f"wrote {args.out}: {len(cells)} tasks with an audio cell"
        + (f"; not run: {', '.join(missing)}" if missing else "")
    )
    return text


if __name__ == "__main__":
    main()
