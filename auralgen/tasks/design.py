"""A task's design: what its levels are, how many items each holds and which answers each may have.

The generation plan, the answer deal, the run summary and adaptive testing ask a task's
``design`` (never the task) how many levels it has, how many items a level holds, a level's
value and unit, which answer texts are possible there, which parameter tuple an item takes
(kept disjoint across splits) and which adaptive tracks the task runs. The task itself keeps
the stimulus: ``sample(rng, level)``, ``render``, ``qa``, ``measure``, its listener and its
audit spec.

A task declares its design as a class attribute (``Design = LevelGrid``, the default), and
the task's constructor builds it with ``Design.of(task)``. Three kinds:

==================  ===============================================================================
kind                levels
==================  ===============================================================================
:class:`LevelGrid`  ``cfg.levels``, ``cfg.items_per_level`` items each (most tasks);
                    :class:`SameAtZero` adds a comparison's "the same" answer at difference 0
:class:`Cells`      levels x cells (the audiogram's frequency x position): the ``k``-th item of a
                    level takes its split's own cells in turn, so no item is redrawn for its split
:class:`SubQuestions`  several sub-questions, each with its own list of levels and unit (mixture,
                    multi_source_relation): the level index runs over them in order
==================  ===============================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import owner
from auralgen.tasks._tuples import deal, freeze

MAX_SPLIT_DRAWS = 64  # per split: draws allowed to find a parameter tuple owned by this split
TaskLike = Any  # an auralgen.tasks.base.Task (not imported: the base module imports this one)


@dataclass(frozen=True)
class Level:
    """A difficulty level: its place on the design and its value (in the task's level unit).

    Grid items carry an ``index`` (some tasks pick a sub-question by it) and their place ``k``
    within the level (a task may stratify a nuisance by it); a :class:`Cells` design also hands
    over the item's ``cell``. An item off the grid (an adaptive trial at any value in the task's
    range) has ``index=None``. ``Task.sample`` reads ``value``, never ``cfg.levels[index]``.

    Examples
    --------
    >>> Level(2, 48.0)
    Level(index=2, value=48.0, k=None, cell=None)
    """

    index: int | None
    value: float
    k: int | None = None
    cell: tuple | None = None


class LevelInfo(NamedTuple):
    """What the row schema writes for items of a level."""

    attribute: str
    regime: str
    unit: str


Sampler = Callable[[np.random.Generator, Level], dict[str, Any]]


class Design:
    """Base of the design kinds. A kind implements the first four methods; the rest have defaults
    (every option may be the answer, no listed answer texts, redraws for the split, one adaptive
    track on the task's own axis rule)."""

    task: str  # the task's name, for messages
    key_fields: tuple[str, ...] | None = None  # params fields of the split-disjoint tuple (None: all)

    @classmethod
    def of(cls, task: TaskLike) -> Design:
        """The design of ``task`` (from its config and class attributes); each kind implements it.

        Parameters
        ----------
        task : Task
            The task, with its ``cfg`` and class attributes (``name``, ``attribute``, ``level_unit``, ...).

        Returns
        -------
        Design
            The task's design.
        """
        raise NotImplementedError

    def n_levels(self) -> int:
        """How many grid levels the design has (each kind implements it).

        Returns
        -------
        int
            The number of levels; grid indices run over ``range(n_levels())``.
        """
        raise NotImplementedError

    def items_at(self, level: int) -> int:
        """Items at grid level ``level`` in each split (each kind implements it).

        Parameters
        ----------
        level : int
            A grid index, in ``range(n_levels())``.

        Returns
        -------
        int
            The number of items, >= 0.
        """
        raise NotImplementedError

    def level_value(self, level: int) -> float:
        """The value of grid level ``level`` (each kind implements it).

        Parameters
        ----------
        level : int
            A grid index (an adaptive trial, off the grid, carries its own value).

        Returns
        -------
        float
            The value, in the level's unit (:meth:`level_info`), e.g. cents, dB, percent, degrees, metres.
        """
        raise NotImplementedError

    def level_info(self, level: int) -> LevelInfo:
        """What the row schema writes for items of grid level ``level`` (each kind implements it).

        Parameters
        ----------
        level : int
            A grid index, as in :meth:`items_at`.

        Returns
        -------
        LevelInfo
            The level's ``attribute``, ``regime`` and ``unit``.
        """
        raise NotImplementedError

    def n_items(self) -> int:
        """Items of one split.

        Returns
        -------
        int
            The sum of :meth:`items_at` over the levels.
        """
        return sum(self.items_at(level) for level in range(self.n_levels()))

    def level(self, index: int, k: int | None = None) -> Level:
        """The :class:`Level` of the ``k``-th item of grid level ``index`` (``k=None``: any item).

        Parameters
        ----------
        index : int
            A grid index.
        k : int or None, optional
            The item's place within the level, from 0.

        Returns
        -------
        Level
            The level with its value (:meth:`level_value`).
        """
        return Level(int(index), self.level_value(index), k)

    def grid_index(self, level: Level) -> int:
        """The grid index of ``level``, for a task that picks what it asks by it (ParameterError off the grid).

        Parameters
        ----------
        level : Level
            A level on the grid or off it (an adaptive trial).

        Returns
        -------
        int
            ``level.index``.
        """
        if level.index is None:
            raise ParameterError(
                f"task {self.task} level value {level.value!r} has no grid index; "
                f"allowed: a level of tasks.{self.task}.levels"
            )
        return level.index

    def expected_answers(self, level_value: float, options: list[str]) -> set[str]:
        """The option texts that can be the answer of an item at ``level_value`` (the plan deals them,
        the audit checks every answer is one). Default: every option.

        Parameters
        ----------
        level_value : float
            The level's value, in its unit.
        options : list of str
            The option texts of an item there.

        Returns
        -------
        set of str
            The subset of ``options`` that may be the answer.
        """
        return set(options)

    def answer_texts(self, level: int) -> dict[str, str] | None:
        """For a level whose option texts vary from item to item (sound names): every text that can be
        the answer there, mapped to its group (e.g. a pair's unordered members, or a relation's side),
        so the plan deals the texts, and their groups, equally often. None: such a level is not dealt.

        Parameters
        ----------
        level : int
            The level of the items, a grid index.

        Returns
        -------
        dict of str to str or None
            Answer text to its group, or None (the default).
        """
        return None

    def param_key(self, params: dict[str, Any]) -> tuple:
        """The item's parameter tuple, which no two splits share.

        Parameters
        ----------
        params : dict of str to Any
            The item's recipe (a draw of the task's ``sample``).

        Returns
        -------
        tuple
            The values of ``key_fields`` through :func:`freeze` (all fields, sorted by name, when None).
        """
        names = self.key_fields or tuple(sorted(params))
        return tuple(freeze(params[k]) for k in names)

    def capacity_error(self, splits: tuple[str, ...], key: str) -> str | None:
        """Why some item of some split cannot find a parameter tuple owned by its split, as one line
        naming task, level, tuples available and needed and the override that fixes it; None when every
        item can (continuous parameters never run out). Called at plan time, before any rendering.

        Parameters
        ----------
        splits : tuple of str
            The run's split names.
        key : str
            The task's config path for the message, e.g. ``tasks.audiogram``.

        Returns
        -------
        str or None
            The one-line reason, or None (the default).
        """
        return None

    def draw(
        self, sample: Sampler, rng: np.random.Generator, level: int, k: int | None, split: str, splits: tuple[str, ...]
    ) -> dict[str, Any]:
        """The ``params`` of the ``k``-th item of grid ``level`` in ``split``: ``sample`` is drawn again
        until the item's parameter tuple is owned by ``split`` (:func:`auralgen.core.random.owner`), so
        no tuple appears in two splits. The item's place ``k`` steers the first draws. ParameterError when
        ``MAX_SPLIT_DRAWS * len(splits)`` draws find none.

        Parameters
        ----------
        sample : callable
            The task's ``sample(rng, level)`` (``Generator``, :class:`Level`) -> ``params``.
        rng : numpy.random.Generator
            The item's random stream.
        level : int
            A grid index.
        k : int or None
            The item's place within the level (None: not given).
        split : str
            The item's split.
        splits : tuple of str
            The run's split names.

        Returns
        -------
        dict of str to Any
            The item's recipe.
        """
        for attempt in range(MAX_SPLIT_DRAWS * len(splits)):
            params = sample(rng, self.level(level, k if attempt < MAX_SPLIT_DRAWS // 2 else None))
            if owner(self.param_key(params), tuple(splits)) == split:
                return params
        raise ParameterError(
            f"split={list(splits)!r}: task {self.task} level {level} ran out of parameter tuples not used by "
            "another split; allowed: fewer items per level or a wider parameter grid"
        )

    def adaptive_tracks(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The tracks ``mode=adaptive`` runs, each ``(track name, config changes)``: one, the task
        itself, unless the task measures several thresholds (the audiogram: one per frequency).

        Returns
        -------
        tuple of (str, dict of str to Any)
            ``(track name, config field -> value)`` per track; here ``((task name, {}),)``.
        """
        return ((self.task, {}),)

    def adaptive_axis(self) -> dict[str, Any] | None:
        """The level domain of an adaptive track when the design states its own (``low``, ``high``,
        ``scale``, ``easier``); None: the rule of :mod:`auralgen.evaluation.adaptive.domain`.

        Returns
        -------
        dict of str to Any or None
            ``low``/``high`` (level unit), ``scale`` (``lin``/``log``), ``easier`` (``larger``/``smaller``); or None.
        """
        return None


def track_tasks(task: TaskLike) -> list[tuple[str, TaskLike]]:
    """The adaptive tracks of ``task`` as ``(track name, task)``: the task itself, or a copy with the
    track's config changes (:meth:`Design.adaptive_tracks`).

    Parameters
    ----------
    task : Task
        A task instance.

    Returns
    -------
    list of (str, Task)
        One pair per track, in the design's order.
    """
    return [
        (name, type(task)(replace(task.cfg, **changes), task.audio) if changes else task)
        for name, changes in task.design.adaptive_tracks()
    ]


@dataclass(frozen=True)
class LevelGrid(Design):
    """One list of levels (``cfg.levels``), ``items_per_level`` items each; every level has the task's
    attribute, regime and unit."""

    task: str
    levels: tuple[float, ...]
    items_per_level: int
    info: LevelInfo

    @classmethod
    def of(cls, task: TaskLike) -> LevelGrid:
        info = LevelInfo(task.attribute, task.regime, task.level_unit)
        return cls(task.name, tuple(task.cfg.levels), task.cfg.items_per_level, info)

    def n_levels(self) -> int:
        return len(self.levels)

    def items_at(self, level: int) -> int:
        return self.items_per_level

    def level_value(self, level: int) -> float:
        return float(self.levels[level])

    def level_info(self, level: int) -> LevelInfo:
        return self.info


@dataclass(frozen=True)
class SameAtZero(LevelGrid):
    """A comparison's grid: the zero level (no difference) has an answer text of its own (``same``,
    the task's ``answers["same"]``) that no other level has; the other levels share the remaining
    ``n_choices - 1`` texts. The zero level then holds as many items as each of those texts gets
    over the other levels, so every text is the answer equally often over the task.
    """

    same: str = ""
    n_choices: int = 3

    @classmethod
    def of(cls, task: TaskLike) -> SameAtZero:
        grid = LevelGrid.of(task)
        return cls(grid.task, grid.levels, grid.items_per_level, grid.info, task.answers["same"], task.n_choices)

    def items_at(self, level: int) -> int:
        """``items_per_level``; at the zero level, ``items_per_level * (non-zero levels) / (n_choices - 1)``
        (rounded up).

        >>> grid = SameAtZero("t", (0, 10, 20), 6, LevelInfo("pitch", "relative", "cents"), "Same", 3)
        >>> [grid.items_at(i) for i in range(3)]  # 'Same' 6 times; 'Up' and 'Down' 6 times each over levels 1, 2
        [6, 6, 6]
        >>> [replace(grid, levels=(0, 10, 20, 40, 80)).items_at(i) for i in range(5)]
        [12, 6, 6, 6, 6]
        """
        n = self.items_per_level
        if self.level_value(level) != 0:
            return n
        others = sum(1 for i in range(self.n_levels()) if self.level_value(i) != 0)
        return -(-n * others // (self.n_choices - 1)) if others else n

    def expected_answers(self, level_value: float, options: list[str]) -> set[str]:
        """The ``same`` text exactly at difference 0, any other option elsewhere.

        >>> grid = SameAtZero("t", (0, 10), 6, LevelInfo("pitch", "relative", "cents"), "Same", 3)
        >>> sorted(grid.expected_answers(0.0, ["Up", "Same"])), sorted(grid.expected_answers(10.0, ["Up", "Same"]))
        (['Same'], ['Up'])
        """
        return {self.same} if level_value == 0 else set(options) - {self.same}


@dataclass(frozen=True)
class SubQuestions(Design):
    """Several sub-questions, each with its own list of levels: level ``i`` is ``grid[i] = (sub, value)``,
    running over the sub-questions in order, then over each one's list, so every level has one unit.
    ``info[sub]`` is the sub-question's ``(attribute, unit)``; ``texts[sub]`` the answer texts it deals
    (see :meth:`Design.answer_texts`; absent: not dealt)."""

    task: str
    grid: tuple[tuple[str, float], ...]
    items_per_level: int
    regime: str
    info: Mapping[str, tuple[str, str]]
    texts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def n_levels(self) -> int:
        return len(self.grid)

    def items_at(self, level: int) -> int:
        return self.items_per_level

    def level_value(self, level: int) -> float:
        return self.grid[level][1]

    def level_info(self, level: int) -> LevelInfo:
        attribute, unit = self.info[self.grid[level][0]]
        return LevelInfo(attribute, self.regime, unit)

    def sub(self, level: Level) -> str:
        """The sub-question of ``level`` (by its grid index: ParameterError off the grid).

        Parameters
        ----------
        level : Level
            A level on the grid.

        Returns
        -------
        str
            The sub-question's name, a key of ``info``.
        """
        return self.grid[self.grid_index(level)][0]

    def answer_texts(self, level: int) -> dict[str, str] | None:
        texts = self.texts.get(self.grid[level][0])
        return None if texts is None else dict(texts)


@dataclass(frozen=True)
class CellLevel:
    """One level of a :class:`Cells` design: its value and info, its items, and its cells in the order
    the ``k``-th item takes them. ``label`` names the level in messages (``dB HL``), ``fix`` the
    override that adds cells (``{key}`` is the task's config key)."""

    value: float
    info: LevelInfo
    items: int
    cells: tuple[tuple, ...]
    label: str
    fix: str


@dataclass(frozen=True)
class Cells(Design):
    """Levels x cells: an item's parameter tuple is its cell (the fields ``cell_fields``), its level value
    and unit, so a level offers finitely many. The cells are dealt to the splits once (:func:`deal`,
    balanced) and the ``k``-th item of a level takes its split's own cells in turn, shifted by the level
    index: no item is redrawn for its split. ``tracks`` and ``axis`` are the adaptive tracks and domain."""

    task: str
    levels: tuple[CellLevel, ...]
    cell_fields: tuple[str, ...]
    tuple_names: str  # what a parameter tuple holds, for messages: "(frequency, level, position)"
    key_fields: tuple[str, ...]
    tracks: tuple[tuple[str, dict[str, Any]], ...] = ()
    axis: dict[str, Any] | None = None
    _owned: dict = field(default_factory=dict, repr=False, compare=False)  # (level, split, splits) -> cells

    def n_levels(self) -> int:
        return len(self.levels)

    def items_at(self, level: int) -> int:
        return self.levels[level].items

    def level_value(self, level: int) -> float:
        return self.levels[level].value

    def level_info(self, level: int) -> LevelInfo:
        return self.levels[level].info

    def level(self, index: int, k: int | None = None) -> Level:
        """The ``k``-th item of a level takes the level's cells in turn; ``k=None``: the task draws one."""
        cells = self.levels[index].cells
        cell = None if k is None else cells[(k + index) % len(cells)]
        return Level(int(index), self.level_value(index), k, cell)

    def cell_key(self, level: int, cell: tuple) -> tuple:
        """The parameter tuple of an item of ``level`` in ``cell`` (its cell fields, level value and unit).

        Parameters
        ----------
        level : int
            A grid index.
        cell : tuple
            One of the level's cells, values in the order of ``cell_fields``.

        Returns
        -------
        tuple
            The frozen parameter tuple.
        """
        lv = self.levels[level]
        params = {**dict(zip(self.cell_fields, cell)), "level_value": lv.value, "level_unit": lv.info.unit}
        return self.param_key(params)

    def owned_cells(self, level: int, split: str, splits: tuple[str, ...]) -> list[tuple]:
        """The cells of ``level`` whose parameter tuple belongs to ``split`` (balanced, see :func:`deal`),
        worked out once per design.

        Parameters
        ----------
        level : int
            A grid index.
        split : str
            The split asked about.
        splits : tuple of str
            The run's split names.

        Returns
        -------
        list of tuple
            The split's cells, in the level's order (a copy).
        """
        key = (int(level), split, tuple(splits))
        if key not in self._owned:
            cells = self.levels[level].cells
            owners = deal([self.cell_key(level, c) for c in cells], tuple(splits))
            self._owned[key] = [c for c in cells if owners[self.cell_key(level, c)] == split]
        return list(self._owned[key])

    def draw(self, sample, rng, level, k, split, splits):
        """The ``k``-th item of ``split`` takes its split's own cells in turn: no redraws."""
        cells = self.owned_cells(level, split, splits)
        if not cells:
            raise ParameterError(
                self.capacity_error(tuple(splits), f"tasks.{self.task}") or f"split={split!r} owns no cell"
            )
        cell = cells[((k or 0) + level) % len(cells)]
        return sample(rng, Level(int(level), self.level_value(level), k, cell))

    def capacity_error(self, splits: tuple[str, ...], key: str) -> str | None:
        """Every split needs one parameter tuple of each level that has items."""
        for level, lv in enumerate(self.levels):
            n = len({self.cell_key(level, c) for c in lv.cells})
            if lv.items > 0 and n < len(splits):
                return (
                    f"split={list(splits)!r}: {key} ({self.task}) level {level} ({lv.value:g} {lv.label}) "
                    f"has {n} distinct {self.tuple_names} tuples but needs {len(splits)}, one per split, "
                    f"as no tuple may appear in two splits; allowed: at most {n} splits, or {lv.fix.format(key=key)}"
                )
        return None

    def adaptive_tracks(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        return self.tracks or super().adaptive_tracks()

    def adaptive_axis(self) -> dict[str, Any] | None:
        return self.axis


__all__ = [
    "MAX_SPLIT_DRAWS",
    "CellLevel",
    "Cells",
    "Design",
    "Level",
    "LevelGrid",
    "LevelInfo",
    "SameAtZero",
    "SubQuestions",
    "deal",
    "freeze",
    "track_tasks",
]
