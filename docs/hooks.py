"""MkDocs hook: renders the benchmark results files into the page that asks for them.

A page line ``{{ bench_results }}`` becomes one table per ``bench/results/<bench>.json`` (written by
the command the file names, see ``bench/results.py``): the figure, its median and spread, the
target, and under each table the command, the date and the machine. ``{{ bench_results NAME }}``
renders the one file ``NAME.json``; ``{{ million_clips }}`` projects the hours a million clips take
from the per-core rates of ``bench_tasks.json`` (each core at the measured rate, nothing else limiting).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "{{ bench_results }}"
ONE = re.compile(r"\{\{ bench_results (\w+) \}\}")
PROJECTION = "{{ million_clips }}"
CLUSTERS = ((1, 2), (1, 16), (4, 16), (16, 16))  # nodes x cores of the projection


def _num(x) -> str:
    return f"{x:,.3g}" if abs(x) < 100 else f"{x:,.0f}"


def render_results(results_dir: Path = ROOT / "bench" / "results", names=None) -> str:
    """Markdown tables of every results file in ``results_dir`` (or of the benches ``names``)."""
    out = []
    paths = sorted(results_dir.glob("*.json")) if names is None else [results_dir / f"{n}.json" for n in names]
    for path in paths:
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


def _duration(hours: float) -> str:
    return f"{hours:.2g} h" if hours >= 1 else f"{60 * hours:.2g} min"


def render_projection(results_dir: Path = ROOT / "bench" / "results") -> str:
    """Hours for 1,000,000 clips of each task in ``bench_tasks.json`` on the clusters of :data:`CLUSTERS`."""
    rec = json.loads((results_dir / "bench_tasks.json").read_text())
    rates = {f["name"].split(":")[0]: f["median"] for f in rec["figures"] if f["unit"] == "items/s"}
    out = ["| nodes x cores | " + " | ".join(rates) + " |", "|---" * (len(rates) + 1) + "|"]
    for nodes, cores in CLUSTERS:
        cells = [_duration(1e6 / (rate * nodes * cores) / 3600) for rate in rates.values()]
        out.append(f"| {nodes} x {cores} | " + " | ".join(cells) + " |")
    out += ["", f"From the medians of `{rec['command']}` ({rec['recorded']}): 1,000,000 / (rate x cores)."]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, render_results())
    markdown = ONE.sub(lambda m: render_results(names=[m.group(1)]), markdown)
    if PROJECTION in markdown:
        markdown = markdown.replace(PROJECTION, render_projection())
    return markdown
