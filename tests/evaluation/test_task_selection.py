"""``auralgen evaluate task=...`` asks only the named tasks, as ``auralgen generate task=...`` generates
only the named one; the former ``tasks=[...]`` gives the same run and one note on stderr."""

import json
from pathlib import Path

import pytest

from auralgen.cli import main as cli


def _evaluate(capsys, *args) -> tuple[dict, list[str]]:
    assert cli(["evaluate", "model=random", "progress=false", "eval.n_boot=0", *args]) == 0
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    out = next(a.split("=", 1)[1] for a in args if a.startswith("out="))
    return json.loads((Path(out) / "results.json").read_text()), err


@pytest.mark.parametrize(
    ("selection", "tasks"),
    [
        ("task=pitch_relative", {"pitch_relative"}),
        ("task=[pitch_relative,duration_absolute]", {"pitch_relative", "duration_absolute"}),
    ],
)
def test_task_selects_the_tasks_asked(tiny_dataset, tmp_path, capsys, selection, tasks):
    res, err = _evaluate(capsys, f"data={tiny_dataset}", f"out={tmp_path / 'r'}", selection)
    assert set(res["scores"]["by_task"]) == tasks
    assert not [ln for ln in err if ln.startswith(("note:", "error:"))]


def test_former_tasks_spelling_gives_the_same_run_and_one_note(tiny_dataset, tmp_path, capsys):
    new, _ = _evaluate(capsys, f"data={tiny_dataset}", f"out={tmp_path / 'new'}", "task=pitch_relative")
    old, err = _evaluate(capsys, f"data={tiny_dataset}", f"out={tmp_path / 'old'}", "tasks=[pitch_relative]")
    assert old["scores"]["by_task"] == new["scores"]["by_task"] and set(old["scores"]["by_task"]) == {"pitch_relative"}
    assert [ln for ln in err if ln.startswith("note:")] == [
        "note: tasks= is deprecated; write task=[pitch_relative] (one name or a list, the key auralgen generate "
        "takes too)"
    ]
