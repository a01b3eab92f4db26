"""The answer parser on every registered task's real option sets, in the ways replies state an answer.

The option sets come from the tasks themselves (``sample`` then ``qa`` at every level, several
draws per level, so every sub-question of a task is met); each option of each set is stated in
every form of :data:`FORMS`, under two rotations. Every stated answer must be read, and read as
that option: no reply is unread and no letter is wrong."""

import json
import string
from functools import cache

import numpy as np
import pytest

from auralgen.evaluation.parsing import extract_choice, rotate_options
from auralgen.tasks.base import AudioConfig, task_class, task_names

DRAWS_PER_LEVEL = 8


@cache
def option_sets() -> dict[str, list[tuple[str, ...]]]:
    """Every task's distinct option sets (canonical order), over all levels and sub-questions."""
    out = {}
    for name in task_names():
        cls = task_class(name)
        task = cls(cls.Config(name=name), AudioConfig())
        found: dict[frozenset, tuple[str, ...]] = {}
        for level in range(task.design.n_levels()):
            for k in range(DRAWS_PER_LEVEL):
                rng = np.random.default_rng([level, k])
                qa = task.qa(task.sample(rng, task.design.level(level, k)), rng, slot=k % task.n_choices)
                found.setdefault(frozenset(qa.options), tuple(qa.options))
        out[name] = list(found.values())
    return out


def _subject(option: str, other: str) -> str:
    return f"{option} is closer to what I hear than {other[0].lower() + other[1:]}."


# (name, form): form(option text, its letter, another option's text) -> reply
FORMS = [
    ("answer is", lambda o, L, x: f"The answer is {o}."),
    ("Answer:", lambda o, L, x: f"Answer: {o}"),
    ("bold", lambda o, L, x: f"**{o}**"),
    ("(B) text", lambda o, L, x: f"({L}) {o}"),
    ("B. text", lambda o, L, x: f"{L}. {o}"),
    ("lower-cased", lambda o, L, x: o.lower()),
    ("lower-cased, punctuated", lambda o, L, x: o.lower() + "!"),
    ("trailing dots", lambda o, L, x: o + "..."),
    ("I think it's", lambda o, L, x: f"I think it's {o}"),
    ("best guess letter", lambda o, L, x: f"My best guess is {L}"),
    ("hedged letter", lambda o, L, x: f"I can't be sure, but my best guess is {L}"),
    ("hedged text", lambda o, L, x: f"I can't hear the audio clearly, it is faint, but my best guess is {o}"),
    ("JSON text", lambda o, L, x: json.dumps({"answer": o})),
    ("JSON letter", lambda o, L, x: json.dumps({"answer": L.lower(), "reason": f"not {x}"})),
    ("conclusion", lambda o, L, x: f"<conclusion> {o} </conclusion>"),
    (
        "conclusion after reasoning",
        lambda o, L, x: f"It could be {x} or {o}.\n<conclusion> {L.lower()}. {o.lower()} </conclusion>",
    ),
    ("subject sentence", lambda o, L, x: _subject(o, x)),
    ("therefore", lambda o, L, x: f"At first {x} seemed likely. Therefore, the answer must be {o}."),
]


def _cases():
    for task, sets in option_sets().items():
        for options in sets:
            for r in (0, 1):
                shown, _ = rotate_options(list(options), r)
                yield task, shown


def test_the_option_sets_cover_every_task_and_sub_question():
    sets = option_sets()
    assert set(sets) == set(task_names())
    assert len(sets["mixture"]) >= 10  # loudest, earliest, count and overlap sub-questions, several kinds
    assert any(len(s) == 10 for s in sets["counting_absolute"])
    assert len(FORMS) >= 12


@pytest.mark.parametrize(("form", "say"), FORMS, ids=[f[0] for f in FORMS])
def test_every_form_reads_every_option_of_every_task(form, say):
    wrong, unread, n = [], [], 0
    for task, shown in _cases():
        for i, option in enumerate(shown):
            other = shown[(i + 1) % len(shown)]
            reply = say(option, string.ascii_uppercase[i], other)
            res = extract_choice(reply, shown)
            n += 1
            if res.index is None:
                unread.append((task, reply, shown))
            elif res.index != i:
                wrong.append((task, reply, shown, res))
    assert n > 150
    assert wrong == [], f"{len(wrong)} wrong of {n}: {wrong[:3]}"
    assert unread == [], f"{len(unread)} unread of {n}: {unread[:3]}"


# replies seen on held-out real and synthetic replies, each with what it states
HELD_OUT = [
    ("The second sound is closer to me than the first sound.", ["The first sound", "The second sound"], 1),
    ("Neither higher nor lower — the same.", ["Higher", "Lower", "The same"], 2),
    ("Neither higher nor lower - the same.", ["Higher", "Lower", "The same"], 2),
    (
        "The tone is not present in the first half; it appears in the second half.",
        ["In the first half", "In the second half", "Not present"],
        1,
    ),
    ("<conclusion> a. chainsaw </conclusion>", ["chainsaw", "drill", "lawn mower"], 0),
    (
        "The first clip has a steady beat and so does the second, but the second has longer gaps. Therefore, the "
        "second "
        "sound clip is the one that proceeds at a slower pace.",
        ["first", "second"],
        1,
    ),
    ("I can't be sure, but my best guess is C", ["Higher", "Lower", "The same"], 2),
    ("The second note is a B-flat, which is lower than the C before it.", ["Higher", "Lower", "The same"], 1),
    (
        "The answer is room: reverberation time between 0.3 s and 1.2 s.",
        [
            "Dry: reverberation time below 0.3 s",
            "Room: reverberation time between 0.3 s and 1.2 s",
            "Hall: reverberation time above 1.2 s",
        ],
        1,
    ),
]


@pytest.mark.parametrize(("reply", "options", "index"), HELD_OUT)
def test_the_misses_of_held_out_replies_are_read(reply, options, index):
    assert extract_choice(reply, options).index == index


NOT_STATED = [
    ("Is it higher or lower? Hard to say.", ["Higher", "Lower", "The same"]),
    ("I cannot listen to audio.", ["Higher", "Lower", "The same"]),
    ("Which one is closer, the first sound or the second sound?", ["The first sound", "The second sound"]),
    ("If it were the second sound, it would be louder.", ["The first sound", "The second sound"]),
    ("Is the second sound closer than the first sound?", ["The first sound", "The second sound"]),
    ("The first sound is not closer than the second sound.", ["The first sound", "The second sound"]),
    ("The tone is not present in the first half.", ["In the first half", "In the second half", "Not present"]),
    ("Therefore, I cannot tell whether it is higher or lower.", ["Higher", "Lower", "The same"]),
]


@pytest.mark.parametrize(("reply", "options"), NOT_STATED)
def test_replies_that_state_nothing_stay_unread(reply, options):
    assert extract_choice(reply, options).index is None


NONE_FORMS = [
    "NONE",
    "None of the above.",
    "Answer: NONE",
    '{"answer": "none"}',
    "<conclusion> none </conclusion>",
    "The answer is none.",
    "I cannot tell.",
    "Hmm, hard to say.",
]


def test_none_replies_get_no_letter_on_any_task():
    read = [
        (task, reply, res)
        for task, shown in _cases()
        for reply in NONE_FORMS
        if (res := extract_choice(reply, shown)).index is not None
    ]
    assert read == []
