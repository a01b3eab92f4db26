"""Option balance of the audit: the p-value does not depend on the order answers were first seen."""

from collections import Counter
from types import SimpleNamespace

from auralgen.validation.balance import balance


def _answer_p(expected_order: list[str]) -> float:
    """answer_p of one task whose expected weights were inserted in ``expected_order``."""
    weights = {"a": 2.9, "b": 0.95, "c": 3.78}
    report = SimpleNamespace(balance={}, flags=[])
    exp = Counter({k: weights[k] for k in expected_order})
    balance(report, {"t": Counter({0: 2})}, {"t": 3}, {("t", 0): Counter({"a": 2})},
            {("t", 0): exp}, {})  # fmt: skip
    return report.balance["t"]["answer_p"]


def test_answer_p_is_the_same_for_any_insertion_order():
    # the insertion order followed a set of option strings, i.e. PYTHONHASHSEED; float sums are
    # not associative, so the p-value differed in its last digits between runs of the same audit
    orders = (["a", "b", "c"], ["b", "c", "a"], ["c", "b", "a"])  # sums ...586 / ...585 unsorted
    assert len({_answer_p(o) for o in orders}) == 1
