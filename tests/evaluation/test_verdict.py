"""The one verdict (:func:`auralgen.evaluation.verdict.is_correct`): every writer of a record's
``correct`` calls it, and a peer file's verdict is the verdict for every row, parsed or not."""

import ast
import json
import re
from pathlib import Path

import pytest

import auralgen
from auralgen.evaluation.interop import mmar
from auralgen.evaluation.parsing import ParseResult, extract_choice
from auralgen.evaluation.verdict import is_correct
from tests.support.scoring import assert_every_number_agrees, lower_cased_option_rows, score_file

PACKAGE = Path(auralgen.__file__).parent
VERDICT = PACKAGE / "evaluation" / "verdict.py"
# a simulated observer answers with a probability, not a reply: there is nothing to parse
NOT_A_REPLY = {"evaluation/adaptive/observers.py"}


def _is_verdict_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "is_correct"


def verdict_copies(source: str) -> list[int]:
    """Lines that set a record's ``correct`` from anything but a call of ``is_correct``, or that
    combine a parse status with an index comparison (the verdict written out again)."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        values = []
        if isinstance(node, ast.Dict):
            values = [v for k, v in zip(node.keys, node.values, strict=True) if getattr(k, "value", None) == "correct"]
        elif isinstance(node, ast.Call):
            values = [kw.value for kw in node.keywords if kw.arg == "correct"]
        elif isinstance(node, ast.Assign):
            values = [
                node.value
                for t in node.targets
                if isinstance(t, ast.Subscript) and getattr(t.slice, "value", None) == "correct"
            ]
        # a verdict call, or a copy of one already recorded (``r["correct"]``), is allowed
        bad += [v.lineno for v in values if not _is_verdict_call(v) and "['correct']" not in ast.unparse(v)]
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            text = ast.unparse(node)
            if re.search(r"status\b.*==\s*'ok'", text) and re.search(r"(index|choice)\b.*==", text):
                bad.append(node.lineno)
    return sorted(set(bad))


def test_the_copy_detector_finds_a_second_verdict():
    assert verdict_copies('rec = {"correct": parsed.status == "ok" and parsed.index == truth}') == [1]
    assert verdict_copies("rec.update(correct=False)") == [1]
    assert verdict_copies('rec["correct"] = p.index == t') == [1]
    assert verdict_copies("ok = r.status == 'ok' and r.choice == truth") == [1]
    assert verdict_copies("rec.update(correct=is_correct(parsed, truth))") == []
    assert verdict_copies('out = {"correct": [bool(r["correct"]) for r in recs]}') == []


def test_every_record_verdict_in_the_evaluator_is_the_one_function():
    found = {}
    for path in sorted((PACKAGE / "evaluation").rglob("*.py")):
        if path != VERDICT and str(path.relative_to(PACKAGE)) not in NOT_A_REPLY:
            lines = verdict_copies(path.read_text(encoding="utf-8"))
            if lines:
                found[str(path.relative_to(PACKAGE))] = lines
    assert found == {}
    # the three writers of a reply's record all call it
    for rel in ("evaluation/session.py", "evaluation/interop/common.py", "evaluation/adaptive/trials.py"):
        assert "is_correct(" in (PACKAGE / rel).read_text(encoding="utf-8"), rel


def test_the_verdict_rules():
    assert is_correct(ParseResult(2, "ok"), 2) and not is_correct(ParseResult(1, "ok"), 2)
    for status in ("unparseable", "refusal", "multiple"):
        assert not is_correct(ParseResult(None, status), 0)
        assert is_correct(ParseResult(None, status), 0, file_verdict=True)
    assert not is_correct(ParseResult(0, "ok"), 0, file_verdict=False)  # the file decides, both ways
    assert not is_correct(None, 0) and is_correct(None, 0, file_verdict=True)


def test_starbench_hedged_replies_the_file_calls_correct_count_correct(tmp_path):
    """A pc_nsp prediction file: hedged pitch replies naming the truth, which the toolkit's
    ``is_correct`` marks right, count right in every number auralgen reports."""
    options = ["Higher", "Lower", "The same"]
    rows, n = [], 0
    for i in range(20):
        truth = options[i % 3]
        for r in range(3):
            shown = options[r:] + options[:r]
            kind = (i + r) % 4
            if kind == 0:  # hedged, names the truth: the toolkit reads it (option text), so does the file
                reply, ok = f"I can't hear the audio clearly, it is faint, but my best guess is {truth}", True
            elif kind == 1:  # two letters, the last one right: the toolkit's last-letter rule says correct
                letter = "ABC"[shown.index(truth)]
                other = "ABC"[(shown.index(truth) + 1) % 3]
                reply, ok = f"{other} or {letter}? {letter}", True
            elif kind == 2:
                reply, ok = f"The answer is {truth}.", True
            else:
                reply, ok = "I cannot listen to audio.", False
            rows.append(
                {
                    "id": f"p{i}",
                    "options": shown,
                    "answer": truth,
                    "answer_letter": f"<{'ABC'[shown.index(truth)]}>",
                    "rotate_id": r,
                    "category": "foundational_perception",
                    "sub-category": "pitch",
                    "task": "pitch_relative",
                    "model_response": reply,
                    "is_correct": ok,
                }
            )
            n += ok
    path = tmp_path / "model" / "pc_nsp" / "infer_results.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    unparsed_right = [
        x for x in rows if x["is_correct"] and extract_choice(x["model_response"], x["options"]).status != "ok"
    ]
    assert unparsed_right  # rows the parser does not read, whose file verdict is "correct"
    out = tmp_path / "runs" / "file"
    res, lines = score_file(path, out, "++scorer=file")
    aa = n / len(rows)
    assert_every_number_agrees(res, lines, out, aa, n)
    perf = json.loads((out / "performance.json").read_text())
    assert perf["Total"]["AA"] == f"{100 * aa:.2f}%" and perf["By Sub-category"]["pitch"]["AA"] == f"{100 * aa:.2f}%"
    assert res["scores"]["by_task"]["pitch_relative"]["AA"] == pytest.approx(aa)
    assert res["accounting"]["by_task"]["pitch_relative"]["correct"] == n
    # the parser's own verdicts stand beside, and count only what it read
    assert res["parser_scores"]["overall"]["AA"] < aa


def test_mmar_lower_cased_option_replies_score_by_mmars_rule(tmp_path):
    """reverberation_absolute rows answered "The answer is <option lower-cased>.": 7 of 10 right by
    MMAR's per-row string match, so 70.00 % under scorer=mmar, whatever the parser reads."""
    options, rows = lower_cased_option_rows("model_prediction")
    assert [mmar.token_match(r["answer"], r["model_prediction"], options) for r in rows] == [True] * 7 + [False] * 3
    path = tmp_path / "mmar.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    out = tmp_path / "runs" / "mmar"
    res, lines = score_file(path, out, "predictions_format=mmar", "++scorer=mmar")
    assert_every_number_agrees(res, lines, out, 0.7, 7)
    assert res["scores"]["by_task"]["reverberation_absolute"]["AA"] == pytest.approx(0.7)
