"""The folder of an adaptive run: what its trials depend on (``adaptive_run.json``), the trials stored
there to continue from, the records appended as they are asked, and the report written at the end."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.core.mapping import plain
from auralgen.tasks.base import Task

from .quest import QuestSettings
from .trials import read_trials

STAMP = "adaptive_run.json"  # what a run's trials depend on: a continued run must match it


def prepare_out(out: Path, stamp: dict, replay: bool, overwrite: bool, log) -> dict:
    """The stored records to start from (``{}`` for a fresh run); sets ``out`` up for the run."""
    trials = out / "trials.jsonl"
    if replay:
        stored = read_trials(trials)
        if not (out / "adaptive.json").is_file():
            raise ParameterError(
                f"replay=true: out={str(out)!r} holds a partial run ({len(stored)} questions, no adaptive.json); "
                "allowed: the same command without replay=true continues it"
            )
        return stored
    if overwrite:
        for name in ("trials.jsonl", "adaptive.json", STAMP):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "plots", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    if not trials.exists():
        trials.write_text("", encoding="utf-8")
        write_json(out / STAMP, stamp)
        return {}
    check_stamp(out, stamp)
    stored = read_trials(trials, cut_partial=True)
    (out / "adaptive.json").unlink(missing_ok=True)  # written again when the run ends
    log(f"continuing the tracks from the {len(stored)} questions stored in {str(trials)!r}")
    return stored


def check_stamp(out: Path, stamp: dict) -> None:
    """Refuse to continue into ``out`` a run whose :data:`STAMP` differs from ``stamp`` (or is unreadable)."""
    path = out / STAMP
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = None
    if not isinstance(old, dict):
        raise ParameterError(
            f"out={str(out)!r} holds trials.jsonl without a readable {STAMP}; allowed: overwrite=true or a new out"
        )
    for key in stamp:
        if old.get(key) != stamp[key]:
            raise ParameterError(
                f"out={str(out)!r} holds trials of another run ({key} was {old.get(key)!r}, now {stamp[key]!r}); "
                "allowed: the same command to continue it, overwrite=true, or a new out"
            )


def run_stamp(tasks: list[Task], seed: int, settings: QuestSettings, extend: float, model: dict | None) -> dict:
    """What a run's trials depend on: tasks, seed, settings (``max_questions`` aside), ``extend`` and the model
    mapping without its runtime keys."""
    from ..adapters.base import RUNTIME_MODEL_KEYS

    model = {k: v for k, v in (model or {}).items() if k not in RUNTIME_MODEL_KEYS}
    return plain(
        {
            "tasks": [t.name for t in tasks],
            "seed": seed,
            "settings": {k: v for k, v in asdict(settings).items() if k != "max_questions"},
            "extend": extend,
            "model": model,
        }
    )


def write_json(path: Path, obj: dict) -> None:
    """``obj`` as indented, key-sorted JSON at ``path`` (written to a temporary name, then renamed).

    Parameters
    ----------
    path : Path
        The file written.
    obj : dict
        JSON-able content.
    """
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def appender(path: Path) -> Callable[[dict], None]:
    """A sink appending each record to ``path`` as one key-sorted JSON line."""

    def append(rec: dict) -> None:
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")

    return append


def write_report(out: Path, results: dict) -> None:
    """``adaptive.json`` and one figure per track with answers."""
    from auralgen.evaluation.plots import plot_adaptive_track

    write_json(out / "adaptive.json", results)
    for name, t in results["tracks"].items():
        if t["levels"]:
            plot_adaptive_track(t, out / "plots" / f"adaptive_{name.replace('@', '_')}.png")
