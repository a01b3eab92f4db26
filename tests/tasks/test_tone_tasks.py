"""Tone tasks: the probed attribute is exact, no other cue predicts the answer, params are the recipe."""

import math
from collections import Counter

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.qa import answer_slot
from auralgen.core.random import item_rng
from auralgen.synth.levels import db_hl_to_db_spl
from tests.support.builders import small_run

TASKS = build_tasks(small_run())
N = 400


def draws(name, n=N):
    task = TASKS[name]
    out = []
    for i in range(n):
        level = i % task.design.n_levels()
        out.append((level, task.sample(item_rng(0, "test", name, i), level)))
    return task, out


def binomial_ok(k, n, p=0.5, z=4.0):
    return abs(k - n * p) <= z * math.sqrt(n * p * (1 - p))


def test_pitch_relative_difference_is_exact_and_uncorrelated_with_order_and_level():
    task, items = draws("pitch_relative")
    moving = [(lv, p) for lv, p in items if p["direction"] != "same"]
    for lv, p in items:
        a, b = p["sounds"]
        cents = 1200 * math.log2(b["freq_hz"] / a["freq_hz"])
        assert cents == pytest.approx(
            {"up": 1, "down": -1, "same": 0}[p["direction"]] * task.design.level_value(lv), abs=1e-6
        )
        assert math.sqrt(a["freq_hz"] * b["freq_hz"]) == pytest.approx(p["base_freq_hz"])
        assert a["kind"] == b["kind"] and a["duration_s"] == b["duration_s"]
    higher_first = sum(p["sounds"][0]["freq_hz"] > p["sounds"][1]["freq_hz"] for _, p in moving)
    higher_louder = sum(
        (p["sounds"][1]["freq_hz"] > p["sounds"][0]["freq_hz"])
        == (p["sounds"][1]["level_db_spl"] > p["sounds"][0]["level_db_spl"])
        for _, p in moving
    )
    assert binomial_ok(higher_first, len(moving)) and binomial_ok(higher_louder, len(moving))
    # the base frequency carries no information about the answer
    ups = [p["base_freq_hz"] for _, p in moving if p["direction"] == "up"]
    downs = [p["base_freq_hz"] for _, p in moving if p["direction"] == "down"]
    assert abs(np.mean(np.log(ups)) - np.mean(np.log(downs))) < 0.15


def test_loudness_relative_shares_the_stimulus_and_roves_the_mean_level():
    task, items = draws("loudness_relative")
    for lv, p in items:
        a, b = p["sounds"]
        assert {k: v for k, v in a.items() if k not in ("level_db_spl", "onset_s")} == {
            k: v for k, v in b.items() if k not in ("level_db_spl", "onset_s")
        }
        sign = {"up": 1, "down": -1, "same": 0}[p["direction"]]
        assert b["level_db_spl"] - a["level_db_spl"] == pytest.approx(sign * task.design.level_value(lv))
    louds = [p["mean_level_db_spl"] for _, p in items if p["direction"] == "up"]
    softs = [p["mean_level_db_spl"] for _, p in items if p["direction"] == "down"]
    assert abs(np.mean(louds) - np.mean(softs)) < 2.5
    assert binomial_ok(
        sum(p["direction"] == "up" for _, p in items if p["direction"] != "same"),
        sum(p["direction"] != "same" for _, p in items),
    )


def test_duration_relative_ratio_is_exact():
    task, items = draws("duration_relative")
    for lv, p in items:
        a, b = p["sounds"]
        longer, shorter = max(a["duration_s"], b["duration_s"]), min(a["duration_s"], b["duration_s"])
        assert (longer / shorter - 1) * 100 == pytest.approx(task.design.level_value(lv), abs=1e-6)
        assert (b["duration_s"] > a["duration_s"]) == (p["direction"] == "up") or p["direction"] == "same"
        assert b["onset_s"] + b["duration_s"] <= p["clip_s"]


def test_duration_absolute_sits_exactly_at_its_margin_from_the_nearest_edge():
    task, items = draws("duration_absolute")
    edges = task.edges
    for lv, p in items:
        d, k, m = p["sounds"][0]["duration_s"], p["bin"], 1 + task.design.level_value(lv) / 100
        assert edges[k] <= d <= edges[k + 1]
        want = edges[k] * m if p["edge_side"] == "low" else edges[k + 1] / m
        assert d == pytest.approx(want, rel=1e-12) and p["margin_percent"] == pytest.approx(task.design.level_value(lv))
    assert set(Counter(p["bin"] for _, p in items)) == set(range(4))
    assert Counter(p["edge_side"] for _, p in items if p["bin"] in (1, 2)) == {"low": 90, "high": 102}


