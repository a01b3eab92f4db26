"""Tests of option rotation and answer extraction."""

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.evaluation.parsing import (
    STATUSES,
    ParseResult,
    extract_choice,
    option_letters,
    presented_index,
    rotate_options,
)

PITCH = ["Higher", "Lower", "Same", "Unable to determine"]
PITCH3 = ["Higher", "Lower", "Same"]
AZIMUTH = ["Front-left", "Left", "Front-right", "Right"]
LOUD = ["The first sound", "The second sound", "Both are equally loud"]
COUNT = ["1", "2", "3", "4", "5"]

OK, MULTI, REFUSAL, UNPARSEABLE = "ok", "multiple", "refusal", "unparseable"

# (reply, options, expected index in presented order, expected status)
CASES = [
    # bare letters and their dress
    ("B", PITCH, 1, OK),
    ("b", PITCH, 1, OK),
    (" C\n", PITCH, 2, OK),
    ("(B)", PITCH, 1, OK),
    ("[B]", PITCH, 1, OK),
    ("{B}", PITCH, 1, OK),
    ("<B>", PITCH, 1, OK),
    ("B.", PITCH, 1, OK),
    ("B)", PITCH, 1, OK),
    ("**B**", PITCH, 1, OK),
    ("**C.**", PITCH, 2, OK),
    ("$\\boxed{D}$", PITCH, 3, OK),
    ("（B）", PITCH, 1, OK),
    ("Ｂ", PITCH, 1, OK),
    # answer statements
    ("Answer: B", PITCH, 1, OK),
    ("answer: b", PITCH, 1, OK),
    ("The answer is (C)", PITCH, 2, OK),
    ("The answer is (C).", PITCH, 2, OK),
    ("The correct option is C: Lower", ["Higher", "Same", "Lower"], 2, OK),
    ("Final answer: **A**", PITCH, 0, OK),
    ("The answer is: **C**", PITCH, 2, OK),
    ("<answer>B</answer>", PITCH, 1, OK),
    ("I would choose B.", PITCH, 1, OK),
    ("I'd go with option D.", PITCH, 3, OK),
    ("My answer would be A because the second tone is higher.", PITCH, 0, OK),
    ("Answer: Lower", PITCH, 1, OK),
    ("The answer is lower.", PITCH, 1, OK),
    ("The answer is unable to determine.", PITCH, 3, OK),
    ("(B) is correct.", PITCH, 1, OK),
    ("Option C is the correct answer.", PITCH, 2, OK),
    ("B is correct; the second tone has a lower fundamental.", PITCH, 1, OK),
    # option text, with or without the letter
    ("Lower", PITCH, 1, OK),
    ("lower.", PITCH, 1, OK),
    ("LOWER!", PITCH, 1, OK),
    ('"Same"', PITCH, 2, OK),
    ("B. Lower", PITCH, 1, OK),
    ("B: Lower", PITCH, 1, OK),
    ("(B) Lower", PITCH, 1, OK),
    ("C - Same", PITCH, 2, OK),
    ("unable to determine", PITCH, 3, OK),
    ("front-left", AZIMUTH, 0, OK),
    ("The sound comes from the front-left.", AZIMUTH, 0, OK),
    ("The source is on the right side.", AZIMUTH, 3, OK),
    ("The second tone is clearly lower than the first.", PITCH, 1, OK),
    ("It sounds like the second sound is louder, so The second sound.", LOUD, 1, OK),
    ("It is not higher; it is lower.", PITCH, 1, OK),
    ("3", COUNT, 2, OK),
    ("I count 3 distinct events.", COUNT, 2, OK),
    # leading letters
    ("B, because the second tone is lower.", PITCH, 1, OK),
    ("C. The two tones have the same pitch.", PITCH, 2, OK),
    ("A because the first tone is higher.", PITCH, 0, OK),
    ("D\n\nThe recording is too noisy to judge.", PITCH, 3, OK),
    # chains of thought: the last explicit answer wins
    (
        "Option A seems plausible because the first tone is loud, but the pitch clearly drops. "
        "Therefore the answer is C",
        ["Higher", "Same", "Lower"],
        2,
        OK,
    ),
    ("At first I thought the answer is A, but on reflection the answer is B.", PITCH, 1, OK),
    (
        "Let me think. The first tone is around 440 Hz and the second around 415 Hz, so the second is "
        "lower. A would be wrong. Final answer: (B)",
        PITCH,
        1,
        OK,
    ),
    ("B seems plausible, but listening again the pitch rises, so the answer is A.", PITCH, 0, OK),
    ("The tones differ by a semitone. The answer is B. Option A would need a rising pitch.", PITCH, 1, OK),
    ("Comparing (A) and (B): the second is lower, so (B).", PITCH, 1, OK),
    # Chinese
    ("答案是B", PITCH, 1, OK),
    ("答案：B", PITCH, 1, OK),
    ("答案: C", PITCH, 2, OK),
    ("选B", PITCH, 1, OK),
    ("我选择 A。", PITCH, 0, OK),
    ("正确答案是（C）", PITCH, 2, OK),
    # letters must not be read inside words or as the article
    ("A higher tone was played second.", PITCH, 0, OK),  # option text "higher", not letter A
    ("A louder sound, then a softer one.", PITCH3, None, UNPARSEABLE),
    ("The tone is A440 in both clips, so Same.", PITCH, 2, OK),
    ("I think it's B", PITCH, 1, OK),
    ("Both are tuned to B-flat; C", PITCH, 2, OK),
    # several letters
    ("A and C", PITCH, None, MULTI),
    ("A, B", PITCH, None, MULTI),
    ("A or B", PITCH, None, MULTI),
    ("The answer is A or C.", PITCH, None, MULTI),
    ("Answer: (A), (B)", PITCH, None, MULTI),
    ("Both A and C could be right.", PITCH, None, MULTI),
    ("(A) and (D)", PITCH, None, MULTI),
    # refusals
    ("I cannot listen to audio.", PITCH, None, REFUSAL),
    ("I'm sorry, but I can't process audio files.", PITCH, None, REFUSAL),
    ("As an AI I can't hear sounds, so I cannot say whether it is higher or lower.", PITCH, None, REFUSAL),
    ("As an AI language model, I do not have access to the audio.", PITCH, None, REFUSAL),
    ("No audio was provided with the question.", PITCH, None, REFUSAL),
    ("I'm unable to determine from the audio.", PITCH3, None, REFUSAL),
    ("It is impossible to tell which is higher or lower.", PITCH3, None, REFUSAL),
    ("抱歉，我无法听取音频。", PITCH, None, REFUSAL),
    # ... but choosing the "Unable to determine" option is a choice
    ("I'm unable to determine from the audio.", PITCH, 3, OK),
    ("I am unable to determine whether it is higher or lower.", PITCH, 3, OK),
    ("D. Unable to determine", PITCH, 3, OK),
    # an explicit answer after a disclaimer is still an answer
    ("As an AI I can't be certain, but the answer is B.", PITCH, 1, OK),
    # nothing usable
    ("", PITCH, None, UNPARSEABLE),
    ("   \n", PITCH, None, UNPARSEABLE),
    (None, PITCH, None, UNPARSEABLE),
    ("Neither higher nor lower", PITCH3, None, UNPARSEABLE),
    ("The second tone is higher or lower depending on the listener.", PITCH3, None, UNPARSEABLE),
    ("E", PITCH, None, UNPARSEABLE),
    ("The answer is E.", PITCH, None, UNPARSEABLE),
    ("Hmm.", PITCH, None, UNPARSEABLE),
    ("The answer is not A.", PITCH, None, UNPARSEABLE),
    ("It is definitely not (A).", PITCH, None, UNPARSEABLE),
    ("The first tone is higher, not lower. Answer: A", PITCH, 0, OK),
    # a sentence that restates an option as its subject states it; the option it is compared with is not stated
    ("I think the first sound is louder than the second sound.", LOUD, 0, OK),
    ("Either the first sound or the second sound, hard to say.", LOUD, None, UNPARSEABLE),
]


