"""A run that cannot be scored fails loudly; leaderboards stay inside out, one table per dataset; safe file names."""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from auralgen.evaluation.items import load_items
from auralgen.evaluation.leaderboard import render_leaderboard
from auralgen.evaluation.report import safe_name, write_plots
from auralgen.evaluation.runner import RunFailedError, run
from tests.support.chat_server import ChatServer

from .test_eval_cli import run_cli
from .test_harness import cfg_of, evaluate

DECLINE = """import json, sys
for n, line in enumerate(sys.stdin):
    m = json.loads(line)
    ok = n % 10 < {ok_per_10}
    print(json.dumps({{"id": m["id"], "reply": "B"}} if ok else {{"id": m["id"], "error": "no GPU"}}), flush=True)
"""


def _declining(tmp_path, ok_per_10):
    path = tmp_path / f"decline{ok_per_10}.py"
    path.write_text(DECLINE.format(ok_per_10=ok_per_10))
    return f"model.cmd='{sys.executable} {path}'"


def test_every_request_failing_exits_3_with_one_line_and_no_leaderboard_row(tiny_dataset, tmp_path):
    with ChatServer(reply=lambda text: "B", fail_substring="Answer with the letter") as srv:  # HTTP 500 always
        res = run_cli(
            "model=openai",
            f"model.base_url={srv.base_url}",
            "model.name=m",
            "model.max_retries=0",
            f"data={tiny_dataset}",
            "out=res/dead",
            "task=[pitch_relative]",
            "progress=false",
            "eval.n_boot=0",
            cwd=tmp_path,
        )
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["pitch_relative"]))  # every rotation
    assert res.returncode == 3 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: {n} of {n} questions got no reply") and "no leaderboard row" in lines[0]
    saved = json.loads((tmp_path / "res" / "dead" / "results.json").read_text())
    assert saved["status"] == "failed" and saved["accounting"]["overall"]["error"] == n
    assert saved["accounting"]["overall"]["accuracy_over_answered"] is None
    board = (tmp_path / "res" / "dead" / "leaderboard.md").read_text()
    assert "| m |" not in board and "No finished run yet." in board


def test_error_threshold_is_settable_and_errors_are_labelled(tiny_dataset, tmp_path):
    args = ["model=command", "model.label=flaky", "task=[pitch_relative]", _declining(tmp_path, 3)]
    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["pitch_relative"]))  # every rotation
    bad = sum(i % 10 >= 3 for i in range(n))  # the script declines 7 requests in 10
    assert bad / n > 0.5
    with pytest.raises(
        RunFailedError,
        match=rf"{bad} of {n} questions got no reply \(error rate {bad / n:.2f} > eval.max_error_rate=0.5",
    ):
        evaluate(tiny_dataset, tmp_path / "a", *args)
    assert json.loads((tmp_path / "a" / "results.json").read_text())["status"] == "failed"
    assert "| flaky |" not in (tmp_path / "a" / "leaderboard.md").read_text()
    logged = []
    res = run(
        cfg_of(
            f"data={tiny_dataset}",
            f"out={tmp_path / 'b'}",
            "progress=false",
            "eval.n_boot=0",
            *args,
            "eval.max_error_rate=0.7",
        ),
        log=logged.append,
    )
    assert any(ln.startswith(f"warning: {bad} questions got no reply and are scored wrong") for ln in logged)
    board = tmp_path / "b" / "leaderboard.md"
    acc = res["accounting"]["overall"]
    assert res["status"] == "ok" and acc["asked"] == n and acc["error"] == bad and acc["error_rate"] == bad / n
    assert acc["accuracy_over_asked"] == pytest.approx(acc["correct"] / n)
    assert acc["accuracy_over_answered"] == pytest.approx(acc["correct"] / acc["answered"])
    assert acc["accuracy_over_answered"] > acc["accuracy_over_asked"]
    assert "| flaky |" in board.read_text() and f"| {bad} of {n} |" in board.read_text()


def test_bad_error_threshold_is_one_line():
    with pytest.raises(Exception, match=r"eval.max_error_rate=1.5 is out of range; allowed: 0 <= rate <= 1"):
        cfg_of("eval.max_error_rate=1.5")


