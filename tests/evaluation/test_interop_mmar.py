"""MMAR / MMAU interop checked with their own evaluation scripts (github ddlBoJack/MMAR
``code/evaluation.py``, github Sakshi113/MMAU ``evaluation.py``), run as they are from the peers
folder (``tests/support/peers.py``; ``make peers``). Where a clone is absent the test skips, and the
run's summary counts it."""

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from auralgen.cli._hydra import compose
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.interop import mmar
from auralgen.evaluation.runner import run
from tests.support.peers import peer

QUIET = lambda *_: None  # noqa: E731


def _peer_script(script: Path, data: Path) -> str:
    """The peer's script, unmodified, on ``data``: its stdout."""
    return subprocess.run(
        [sys.executable, str(script), "--input", str(data)], check=True, capture_output=True, text=True, timeout=120
    ).stdout


def _total(stdout: str) -> tuple[float, int]:
    m = re.search(r"Total Accuracy: ([\d.]+)% over (\d+) samples", stdout)
    return float(m.group(1)), int(m.group(2))


def _replies(row: dict, k: int) -> str | None:
    """Replies their token match and our parser judge differently; None leaves the key out."""
    wrong = next(c for c in row["choices"] if c != row["answer"])
    letter = "ABCDEFGHIJ"[row["choices"].index(row["answer"])]
    return [
        row["answer"],
        letter,
        f"It is {row['answer']}, not {wrong}.",
        f"{row['answer'].lower()}.",
        wrong,
        f"The answer is ({letter}) {row['answer']}",
        None,
    ][k % 7]


def _score(pred: Path, fmt: str, out: Path, *extra: str) -> dict:
    args = ["action=score_predictions", f"predictions={pred}", f"predictions_format={fmt}", f"out={out}", *extra]
    return run(validate_eval(compose(args, config_name="evaluate")), log=QUIET)


def test_mmar_export_scored_by_mmars_own_script_equals_scorer_mmar(tiny_dataset, tmp_path):
    script = peer("MMAR") / "code" / "evaluation.py"
    out = tmp_path / "mmar"
    run(
        validate_eval(
            compose(
                ["action=export", "export_format=mmar", f"data={tiny_dataset}", f"out={out}"], config_name="evaluate"
            )
        ),
        log=QUIET,
    )
    rows = [json.loads(x) for x in (out / "MMAR-meta.jsonl").read_text().splitlines()]
    for k, row in enumerate(rows):
        reply = _replies(row, k)
        if reply is not None:
            row["answer_prediction"] = reply
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    stdout = _peer_script(script, pred)
    acc, n = _total(stdout)  # MMAR's script counts per layer: it fails on any category outside its four
    res = _score(pred, "mmar", tmp_path / "o", "++scorer=mmar")
    assert (f"{100 * res['scores']['overall']['AA']:.2f}", res["scores"]["overall"]["n_answers"]) == (f"{acc:.2f}", n)
    assert res["dataset"]["rows_without_reply"] == len(rows) - n > 0
    assert res["dataset"]["prediction_field"] == "answer_prediction"
    v = res["verdicts"]  # a bare letter is right for the parser, wrong for the token match
    assert (
        v["parser_right_toolkit_wrong"] > 0 and res["parser_scores"]["overall"]["AA"] > res["scores"]["overall"]["AA"]
    )


def test_mmau_export_scored_by_mmaus_own_script_equals_scorer_mmar(tiny_dataset, tmp_path):
    """MMAU's evaluation.py, unmodified, reads our mmau-test.json (plus model_output) and counts what
    scorer=mmar counts; every row's task and difficulty are names its script tallies."""
    script = peer("MMAU") / "evaluation.py"
    out = tmp_path / "mmau"
    res = run(
        validate_eval(
            compose(
                ["action=export", "export_format=mmau", f"data={tiny_dataset}", f"out={out}"], config_name="evaluate"
            )
        ),
        log=QUIET,
    )
    rows = json.loads((out / "mmau-test.json").read_text())
    assert len(rows) == res["items"] > 0 and all((out / r["audio_id"]).is_file() for r in rows)
    assert {r["task"] for r in rows} == {"sound"} and {r["difficulty"] for r in rows} == {"easy", "medium", "hard"}
    for k, row in enumerate(rows):
        reply = _replies(row, k)
        if reply is not None:
            row["model_output"] = reply
    pred = tmp_path / "mmau-test.json"
    pred.write_text(json.dumps(rows))
    acc, n = _total(_peer_script(script, pred))
    ours = _score(pred, "mmau", tmp_path / "o", "++scorer=mmar")
    assert (f"{100 * ours['scores']['overall']['AA']:.2f}", ours["scores"]["overall"]["n_answers"]) == (f"{acc:.2f}", n)
    assert 0 < acc < 100 and n < len(rows)  # the rows without a reply are left out by both
    assert set(ours["scores"]["by_task"]) == {r["auralgen_task"] for r in rows if "model_output" in r}


