"""Balanced answer texts: the plan deals every item the option text that is to be its answer.

Within a task and split, at each level, every option text that can be correct there (the task's
``design.expected_answers``, :mod:`auralgen.tasks.design`) is dealt equally often (+-1); the spare
items of a level go to the texts dealt least so far, so over the task and split the texts that share
levels stay within one of each other too. The order within a level is a seeded permutation: the deal
depends on ``(seed, split, task)`` only, never on the worker count. The item factory then redraws
``sample`` until the item's answer text is the dealt one (:func:`draw_rng` gives each draw its own stream).

Where a level's option texts vary from item to item (sound names), the design lists the texts that can
be the answer there and a group of each (``design.answer_texts``: the unordered pair of an ordered pair
text, the side of a relation): the spare items then go to the groups dealt least at that level first,
so groups and texts both stay within one. A level is not dealt (its items keep whatever answer
``sample`` gives) when its texts vary and the design lists none (a recorded corpus's classes), or when
its answer does not change between draws (fixed by the item's grid cell, e.g. the audiogram's cells):
:func:`level_texts` finds both by probing.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError
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
    groups: tuple[str, ...] | None = None  # the group of each text (None: every text its own group)


def draw_rng(seed: int, split: str, task: str, index: int, draw: int) -> np.random.Generator:
    """The generator of draw ``draw`` of an item: an accepted item's bytes depend on its
    coordinates and the number of its draw only.

    Parameters
    ----------
    seed : int
        The run's seed.
    split : str
        The split name.
    task : str
        The task name.
    index : int
        The item's index within its task and split.
    draw : int
        The draw number, 0 for the first.

    Returns
    -------
    numpy.random.Generator
        :func:`~auralgen.core.random.item_rng` of the item on stream ``DRAW_STREAM + draw``.
    """
    return item_rng(seed, split, task, index, stream=DRAW_STREAM + int(draw))


def level_texts(task: Task, seed: int, split: str, splits: tuple[str, ...], level: int) -> LevelTexts:
    """The option texts that can be the answer at ``level`` (sorted), found from :data:`PROBES` draws.

    Parameters
    ----------
    task : Task
        The task, configured.
    seed : int
        The run's seed.
    split : str
        The split name.
    splits : tuple of str
        Every split of the run (a draw's parameter tuple must be owned by ``split``).
    level : int
        The level index.

    Returns
    -------
    LevelTexts
        The texts to deal at the level, or None as ``texts`` with the reason it is not dealt.

    Raises
    ------
    ParameterError
        When a probe's answer is not among the texts the design's ``answer_texts`` lists.
    """
    answers, option_sets = [], set()
    for j in range(PROBES):
        rng = item_rng(seed, split, task.name, level, stream=PROBE_STREAM + j)
        params = task.design.draw(task.sample, rng, level, 0, split, splits)
        qa = task.qa(params, rng, slot=0)
        answers.append(qa.answer)
        option_sets.add(frozenset(qa.options))
    if len(option_sets) > 1:
        return _listed_texts(task, level, answers)
    options = sorted(next(iter(option_sets)))
    texts = tuple(sorted(task.design.expected_answers(task.design.level_value(level), options)))
    if len(texts) > 1 and len(set(answers)) == 1:
        return LevelTexts(level, None, "the answer does not change between draws (fixed by the item's grid cell)")
    return LevelTexts(level, texts)


def _listed_texts(task: Task, level: int, answers: list[str]) -> LevelTexts:
    """The texts the design's ``answer_texts`` lists for a level whose option texts vary (checked against
    the probes' answers), or a level that is not dealt."""
    listed = task.design.answer_texts(level)
    if listed is None:
        return LevelTexts(level, None, "option texts vary from item to item")
    missing = sorted(set(answers) - set(listed))
    if missing:
        raise ParameterError(
            f"task {task.name} level {level}: answers {missing!r} are not among its answer_texts; allowed: "
            f"{sorted(listed)!r}"
        )
    texts = tuple(sorted(listed))
    return LevelTexts(level, texts, groups=tuple(listed[t] for t in texts))


@dataclass(frozen=True)
class Deal:
    """The dealt answer texts of a task in one split, held per level (no per-item Python object).

    ``starts[level]`` is the plan index of the level's first item; ``codes[level]`` the index into
    ``levels[level].texts`` of each of its items' dealt text (None: the level is not dealt).
    """

    levels: tuple[LevelTexts, ...]
    starts: tuple[int, ...]
    codes: tuple[np.ndarray | None, ...]
    n_items: int

    def level_of(self, index: int) -> int:
        """The level of plan index ``index`` (a level with no items is skipped).

        Parameters
        ----------
        index : int
            The item's index within its task and split, in ``0 .. n_items - 1``.

        Returns
        -------
        int
            The level index.
        """
        return bisect_right(self.starts, index) - 1

    def target(self, level: int, index: int) -> str | None:
        """The dealt text of the item at plan ``index`` of ``level`` (None: not dealt).

        Parameters
        ----------
        level : int
            The item's level (:meth:`level_of` of ``index``).
        index : int
            The item's index within its task and split.

        Returns
        -------
        str or None
            The answer text the item must have, or None when the level is not dealt.
        """
        codes = self.codes[level]
        return None if codes is None else self.levels[level].texts[codes[index - self.starts[level]]]

    def targets(self) -> list[str | None]:
        """Every item's dealt text, in plan order.

        Returns
        -------
        list of str or None
            ``n_items`` entries; None for the items of a level that is not dealt.
        """
        out: list[str | None] = []
        for lt, codes, n in zip(self.levels, self.codes, self.sizes()):
            out += [None] * n if codes is None else [lt.texts[c] for c in codes.tolist()]
        return out

    def sizes(self) -> list[int]:
        """Items per level.

        Returns
        -------
        list of int
            One count per level, in level order.
        """
        return [b - a for a, b in zip(self.starts, (*self.starts[1:], self.n_items))]


def _spares(texts, groups, order: list[int], extra: int, totals: Counter[str]) -> list[int]:
    """``extra`` distinct texts (indices) for a level's spare items: one at a time, a text of the group
    holding fewest spares so far, among them the text dealt least over the task, ties in ``order``."""
    if groups is None:
        return sorted(order, key=lambda i: totals[texts[i]])[:extra]  # stable: ties keep the seeded order
    held: Counter[str] = Counter()
    left, out = list(order), []
    for _ in range(extra):
        best = min(left, key=lambda i: (held[groups[i]], totals[texts[i]]))  # min keeps the first of ties
        out.append(best)
        left.remove(best)
        held[groups[best]] += 1
    return out


def _level_codes(
    texts: tuple[str, ...],
    n: int,
    rng: np.random.Generator,
    totals: Counter[str],
    groups: tuple[str, ...] | None = None,
) -> np.ndarray:
    """The seeded deal of ``n`` items over ``texts`` (indices into ``texts``): each text ``n // len``
    times, the spare items to the texts dealt least so far (``totals``, updated; with ``groups``, to
    the groups given fewest spares at this level first), then permuted."""
    tie_order = rng.permutation(len(texts))
    base, extra = divmod(n, len(texts))
    spare = _spares(texts, groups, tie_order.tolist(), extra, totals)
    seq = np.concatenate([np.repeat(np.arange(len(texts)), base), np.asarray(spare, dtype=np.intp)])
    codes = seq[rng.permutation(n)]
    totals.update({t: base for t in texts})
    totals.update(texts[i] for i in spare)
    return codes


def dealt(task: Task, seed: int, split: str, splits: tuple[str, ...]) -> Deal:
    """The :class:`Deal` of ``task`` in ``split``: work per level, not per item.

    Parameters
    ----------
    task, seed, split, splits : Task, int, str, tuple of str
        As in :func:`level_texts`.

    Returns
    -------
    Deal
        Every level's texts and the seeded deal of its items.
    """
    totals: Counter[str] = Counter()
    found, starts, codes, at = [], [], [], 0
    for level in range(task.design.n_levels()):
        n = task.design.items_at(level)
        lt = level_texts(task, seed, split, splits, level)
        found.append(lt)
        starts.append(at)
        at += n
        if lt.texts is None:
            codes.append(None)
            continue
        rng = item_rng(seed, split, task.name, level, stream=DEAL_STREAM)
        codes.append(_level_codes(lt.texts, n, rng, totals, lt.groups))
    return Deal(tuple(found), tuple(starts), tuple(codes), at)


def deal(task: Task, seed: int, split: str, splits: tuple[str, ...]) -> tuple[list[str | None], list[LevelTexts]]:
    """The dealt answer text of every item of ``task`` in ``split``, in plan order (None: not dealt),
    and each level's :class:`LevelTexts`.

    Parameters
    ----------
    task, seed, split, splits : Task, int, str, tuple of str
        As in :func:`dealt`, whose :class:`Deal` this unpacks.

    Returns
    -------
    targets : list of str or None
        :meth:`Deal.targets`.
    levels : list of LevelTexts
        One per level.
    """
    d = dealt(task, seed, split, splits)
    return d.targets(), list(d.levels)
