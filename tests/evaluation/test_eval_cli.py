"""evaluate.py: bad input is one line naming key, value and what is allowed, exit 2; a good run writes results."""

import json
import subprocess
import sys

import pytest

from tests.support.builders import ROOT


def run_cli(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


BAD = [
    (["model=gpt5"], "gpt5"),
    (["model=random", "model.kind=nope"], "model.kind='nope' is unknown"),
    (["model=random", "model.tempreature=1"], "tempreature"),
    (["eval.rotations=0"], "eval.rotations=0"),
    (["eval.criterion=1.5"], "eval.criterion=1.5"),
    (["action=train"], "action='train' is unknown"),
    (["model=openai"], "base_url"),
    (["model=openai", "model.base_url=ftp://x", "model.name=m"], "is not an http(s) URL"),
    (["model=command"], "cmd"),
    (["action=score_predictions"], "predictions=null is missing"),
    (["eval.on_error=ignore"], "eval.on_error='ignore' is unknown"),
    (["outt=x"], "outt"),
]


@pytest.mark.parametrize("args,needle", BAD)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, needle):
    res = run_cli(*args, "data=nowhere", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert list(tmp_path.iterdir()) == []


def test_missing_dataset_is_one_line(tmp_path):
    res = run_cli("model=random", "data=nowhere", "out=res/random", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "data='nowhere' holds no parquet shard of split='test'" in res.stderr


def test_cli_run_writes_results_plots_and_leaderboard(tiny_dataset, tmp_path):
    res = run_cli(
        "model=random",
        f"data={tiny_dataset}",
        "out=results/random",
        "task=[pitch_relative]",
        "eval.n_boot=0",
        "progress=false",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    from auralgen.evaluation.items import load_items

    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["pitch_relative"]))  # every rotation
    assert "random: macro AA" in res.stdout and f"({n} asked, 0 unparseable" in res.stdout
    saved = json.loads((tmp_path / "results" / "random" / "results.json").read_text())
    assert saved["accounting"]["overall"]["asked"] == n
    assert (tmp_path / "results" / "random" / "leaderboard.md").read_text().count("| random | random |") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["random"]  # nothing beside out
    res = run_cli("action=leaderboard", "out=results", cwd=tmp_path)
    assert res.returncode == 0 and "leaderboard.md" in res.stdout
    assert (tmp_path / "results" / "leaderboard.md").read_text().count("| random | random |") == 1