def test_table_is_large_enough():
    assert len(CASES) >= 60


@pytest.mark.parametrize(("reply", "options", "index", "status"), CASES)
def test_extract_choice(reply, options, index, status):
    result = extract_choice(reply, options)
    assert (result.index, result.status) == (index, status), result


def test_result_fields():
    result = extract_choice("The correct option is C: Lower", ["Higher", "Same", "Lower"])
    assert result == ParseResult(2, "ok", "correct option is C")


def test_letters_follow_presented_order():
    rotated, index_map = rotate_options(PITCH, 1)
    result = extract_choice("Lower", rotated)
    assert rotated[result.index] == "Lower"
    assert index_map[result.index] == PITCH.index("Lower")


@pytest.mark.parametrize(
    ("options", "r", "rotated", "index_map"),
    [
        (["a", "b", "c", "d"], 0, ["a", "b", "c", "d"], [0, 1, 2, 3]),
        (["a", "b", "c", "d"], 1, ["d", "a", "b", "c"], [3, 0, 1, 2]),  # STAR-Bench: options[-r:] + options[:-r]
        (["a", "b", "c", "d"], 3, ["b", "c", "d", "a"], [1, 2, 3, 0]),
        (["a", "b", "c", "d"], -1, ["b", "c", "d", "a"], [1, 2, 3, 0]),
        (["a", "b", "c"], 5, ["b", "c", "a"], [1, 2, 0]),
    ],
)
def test_rotate_options_table(options, r, rotated, index_map):
    assert rotate_options(options, r) == (rotated, index_map)


