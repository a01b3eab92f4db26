"""The plan of a run: every item's coordinates and dealt answer text, grouped into shards.

An item is named by ``(task, split, index)``; its level and place ``k`` within the level follow
from the task's grid, its answer text from the seeded deal of :mod:`.answers`. The plan is the
same for any number of workers, so is the output.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from auralgen.config import RunConfig
from auralgen.errors import ParameterError
from auralgen.export.parquet import shard_name
from auralgen.generation.answers import deal
from auralgen.tasks.base import Task

MAX_PLAN_ITEMS = 10_000_000  # items one run may plan (a typo such as items_per_level=1e12 is refused)


@dataclass(frozen=True)
class ItemSpec:
    task: str
    split: str
    index: int
    level: int
    k: int = 0  # position of the item within its level
    target: str | None = None  # the dealt answer text (None: the level is not dealt, see generation.answers)


@dataclass(frozen=True)
class ShardPlan:
    path: str
    task: str
    split: str
    items: tuple[ItemSpec, ...]


def _task_key(run: RunConfig, name: str) -> str:
    """The config key of task ``name`` as the user wrote it: ``task`` for a one-task run, else ``tasks.<name>``."""
    return "task" if len(run.tasks) == 1 and run.suite == name else f"tasks.{name}"


def plan(run: RunConfig, tasks: dict[str, Task]) -> list[ShardPlan]:
    """Every item of the run, grouped into shards of at most ``run.shard_size`` items."""
    shards = []
    for name, task in tasks.items():
        for split in run.splits:
            targets, _ = deal(task, run.seed, split, run.splits)
            specs, index = [], 0
            for level in range(task.n_levels()):
                for k in range(task.items_at(level)):
                    specs.append(ItemSpec(name, split, index, level, k, targets[index]))
                    index += 1
            n = max(1, math.ceil(len(specs) / run.shard_size))
            for i in range(n):
                chunk = tuple(specs[i * run.shard_size : (i + 1) * run.shard_size])
                shards.append(ShardPlan(shard_name(name, split, i, n), name, split, chunk))
    return shards


def check_capacity(run: RunConfig, tasks: dict[str, Task]) -> None:
    """Refuse, before any rendering, a plan whose items cannot all find a parameter tuple of their split."""
    for name, task in tasks.items():
        problem = task.capacity_error(run.splits, _task_key(run, name))
        if problem:
            raise ParameterError(problem)


def count_items(run: RunConfig, tasks: dict[str, Task]) -> int:
    """Items the plan will hold, counted without building it; refuses more than :data:`MAX_PLAN_ITEMS`."""
    total = 0
    for name, task in tasks.items():
        n = sum(task.items_at(level) for level in range(task.n_levels())) * len(run.splits)
        total += n
        if total > MAX_PLAN_ITEMS:
            per = task.cfg.items_per_level
            raise ParameterError(
                f"{_task_key(run, name)}.items_per_level={per} makes a plan of {total:.4g} items ({task.n_levels()} levels x {len(run.splits)} splits); allowed: at most {MAX_PLAN_ITEMS} items per run"
            )
    return total


def item_id(fp: str, seed: int, spec: ItemSpec) -> str:
    """Opaque id: a hash of the run's config fingerprint ``fp`` and the item's coordinates. It carries
    no parameter value or answer, differs between configs (e.g. the same item at 16 and 48 kHz), and
    with a secret seed cannot be recomputed from the public files."""
    return hashlib.sha256(f"{fp}/{seed}/{spec.split}/{spec.task}/{spec.index}".encode()).hexdigest()[:20]
