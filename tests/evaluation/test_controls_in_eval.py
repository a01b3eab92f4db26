"""The learned audio-free controls beside the models: stored in the leaderboard and shown
as one row per control in the table of every run on the dataset they were tested on."""

import re

import pytest

from auralgen.evaluation.controls_board import main as controls_board
from auralgen.evaluation.leaderboard import CONTROL_KIND, control_rows
from auralgen.generation.run import run as generate
from auralgen.validation.controls import CONTROLS, audit_controls
from tests.evaluation.test_harness import evaluate
from tests.support.builders import small_run

QUIET = lambda *_: None  # noqa: E731
TASKS = "task=[pitch_relative,loudness_relative,duration_absolute]"


@pytest.fixture(scope="module")
def seed1_dataset(tmp_path_factory):
    """The tiny dataset of tests/evaluation/conftest.py at seed 1: the controls' training set."""
    out = tmp_path_factory.mktemp("eval_ds_seed1")
    overrides = ["suite=tones", "seed=1"] + [
        f"tasks.{t}.items_per_level=1"
        for t in ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute")
    ]
    overrides += [
        "tasks.audiogram.items_per_level=1",
        "tasks.audiogram.levels=[-10,40,110]",
        "tasks.audiogram.probe_freqs_hz=[]",
    ]
    generate(small_run(*overrides, out=out, workers=1), log=QUIET)
    return out


def table_rows(board: str) -> dict[str, list[str]]:
    """The first table's rows by their first cell, and the header under the key ``"model"``."""
    rows = {}
    for line in board.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.setdefault(cells[0], cells)
    return rows


def test_controls_are_rows_beside_the_models_with_the_reports_accuracy(tiny_dataset, seed1_dataset, tmp_path):
    board = tmp_path / "board.md"
    res = evaluate(tiny_dataset, tmp_path / "constant", "model=constant", TASKS, f"leaderboard={board}")
    lines = []
    assert controls_board([str(seed1_dataset), str(tiny_dataset), "--leaderboard", str(board)], log=lines.append) == 0
    report = audit_controls(seed1_dataset, tiny_dataset)  # deterministic: the same numbers again
    assert lines[0] == report.table() and lines[1] == f"wrote {board}"
    rows = table_rows(board.read_text())
    head = rows["model"]
    tasks = [re.sub(r" AA / ACR$", "", h) for h in head if h.endswith(" AA / ACR")]
    assert tasks == ["duration_absolute", "loudness_relative", "pitch_relative"]
    by_task = {t["task"]: t for t in report.tasks}
    for control in CONTROLS:
        row = rows[f"*control: {control}*"]
        assert len(row) == len(head) and row[1] == CONTROL_KIND
        for t in tasks:
            acc = by_task[t]["controls"][control]["accuracy"]
            assert row[head.index(f"{t} AA / ACR")] == f"{100 * acc:.1f} / –"
    assert rows["constant"][1] == "constant"  # the model's row is still there, controls after it
    honest, stated = rows["*chance*"], rows["*chance* (stated)"]
    for t in tasks:
        s = res["scores"]["by_task"][t]
        acr = "–" if s["chance_ACR"] is None else f"{100 * s['chance_ACR']:.1f}"
        assert honest[head.index(f"{t} AA / ACR")] == f"{100 * s['chance']:.1f} / {acr}"
        assert stated[head.index(f"{t} AA / ACR")] == f"{100 * s['stated_chance']:.1f} / –"
    text = board.read_text()
    assert (
        text.index("| constant |")
        < text.index("*control: text_prior*")
        < text.index("| *chance* | best audio-free rule |")
    )
    assert f"trained on `{seed1_dataset}`" in text and f"**{report.verdict}**" in text


def test_controls_survive_later_runs_and_a_rebuild(tiny_dataset, seed1_dataset, tmp_path):
    board = tmp_path / "board.md"
    assert controls_board([str(seed1_dataset), str(tiny_dataset), "--leaderboard", str(board)], log=QUIET) == 0
    assert "control:" not in board.read_text()  # no run on that dataset yet: nothing to sit beside
    evaluate(tiny_dataset, tmp_path / "runs" / "random", "model=random", TASKS, f"leaderboard={board}")
    assert len(re.findall(r"^\| \*control: ", board.read_text(), re.M)) == len(CONTROLS)
    evaluate(
        tiny_dataset, tmp_path / "runs" / "c", "action=leaderboard", f"leaderboard={board}", f"out={tmp_path / 'runs'}"
    )
    rows = table_rows(board.read_text())
    assert {f"*control: {c}*" for c in CONTROLS} <= set(rows) and "random" in rows


def test_control_macro_pools_within_sub_categories():
    stored = {
        "train": "a",
        "test": "b",
        "verdict": "too few items",
        "tasks": [
            {"task": "pitch_relative", "n": 10, "controls": {"text_prior": {"correct": 6, "accuracy": 0.6}}},
            {"task": "loudness_relative", "n": 30, "controls": {"text_prior": {"correct": 6, "accuracy": 0.2}}},
            {"task": "duration_absolute", "n": 20, "controls": {"text_prior": {"correct": 10, "accuracy": 0.5}}},
        ],
    }
    row = control_rows(stored)["control: text_prior"]
    assert row["by_task"] == {"pitch_relative": 0.6, "loudness_relative": 0.2, "duration_absolute": 0.5}
    # pitch and loudness share a sub-category (pooled 12 / 40), duration_absolute has its own (0.5)
    assert row["macro_AA"] == pytest.approx((12 / 40 + 0.5) / 2)


def test_a_path_that_is_not_a_dataset_is_one_error_line(tiny_dataset, tmp_path, capsys):
    assert controls_board([str(tmp_path / "nowhere"), str(tiny_dataset), "--leaderboard", str(tmp_path / "b.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "nowhere" in err
    assert not (tmp_path / "b.md").exists()