@given(k=st.integers(2, 8), r=st.integers(-20, 20))
def test_rotation_invariants(k, r):
    options = [f"opt{i}" for i in range(k)]
    rotated, index_map = rotate_options(options, r)
    assert sorted(index_map) == list(range(k))
    for i in range(k):  # canonical option i appears at letter position (i + r) mod k
        assert rotated[(i + r) % k] == options[i]
        assert presented_index(i, r, k) == (i + r) % k
    assert rotated == (options[-(r % k) :] + options[: -(r % k)] if r % k else options)  # STAR-Bench's rotation
    # the full set of rotations shows every option at every letter exactly once
    positions = {rotate_options(options, s)[0].index("opt0") for s in range(k)}
    assert positions == set(range(k))


@given(k=st.integers(2, 6), j=st.integers(0, 5), dress=st.sampled_from(["{}", "({})", "[{}]", "{}.", "Answer: {}"]))
def test_any_dressed_letter_is_read(k, j, dress):
    j %= k
    options = [f"choice number {i}" for i in range(k)]
    result = extract_choice(dress.format(option_letters(k)[j]), options)
    assert (result.index, result.status) == (j, "ok")


@given(st.text(max_size=80))
def test_never_crashes_and_status_is_known(reply):
    result = extract_choice(reply, PITCH)
    assert result.status in STATUSES
    assert (result.index is None) == (result.status != "ok")
    if result.index is not None:
        assert 0 <= result.index < len(PITCH)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rotate_options(["only"], 0), "number of options=1"),
        (lambda: rotate_options(["a", "b"], 1.5), "rotation r=1.5"),
        (lambda: extract_choice("A", ["x"]), "number of options=1"),
        (lambda: extract_choice(3, ["x", "y"]), "reply=3"),
        (lambda: presented_index(4, 0, 4), "canonical_index=4"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


# --------------------------------------------------------------------------- the reply corpus
# tests/evaluation/replies/*.jsonl: real replies (SonicBench's published result files of 36
# systems, each row citing its file and line) and written tricky ones; "kind" says what the
# reply states: "letter" or "text" (an answer, "expected" is its index), "paraphrase" (an
# answer only in other words: the default parser must not read a *different* option),
# "none" / "refusal" (no stated answer: the parser must not guess).

REPLIES = sorted((Path(__file__).parent / "replies").glob("*.jsonl"))


def _corpus() -> list[dict]:
    return [json.loads(line) for path in REPLIES for line in path.read_text(encoding="utf-8").splitlines()]


def test_corpus_is_real_and_large():
    rows = _corpus()
    assert len(rows) >= 300
    assert sum(r["source"].startswith("github:qiuxins/SonicBench") for r in rows) >= 300
    assert {r["kind"] for r in rows} == {"letter", "text", "paraphrase", "none", "refusal"}


def test_corpus_stated_answers_parse_and_unstated_ones_are_not_guessed():
    stated = right = unstated = not_guessed = paraphrased_wrong = 0
    for r in _corpus():
        res = extract_choice(r["reply"], r["options"])
        if r["kind"] in ("letter", "text"):
            stated += 1
            right += (res.status, res.index) == ("ok", r["expected"])
        elif r["kind"] == "paraphrase":
            paraphrased_wrong += res.index not in (None, r["expected"])
        else:
            unstated += 1
            not_guessed += res.index is None
    assert right / stated >= 0.99, f"{right}/{stated} stated answers parsed"
    assert not_guessed / unstated >= 0.96, f"{not_guessed}/{unstated} unstated answers left unparsed"
    assert paraphrased_wrong == 0


ISSUE_15 = [
    # lowercase JSON, and JSON whose explanation names another option
    ('{"answer": "c"}', PITCH, 2),
    ('{"answer": "B", "explanation": "Option A would need a rising pitch, so A is wrong."}', PITCH, 1),
    ('{"explanation": "It is not C; the second tone drops.", "answer": "b"}', PITCH, 1),
    # options listed before the stated one
    ("(A) Higher (B) Lower (C) Same. I believe it's (B).", PITCH, 1),
    ("(A) ... (B) ... I believe it's (B)", PITCH, 1),
    ("going with D", PITCH, 3),
    ("I'm going with D.", PITCH, 3),
    # rejected options named before the chosen one
    ("Not A, not B; it's C.", PITCH, 2),
    ("It isn't A and it isn't C, so B.", PITCH, 1),
    ("Since the count is 6, neither A nor B is correct.", ["2", "5"], None),
    # two stated answers: the final one wins
    ("Answer: A. Wait, the second note is lower. Final answer: B", PITCH, 1),
    ("Therefore, B's the clear choice.\n\nB", PITCH, 1),
    # letters defined or supposed, not chosen
    ("Answer 'A' if the first is higher, 'B' if the second.", PITCH3, None),
    ("If the KUFS value were -16, the sound would be classified as **B (soft)**.", ["loud", "soft"], None),
    ("A (if the first is higher) or B (if the second is higher).", PITCH3, None),
    # several letters in a row are not one answer unless they repeat one letter
    ("A. B.", PITCH3, None),
    ("B. B. B. B.", PITCH3, 1),
    # refusals
    ("I cannot tell which one is higher.", PITCH3, None),
    ("Please upload the audio so I can listen to it.", PITCH3, None),
]


@pytest.mark.parametrize(("reply", "options", "index"), ISSUE_15)
def test_issue_15_patterns(reply, options, index):
    assert extract_choice(reply, options).index == index


def test_refusal_when_no_cant_tell_option_and_choice_when_there_is_one():
    assert extract_choice("I cannot tell which one is higher.", PITCH3).status == "refusal"
    assert extract_choice("I cannot tell which one is higher.", PITCH) == ParseResult(3, "ok", "cannot tell")
    assert extract_choice("Please upload the audio so I can listen to it.", PITCH3).status == "refusal"


def test_paraphrase_is_not_read_by_default():
    assert extract_choice("The pitch goes down over the clip.", PITCH3).status == "unparseable"
