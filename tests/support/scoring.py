"""Scoring helpers shared by the verdict and peer-interop tests: a prediction file scored by
``action=score_predictions``, and the check that every number auralgen prints agrees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auralgen.cli._hydra import compose
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.leaderboard import rebuild_leaderboard
from auralgen.evaluation.runner import run


def score_file(pred: Path, out: Path, *extra: str) -> tuple[dict, list[str]]:
    """``action=score_predictions`` on ``pred`` into ``out``: the run's result and its printed lines."""
    lines: list[str] = []
    args = ["action=score_predictions", f"predictions={pred}", f"out={out}", *extra]
    return run(validate_eval(compose(args, config_name="evaluate")), log=lines.append), lines


def assert_every_number_agrees(res: dict, lines: list[str], out: Path, aa: float, n_correct: int) -> None:
    """results.json ``scores`` and ``accounting``, the printed line and the leaderboard all say ``aa``."""
    saved = json.loads((out / "results.json").read_text())
    assert saved["scores"] == res["scores"]
    assert res["scores"]["overall"]["AA"] == pytest.approx(aa, abs=1e-12)
    assert res["scores"]["macro"]["AA"] == pytest.approx(aa, abs=1e-12)
    assert res["accounting"]["overall"]["correct"] == n_correct
    assert f"AA {100 * aa:.2f} %" in lines[-1]
    board = rebuild_leaderboard(out, out / "leaderboard.md").read_text()
    assert f"| {100 * aa:.1f} |" in board


def lower_cased_option_rows(field: str) -> tuple[list[str], list[dict]]:
    """Ten MMAR-format reverberation_absolute rows answered "The answer is <option lower-cased>." in
    ``field``: the first 7 name the truth, the last 3 another option."""
    from auralgen.tasks.base import AudioConfig, task_class

    cls = task_class("reverberation_absolute")
    options = cls(cls.Config(name="reverberation_absolute"), AudioConfig()).bin_labels()
    rows = []
    for i in range(10):
        answer = options[i % 3]
        said = answer if i < 7 else options[(i + 1) % 3]
        rows.append(
            {
                "id": f"r{i}",
                "question": "How reverberant is the space?",
                "choices": options,
                "answer": answer,
                "modality": "sound",
                "category": "Signal Layer",
                "sub-category": "reverberation",
                "task": "reverberation_absolute",
                field: f"The answer is {said.lower()}.",
            }
        )
    return options, rows