def test_mmau_file_scored_by_mmaus_own_script_equals_scorer_mmar(tmp_path):
    script = peer("MMAU") / "evaluation.py"
    choices = [["Higher", "Lower", "The same"], ["dog barking", "cat", "dog"], ["1 m", "2 m", "4 m"]]
    rows = []
    for i in range(42):
        ch = choices[i % 3]
        row = {
            "id": str(i),
            "question": "q",
            "choices": ch,
            "answer": ch[i % 2],
            "task": "sound",
            "difficulty": "easy",
            "sub-category": f"s{i % 3}",
        }
        reply = _replies(row, i // 3)
        if reply is not None:
            row["model_output"] = reply
        rows.append(row)
    pred = tmp_path / "mmau.json"
    pred.write_text(json.dumps(rows))
    stdout = _peer_script(script, pred)
    acc, n = _total(stdout)
    res = _score(pred, "mmau", tmp_path / "o", "++scorer=mmar")
    assert (f"{100 * res['scores']['overall']['AA']:.2f}", res["scores"]["overall"]["n_answers"]) == (f"{acc:.2f}", n)
    assert res["dataset"]["prediction_field"] == "model_output" and 0 < acc < 100


def test_token_match_rules():
    ch = ["dog barking", "cat", "dog"]
    assert mmar.token_match("dog barking", "A dog barking", ch)
    assert not mmar.token_match("dog", "dog barking", ch)  # "barking" belongs to a wrong choice only
    assert not mmar.token_match("cat", "B", ch) and not mmar.token_match("cat", "", ch)


def test_multi_clip_items_are_skipped_with_a_count_and_the_reason(tmp_path):
    item = types.SimpleNamespace(task="three_clips", clips=(b"", b"", b""))
    logged = []
    res = mmar.export([item, item], tmp_path, logged.append)
    assert res["items"] == 0 and res["skipped"] == {"three_clips: 3 clips per item (MMAR holds one audio per item)": 2}
    assert "skipped 2 (three_clips: 3 clips" in logged[0]
    assert json.loads((tmp_path / "MMAR-meta.json").read_text()) == []


def test_the_default_field_is_the_first_the_file_has():
    rows = [{"answer_prediction": "a", "model_prediction": "b"}]
    assert mmar.pick_field(rows, None, "p") == "model_prediction"
    assert mmar.pick_field([{"answer_prediction": "a"}], None, "p") == "answer_prediction"
    assert mmar.pick_field(rows, "answer_prediction", "p") == "answer_prediction"


@pytest.mark.parametrize(
    "fmt,scorer,needle",
    [
        ("mmar", "file", "scorer=file with predictions_format=mmar; allowed: parser or mmar"),
        ("starbench", "mmar", "scorer=mmar with predictions_format=starbench; allowed: parser or file"),
        ("sonicbench", "mmar", "scorer=mmar with predictions_format=sonicbench; allowed: parser or file"),
    ],
)
def test_a_scorer_the_format_has_no_verdict_for_is_one_clear_error(tmp_path, fmt, scorer, needle):
    from auralgen.core.errors import ParameterError

    pred = tmp_path / "p_recog.jsonl"
    pred.write_text(
        json.dumps(
            {
                "id": "1",
                "choices": ["a", "b"],
                "options": ["a", "b"],
                "answer": "a",
                "model_prediction": "a",
                "model_response": "a",
                "rotate_id": 0,
                "prompt": "p",
                "prediction": "A",
                "reference": "A",
            }
        )
        + "\n"
    )
    with pytest.raises(ParameterError, match=re.escape(needle)):
        _score(pred, fmt, tmp_path / "o", f"++scorer={scorer}")


def test_lower_cased_option_replies_mmars_own_script_and_every_number_we_print_agree(tmp_path):
    """reverberation_absolute rows answered "The answer is <option lower-cased>.", 7 of 10 naming the
    truth: MMAR's own script says 70.00 %, and so do scorer=mmar's results.json, printed line and leaderboard."""
    from tests.support.scoring import assert_every_number_agrees, lower_cased_option_rows, score_file

    script = peer("MMAR") / "code" / "evaluation.py"
    _, rows = lower_cased_option_rows("answer_prediction")
    pred = tmp_path / "mmar.jsonl"
    pred.write_text("".join(json.dumps(x) + "\n" for x in rows))
    acc, n = _total(_peer_script(script, pred))
    assert (acc, n) == (70.0, 10)
    res, lines = score_file(pred, tmp_path / "o", "predictions_format=mmar", "++scorer=mmar")
    assert_every_number_agrees(res, lines, tmp_path / "o", acc / 100, round(acc / 100 * n))
