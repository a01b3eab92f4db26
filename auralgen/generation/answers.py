"""Balanced answer texts: the plan deals every item the option text that is to be its answer.

Within a task and split, at each level, every option text that can be correct there
(:meth:`Task.expected_answers`) is dealt equally often (+-1); the spare items of a level go to the
texts dealt least so far, so over the task and split the texts that share levels stay within one
of each other too. The order within a level is a seeded permutation: the deal depends on
``(seed, split, task)`` only, never on the worker count. The item factory then redraws ``sample``
until the item's answer text is the dealt one (:func:`draw_rng` gives each draw its own stream).

A level is not dealt (its items keep whatever answer ``sample`` gives) when its option texts vary
from item to item (e.g. sound names) or when its answer does not change between draws (fixed by
the item's grid cell, e.g. the audiogram's cells): :func:`level_texts` finds both by probing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from auralgen.core.random import item_rng
from auralgen.tasks.base import Task

PROBES = 12  # draws per level that find the level's answer texts (2 texts: P(false "fixed") = 2**-11)
PROBE_STREAM = 11  # item_rng stream of the probes (keyed by the level, not by an item)
DEAL_STREAM = 13  # item_rng stream of a level's deal (keyed by the level)
DRAW_STREAM = 1 << 16  # item_rng stream of an item's draw d is DRAW_STREAM + d


@dataclass(frozen=True)
class LevelTexts:
    """The answer texts dealt at one level (``texts``), or why the level is not dealt (``reason``)."""

    level: int
    texts: tuple[str, ...] | None
    reason: str = ""


def draw_rng(seed: int, split: str, task: str, index: int, draw: int) -> np.random.Generator:
    """The generator of draw ``draw`` of an item: an accepted item's bytes depend on its
    coordinates and the number of its draw only."""
    return item_rng(seed, split, task, index, stream=DRAW_STREAM + int(draw))


def level_texts(task: Task, seed: int, split: str, splits: tuple[str, ...], level: int) -> LevelTexts:
    """The option texts that can be the answer at ``level`` (sorted), found from :data:`PROBES` draws."""
    answers, option_sets = [], set()
    for j in range(PROBES):
        rng = item_rng(seed, split, task.name, level, stream=PROBE_STREAM + j)
        params = task.sample_owned(rng, level, 0, split, splits)
        qa = task.qa(params, rng, slot=0)
        answers.append(qa.answer)
        option_sets.add(frozenset(qa.options))
        if len(option_sets) > 1:
            return LevelTexts(level, None, "option texts vary from item to item")
    options = sorted(next(iter(option_sets)))
    texts = tuple(sorted(task.expected_answers(task.level_value(level), options)))
    if len(texts) > 1 and len(set(answers)) == 1:
        return LevelTexts(level, None, "the answer does not change between draws (fixed by the item's grid cell)")
    return LevelTexts(level, texts)


def deal(task: Task, seed: int, split: str, splits: tuple[str, ...]) -> tuple[list[str | None], list[LevelTexts]]:
    """The dealt answer text of every item of ``task`` in ``split``, in plan order (None: not dealt),
    and each level's :class:`LevelTexts`."""
    totals: Counter[str] = Counter()
    targets: list[str | None] = []
    found = []
    for level in range(task.n_levels()):
        n = task.items_at(level)
        lt = level_texts(task, seed, split, splits, level)
        found.append(lt)
        if lt.texts is None:
            targets += [None] * n
            continue
        rng = item_rng(seed, split, task.name, level, stream=DEAL_STREAM)
        tie_order = [lt.texts[i] for i in rng.permutation(len(lt.texts))]
        base, extra = divmod(n, len(lt.texts))
        spare = sorted(tie_order, key=lambda t: totals[t])[:extra]  # stable: ties keep the seeded order
        seq = [t for t in lt.texts for _ in range(base)] + spare
        seq = [seq[i] for i in rng.permutation(n)]
        totals.update(seq)
        targets += seq
    return targets, found