def test_audiogram_levels_follow_iso_389_7_and_probes_use_spl():
    task, items = draws("audiogram", 600)
    positions = Counter(p["position"] for _, p in items)
    assert set(positions) == {"first", "second", "absent"} and min(positions.values()) > 150
    for lv, p in items:
        if task.is_probe(lv):
            assert p["level_unit"] == "dB SPL" and p["freq_hz"] in (20, 16000) and p["level_db_spl"] == p["level_value"]
        else:
            assert p["level_db_spl"] == pytest.approx(db_hl_to_db_spl(p["level_value"], p["freq_hz"]))
        if p["position"] == "absent":
            assert p["sounds"] == []
        else:
            half = p["clip_s"] / 2
            s = p["sounds"][0]
            in_first = s["onset_s"] + s["duration_s"] <= half
            assert in_first == (p["position"] == "first") and (in_first or s["onset_s"] >= half)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_params_are_the_recipe(name):
    task = TASKS[name]
    p = task.sample(item_rng(3, "test", name, 5), task.design.n_levels() - 1)
    a, b = task.render(p), task.render(dict(p))
    assert a[0].dtype == np.float32 and a[0].ndim == 2
    np.testing.assert_array_equal(a[0], b[0])
    assert np.max(np.abs(a[0])) < 1.0


@pytest.mark.parametrize("name", sorted(TASKS))
def test_answer_positions_balanced_and_every_option_answerable(name):
    task = TASKS[name]
    slots = Counter()
    n = 101
    for i in range(n):
        rng = item_rng(0, "test", name, i)
        p = task.sample(rng, i % task.design.n_levels())
        qa = task.qa(p, rng, slot=answer_slot(0, "test", name, i, task.n_choices))
        assert len(set(qa.options)) == len(qa.options) == task.n_choices  # no never-correct extra option
        slots[qa.answer_index] += 1
    assert set(slots) == set(range(task.n_choices))
    assert max(slots.values()) <= math.ceil(n / task.n_choices)


@pytest.mark.parametrize(
    "name,corrupt",
    [
        ("pitch_relative", lambda p: {**p, "direction": "down" if p["direction"] == "up" else "up"}),
        ("loudness_relative", lambda p: {**p, "direction": "down" if p["direction"] == "up" else "up"}),
        ("duration_relative", lambda p: {**p, "sounds": p["sounds"][::-1]}),
        ("audiogram", lambda p: {**p, "position": "second" if p["position"] == "first" else "first"}),
    ],
)
def test_check_rejects_a_wrong_label(name, corrupt):
    task = TASKS[name]
    for i in range(40):
        p = task.sample(item_rng(1, "test", name, i), task.design.n_levels() // 2)
        if (
            p.get("direction", "x") != "same"
            and p.get("position", "x") != "absent"
            and p["sounds"][0]["duration_s"] != p["sounds"][-1]["duration_s"]
            or name != "duration_relative"
            and p.get("direction", "x") != "same"
            and p.get("position", "x") != "absent"
        ):
            break
    clips = task.render(p)
    assert task.check(p, clips)["valid"] is True
    assert task.check(corrupt(p), clips)["valid"] is False


def test_audiogram_items_of_a_level_cover_every_frequency(tmp_path):
    from auralgen.generation.run import run as generate
    from tests.support.builders import params_of, read_rows

    run = small_run(
        "task=audiogram",
        "task.levels=[0,40]",
        "task.items_per_level=26",
        "task.probe_items_per_level=0",
        "validate=false",
        out=tmp_path / "a",
    )
    generate(run, log=lambda *_: None)
    rows = read_rows(tmp_path / "a")
    cells = Counter((params_of(r)["freq_hz"], r["level_value"]) for r in rows)
    assert len(cells) == 2 * 13 and set(cells.values()) == {2}
    positions = {}
    for r in rows:
        positions.setdefault((params_of(r)["freq_hz"], r["level_value"]), set()).add(params_of(r)["position"])
    assert all(len(p) == 2 for p in positions.values())  # two different positions in every cell
    per_level = Counter((r["level_value"], params_of(r)["position"]) for r in rows)
    assert sorted(per_level.values()) == [8, 8, 9, 9, 9, 9]  # positions balanced within each level


def test_an_unbounded_normal_duration_is_refused_before_any_work():
    from auralgen.core.errors import ParameterError
    from auralgen.tasks.base import AudioConfig
    from auralgen.tasks.pitch_relative import PitchRelativeConfig

    cfg = PitchRelativeConfig(tone_s={"dist": "normal", "mean": 0.8, "std": 0.1})
    with pytest.raises(ParameterError, match=r"task\.tone_s=.* reaches \[-inf, inf\].*truncnorm"):
        cfg.check(AudioConfig(), "task")
    PitchRelativeConfig(tone_s={"dist": "truncnorm", "mean": 0.8, "std": 0.1, "low": 0.6, "high": 1.0}).check(
        AudioConfig(), "task"
    )
