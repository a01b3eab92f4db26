"""Tests of AA / ACR scoring, macro averages and Wilson intervals."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.evaluation.metrics import score, wilson_interval
from auralgen.evaluation.parsing import ParseResult, rotate_options
from auralgen.evaluation.verdict import is_correct


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
    records = [rec("x", 0, is_correct(ParseResult(0, "ok"), 0))] + [
        rec("x", r, is_correct(ParseResult(None, status), 0), status=status)
        for r, status in ((1, "unparseable"), (2, "refusal"), (3, "multiple"))
    ]
    task = score(records)["by_task"]["pitch_relative"]
    assert task["AA"] == pytest.approx(0.25)
    assert task["ACR"] == 0.0
    assert task["unparseable_rate"] == task["refusal_rate"] == task["multiple_rate"] == pytest.approx(0.25)


def test_a_file_verdict_counts_for_an_unparsed_reply():
    # scorer=file / scorer=mmar: the peer's verdict is the verdict, parsed or not; score() counts it as recorded
    records = [
        rec("x", r, is_correct(ParseResult(None, status), 0, file_verdict=True), status=status)
        for r, status in enumerate(("ok", "unparseable", "refusal", "multiple"))
    ]
    task = score(records)["by_task"]["pitch_relative"]
    assert (task["AA"], task["ACR"]) == (1.0, 1.0)
    assert task["unparseable_rate"] == pytest.approx(0.25)


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


# --- honest chance: the best audio-free rule -----------------------------------------------------


def presented(item, options, answer, *, rotations=None, task="t", level=0, correct=True):
    """The records of one item asked under ``rotations`` (default: all) rotations of ``options``."""
    out = []
    for r in range(len(options) if rotations is None else rotations):
        shown, _ = rotate_options(list(options), r)
        out.append(
            dict(
                id=item,
                task=task,
                rotation=r,
                correct=correct,
                status="ok",
                level=level,
                category="c",
                sub_category=task,
                options=shown,
                truth=shown.index(answer),
            )
        )
    return out


REL = ("first", "second", "the same")


def test_honest_chance_is_the_most_frequent_answer_text_under_rotation():
    records = [rec for i, a in enumerate(["first"] * 3 + ["second"]) for rec in presented(f"i{i}", REL, a)]
    task = score(records)["by_task"]["t"]
    assert task["stated_chance"] == pytest.approx(1 / 3)
    # "always first" is right for 3 items of 4 under every rotation: AA and ACR 75 %
    assert (task["chance"], task["chance_ACR"], task["chance_rule"]) == (0.75, 0.75, 'text "first"')


def test_honest_chance_is_the_most_frequent_position_without_rotation():
    texts = [("a", "b", "c"), ("d", "e", "f"), ("g", "h", "i"), ("j", "k", "l")]
    records = [
        rec for i, (o, at) in enumerate(zip(texts, [0, 0, 0, 2])) for rec in presented(f"i{i}", o, o[at], rotations=1)
    ]
    task = score(records)["by_task"]["t"]
    assert (task["chance"], task["chance_ACR"], task["chance_rule"]) == (0.75, 0.75, "position A")
    # asked under every rotation the position rule is right once per item: the texts decide (all distinct)
    rotated = [rec for i, (o, at) in enumerate(zip(texts, [0, 0, 0, 2])) for rec in presented(f"i{i}", o, o[at])]
    task = score(rotated)["by_task"]["t"]
    assert task["chance"] == pytest.approx(0.25 * 1 + 0.75 * 1 / 3)  # text "a": right on i0, a guess on i1..i3
    assert task["chance_ACR"] == pytest.approx(0.25 + 0.75 * (1 / 3) ** 3)


def test_balanced_answers_give_the_stated_chance_and_the_guess_rule():
    records = [rec for i, a in enumerate(REL * 2) for rec in presented(f"i{i}", REL, a)]
    task = score(records)["by_task"]["t"]
    assert task["chance"] == pytest.approx(1 / 3) and task["chance_rule"] == "guess"
    assert task["chance_ACR"] == pytest.approx(1 / 3)  # a text rule: two items of six right under all rotations


def test_level_chance_is_fitted_on_the_level_and_groups_of_tasks_weight_their_tasks():
    same = [rec for i in range(4) for rec in presented(f"z{i}", REL, "the same", level=0)]
    diff = [rec for i, a in enumerate(["first", "second"] * 2) for rec in presented(f"d{i}", REL, a, level=1)]
    other = [rec for i, a in enumerate("xxxy") for rec in presented(f"o{i}", ("x", "y"), a, task="u")]
    result = score(same + diff + other)
    levels = result["by_task_level"]["t"]
    assert (levels["0"]["chance"], levels["0"]["chance_rule"]) == (1.0, 'text "the same"')
    assert levels["1"]["chance"] == pytest.approx(0.5)  # only first/second can be right at level 1
    t, u = result["by_task"]["t"], result["by_task"]["u"]
    assert t["chance"] == pytest.approx(0.5) and u["chance"] == pytest.approx(0.75)  # "the same" 4 of 8; "x" 3 of 4
    n_t, n_u = len(same + diff), len(other)
    assert result["overall"]["chance"] == pytest.approx((n_t * 0.5 + n_u * 0.75) / (n_t + n_u))
    assert result["overall"]["chance_ACR"] == pytest.approx((8 * 0.5 + 4 * 0.75) / 12)
    assert result["by_category"]["c"]["chance"] == result["overall"]["chance"]
    assert result["by_sub_category"]["c"]["u"]["chance"] == pytest.approx(0.75)


def test_a_text_not_offered_is_a_guess():
    records = presented("a", ("x", "y"), "x", rotations=1) + presented("b", ("p", "q", "r", "s"), "p", rotations=1)
    records[1]["options"], records[1]["truth"] = ["q", "p", "r", "s"], 1  # position rules cannot win
    task = score(records)["by_task"]["t"]
    # "always p": right on b, a guess (1/2) on a, which does not offer it; "always x": 1 and 1/4
    assert task["chance"] == pytest.approx((1 / 2 + 1) / 2) and task["chance_rule"] == 'text "p"'


def test_records_without_options_give_the_stated_chance_and_say_so():
    task = score(four_rotations("x", [1, 0, 0, 0], n_options=4))["by_task"]["pitch_relative"]
    assert task["chance"] == task["stated_chance"] == 0.25
    assert task["chance_ACR"] is None and "no presented options" in task["chance_rule"]


@given(
    answers=st.lists(st.integers(0, 3), min_size=1, max_size=30),
    n_opt=st.integers(2, 4),
    rotations=st.integers(1, 4),
)
def test_no_constant_text_or_position_beats_the_honest_chance(answers, n_opt, rotations):
    options = tuple(f"o{j}" for j in range(n_opt))
    records = [
        rec
        for i, a in enumerate(answers)
        for rec in presented(f"i{i}", options, options[a % n_opt], rotations=min(rotations, n_opt))
    ]
    task = score(records)["by_task"]["t"]
    assert task["stated_chance"] - 1e-12 <= task["chance"] <= 1.0
    for j in range(n_opt):
        text = np.mean([r["options"][r["truth"]] == options[j] for r in records])
        position = np.mean([r["truth"] == j for r in records])
        assert text <= task["chance"] + 1e-12 and position <= task["chance"] + 1e-12


def test_honest_chance_of_100k_records_quickly():
    rng = np.random.default_rng(1)
    opts = [["first", "second", "the same"][r:] + ["first", "second", "the same"][:r] for r in range(3)]
    answers = rng.choice(3, size=100_000 // 3)
    records = [
        dict(
            id=f"i{i}",
            task=f"t{i % 12}",
            category="c",
            sub_category=f"s{i % 6}",
            level=i % 5,
            rotation=r,
            correct=True,
            status="ok",
            options=opts[r],
            truth=(a - r) % 3,
        )
        for i, a in enumerate(answers)
        for r in range(3)
    ]
    result = score(records)
    assert result["overall"]["chance"] == pytest.approx(max(np.bincount(answers)) / len(answers), abs=0.01)
