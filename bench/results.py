"""Results files of the benchmarks: ``bench/results/<bench>.json``, read by the docs build.

Each file holds the command that wrote it, when, on which machine, the library versions, and
per figure its median, spread (min and max) and the number of runs. The docs' Benchmarks page
renders every file of ``bench/results/`` (``docs/hooks.py``).
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import platform
import statistics
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
LIBRARIES = ("auralgen", "numpy", "scipy", "numba", "pyroomacoustics", "pyarrow")


def machine() -> dict:
    """The machine a figure was measured on (no host name, no path)."""
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "load_1min": round(os.getloadavg()[0], 2),
    }


def versions() -> dict:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def figure(name: str, values, unit: str, *, target: str = "", note: str = "", n: int | None = None) -> dict:
    """One figure from its repeated measurements: median, min, max and count (``n``: the runs behind
    a single pooled value, such as a coverage over 200 runs)."""
    values = [float(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    return {
        "name": name,
        "unit": unit,
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": n or len(values),
        "target": target,
        "note": note,
    }


def write(bench: str, command: str, figures: list[dict], *, out: Path | None = None, extra: dict | None = None) -> Path:
    """Write ``bench/results/<bench>.json`` (or ``out``; ``extra``: more keys of the record) and return its path."""
    path = out or RESULTS / f"{bench}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "bench": bench,
        "command": command,
        "recorded": dt.date.today().isoformat(),
        "source": "measured",
        "machine": machine(),
        "versions": versions(),
        "figures": figures,
        **(extra or {}),
    }
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {path.relative_to(path.parents[2]) if out is None else path}", file=sys.stderr)
    return path
