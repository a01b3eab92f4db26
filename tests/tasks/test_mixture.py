"""mixture task: params are the recipe, no cue predicts the answer, check() catches wrong labels, pipeline runs."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.core.qa import answer_slot
from auralgen.core.random import item_rng
from auralgen.generation.run import run as generate
from auralgen.sounds.events import NAMES
from tests.support.builders import decode, params_of, read_rows, small_run

TASK = build_tasks(small_run("task=mixture"))["mixture"]
SUBS = ("louder", "first", "count", "overlap")


def levels_of(sub):
    return [lv for lv in range(TASK.design.n_levels()) if TASK.design.grid[lv][0] == sub]


def draws(sub, n):
    lvs = levels_of(sub)
    return [(lvs[i % len(lvs)], TASK.sample(item_rng(0, "test", "mixture", i), lvs[i % len(lvs)])) for i in range(n)]


def near(k, n, p, z=4.0):
    return abs(k - n * p) <= z * math.sqrt(n * p * (1 - p))


def test_level_grid_runs_over_sub_questions_with_their_units():
    subs = [TASK.design.grid[lv][0] for lv in range(TASK.design.n_levels())]
    assert subs == ["louder"] * 5 + ["first"] * 5 + ["count"] * 3 + ["overlap"] * 4
    assert [TASK.design.level_info(lv)[2] for lv in (0, 5, 10, 13)] == ["LU", "s", "LU", "s"]
    assert TASK.design.level_value(6) == 0.05 and TASK.design.level_value(14) == 0.1


def test_count_mix_level_does_not_follow_the_count():
    """The count's sounds sum (in power) to the roved reference: the clip's RMS has the same mean for
    2, 3 and 4 sounds (it rose ~1.8 dB per sound before), and the quietest-re-loudest difference is kept."""
    by_count = {2: [], 3: [], 4: []}
    for lv, p in draws("count", 90):
        x = TASK.render(p)[0].astype(np.float64)
        by_count[p["answer"]].append(10 * math.log10(float(np.mean(x**2))))
        levels = [s["level"] for s in p["sounds"]]
        assert max(levels) - min(levels) == pytest.approx(TASK.design.level_value(lv), abs=1e-9)
        assert 10 * math.log10(sum(10 ** (v / 10) for v in levels)) < -21.9  # power sum at the reference (-30..-22)
    means = {n: float(np.mean(v)) for n, v in by_count.items()}
    assert max(means.values()) - min(means.values()) < 1.5, (
        means
    )  # 3.6 dB before; standard error of a difference ~0.8 dB


@pytest.mark.parametrize("sub", SUBS)
def test_params_reproduce_the_audio_and_the_probed_value_is_exact(sub):
    lv, p = draws(sub, 1)[0]
    clip = TASK.render(p)[0]
    again = TASK.render(json.loads(json.dumps(p)))[0]
    assert clip.dtype == np.float32 and clip.shape == (1, round(p["clip_s"] * 16000))
    np.testing.assert_array_equal(clip, again)
    assert np.max(np.abs(clip)) <= p["mix"]["max_peak"] + 1e-7
    out = [c["measured_level"] for c in p["mix"]["components"]]
    on = [s["onset_s"] for s in p["sounds"]]
    value = TASK.design.level_value(lv)
    if sub == "louder":
        top = sorted(out, reverse=True)
        assert top[0] - top[1] == pytest.approx(value, abs=1e-6) and out.index(top[0]) == p["answer"]
    elif sub == "first":
        o = sorted(on)
        assert o[1] - o[0] == pytest.approx(value, abs=1e-9) and on.index(o[0]) == p["answer"]
    elif sub == "count":
        assert len(p["sounds"]) == p["answer"] and max(out) - min(out) == pytest.approx(value, abs=1e-6)
    else:
        i, j = p["answer"]
        ends = [s["onset_s"] + s["duration_s"] for s in p["sounds"]]
        assert min(ends[i], ends[j]) - max(on[i], on[j]) == pytest.approx(value, abs=1e-9)


def test_louder_answer_is_independent_of_order_duration_and_kind():
    items = [p for _, p in draws("louder", 240)]
    n = len(items)
    first = sum(min(range(3), key=lambda i: p["sounds"][i]["onset_s"]) == p["answer"] for p in items)
    longest = sum(max(range(3), key=lambda i: p["sounds"][i]["duration_s"]) == p["answer"] for p in items)
    assert near(first, n, 1 / 3) and near(longest, n, 1 / 3)
    assert all(near(c, n, 1 / 3) for c in Counter(p["answer"] for p in items).values())
    kinds = Counter(p["sounds"][p["answer"]]["kind"] for p in items)
    assert len(kinds) == 5 and all(near(c, n, 1 / 5) for c in kinds.values())


def test_first_answer_is_independent_of_level_and_duration():
    items = [p for _, p in draws("first", 240)]
    n = len(items)
    loudest = sum(max(range(3), key=lambda i: p["sounds"][i]["level"]) == p["answer"] for p in items)
    longest = sum(max(range(3), key=lambda i: p["sounds"][i]["duration_s"]) == p["answer"] for p in items)
    assert near(loudest, n, 1 / 3) and near(longest, n, 1 / 3)


def test_count_and_overlap_answers_are_balanced():
    counts = Counter(p["answer"] for _, p in draws("count", 150))
    assert set(counts) == {2, 3, 4} and all(near(c, 150, 1 / 3) for c in counts.values())
    items = [p for _, p in draws("overlap", 150)]
    pairs = Counter(tuple(p["answer"]) for p in items)
    assert set(pairs) == {(0, 1), (0, 2), (1, 2)} and all(near(c, 150, 1 / 3) for c in pairs.values())
    assert {s["kind"] for p in items for s in p["sounds"]} == {"harmonic", "noise", "sweep"}
    louder_in_pair = sum(max(range(3), key=lambda i: p["sounds"][i]["level"]) in p["answer"] for p in items)
    assert near(louder_in_pair, 150, 2 / 3)


@pytest.mark.parametrize("sub", SUBS)
def test_options_name_the_sounds_and_answer_slots_are_balanced(sub):
    slots = Counter()
    lvs = levels_of(sub)
    for i in range(30):
        rng = item_rng(0, "test", "mixture", i)
        p = TASK.sample(rng, lvs[i % len(lvs)])
        qa = TASK.qa(p, rng, slot=answer_slot(0, "test", "mixture", i, TASK.n_choices))
        assert len(set(qa.options)) == len(qa.options) == 3
        slots[qa.answer_index] += 1
        if sub in ("louder", "first"):
            assert qa.answer.lower() == NAMES[p["sounds"][p["answer"]]["kind"]]
        if sub == "count":
            assert qa.answer == str(p["answer"]) and sorted(qa.options[:3]) == ["2", "3", "4"]
    assert sorted(slots.values()) == [10, 10, 10]


def _corrupt(p):
    sub, ans = p["sub_question"], p["answer"]
    if sub in ("louder", "first"):
        return {**p, "answer": (ans + 1) % 3}
    if sub == "count":
        return {**p, "answer": 2 if ans != 2 else 3}
    return {**p, "answer": [0, 2] if ans != [0, 2] else [0, 1]}


@pytest.mark.parametrize("sub", SUBS)
def test_check_accepts_the_label_and_rejects_a_wrong_one(sub):
    for _, p in draws(sub, 2):
        clip = TASK.render(p)
        good = TASK.check(p, clip)
        assert (
            good["valid"] is True
            and good["level_error"]["measured"] <= 0.5
            and good["onset_error_s"]["measured"] <= 1e-3
        )
        assert TASK.check(_corrupt(p), clip)["valid"] is False
    # a wrong probed value is caught too (the audio says otherwise)
    assert TASK.check({**p, "difference": p["difference"] + 0.6}, clip)["valid"] is False


def test_check_rejects_audio_that_differs_from_the_recipe():
    _, p = draws("louder", 1)[0]
    clip = TASK.render(p)[0].copy()
    s = p["mix"]["components"][p["answer"]]
    a, b = round(s["onset_s"] * 16000), round(s["offset_s"] * 16000)
    clip[:, a:b] *= 0.5  # the loudest sound 6 dB down in the audio
    assert TASK.check(p, [clip])["valid"] is False


@pytest.mark.parametrize(
    "override,match",
    [
        (
            "task.sub_questions=[louder,pitch]",
            r"task.sub_questions=\['louder', 'pitch'\] is invalid; allowed: distinct values",
        ),
        ("task.n_sounds=[2,3]", r"task.n_sounds=\[2, 3\] is invalid; allowed: 3 distinct integers"),
        ("task.overlap_levels_s=[0.1,0.8]", r"task.overlap_levels_s=\[0.1, 0.8\] reaches the shortest duration"),
        ("task.kinds=[clicks,knocks,noise,sweep]", r"task.kinds=.* fewer than 3 continuous kinds"),
        ("task.onset_levels_s=[0.4,0.1,0.2]", r"task.onset_levels_s=.* is not monotonic"),
        ("task.mixing.relative_level=[-3,2]", r"task.mixing.relative_level=\[-3, 2\] reaches"),
        ("sample_rate=8000", r"task.sample_rate=8000 is too low; allowed: >= 16000"),
    ],
)
def test_config_errors_are_one_line(override, match):
    with pytest.raises(ParameterError, match=match):
        small_run("task=mixture", override)


def test_pipeline_generates_and_loads_back(tmp_path):
    run = small_run("task=mixture", "task.items_per_level=1", "mixing@task.mixing=sequential", out=tmp_path / "ds")
    generate(run, log=lambda *a, **k: None)
    rows = read_rows(tmp_path / "ds", "mixture")
    assert len(rows) == TASK.design.n_levels() and all(r["valid"] for r in rows)
    assert Counter(r["level_unit"] for r in rows) == {"LU": 8, "s": 9}
    task = build_tasks(run)["mixture"]
    for r in rows[::4]:
        p = params_of(r)
        x, sr = decode(r["audio"][0])
        assert sr == 16000 and r["options"][r["answer_index"]] == r["answer"] and len(r["options"]) == 3
        np.testing.assert_allclose(x, task.render(p)[0], atol=2.0**-22)
        assert json.loads(r["measured"])["valid"] is True


def _role_items(rng, first_is_answer: bool, n: int = 60) -> list[dict]:
    out = []
    for _ in range(n):
        onsets = rng.permutation([0.2, 0.9, 1.6])
        sounds = [
            {"onset_s": float(o), "duration_s": float(rng.uniform(0.5, 1)), "level": float(rng.uniform(-30, -20))}
            for o in onsets
        ]
        answer = int(np.argmin(onsets)) if first_is_answer else int(rng.integers(3))
        out.append({"sub_question": "louder", "answer": answer, "sounds": sounds})
    return out


def test_the_mixture_declares_its_role_audit_and_it_flags_a_rigged_role():
    from auralgen.tasks._mixture_audit import MixtureRoles
    from auralgen.tasks.mixture import Mixture

    assert Mixture.audit.dataset_checks == (MixtureRoles,) and MixtureRoles.name == "mixture_roles"
    rng = np.random.default_rng(0)
    fair, rigged = MixtureRoles(), MixtureRoles()
    for p in _role_items(rng, False):
        fair.observe(p)
    for p in _role_items(rng, True):
        rigged.observe(p)
    fair_entry, fair_flags = fair.finish()
    entry, flags = rigged.finish()
    assert fair_flags == [] and not any(r["flag"] for r in fair_entry["cues"])
    hit = next(r for r in entry["cues"] if r["sub_question"] == "louder" and r["cue"] == "first")
    assert hit["flag"] and hit["rate"] == 1.0 and hit["chance"] == pytest.approx(1 / 3, abs=1e-4)
    assert flags[0].startswith("the answer to 'louder' is the first sound in 1.00 of items vs chance 0.33 (p=")
    assert MixtureRoles().finish() == ({"skipped": "too few named-sound mixture items"}, [])


def test_the_role_audit_uses_the_shortcut_audits_thresholds():
    from auralgen.tasks import _mixture_audit as M
    from auralgen.validation import shortcuts

    assert (M.ROLE_MARGIN, M.ROLE_ALPHA, M.ROLE_MIN_ITEMS) == (
        shortcuts.SHORTCUT_MARGIN,
        shortcuts.SHORTCUT_ALPHA,
        shortcuts.SHORTCUT_MIN_ITEMS,
    )
