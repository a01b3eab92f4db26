"""Questions and answers: option lists with balanced answer positions.

The item stores its options in a *canonical* order chosen here: the correct option
sits at a slot assigned by the pipeline so that, within a task and split, no option
position holds the answer more than one item above uniform. Every option can be the
answer of some item (there is no "Unable to determine" option: it was never correct, so it
only lowered the real chance below the stated one). Rotating the options is the
evaluator's job, not the generator's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng

SLOT_STREAM = 7  # independent RNG stream used only for slot assignment


@dataclass(frozen=True)
class QA:
    """An item's question, its options in canonical order and the index of the correct one."""

    question: str
    options: tuple[str, ...]
    answer_index: int

    @property
    def answer(self) -> str:
        """The correct option's text."""
        return self.options[self.answer_index]


def answer_slot(seed: int, split: str, task: str, index: int, n_choices: int) -> int:
    """Slot (0-based) of the correct option for item ``index``.

    Items come in blocks of ``n_choices``; each block uses every slot exactly once,
    in an order drawn from the block's own stream. So over any prefix of items, each
    slot's count differs from uniform by at most one.

    Parameters
    ----------
    seed : int
        The run's seed.
    split : str
        The split name, e.g. ``"test"``.
    task : str
        The task name.
    index : int
        The item's index within its task and split.
    n_choices : int
        The number of options, >= 1.

    Returns
    -------
    int
        The answer's slot, in ``0 .. n_choices - 1``.

    Raises
    ------
    ParameterError
        When ``n_choices < 1``.
    """
    if n_choices < 1:
        raise ParameterError(f"n_choices={n_choices} is too small; allowed: >= 1")
    block, pos = divmod(int(index), n_choices)
    perm = item_rng(seed, split, task, block, stream=SLOT_STREAM).permutation(n_choices)
    return int(perm[pos])


def arrange(answer: str, distractors: Sequence[str], *, slot: int, rng: np.random.Generator):
    """Options with ``answer`` at ``slot``, distractors shuffled around it.

    Parameters
    ----------
    answer : str
        The correct option's text.
    distractors : sequence of str
        The wrong options' texts, distinct from each other and from ``answer``.
    slot : int
        Where the answer goes, in ``0 .. len(distractors)`` (usually :func:`answer_slot`).
    rng : numpy.random.Generator
        Draws the distractors' order (one permutation).

    Returns
    -------
    options : tuple of str
        ``len(distractors) + 1`` option texts.
    answer_index : int
        Index of ``answer`` in ``options`` (equal to ``slot``).

    Raises
    ------
    ParameterError
        When ``slot`` is out of range or an option text repeats.
    """
    n = len(distractors) + 1
    if not 0 <= slot < n:
        raise ParameterError(f"slot={slot} is out of range; allowed: 0..{n - 1}")
    if answer in distractors or len(set(distractors)) != len(distractors):
        raise ParameterError(f"options {[answer, *distractors]!r} repeat; allowed: distinct option texts")
    others = [distractors[i] for i in rng.permutation(len(distractors))]
    options = others[:slot] + [answer] + others[slot:]
    return tuple(options), slot


def pick_question(templates: Sequence[str], phrasings, rng: np.random.Generator, **fields) -> str:
    """One phrasing from ``templates`` (restricted to indices ``phrasings`` if given), filled with ``fields``.

    Parameters
    ----------
    templates : sequence of str
        Question templates in :meth:`str.format` syntax.
    phrasings : sequence of int or None
        Indices into ``templates`` allowed (None: all).
    rng : numpy.random.Generator
        Draws the phrasing (one integer).
    **fields
        The values the template's placeholders name.

    Returns
    -------
    str
        The question text.
    """
    allowed = list(range(len(templates))) if phrasings is None else list(phrasings)
    return templates[allowed[int(rng.integers(len(allowed)))]].format(**fields)
