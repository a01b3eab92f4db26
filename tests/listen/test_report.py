"""``auralgen listen report``: per participant and pooled results, and the leaderboard's human row."""

import json
import math
import sqlite3

import pytest
from starlette.testclient import TestClient

from auralgen.cli import main
from auralgen.evaluation.adaptive import SimulatedObserver
from auralgen.evaluation.adaptive.session import run_track, track_summary
from auralgen.evaluation.leaderboard import update_adaptive
from auralgen.listen import report as report_module
from auralgen.listen.app import create_app
from auralgen.listen.report import study_report
from auralgen.listen.schedule import Schedule
from auralgen.listen.store import Store
from auralgen.listen.study import load_study
from tests.listen.test_app import drive
from tests.support.listen_server import write_study

TRACK = "pitch_relative"


def run_study(tmp_path, data):
    """Two participants (simulated observers at 50 and 150 cents, answering from the experimenter's rows)."""
    study_file = write_study(
        tmp_path / "study.yaml",
        {
            "out": str(tmp_path / "out"),
            "screening": False,
            "practice": 0,
            "audio": {"length_s": 4.0},
            "fixed": {"data": str(data)},
            "adaptive": {"tasks": [TRACK], "settings": {"min_trials": 12, "max_trials": 16}},
        },
    )
    study = load_study(study_file)
    schedule = Schedule(study)
    app = create_app(study, schedule=schedule)
    for k, threshold in enumerate((50.0, 150.0)):
        obs = SimulatedObserver(schedule.procedure(TRACK).domain, threshold=threshold, slope=2.0, chance=1 / 3, seed=k)

        def choose(s, wav, obs=obs):
            row = app.state.store.trial(s["id"])
            ok = row["phase"] == "fixed" or obs.respond(row["trial"], row["level_value"])["correct"]
            return row["truth"] if ok else (row["truth"] + 1) % len(s["options"])

        drive(TestClient(app), choose)
    return study_file, study


def test_report_per_participant_and_pooled(tmp_path, pitch_dataset):
    _, study = run_study(tmp_path, pitch_dataset)
    report = study_report(study)
    assert report["n"] == 2 and report["screened_out"] == 0
    db = sqlite3.connect(study.db_path)
    n_fixed = db.execute("SELECT COUNT(*) FROM trials WHERE phase = 'fixed'").fetchone()[0]
    per = report["participants"]
    assert sum(c["n"] for p in per.values() for c in p["fixed"][TRACK].values()) == n_fixed
    pooled_fixed = report["pooled"]["fixed"][TRACK]
    assert pooled_fixed["0"]["n"] == 6 and all(c["accuracy"] == 1.0 for c in pooled_fixed.values())
    thresholds = [p["adaptive"][TRACK]["threshold"] for p in per.values()]
    assert all(t is not None for t in thresholds) and thresholds[0] < thresholds[1]
    pooled = report["pooled"]["adaptive"][TRACK]
    assert pooled["n"] == 2 and math.isclose(pooled["threshold"], math.sqrt(thresholds[0] * thresholds[1]))
    lo, hi = pooled["ci95"]
    assert lo < pooled["threshold"] < hi


def test_the_leaderboard_gains_a_human_row_only_with_collected_data(tmp_path, pitch_dataset):
    study_file, study = run_study(tmp_path, pitch_dataset)
    board = tmp_path / "board" / "leaderboard.md"
    obs = SimulatedObserver(Schedule(study).procedure(TRACK).domain, threshold=300.0, slope=2.0, chance=1 / 3)
    result = run_track(TRACK, Schedule(study).procedure(TRACK), obs.respond)
    update_adaptive(board, tmp_path / "model", {"tracks": {TRACK: track_summary(result)}, "model": {"label": "obs"}})
    before = board.read_text()
    assert "same stimuli" not in before and "model / human" not in before and "human (published)" in before
    out = tmp_path / "report.json"
    assert main(["listen", "report", str(study_file), "--json", str(out), "--leaderboard", str(board)]) == 0
    human = json.loads(out.read_text())["pooled"]["adaptive"][TRACK]
    text = board.read_text()
    assert "| *human (n = 2, same stimuli)* |" in text and "model / human threshold" in text
    model = track_summary(result)["threshold"]
    assert f"{TRACK} {model / human['threshold']:.2g}×" in text


def test_a_bad_study_file_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "s.yaml"
    bad.write_text("out: x\nfixed: {data: nowhere}\npractice: -1\n")
    assert main(["listen", "report", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: practice=-1") and "\n" not in err


def test_the_dataset_table_gains_the_peoples_accuracy_on_the_same_items(tmp_path, pitch_dataset):
    from auralgen.cli._hydra import compose
    from auralgen.evaluation.config import validate_eval
    from auralgen.evaluation.runner import run

    study_file, _ = run_study(tmp_path, pitch_dataset)
    board = tmp_path / "board" / "leaderboard.md"
    cfg = [f"data={pitch_dataset}", f"out={tmp_path / 'random'}", "progress=false", "eval.n_boot=0", "model=random"]
    run(validate_eval(compose([*cfg, f"leaderboard={board}"], config_name="evaluate")), log=lambda *_: None)
    assert "same stimuli" not in board.read_text()
    assert main(["listen", "report", str(study_file), "--leaderboard", str(board)]) == 0
    row = next(
        line for line in board.read_text().splitlines() if line.startswith("| *human (n = 2, same stimuli)* | people")
    )
    assert "| 100.0 | – | 100.0 / – |" in row  # the observers answered every fixed item right


def test_the_report_reads_the_database_without_writing_it(tmp_path, pitch_dataset, monkeypatch):
    _, study = run_study(tmp_path, pitch_dataset)
    opened = []

    class Recorded(Store):
        def __init__(self, path, **kw):
            opened.append(kw.get("read_only", False))
            super().__init__(path, **kw)

    monkeypatch.setattr(report_module, "Store", Recorded)
    assert study_report(study)["n"] == 2 and opened == [True]
    ro = Store(study.db_path, read_only=True)
    try:
        assert len(ro.participants()) == 2
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro._write("DELETE FROM trials")
    finally:
        ro.close()
    assert sqlite3.connect(study.db_path).execute("SELECT COUNT(*) FROM trials").fetchone()[0] > 0
