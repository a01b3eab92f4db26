"""Mixture answerers: the count from onsets; named-sound questions left unanswered (NO_ANSWER), never guessed."""

import pytest

from auralgen.generation.run import run
from auralgen.listeners import mixture as LM
from auralgen.listeners.common import NO_ANSWER
from auralgen.validation import listener as L
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731


@pytest.fixture(scope="module")
def mixture_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixture")
    run(small_run("task=mixture", "task.items_per_level=12", "task.levels=[16]", "task.onset_levels_s=[0.4]",
                  "task.count_levels_lu=[0,12]", "task.overlap_levels_s=[0.4]", out=out), log=QUIET)  # fmt: skip
    return out


@pytest.fixture(scope="module")
def relation_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("relation")
    run(small_run("task=multi_source_relation", "task.items_per_level=1", out=out), log=QUIET)
    return out


def _answers(out, task):
    for r in read_rows(out, task):
        x, sr = decode(r["audio"][0])
        yield r, L.answer(task, r["question"], r["options"], [x], sr, layout=r.get("channel_layout"))


def test_count_is_heard_above_chance(mixture_data):
    got = [(r, a) for r, a in _answers(mixture_data, "mixture") if params_of(r)["sub_question"] == "count"]
    assert len(got) == 24
    acc = sum(a == r["answer_index"] for r, a in got) / len(got)
    assert acc >= 1 / 3 + 0.1  # chance is 1/3 (2, 3 or 4 sounds)


@pytest.mark.parametrize("task", ["mixture", "multi_source_relation"])
def test_every_item_is_answered_and_names_are_not_guessed(mixture_data, relation_data, task):
    out = mixture_data if task == "mixture" else relation_data
    n = 0
    for r, a in _answers(out, task):
        n += 1
        named = task == "multi_source_relation" or params_of(r)["sub_question"] != "count"
        assert (a == NO_ANSWER) == named and (named or 0 <= a < len(r["options"]))
    assert n > 0


@pytest.mark.parametrize("question,sub", [
    ("How many distinct sounds are in this clip?", "count"),
    ("Count the distinct sound sources in this recording. How many are there?", "count"),
    ("Listen to the mixture. Which sound is loudest?", "louder"),
    ("Among the sounds in this recording, which one starts first?", "first"),
    ("Listen to the mixture. Which pair of sounds is heard at the same time?", "overlap"),
])  # fmt: skip
def test_sub_question_is_parsed_from_the_question(question, sub):
    assert LM.sub_question(question) == sub


def test_count_options_are_parsed():
    assert LM.count_options(["4", "2", "3", "Cannot tell"]) == {0: 4, 1: 2, 2: 3}
