"""MkDocs hook: renders the benchmark results files into the page that asks for them.

A page line ``{{ bench_results }}`` becomes one table per ``bench/results/<bench>.json`` (written by
the command the file names, see ``bench/results.py``): the figure, its median and spread, the
target, and under each table the command, the date and the machine.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "{{ bench_results }}"


def _num(x) -> str:
    return f"{x:,.3g}" if abs(x) < 100 else f"{x:,.0f}"


def render_results(results_dir: Path = ROOT / "bench" / "results") -> str:
    """Markdown tables of every results file in ``results_dir``."""
    out = []
    for path in sorted(results_dir.glob("*.json")):
        rec = json.loads(path.read_text())
        out += [f"### `{rec['bench']}`", "", "| figure | median | min – max | runs | target |", "|---|---|---|---|---|"]
        for f in rec["figures"]:
            spread = f"{_num(f['min'])} – {_num(f['max'])}" if f["min"] != f["max"] else "—"
            out.append(
                f"| {f['name']} | {_num(f['median'])} {f['unit']} | {spread} | {f['n']} | {f['target'] or '—'} |"
            )
        m = rec["machine"]
        how = "measured by" if rec["source"] == "measured" else "transcribed from an earlier record of"
        vers = ", ".join(f"{k} {v}" for k, v in rec["versions"].items())
        out += [
            "",
            f"{how.capitalize()} `{rec['command']}` on {rec['recorded']}; machine: {m['cpu']}, "
            f"{m['cores']} cores, {m['system']}, Python {m['python']}; {vers}. "
            f"File: `bench/results/{path.name}`.",
            "",
        ]
        notes = sorted({f["note"] for f in rec["figures"] if f["note"]})
        out += [f"*{n}*" for n in notes] + [""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, render_results())
    return markdown
