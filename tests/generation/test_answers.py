"""Balanced answer texts: the plan deals every item its answer text, the item
factory draws until the answer is the dealt one, the same for any worker count."""

from collections import Counter

import pytest

from auralgen import generation
from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.generation.answers import deal
from auralgen.generation.item import MAX_ANSWER_DRAWS, make_row
from auralgen.generation.plan import ItemSpec
from tests.support.builders import read_rows, small_run

DEFAULT_TASKS = build_tasks(small_run("seed=0"))
# the levels the deal leaves alone, and why (texts vary per item, or the grid cell fixes the answer)
UNDEALT = {"audiogram": "fixed"}


def spread(counts: Counter, texts) -> int:
    values = [counts[t] for t in texts]
    return max(values) - min(values)


@pytest.mark.parametrize("items", [1, 5])  # one item per level, and more items than texts
@pytest.mark.parametrize("name", sorted(DEFAULT_TASKS))
def test_dealt_texts_are_balanced_per_level_and_per_task(name, items):
    """Within each level every text that can be correct there is dealt equally often (+-1); over
    the task, texts that can be correct at the same levels stay within one of each other."""
    extra = ("task.probe_items_per_level=1",) if name == "audiogram" else ()
    run = small_run(f"task={name}", f"task.items_per_level={items}", *extra)
    task = build_tasks(run)[name]
    targets, found = deal(task, 0, "test", ("test",))
    assert len(targets) == sum(task.design.items_at(lv) for lv in range(task.design.n_levels()))
    at, total, shared = 0, Counter(), {}
    for lt in found:
        n = task.design.items_at(lt.level)
        level_targets = targets[at : at + n]
        at += n
        if lt.texts is None:
            assert level_targets == [None] * n and lt.reason
            continue
        counts = Counter(level_targets)
        assert set(counts) <= set(lt.texts) and spread(counts, lt.texts) <= 1
        total.update(counts)
        shared.setdefault(lt.texts, set()).update(lt.texts)
    for texts in shared:
        assert spread(total, texts) <= 1, (name, total)
    dealt = sum(t is not None for t in targets)
    assert (dealt < len(targets)) == (name in UNDEALT)


def test_the_deal_is_seeded_and_depends_on_the_split():
    task = build_tasks(small_run("task=pitch_relative", "task.items_per_level=8"))["pitch_relative"]
    a, _ = deal(task, 0, "test", ("test",))
    assert a == deal(task, 0, "test", ("test",))[0]
    assert a != deal(task, 1, "test", ("test",))[0]
    assert a != deal(task, 0, "train", ("train",))[0]
    zero = task.design.items_at(0)  # 5 non-zero levels x 8 items / 2 texts: "The same" as often as each direction
    assert zero == 20 and Counter(a[:zero]) == {"The same": 20}
    assert Counter(a[zero : zero + 8]) == {"Higher": 4, "Lower": 4}  # level 1: two texts, 4 each
    assert Counter(a) == {"The same": 20, "Higher": 20, "Lower": 20}  # every text equally often over the task


def test_items_carry_their_dealt_answer_for_any_worker_count(tmp_path):
    args = ("task=loudness_relative", "task.levels=[0,3,6]", "task.items_per_level=5")
    generation.run(small_run(*args, out=tmp_path / "w1", workers=1), log=lambda *_: None)
    generation.run(small_run(*args, out=tmp_path / "w2", workers=2), log=lambda *_: None)
    one, two = read_rows(tmp_path / "w1"), read_rows(tmp_path / "w2")
    assert one == two
    task = build_tasks(small_run(*args))["loudness_relative"]
    targets, _ = deal(task, 0, "test", ("test",))
    assert [r["answer"] for r in one] == targets
    counts = Counter(r["answer"] for r in one if r["level"] > 0)
    assert abs(counts["Louder"] - counts["Softer"]) <= 1 and counts["The same"] == 0


def test_an_answer_the_sampler_never_gives_is_one_error_line():
    run = small_run("task=pitch_relative", "task.levels=[0,100]", "task.items_per_level=1")
    task = build_tasks(run)["pitch_relative"]
    spec = ItemSpec("pitch_relative", "test", 1, 1, 0, target="Sideways")
    with pytest.raises(
        ParameterError,
        match=rf"task pitch_relative level 1 .*no draw in {MAX_ANSWER_DRAWS} gave the dealt answer 'Sideways'",
    ):
        make_row(task, spec, seed=0)


@pytest.mark.parametrize(
    ("name", "items"), [("mixture", 8), ("multi_source_relation", 3), ("multi_source_relation", 7)]
)
def test_named_sound_texts_and_their_groups_are_dealt_evenly(name, items):
    """The named-sound tasks' answers (sound names, ordered pairs, left_of relations) were not dealt:
    mixture's overlap level gave one pair 5 times of 8. Now each text, and each group (the unordered
    pair, the relation's side), is dealt equally often per level (+-1)."""
    task = build_tasks(small_run(f"task={name}", f"task.items_per_level={items}"))[name]
    targets, found = deal(task, 0, "test", ("test",))
    at = 0
    for lt in found:
        n = task.design.items_at(lt.level)
        level_targets, at = targets[at : at + n], at + n
        assert lt.texts is not None and None not in level_targets, lt
        assert spread(Counter(level_targets), lt.texts) <= 1
        if lt.groups is not None:
            group_of = dict(zip(lt.texts, lt.groups))
            assert len(set(lt.groups)) < len(lt.texts) or set(lt.groups) == set(lt.texts)
            groups = Counter(group_of[t] for t in level_targets)
            assert spread(groups, set(lt.groups)) <= 1, (lt.level, groups)


@pytest.mark.parametrize(("name", "level"), [("mixture", 0), ("mixture", 14), ("multi_source_relation", 9)])
def test_named_sound_items_carry_their_dealt_answer(name, level):
    task = build_tasks(small_run(f"task={name}", "task.items_per_level=2"))[name]
    targets, found = deal(task, 0, "test", ("test",))
    start = sum(task.design.items_at(lv) for lv in range(level))
    for index in (start, start + 1):
        spec = ItemSpec(name, "test", index, level, index - start, target=targets[index])
        row = make_row(task, spec, seed=0).row
        assert row is not None and row.answer == targets[index] and row.answer in found[level].texts
