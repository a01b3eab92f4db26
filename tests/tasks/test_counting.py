"""counting_relative / counting_absolute: counts measured from onsets, listener per level, controls, balance."""

from __future__ import annotations

import json

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng
from auralgen.synth.levels import rms
from tests.support.builders import params_of, small_run
from tests.tasks.test_tempo import _balanced, _generate, _listener_by_level

PER_LEVEL = 20


@pytest.fixture(scope="module")
def relative_rows(tmp_path_factory):
    return _generate("counting_relative", tmp_path_factory.mktemp("count_rel"))


@pytest.fixture(scope="module")
def absolute_rows(tmp_path_factory):
    return _generate("counting_absolute", tmp_path_factory.mktemp("count_abs"))


def test_relative_counts_are_measured_and_differ_by_the_level(relative_rows):
    assert len(relative_rows) == PER_LEVEL * 4 + -(-PER_LEVEL * 4 // 2) and all(r["valid"] for r in relative_rows)
    for r in relative_rows:
        m, p = json.loads(r["measured"]), params_of(r)
        counts = [s["n_events"] for s in p["sequences"]]
        assert m["events"] == counts and all(1 <= c <= 10 for c in counts)
        sign = {"up": 1, "down": -1, "same": 0}[p["direction"]]
        assert counts[1] - counts[0] == sign * r["level_value"] == m["count_difference"]["measured"]


def test_relative_listener_and_balance(relative_rows):
    acc = _listener_by_level("counting_relative", relative_rows)
    assert acc[5.0] >= 0.95 and acc[0.0] >= 0.95  # level 0: "The same", counted equal
    _balanced(relative_rows, lambda lv: {"The same"} if lv == 0 else {"More", "Fewer"})


def test_absolute_counts_gaps_listener_and_balance(absolute_rows):
    assert len(absolute_rows) == PER_LEVEL * 5 and all(r["valid"] for r in absolute_rows)
    for r in absolute_rows:
        m = json.loads(r["measured"])
        assert m["events"] == m["expected_events"] == int(r["answer"])
        assert abs(m["gap_ms"]["measured"] - r["level_value"]) <= 2.0 + 0.05 * r["level_value"]
        assert {str(n) for n in range(1, 11)} <= set(r["options"])  # always the full list of counts
    acc = _listener_by_level("counting_absolute", absolute_rows)
    assert acc[300.0] >= 0.95
    _balanced(absolute_rows, lambda lv: {str(n) for n in range(1, 11)})


def test_energy_peak_and_clip_length_do_not_follow_the_count():
    """Every event has the sequence's level and the events share one sounding time (plus a ramp
    each), so a clip's energy and peak do not grow with its count; the clip length is fixed."""
    task = build_tasks(small_run("task=counting_absolute"))["counting_absolute"]
    by_count: dict[int, list[float]] = {}
    for i in range(200):
        p = task.sample(item_rng(0, "test", "counting_absolute", i), i % 5)
        seq = p["sequences"][0]
        assert len(set(seq["levels_db_spl"])) == 1 and p["clip_s"] == task.cfg.clip_s
        assert sum(seq["durations_s"]) - seq["n_events"] * p["ramp_s"] == pytest.approx(seq["total_s"])
        if i < 60:
            x = task.render(p)[0][0]
            # energy relative to the sequence's level: equal for every count
            ref = 10 ** (seq["levels_db_spl"][0] / 20)
            by_count.setdefault(seq["n_events"], []).append(
                rms(x) ** 2 * x.size / task.sample_rate / ref**2 / seq["total_s"]
            )
    ratios = np.array([np.mean(v) for v in by_count.values()])
    assert ratios.max() / ratios.min() < 1.1, by_count.keys()


def test_timing_is_jittered_and_the_gap_is_exact():
    task = build_tasks(small_run("task=counting_absolute"))["counting_absolute"]
    p = task.sample(item_rng(0, "test", "counting_absolute", 3), 2)
    while p["sequences"][0]["n_events"] < 4:
        p = task.sample(item_rng(0, "test", "counting_absolute", int(p["count"]) + 100), 2)
    seq = p["sequences"][0]
    ioi = np.diff(seq["onsets_s"])
    assert np.ptp(ioi) > 0.005  # not isochronous
    ends = np.add(seq["onsets_s"], seq["durations_s"])
    assert np.allclose(np.array(seq["onsets_s"][1:]) - ends[:-1], p["gap_ms"] / 1000)


@pytest.mark.parametrize(
    ("task", "override", "match"),
    [
        ("counting_relative", "task.levels=[0,1.5]", "fractional difference"),
        ("counting_relative", "task.levels=[0,12]", "exceeds the count range"),
        ("counting_absolute", "task.max_count=0", "min_count=1, max_count=0"),
        ("counting_absolute", "task.levels=[900,100]", "clip_s=4.0 is too short"),
        ("counting_absolute", "task.levels=[100,0]", "gap <= 0 ms"),
    ],
)
def test_bad_config_is_one_line(task, override, match):
    with pytest.raises(ParameterError, match=match) as err:
        small_run(f"task={task}", override)
    assert "\n" not in str(err.value)


def test_relative_span_and_silences_carry_no_count():
    """With a gap drawn per sequence the sequence with more events spanned ~0.37 s more (span and
    level alone answered 66-67 %). Each sequence now fills a span drawn independently of its count:
    the span difference no longer follows the count difference."""
    from auralgen.config import build_tasks
    from auralgen.core.random import item_rng
    from auralgen.tasks import _events as E

    task = build_tasks(small_run("task=counting_relative"))["counting_relative"]
    agree, n, diffs = 0, 0, []
    for i in range(400):
        level = 1 + i % 4  # non-zero differences
        p = task.sample(item_rng(41, "test", "counting_relative", i), level)
        a, b = p["sequences"]
        spans = [E.end_s(s) - s["onsets_s"][0] for s in (a, b)]
        for s, span in zip((a, b), spans):
            assert 1.4 - 1e-9 <= span <= 1.8 + 1e-9 and s["n_events"] >= 2
        more_second = b["n_events"] > a["n_events"]
        agree += (spans[1] > spans[0]) == more_second
        n += 1
        diffs.append((spans[1] - spans[0]) * (1 if more_second else -1))
    assert abs(agree / n - 0.5) < 0.07, agree / n  # 95 % interval of chance at n=400: +-0.049
    assert abs(float(np.mean(diffs))) < 0.03  # was ~0.37 s


def test_every_per_event_list_is_declared_with_the_count(relative_rows):
    """A per-event list's length is the count, so its n-th entry's presence says it (the shortcut audit
    flagged ``sequences.1.levels_db_spl.6`` when only onsets and durations were declared)."""
    import fnmatch

    from auralgen.tasks.base import task_class

    targets = task_class("counting_relative").audit.target_features
    per_event = {
        f"sequences.{i}.{key}.{k}"
        for r in relative_rows
        for i, seq in enumerate(params_of(r)["sequences"])
        for key, value in seq.items()
        if isinstance(value, list) and len(value) == seq["n_events"]
        for k in range(len(value))
    }
    assert {"sequences.1.levels_db_spl.6", "sequences.0.onsets_s.0"} <= per_event
    undeclared = sorted(n for n in per_event if not any(fnmatch.fnmatchcase(n, p) for p in targets))
    assert undeclared == []
