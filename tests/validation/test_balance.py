"""Option balance of the audit: the p-value does not depend on the order answers were first seen."""

from collections import Counter
from types import SimpleNamespace

from auralgen.tasks.design import LevelInfo, SameAtZero
from auralgen.validation.balance import AnswerBalance, balance
from auralgen.validation.read import Decoded, Observed


def _answer_p(expected_order: list[str]) -> float:
    """answer_p of one task whose expected weights were inserted in ``expected_order``."""
    weights = {"a": 2.9, "b": 0.95, "c": 3.78}
    report = SimpleNamespace(balance={}, flags=[])
    exp = Counter({k: weights[k] for k in expected_order})
    balance(report, {"t": Counter({0: 2})}, {"t": 3}, {("t", 0): Counter({"a": 2})}, {("t", 0): exp}, {})
    return report.balance["t"]["answer_p"]


def test_answer_p_is_the_same_for_any_insertion_order():
    # the insertion order followed a set of option strings, i.e. PYTHONHASHSEED; float sums are
    # not associative, so the p-value differed in its last digits between runs of the same audit
    orders = (["a", "b", "c"], ["b", "c", "a"], ["c", "b", "a"])  # sums ...586 / ...585 unsorted
    assert len({_answer_p(o) for o in orders}) == 1


class _Task:
    """Expected answers as a relative task has them: 'The same' alone at a zero difference."""

    design = SameAtZero("t", (0.0, 20.0, 40.0), 1, LevelInfo("pitch", "relative", "cents"), "The same", 3)


def _seen(level, level_value, answer, task=_Task):
    options = ["Lower", "The same", "Higher"]
    row = {
        "task": "t",
        "level": level,
        "level_value": level_value,
        "options": options,
        "answer": answer,
        "answer_index": options.index(answer),
    }
    return Observed(Decoded(row, "data/t/test-00000-of-00001.parquet", None, 16000, 0, []), task, None, [])


def test_answer_balance_counts_positions_and_flags_an_answer_its_level_cannot_have():
    check = AnswerBalance()
    for seen in [
        _seen(0, 0.0, "The same"),
        *[_seen(1, 20.0, a) for a in ("Lower", "Higher", "Higher")],
        _seen(1, 20.0, "The same"),
        _seen(2, 40.0, "Lower", task=None),
    ]:
        check.observe(seen)
    report = SimpleNamespace(balance={}, flags=[])
    check.finish(report)
    entry = report.balance["t"]
    assert entry["positions"] == [2, 2, 2]
    assert entry["answers"] == {"Higher": 2, "Lower": 2, "The same": 2}
    assert entry["unexpected_answers"] == ["level 1: 'The same'"]
    assert [f["audit"] for f in report.flags] == ["option_balance"]
    assert report.flags[0]["detail"].endswith("; unexpected level 1: 'The same'")
