"""attack_relative / attack_absolute through the real pipeline: measured rise times, listener, controls."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run
from auralgen.listeners import attack as listen
from auralgen.measure.attack import rise_time_s
from auralgen.synth.attack import attack_envelope
from auralgen.validation.listener import listener_accuracy
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731
N = 24  # items per level


@pytest.fixture(scope="module")
def relative(tmp_path_factory):
    out = tmp_path_factory.mktemp("attack_rel")
    run(small_run("task=attack_relative", "task.levels=[0,25,400]", f"task.items_per_level={N}", out=out), log=QUIET)
    return out


@pytest.fixture(scope="module")
def absolute(tmp_path_factory):
    out = tmp_path_factory.mktemp("attack_abs")
    run(small_run("task=attack_absolute", "task.levels=[100,12]", f"task.items_per_level={N}", out=out), log=QUIET)
    return out


@pytest.mark.parametrize("rise_ms,freq_hz", [(3.0, 500.0), (10.0, 800.0), (120.0, 1500.0)])
def test_rise_time_of_a_linear_ramp_is_measured_within_two_percent(rise_ms, freq_hz):
    sr = 16000
    t = np.arange(sr) / sr
    x = np.sin(2 * np.pi * freq_hz * t) * attack_envelope(sr, sr, rise_s=rise_ms / 1000, release_s=0.03)
    assert rise_time_s(np.concatenate([np.zeros(160), x]), sr) * 1000 == pytest.approx(rise_ms, rel=0.02)


def test_relative_labels_are_measured_and_equal_the_level(relative):
    rows = read_rows(relative)
    assert len(rows) == 3 * N and all(r["valid"] for r in rows)
    for r in rows:
        m = json.loads(r["measured"])
        sign = {"More sharply": 1, "More softly": -1, "The same": 0}[r["answer"]]
        assert m["rise_log_ratio"]["expected"] == pytest.approx(sign * math.log1p(r["level_value"] / 100), abs=1e-4)
        assert abs(m["rise_log_ratio"]["measured"] - m["rise_log_ratio"]["expected"]) <= 0.03
        soft, sharp = max(m["rise_ms"]), min(m["rise_ms"])
        assert 100 * (soft / sharp - 1) == pytest.approx(r["level_value"], abs=0.03 * (100 + r["level_value"]))


def test_relative_controls_carrier_duration_and_steady_loudness(relative):
    for r in read_rows(relative):
        a, b = params_of(r)["sounds"]
        own = ("rise_s", "onset_s", "loudness_lufs")  # the steady loudness is roved per sound
        assert {k: v for k, v in a.items() if k not in own} == {k: v for k, v in b.items() if k not in own}
        m = json.loads(r["measured"])
        assert abs(a["loudness_lufs"] - b["loudness_lufs"]) <= 5.0
        assert (
            abs(m["steady_lufs"][0] - a["loudness_lufs"]) <= 0.5
            and abs(m["steady_lufs"][1] - b["loudness_lufs"]) <= 0.5
        )


def test_relative_listener_is_perfect_when_easy_and_hears_no_difference_at_zero(relative):
    acc = {rec["level_value"]: rec for (_, _), rec in listener_accuracy(relative).items()}
    assert acc[400.0]["n"] == N and acc[400.0]["accuracy"] >= 0.95
    # at the zero level both onsets are the same ramp: the measured ratio is below the listener's threshold
    for r in read_rows(relative):
        if r["level_value"] == 0:
            rises = listen.rise_times_s(decode(r["audio"][0])[0], r["sampling_rate"])
            assert abs(math.log(rises[0] / rises[1])) < math.log1p(listen.JND_RATIO) / 5


def test_relative_answer_texts_are_balanced_per_level(relative):
    rows = read_rows(relative)
    for level in (25.0, 400.0):
        counts = Counter(r["answer"] for r in rows if r["level_value"] == level)
        assert (
            set(counts) == {"More sharply", "More softly"} and abs(counts["More sharply"] - counts["More softly"]) <= 1
        )


def test_absolute_margin_is_exact_classes_balanced_and_listener_hears_them(absolute):
    rows = read_rows(absolute)
    assert len(rows) == 2 * N and all(r["valid"] for r in rows)
    for r in rows:
        margin = json.loads(r["measured"])["margin_percent"]
        assert margin["expected"] == pytest.approx(r["level_value"], abs=1e-6)
        assert abs(margin["measured"] - margin["expected"]) <= margin["tolerance"]
    for level in (100.0, 12.0):
        counts = Counter(r["answer"].split()[0] for r in rows if r["level_value"] == level)
        assert set(counts) == {"Sharp", "Medium", "Soft"} and max(counts.values()) - min(counts.values()) <= 1
    acc = {rec["level_value"]: rec["accuracy"] for (_, _), rec in listener_accuracy(absolute).items()}
    assert acc[100.0] >= 0.95


@pytest.mark.parametrize(
    "task,override,match",
    [
        ("attack_relative", "task.tone_s=[0.5,0.6]", r"leaves .* s of steady sound"),
        ("attack_relative", "task.freq_hz.low=100", r"freq_hz=.* is out of range; allowed: 200 Hz"),
        ("attack_absolute", "task.bins_s=[0.01,0.012]", r"leaves no room in the medium range"),
    ],
)
def test_bad_config_is_one_line(task, override, match):
    with pytest.raises(ParameterError, match=match) as err:
        small_run(f"task={task}", override)
    assert "\n" not in str(err.value)