def _tables(board: str) -> dict[str, list[str]]:
    """``{dataset section: [model labels]}`` of a leaderboard."""
    out, key = {}, None
    for line in board.splitlines():
        if line.startswith("## Dataset"):
            key = line
            out[key] = []
        elif line.startswith("### "):  # threshold tables and plots follow the score table
            key = None
        elif key and line.startswith("| ") and not line.startswith(("| model", "| *chance*")):
            out[key].append(line.split("|")[1].strip())
    return out


def test_leaderboard_stays_in_out_and_splits_datasets(tiny_dataset, tmp_path):
    other = shutil.copytree(tiny_dataset, tmp_path / "other_ds")
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["seed"] = 12345  # another dataset: another manifest hash
    (other / "manifest.json").write_text(json.dumps(manifest))
    work = tmp_path / "work"
    work.mkdir()
    shared = work / "boards" / "all.md"
    for data, model in ((tiny_dataset, "random"), (tiny_dataset, "constant"), (other, "random")):
        out = work / f"{Path(data).name}_{model}"
        evaluate(data, out, f"model={model}", "task=[pitch_relative]", f"leaderboard={shared}")
    single = evaluate(tiny_dataset, work / "alone", "model=random", "task=[pitch_relative]")
    assert (work / "alone" / "leaderboard.md").exists()
    assert not (work / "leaderboard.md").exists()  # nothing in the parent of out
    tables = _tables(shared.read_text())
    assert sorted(map(sorted, tables.values())) == [["constant", "random"], ["random"]]
    key = single["dataset"]["key"]
    assert any(key in section and sorted(labels) == ["constant", "random"] for section, labels in tables.items())
    assert single["dataset"]["manifest_sha256"] in shared.read_text()


def test_plot_and_report_names_are_safe_and_every_link_opens(tiny_dataset, tmp_path):
    res = evaluate(tiny_dataset, tmp_path / "r", "model=random")
    fit = next(iter(res["psychometric"].values()))
    res["psychometric"] = {"pitch_relative (dB HL)": fit, "duration_relative (%)": fit}  # units with spaces, signs
    names = write_plots(res, tmp_path / "r" / "plots")
    assert "psychometric_pitch_relative_dB_HL.png" in names
    board = render_leaderboard(tmp_path / "r" / "my board.md", {str(tmp_path / "r"): res})
    files = [p for p in (tmp_path / "r").rglob("*.png")]
    assert files and all(re.fullmatch(r"[A-Za-z0-9_.-]+", p.name) for p in files), files
    targets = re.findall(r"\]\(([^)]+)\)", board.read_text())
    assert len(targets) >= 4 and all(re.fullmatch(r"[A-Za-z0-9_./-]+", t) for t in targets), targets
    assert all((board.parent / t).is_file() for t in targets)
    default = (tmp_path / "r" / "leaderboard.md").read_text()
    assert all((tmp_path / "r" / t).is_file() for t in re.findall(r"\]\(([^)]+)\)", default))


def test_safe_name():
    assert safe_name("a (b c)/d") == "a_b_c_d" and safe_name("(%)") == "x"


def test_rebuilt_leaderboard_keeps_prediction_files_apart(tmp_path):
    from auralgen.evaluation.leaderboard import rebuild_leaderboard

    def result(label, source):
        scores = {"macro": {"AA": 0.5, "ACR": 0.25}, "by_task": {}}
        acc = {"asked": 4, "unparseable": 0, "error": 0, "accuracy_over_answered": 0.5}
        return {
            "model": {"label": label, "kind": "predictions"},
            "dataset": {"path": source},
            "scores": scores,
            "accounting": {"overall": acc},
            "psychometric": {},
            "audiogram": {},
        }

    for label, source in (("a", "x.jsonl"), ("b", "y.jsonl"), ("c", "x.jsonl")):
        (tmp_path / label).mkdir()
        (tmp_path / label / "results.json").write_text(json.dumps(result(label, source)))
    board = rebuild_leaderboard(tmp_path, tmp_path / "leaderboard.md").read_text()
    assert sorted(map(sorted, _tables(board).values())) == [["a", "c"], ["b"]]
