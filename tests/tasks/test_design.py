"""A task's levels, counts, expected answers and parameter tuples are its design (auralgen.tasks.design)."""

from __future__ import annotations

import numpy as np
import pytest

from auralgen.tasks.base import AudioConfig, AuditSpec, Task, check_task_complete, load_tasks
from auralgen.tasks.design import Cells, LevelGrid, LevelInfo, SameAtZero, SubQuestions, track_tasks

MOVED = (
    *("n_levels", "items_at", "level_value", "level_info", "sample_at", "sample_owned", "expected_answers"),
    *("answer_texts", "adaptive_tracks", "adaptive_axis", "capacity_error", "param_key", "key_fields"),
    *("zero_level_answer", "grid_index"),
)


def task_of(name: str) -> Task:
    cls = load_tasks()[name]
    return cls(cls.Config(), AudioConfig())


def test_the_level_hooks_live_on_the_design_not_on_any_task():
    tasks = load_tasks()
    assert [m for m in MOVED if hasattr(Task, m)] == []
    left = {name: [m for m in MOVED if hasattr(cls, m)] for name, cls in tasks.items()}
    assert {name: hooks for name, hooks in left.items() if hooks} == {}


def test_each_task_declares_the_design_kind_its_levels_need():
    kinds = {name: type(task_of(name).design) for name in load_tasks()}
    assert {n for n, k in kinds.items() if issubclass(k, Cells)} == {"audiogram"}
    assert {n for n, k in kinds.items() if issubclass(k, SubQuestions)} == {"mixture", "multi_source_relation"}
    comparisons = {n for n, k in kinds.items() if issubclass(k, SameAtZero)}
    assert {"pitch_relative", "loudness_relative", "timbre_relative", "reverberation_relative"} <= comparisons
    assert all(n.endswith("_relative") for n in comparisons)
    assert kinds["pitch_relative"] is SameAtZero and kinds["duration_absolute"] is LevelGrid


def test_sub_questions_give_each_level_its_own_unit_and_dealt_texts():
    design = task_of("multi_source_relation").design
    units = [design.level_info(i).unit for i in range(design.n_levels())]
    assert units == ["deg"] * 3 + ["m"] * 3 + ["deg"] * 6
    assert design.level_value(3) == 2.0 and design.items_at(3) == 10
    assert sorted(set(design.answer_texts(9).values())) == ["left", "right", "same"]  # left_of: grouped by side


def test_the_audiogram_cells_design_hands_each_item_its_cell_and_one_track_per_frequency():
    task = task_of("audiogram")
    level = task.design.level(2, k=5)
    assert level.cell == task.design.levels[2].cells[7]
    params = task.sample(np.random.default_rng(0), level)
    assert (params["freq_hz"], params["position"]) == level.cell and params["level_value"] == 10.0
    tracks = track_tasks(task)
    assert [n for n, _ in tracks][:2] == ["audiogram@125Hz", "audiogram@177Hz"] and len(tracks) == 13
    assert tracks[0][1].cfg.freqs_hz == (125,) and tracks[0][1].design.n_levels() == 13  # no probe levels


def test_a_grid_design_counts_a_comparisons_zero_level_like_each_other_answer():
    grid = SameAtZero("t", (0, 5, 10, 20), 4, LevelInfo("pitch", "relative", "cents"), "Same", 3)
    assert [grid.items_at(i) for i in range(4)] == [6, 4, 4, 4] and grid.n_items() == 18


def test_a_task_whose_design_is_not_a_design_kind_is_refused():
    class Broken(Task):
        name, sub_category, attribute, regime, level_unit, n_choices = "broken", "x", "pitch", "absolute", "Hz", 2
        questions = ("?",)
        audit = AuditSpec(("freq_hz",), listener_easiest=None, reason="a test")
        listener = None
        Design = object

    with pytest.raises(TypeError, match=r"task broken: class Broken.Design=<class 'object'> is not a design kind"):
        check_task_complete("broken", Broken)
