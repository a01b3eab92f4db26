"""`auralgen evaluate mode=adaptive`: the command line reaches the QUEST+ session, replays it, refuses bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from auralgen.core.errors import ParameterError
from auralgen.evaluation.config import validate_eval
from tests.support.builders import ROOT


def _evaluate(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "evaluate.py"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip


def test_adaptive_run_from_the_command_line_and_its_replay(tmp_path):
    args = ["mode=adaptive", "tasks=[pitch_relative]", "out=run", "adaptive.max_trials=14", "adaptive.min_trials=6",
            "progress=false"]  # fmt: skip
    first = _evaluate("model=dsp", *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    results = json.loads((tmp_path / "run" / "adaptive.json").read_text())
    track = results["tracks"]["pitch_relative"]
    trials = (tmp_path / "run" / "trials.jsonl").read_text().splitlines()
    assert len(trials) == track["n_trials"] <= 14
    assert all(json.loads(t)["parsed"] is not None for t in trials)  # the DSP listener always answers
    board = (tmp_path / "run" / "leaderboard.md").read_text()  # the threshold beside the human one
    lo, hi = track["ci95"]
    assert f"| dsp | {track['threshold']:.3g} cents [{lo:.3g}, {hi:.3g}] ({track['n_trials']} trials) |" in board
    assert "| *human (published)* | 3.5 cents |" in board and "Wier, Jesteadt & Green 1977" in board
    replay = _evaluate("replay=true", *args, cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    line = [x for x in first.stdout.splitlines() if x.startswith("pitch_relative:")]
    assert len(line) == 1 and line == [x for x in replay.stdout.splitlines() if x.startswith("pitch_relative:")]


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"mode": "adaptive"}, "mode=adaptive needs tasks"),
        ({"mode": "adaptive", "tasks": ["pitch_relative"], "action": "export"}, "allowed: action=evaluate"),
        ({"mode": "staircase"}, "mode='staircase' is unknown; allowed: grid, adaptive"),
        ({"mode": "adaptive", "tasks": ["pitch_relative"], "adaptive": {"max_trials": 0}}, "adaptive.min_trials"),
        ({"mode": "adaptive", "tasks": ["pitch_relative"], "adaptive": {"budget": 3}}, "adaptive.budget: unknown key"),
    ],
)
def test_bad_adaptive_settings_are_one_line_errors(cfg, message):
    with pytest.raises(ParameterError, match=message.replace("[", r"\[").replace("(", r"\(")):
        validate_eval({"model": {"kind": "dsp", "label": "dsp"}, **cfg})
