"""SonicBench interop: its published result files (github qiuxins/SonicBench, read from the peers
folder, ``tests/support/peers.py``; where the clone is absent the test skips, counted in the run's
summary) and an export in its layout.

SonicBench publishes no scoring script; its accuracy is the share of rows whose ``prediction`` is
the ``reference`` letter (its README's "about 72 %" for Qwen3-Omni is 72.25 % so counted)."""

import json
from pathlib import Path

import pytest

from auralgen.cli._hydra import compose
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.runner import run
from tests.support.peers import peer

QUIET = lambda *_: None  # noqa: E731
SYSTEMS = ["Kimi-Audio", "MiMo-Audio", "Ola"]  # letter replies: parser and exact match agree on every row


def _system(name: str) -> Path:
    """A published system's result folder (24 files)."""
    return peer("SonicBench") / "Results" / name


def _score(pred: Path, out: Path, *extra: str) -> dict:
    args = ["action=score_predictions", f"predictions={pred}", "predictions_format=sonicbench", f"out={out}", *extra]
    return run(validate_eval(compose(args, config_name="evaluate")), log=QUIET)


def _exact(path: Path) -> tuple[int, int]:
    rows = [json.loads(x) for f in sorted(path.glob("*.jsonl")) for x in f.read_text().splitlines() if x.strip()]
    return sum(str(r["prediction"]).strip() == r["reference"] for r in rows), len(rows)


@pytest.mark.parametrize("name", SYSTEMS)
def test_published_systems_score_as_sonicbench_counts_them(tmp_path, name):
    path = _system(name)
    right, n = _exact(path)
    parser = _score(path, tmp_path / "p")
    file = _score(path, tmp_path / "f", "++scorer=file")
    assert parser["scores"]["overall"]["n_answers"] == n == 2400
    assert parser["scores"]["overall"]["AA"] == file["scores"]["overall"]["AA"] == pytest.approx(right / n)
    assert parser["verdicts"]["agree"] == n and len(parser["scores"]["by_task"]) == 24


def test_a_reasoning_system_shows_both_verdicts(tmp_path):
    path = _system("Qwen2.5-Omni")  # replies such as "A." or option words, not bare letters
    right, n = _exact(path)
    res = _score(path, tmp_path / "f", "++scorer=file")
    assert res["scores"]["overall"]["AA"] == pytest.approx(right / n)
    assert res["parser_scores"]["overall"]["AA"] > res["scores"]["overall"]["AA"]
    assert res["verdicts"]["parser_right_toolkit_wrong"] > 0
    ex = res["verdicts"]["differ_examples"]  # both verdicts shown where they differ
    assert 0 < len(ex) <= 20 and all(e["parser_correct"] != e["toolkit_correct"] for e in ex)
    assert all(e["reply"].strip() != e["parser"] for e in ex if e["toolkit_correct"] is False)


def test_export_in_sonicbench_layout_and_score_it_back(tiny_dataset, tmp_path):
    out = tmp_path / "sonic"
    res = run(validate_eval(compose(["action=export", "export_format=sonicbench", f"data={tiny_dataset}", f"out={out}"],
                                    config_name="evaluate")), log=QUIET)  # fmt: skip
    assert set(res["files"]) == {"pitch_comparison", "loudness_comparison", "duration_comparison", "duration_recog"}
    assert sum(res["skipped"].values()) + res["items"] > res["items"] > 0  # the threshold (audiogram) items left out
    preds = tmp_path / "preds"
    preds.mkdir()
    for f in sorted((out / "json").glob("*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        for k, r in enumerate(rows):
            assert (out / r["audio_path"]).is_file() and f"'{r['reference']}' for " in r["prompt"]
            # every other reply names the right option in words: the parser reads it, the exact match does not
            r["prediction"] = r["reference"] if k % 2 == 0 else r["options"]["ABCDEFGHIJ".index(r["reference"])]
        (preds / f.name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    right, n = _exact(preds)
    back = _score(preds, tmp_path / "s", "++scorer=file")
    assert back["scores"]["overall"]["AA"] == pytest.approx(right / n) and n == res["items"]
    assert back["parser_scores"]["overall"]["AA"] == 1.0 > back["scores"]["overall"]["AA"]


def test_the_parser_never_misses_what_exact_match_counts_right_on_any_published_system():
    """All 36 systems' 86,400 rows: every row SonicBench's exact match counts right, the parser also
    reads as right; the rows they score differently are replies exact match cannot read."""
    from bench.bench_scoring import sonicbench_table

    table = sonicbench_table(str(peer("SonicBench")))
    assert len(table) == 36 and sum(c["n"] for c in table.values()) == 36 * 2400
    assert sum(c["exact_only"] for c in table.values()) == 0
    assert table["Qwen2.5-Omni"]["parser"] > 2 * table["Qwen2.5-Omni"]["exact"]  # it answers "A." (a stated letter)
