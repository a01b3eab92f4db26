"""brightness_relative / brightness_absolute through the real pipeline: measured labels, listener, controls."""

import json
from collections import Counter

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run
from auralgen.listeners import brightness as listen
from auralgen.synth import loudness_lufs
from auralgen.validation.listener import listener_accuracy
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731
N = 24  # items per level


@pytest.fixture(scope="module")
def relative(tmp_path_factory):
    out = tmp_path_factory.mktemp("bright_rel")
    run(small_run("task=brightness_relative", "task.levels=[0,5,80]", f"task.items_per_level={N}", out=out), log=QUIET)
    return out


@pytest.fixture(scope="module")
def absolute(tmp_path_factory):
    out = tmp_path_factory.mktemp("bright_abs")
    run(small_run("task=brightness_absolute", "task.levels=[60,5]", f"task.items_per_level={N}", out=out), log=QUIET)
    return out


def test_relative_labels_are_measured_and_equal_the_level(relative):
    rows = read_rows(relative)
    assert len(rows) == 3 * N and all(r["valid"] for r in rows)
    for r in rows:
        rec = json.loads(r["measured"])["centroid_difference_percent"]
        sign = {"Brighter": 1, "Darker": -1, "The same": 0}[r["answer"]]
        assert rec["expected"] == pytest.approx(sign * r["level_value"])
        assert abs(rec["measured"] - rec["expected"]) <= 0.5


def test_relative_controls_loudness_duration_and_f0(relative):
    for r in read_rows(relative):
        p = params_of(r)
        a, b = p["sounds"]
        assert a["duration_s"] == b["duration_s"] and a["period_samples"] == b["period_samples"]
        assert a["phase_seed"] == b["phase_seed"] and abs(a["loudness_lufs"] - b["loudness_lufs"]) <= 5.0  # roved
        x, sr = decode(r["audio"][0])
        spans = [(round(s["onset_s"] * sr), round(s["onset_s"] * sr) + round(s["duration_s"] * sr)) for s in (a, b)]
        lufs = [loudness_lufs(x[0, s:e].astype(np.float64), sr) for s, e in spans]
        assert abs(lufs[0] - a["loudness_lufs"]) <= 0.5 and abs(lufs[1] - b["loudness_lufs"]) <= 0.5


def test_relative_listener_is_perfect_when_easy_and_hears_no_difference_at_zero(relative):
    acc = {rec["level_value"]: rec for (_, _), rec in listener_accuracy(relative).items()}
    assert acc[80.0]["n"] == N and acc[80.0]["accuracy"] >= 0.95
    # at the zero level the two sounds have the same centroid: the listener's measured difference is
    # below its threshold on every item (no directional cue exists; it answers "The same")
    zero = [r for r in read_rows(relative) if r["level_value"] == 0]
    diffs = [listen.centroid_difference_percent(decode(r["audio"][0])[0], r["sampling_rate"]) for r in zero]
    assert max(abs(d) for d in diffs) < listen.JND_PERCENT / 10


def test_relative_answer_texts_are_balanced_per_level(relative):
    rows = read_rows(relative)
    for level in (5.0, 80.0):
        counts = Counter(r["answer"] for r in rows if r["level_value"] == level)
        assert set(counts) == {"Brighter", "Darker"} and abs(counts["Brighter"] - counts["Darker"]) <= 1
    assert {r["answer"] for r in rows if r["level_value"] == 0} == {"The same"}


def test_absolute_margin_is_exact_and_classes_balanced(absolute):
    rows = read_rows(absolute)
    assert len(rows) == 2 * N and all(r["valid"] for r in rows)
    for r in rows:
        margin = json.loads(r["measured"])["margin_percent"]
        assert margin["expected"] == pytest.approx(r["level_value"], abs=1e-6)
        assert abs(margin["measured"] - margin["expected"]) <= margin["tolerance"]
    for level in (60.0, 5.0):
        counts = Counter(r["answer"].split()[0] for r in rows if r["level_value"] == level)
        assert set(counts) == {"Dark", "Neutral", "Bright"} and max(counts.values()) - min(counts.values()) <= 1
    acc = {rec["level_value"]: rec["accuracy"] for (_, _), rec in listener_accuracy(absolute).items()}
    assert acc[60.0] >= 0.95


def test_absolute_loudness_is_roved_independently_of_the_class(absolute):
    rows = read_rows(absolute)
    by = {}
    for r in rows:
        by.setdefault(r["answer"].split()[0], []).append(params_of(r)["sounds"][0]["loudness_lufs"])
    means = [np.mean(v) for v in by.values()]
    assert max(means) - min(means) < 2.5  # roved over 8 LU: class means within a third of it


@pytest.mark.parametrize(
    "override,match",
    [
        ("task.max_freq_hz=7500", r"max_freq_hz=7500.0 is out of range; allowed: 0 < max_freq_hz < 7200"),
        ("task.levels=[0,-5]", r"negative difference; allowed: percent >= 0"),
        ("task.centroid_hz.low=100", r"out of reach at f0"),
    ],
)
def test_bad_relative_config_is_one_line(override, match):
    with pytest.raises(ParameterError, match=match) as err:
        small_run("task=brightness_relative", override)
    assert "\n" not in str(err.value)


def test_bad_absolute_bins_are_one_line():
    with pytest.raises(ParameterError, match=r"leaves no room in the neutral range") as err:
        small_run("task=brightness_absolute", "task.bins_hz=[500,600]")
    assert "\n" not in str(err.value)
