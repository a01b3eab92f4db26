"""The plan of a run: every item's coordinates and dealt answer text, grouped into shards.

An item is named by ``(task, split, index)``; its level and place ``k`` within the level follow
from the task's grid, its answer text from the seeded deal of :mod:`.answers`. The plan is the
same for any number of workers, so is the output.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from auralgen.config import RunConfig
from auralgen.core.errors import ParameterError
from auralgen.export.parquet import shard_name
from auralgen.generation.answers import Deal, dealt
from auralgen.tasks.base import Task

MAX_PLAN_ITEMS = 10_000_000  # items one run may plan (a typo such as items_per_level=1e12 is refused)


@dataclass(frozen=True)
class ItemSpec:
    """One planned item: its task, split, index within them, level, place ``k`` in the level and dealt answer."""

    task: str
    split: str
    index: int
    level: int
    k: int = 0  # position of the item within its level
    target: str | None = None  # the dealt answer text (None: the level is not dealt, see generation.answers)


class PlannedItems(Sequence):
    """Items ``[start, stop)`` of a task's split in plan order, each :class:`ItemSpec` built when read
    (a plan of a million items holds one :class:`~auralgen.generation.answers.Deal` per task and split,
    not a million objects). Indexing gives an ItemSpec, slicing a tuple of them."""

    def __init__(self, task: str, split: str, dealt: Deal, start: int, stop: int):
        self.task, self.split, self.dealt, self.start, self.stop = task, split, dealt, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    def _spec(self, index: int, level: int) -> ItemSpec:
        k = index - self.dealt.starts[level]
        return ItemSpec(self.task, self.split, index, level, k, self.dealt.target(level, index))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        if not -len(self) <= i < len(self):
            raise IndexError(f"item {i} of a shard of {len(self)} items")
        index = self.start + i % len(self)
        return self._spec(index, self.dealt.level_of(index))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __eq__(self, other) -> bool:
        if isinstance(other, (PlannedItems, tuple)):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.task, self.split, self.start, self.stop))

    def __repr__(self) -> str:
        return f"PlannedItems({self.task!r}, {self.split!r}, items {self.start}..{self.stop - 1})"


@dataclass(frozen=True)
class ShardPlan:
    """One shard of the plan: its path relative to ``out``, its task and split, and its items."""

    path: str
    task: str
    split: str
    items: PlannedItems


def _task_key(run: RunConfig, name: str) -> str:
    """The config key of task ``name`` as the user wrote it: ``task`` for a one-task run, else ``tasks.<name>``."""
    return "task" if len(run.tasks) == 1 and run.suite == name else f"tasks.{name}"


def plan(run: RunConfig, tasks: dict[str, Task]) -> list[ShardPlan]:
    """Every item of the run, grouped into shards of at most ``run.shard_size`` items (work per
    level and per shard, not per item).

    Parameters
    ----------
    run : RunConfig
        The validated run config (seed, splits, shard size).
    tasks : dict of str to Task
        The run's tasks by name, configured.

    Returns
    -------
    list of ShardPlan
        Per task (in ``tasks`` order), per split, the shards in index order; a split with no items
        still has one (empty) shard.
    """
    shards = []
    for name, task in tasks.items():
        for split in run.splits:
            d = dealt(task, run.seed, split, run.splits)
            n = max(1, math.ceil(d.n_items / run.shard_size))
            for i in range(n):
                start, stop = i * run.shard_size, min((i + 1) * run.shard_size, d.n_items)
                items = PlannedItems(name, split, d, start, max(start, stop))
                shards.append(ShardPlan(shard_name(name, split, i, n), name, split, items))
    return shards


def check_capacity(run: RunConfig, tasks: dict[str, Task]) -> None:
    """Refuse, before any rendering, a plan whose items cannot all find a parameter tuple of their split.

    Parameters
    ----------
    run, tasks : RunConfig, dict of str to Task
        As in :func:`plan`.

    Raises
    ------
    ParameterError
        The first task's capacity problem, naming its config key.
    """
    for name, task in tasks.items():
        problem = task.design.capacity_error(run.splits, _task_key(run, name))
        if problem:
            raise ParameterError(problem)


def count_items(run: RunConfig, tasks: dict[str, Task]) -> int:
    """Items the plan will hold, counted without building it; refuses more than :data:`MAX_PLAN_ITEMS`.

    Parameters
    ----------
    run, tasks : RunConfig, dict of str to Task
        As in :func:`plan`.

    Returns
    -------
    int
        Items over every task and split.

    Raises
    ------
    ParameterError
        When the running total exceeds :data:`MAX_PLAN_ITEMS`, naming the task's ``items_per_level``.
    """
    total = 0
    for name, task in tasks.items():
        n = task.design.n_items() * len(run.splits)
        total += n
        if total > MAX_PLAN_ITEMS:
            per, levels = task.cfg.items_per_level, task.design.n_levels()
            raise ParameterError(
                f"{_task_key(run, name)}.items_per_level={per} makes a plan of {total:.4g} items ({levels} levels x "
                f"{len(run.splits)} splits); allowed: at most {MAX_PLAN_ITEMS} items per run"
            )
    return total


def item_id(fp: str, seed: int, spec: ItemSpec) -> str:
    """Opaque id: a hash of the task's id key ``fp`` (:func:`~auralgen.config.id_key`) and the item's
    coordinates. It carries no parameter value or answer, differs between configs of the task (e.g. the
    same item at 16 and 48 kHz) but not with the other tasks of the run, and with a secret seed cannot be
    recomputed from the public files.

    Parameters
    ----------
    fp : str
        The task's id key.
    seed : int
        The run's seed (the secret one when the seed is withheld).
    spec : ItemSpec
        The item's coordinates (task, split, index).

    Returns
    -------
    str
        20 lowercase hex digits: the start of the SHA-256 of ``fp/seed/split/task/index``.
    """
    return hashlib.sha256(f"{fp}/{seed}/{spec.split}/{spec.task}/{spec.index}".encode()).hexdigest()[:20]
