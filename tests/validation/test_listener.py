"""Reference DSP listener: answers from audio alone; near-perfect at easy levels, fails below its JND."""

import itertools

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run
from auralgen.listeners.common import NO_ANSWER
from auralgen.synth.levels import set_level_db_spl
from auralgen.validation import listener as L

QUIET = lambda *_: None  # noqa: E731
SR = 16000
EASIEST = {
    "pitch_relative": 1200.0,
    "loudness_relative": 48.0,
    "duration_relative": 200.0,
    "duration_absolute": 40.0,
    "audiogram": 110.0,
}


@pytest.fixture(scope="module")
def accuracy(tmp_path_factory):
    from tests.support.builders import small_run

    out = tmp_path_factory.mktemp("listen")
    overrides = [
        "suite=tones",
        "tasks.pitch_relative.levels=[0,3,1200]",
        "tasks.loudness_relative.levels=[0,0.5,48]",
        "tasks.duration_relative.levels=[0,200]",
        "tasks.duration_absolute.levels=[40,5]",
        "tasks.audiogram.levels=[-10,110]",
        "tasks.audiogram.probe_items_per_level=0",
        *[f"tasks.{t}.items_per_level=6" for t in EASIEST],
    ]
    run(small_run(*overrides, out=out, workers=1), log=QUIET)
    return L.listener_accuracy(out)


@pytest.mark.parametrize("task", sorted(EASIEST))
def test_listener_is_near_perfect_at_the_easiest_level(accuracy, task):
    (rec,) = [r for (t, _), r in accuracy.items() if t == task and r["level_value"] == EASIEST[task]]
    assert rec["n"] == 6 and rec["accuracy"] >= 0.9


@pytest.mark.parametrize("task", ["pitch_relative", "loudness_relative", "duration_relative"])
def test_listener_answers_same_at_zero_difference(accuracy, task):
    (rec,) = [r for (t, _), r in accuracy.items() if t == task and r["level_value"] == 0]
    assert rec["accuracy"] >= 0.9


@pytest.mark.parametrize("task,value", [("pitch_relative", 3.0), ("loudness_relative", 0.5)])
def test_below_the_jnd_the_listener_hears_no_difference(accuracy, task, value):
    (rec,) = [r for (t, _), r in accuracy.items() if t == task and r["level_value"] == value]
    assert rec["accuracy"] <= 0.2  # it answers "The same" where the answer is higher/lower


def two_tones(f1, f2, l1=65.0, l2=65.0, d1=0.5, d2=0.5):
    x = np.zeros((1, 3 * SR), np.float32)
    for f, lv, d, t0 in ((f1, l1, d1, 0.2), (f2, l2, d2, 1.5)):
        n = int(d * SR)
        tone = np.sin(2 * np.pi * f * np.arange(n) / SR) * np.hanning(n) ** 0.05
        x[0, int(t0 * SR) : int(t0 * SR) + n] = set_level_db_spl(tone, lv, full_scale_db_spl=136.0)
    return x


CASES = [
    ("pitch_relative", two_tones(440, 466), "Higher"),
    ("pitch_relative", two_tones(440, 415), "Lower"),
    ("pitch_relative", two_tones(440, 440.5, 60, 70), "The same"),
    ("loudness_relative", two_tones(440, 440, 60, 64), "Louder"),
    ("loudness_relative", two_tones(440, 440, 70, 40), "Softer"),
    ("duration_relative", two_tones(440, 440, d1=0.4, d2=0.8), "Longer"),
    ("duration_relative", two_tones(440, 440, 60, 70, d1=0.6, d2=0.6), "The same"),
]


@pytest.mark.parametrize("task,clip,expected", CASES)
def test_answer_is_found_by_option_text_whatever_the_order(task, clip, expected):
    texts = {
        "pitch_relative": ("Higher", "Lower", "The same"),
        "loudness_relative": ("Louder", "Softer", "The same"),
        "duration_relative": ("Longer", "Shorter", "The same"),
    }[task]
    for perm in itertools.permutations(texts):
        options = list(perm)
        assert options[L.answer(task, "", options, [clip], SR)] == expected


def test_duration_absolute_picks_the_bin_from_the_option_texts():
    x = np.zeros((1, 4 * SR), np.float32)
    x[0, SR : SR + int(1.3 * SR)] = 0.01
    options = ["Longer than 2 s", "Between 1 s and 2 s", "Shorter than 0.5 s", "Between 0.5 s and 1 s"]
    assert L.answer("duration_absolute", "", options, [x], SR) == 1
    assert L.duration_bins(["Shorter than 250 ms", "Longer than 250 ms"]) == {0: (0.0, 0.25), 1: (0.25, float("inf"))}


def test_audiogram_finds_a_dither_level_tone_without_knowing_its_frequency():
    rng = np.random.default_rng(3)
    sr, lsb = 48000, 2.0**-23
    dither = (rng.uniform(-0.5, 0.5, 4 * sr) + rng.uniform(-0.5, 0.5, 4 * sr)) * lsb
    t = np.arange(sr) / sr
    tone = dither.copy()
    tone[int(2.5 * sr) : int(3.5 * sr)] += 0.5 * lsb * np.sin(2 * np.pi * 3150.0 * t)  # half an LSB
    options = ["Not present", "In the second half", "In the first half"]
    assert L.answer("audiogram", "", options, [tone[None]], sr) == 1
    assert L.answer("audiogram", "", options, [dither[None]], sr) == 0


def test_no_sound_gives_no_answer_and_unknown_task_raises():
    silence = np.zeros((1, SR), np.float32)
    assert L.answer("pitch_relative", "", ["Higher", "Lower", "The same"], [silence], SR) == NO_ANSWER
    with pytest.raises(ParameterError, match="task='azimuth' has no listener"):
        L.answer("azimuth", "", ["Left", "Right"], [silence], SR)


def test_a_task_answers_with_the_listener_its_class_binds():
    from auralgen.tasks.base import TASKS, AuditSpec, Task

    class AlwaysSecond(Task):
        name, sub_category, attribute, regime, level_unit, n_choices, questions = (
            "_test_always_second",
            "x",
            "x",
            "relative",
            "x",
            2,
            ("q",),
        )
        audit = AuditSpec(("difference",), listener_easiest="max")
        listener = staticmethod(lambda question, options, clips, sample_rate: 1)

    TASKS.register(AlwaysSecond)
    try:
        assert L.answer("_test_always_second", "q", ["a", "b", "c"], [], SR) == 1
        assert "_test_always_second" in L.LISTENERS
    finally:
        TASKS.unregister("_test_always_second")
    assert "_test_always_second" not in L.LISTENERS


def test_a_task_whose_listener_is_none_has_no_listener():
    from auralgen.tasks.base import TASKS, AuditSpec, Task

    class Deaf(Task):
        name, sub_category, attribute, regime, level_unit, n_choices, questions = (
            "_test_deaf",
            "x",
            "x",
            "relative",
            "x",
            2,
            ("q",),
        )
        audit = AuditSpec(("difference",), listener_easiest=None, reason="a test task nobody can hear")
        listener = None

    TASKS.register(Deaf)
    try:
        assert "_test_deaf" not in L.LISTENERS
        with pytest.raises(ParameterError, match="task='_test_deaf' has no listener; allowed: .*pitch_relative"):
            L.answer("_test_deaf", "q", ["a", "b"], [], SR)
    finally:
        TASKS.unregister("_test_deaf")
