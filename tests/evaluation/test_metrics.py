"""Tests of AA / ACR scoring, macro averages and Wilson intervals."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.evaluation.metrics import score, wilson_interval


def rec(
    item,
    rotation,
    correct,
    *,
    task="pitch_relative",
    status="ok",
    category="perception",
    sub="relative",
    level=0,
    level_value=0.0,
    n_options=4,
):
    return dict(
        id=item,
        task=task,
        rotation=rotation,
        correct=correct,
        status=status,
        category=category,
        sub_category=sub,
        level=level,
        level_value=level_value,
        n_options=n_options,
    )


def four_rotations(item, pattern, **kw):
    return [rec(item, r, bool(c), **kw) for r, c in enumerate(pattern)]


def test_aa_and_acr_by_hand():
    records = four_rotations("x", [1, 1, 1, 1]) + four_rotations("y", [1, 0, 1, 1]) + four_rotations("z", [0, 0, 0, 0])
    task = score(records)["by_task"]["pitch_relative"]
    assert task["AA"] == pytest.approx(7 / 12)
    assert task["ACR"] == pytest.approx(1 / 3)
    assert (task["n_answers"], task["n_items"], task["answers_per_item"]) == (12, 3, [4, 4])
    assert task["chance"] == pytest.approx(0.25)


def test_failed_parses_stay_in_the_denominator_and_count_wrong():
    records = [
        rec("x", 0, True),
        rec("x", 1, True, status="unparseable"),  # a stray correct flag must not count
        rec("x", 2, False, status="refusal"),
        rec("x", 3, False, status="multiple"),
    ]
    task = score(records)["by_task"]["pitch_relative"]
    assert task["AA"] == pytest.approx(0.25)
    assert task["ACR"] == 0.0
    assert task["unparseable_rate"] == task["refusal_rate"] == task["multiple_rate"] == pytest.approx(0.25)


def test_groupings_and_macro_follow_star_bench():
    # sub-category s1: 2 items, all right; s2: 1 item, half right; s3 (other category): 1 item, all wrong
    records = (
        four_rotations("a", [1, 1, 1, 1], sub="s1")
        + four_rotations("b", [1, 1, 1, 1], sub="s1")
        + four_rotations("c", [1, 0, 1, 0], sub="s2")
        + four_rotations("d", [0, 0, 0, 0], sub="s3", category="spatial", task="azimuth")
    )
    result = score(records)
    subs = result["by_sub_category"]
    assert subs["perception"]["s1"]["AA"] == 1.0
    assert subs["perception"]["s2"]["AA"] == 0.5
    assert subs["spatial"]["s3"]["AA"] == 0.0
    # pooled per category: 10 / 12 right
    assert result["by_category"]["perception"]["AA"] == pytest.approx(10 / 12)
    # macro: category = mean over its sub-categories; overall = mean over all sub-categories
    assert result["macro"]["by_category"]["perception"]["AA"] == pytest.approx(0.75)
    assert result["macro"]["by_category"]["perception"]["ACR"] == pytest.approx(0.5)
    assert result["macro"]["AA"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert result["macro"]["ACR"] == pytest.approx((1.0 + 0.0 + 0.0) / 3)
    assert result["macro"]["n_sub_categories"] == 3
    assert result["overall"]["AA"] == pytest.approx(10 / 16)


def test_by_task_level():
    records = four_rotations("a", [1, 1, 1, 1], level=0, level_value=5.0) + four_rotations(
        "b", [0, 1, 0, 1], level=2, level_value=50.0
    )
    levels = score(records)["by_task_level"]["pitch_relative"]
    assert set(levels) == {"0", "2"}
    assert (levels["0"]["AA"], levels["0"]["level_value"]) == (1.0, 5.0)
    assert (levels["2"]["AA"], levels["2"]["ACR"], levels["2"]["level_value"]) == (0.5, 0.0, 50.0)


def test_chance_from_mixed_option_counts_and_option_lists():
    records = [rec("a", 0, True, n_options=2), rec("b", 0, True, n_options=4)]
    assert score(records)["by_task"]["pitch_relative"]["chance"] == pytest.approx((0.5 + 0.25) / 2)
    plain = [dict(id="a", task="t", rotation=0, correct=True, status="ok", options=["x", "y", "z"])]
    assert score(plain)["by_task"]["t"]["chance"] == pytest.approx(1 / 3)
    bare = [dict(id="a", task="t", rotation=0, correct=True, status="ok")]
    result = score(bare)
    assert result["by_task"]["t"]["chance"] is None
    assert result["by_category"] == {} and result["by_task_level"] == {} and result["macro"]["AA"] is None


def test_result_is_strict_json():
    records = four_rotations("a", [1, 0, 1, 1]) + four_rotations("b", [0, 0, 0, 0], task="loudness", level=3)
    text = json.dumps(score(records), allow_nan=False)
    assert json.loads(text)["by_task"]["loudness"]["AA"] == 0.0


@pytest.mark.parametrize(
    ("records", "match"),
    [
        ([], "records is empty"),
        ([rec("a", 0, True), rec("a", 0, False)], "id='a' has a rotation recorded twice"),
        ([{"id": "a", "task": "t", "rotation": 0, "correct": True}], "has no 'status'"),
        ([rec("a", 0, True, status="maybe")], "status='maybe' is unknown"),
        ([rec("a", 0, True), rec("a", 1, True, task="other")], "id='a' has more than one task"),
        ([rec("a", 0, True), rec("a", 1, True, sub="other")], "more than one sub_category"),
        ([rec("a", 0, "yes")], "correct has non-boolean values"),
        ([rec("a", 0.5, True)], "rotation has non-integer values"),
        ([rec("a", 0, True, n_options=1)], "n_options=1"),
    ],
)
def test_bad_records(records, match):
    with pytest.raises(ParameterError, match=match):
        score(records)


def test_scores_100k_records_quickly():
    rng = np.random.default_rng(0)
    correct = rng.random(100_000) < 0.6
    records = [
        dict(
            id=f"i{i // 4}",
            task=f"t{(i // 4) % 12}",
            category=f"c{(i // 4) % 3}",
            sub_category=f"s{(i // 4) % 6}",
            level=(i // 4) % 5,
            level_value=float((i // 4) % 5),
            rotation=i % 4,
            correct=bool(correct[i]),
            status="ok",
            n_options=4,
        )
        for i in range(100_000)
    ]
    result = score(records)  # speed: bench/bench_scoring.py
    assert result["overall"]["AA"] == pytest.approx(correct.mean())


def test_wilson_known_values():
    low, high = wilson_interval(8, 10)
    assert (low, high) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
    lo, hi = wilson_interval(np.array([1, 5]), np.array([10, 10]))
    assert lo.shape == (2,) and hi[1] > hi[0]


@given(n=st.integers(1, 10_000), frac=st.floats(0, 1), conf=st.floats(0.5, 0.999))
def test_wilson_contains_estimate(n, frac, conf):
    k = int(round(frac * n))
    low, high = wilson_interval(k, n, confidence=conf)
    assert 0.0 <= low <= k / n + 1e-12 and k / n - 1e-12 <= high <= 1.0


@pytest.mark.parametrize(
    ("k", "n", "kw", "match"), [(5, 3, {}, "0 <= k <= n"), (1, 2, {"confidence": 1.0}, "confidence=1.0")]
)
def test_wilson_bad_input(k, n, kw, match):
    with pytest.raises(ParameterError, match=match):
        wilson_interval(k, n, **kw)
