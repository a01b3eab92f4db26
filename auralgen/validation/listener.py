"""The reference DSP listener's entry point: answer an item of any task from its audio alone.

Each task binds its own listener (``Task.listener``, a function of :mod:`auralgen.listeners`);
:func:`answer` looks the task up and calls it, :func:`listener_accuracy` scores it over a
dataset. The listener sees what a model sees -- the question, the option texts, the decoded
clips and the row's ``channel_layout`` -- never ``params``. Its accuracy per difficulty level
is the dataset's *physical-solvability curve*.

Examples
--------
>>> sr = 16000; t = np.arange(int(0.5 * sr)) / sr
>>> clip = np.zeros((1, 2 * sr), np.float32)
>>> clip[0, 1600:1600 + t.size] = 0.1 * np.sin(2 * np.pi * 440 * t)
>>> clip[0, 16000:16000 + t.size] = 0.1 * np.sin(2 * np.pi * 470 * t)
>>> answer("pitch_relative", "", ["Lower", "The same", "Higher"], [clip], sr)
2
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.listeners.common import no_answer, option_index  # noqa: F401  (re-exported)
from auralgen.listeners.tones import JND, duration_bins  # noqa: F401  (re-exported)
from auralgen.tasks.base import TASKS, task_class
from auralgen.validation.read import iter_decoded

Listener = Callable[..., int]


def listener_of(task: str) -> Listener | None:
    """The listener task ``task`` binds (``None``: the task declares none, or is unknown).

    Parameters
    ----------
    task : str
        The task name (anything else gives None).

    Returns
    -------
    callable or None
        ``listener(question, options, clips, sample_rate[, layout=])`` returning an option index.
    """
    if not isinstance(task, str) or task not in TASKS:
        return None
    return task_class(task).listener


class _Listeners(Mapping[str, Listener]):
    """Read-only view ``task name -> listener`` of the tasks that bind one (``name in LISTENERS``)."""

    def __getitem__(self, task: str) -> Listener:
        fn = listener_of(task)
        if fn is None:
            raise KeyError(task)
        return fn

    def __contains__(self, task: object) -> bool:
        return isinstance(task, str) and listener_of(task) is not None

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in TASKS.names() if listener_of(name) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)


LISTENERS: Mapping[str, Listener] = _Listeners()


def answer(
    task: str,
    question: str,
    options: Sequence[str],
    clips: Sequence[np.ndarray],
    sample_rate: int,
    *,
    layout: str | None = None,
) -> int:
    """Index into ``options`` of the listener's answer to one item.

    Parameters
    ----------
    task : str
        Task name; its class's ``listener`` answers.
    question : str
        The question text (the mixture and multi-source listeners read which sub-question it asks).
    options : sequence of str
        The option texts as stored (canonical order).
    clips : sequence of np.ndarray [shape=(channels, samples)]
        Decoded audio.
    sample_rate : int > 0
        In Hz.
    layout : str, optional
        The row's ``channel_layout`` (``binaural``, ``foa_acn_sn3d``, ``tetra``, ...); spatial
        listeners infer it from the channels when it is not given.

    Returns
    -------
    int
        The chosen option; ``-1`` (:data:`auralgen.listeners.common.NO_ANSWER`, scored wrong) when
        nothing can be measured.

    Raises
    ------
    ParameterError
        When the task binds no listener or ``options`` is empty.
    """
    fn = listener_of(task)
    if fn is None:
        raise ParameterError(f"task={task!r} has no listener; allowed: {', '.join(sorted(LISTENERS))}")
    if not options:
        raise ParameterError("options=[] is empty; allowed: at least one option")
    extra = {"layout": layout} if "layout" in inspect.signature(fn).parameters else {}
    return int(fn(question, list(options), list(clips), int(sample_rate), **extra))


def listener_accuracy(dataset_dir) -> dict[tuple[str, int], dict[str, Any]]:
    """Listener accuracy per ``(task, level)`` over every item of an exported dataset.

    Parameters
    ----------
    dataset_dir : str or os.PathLike
        An exported dataset directory.

    Returns
    -------
    dict
        ``{(task, level): {"level_value", "level_unit", "n", "correct", "accuracy"}}``;
        tasks without a listener are left out.
    """
    acc: dict[tuple[str, int], dict[str, Any]] = defaultdict(lambda: {"n": 0, "correct": 0})
    for item in iter_decoded(dataset_dir):
        row = item.row
        if row["task"] not in LISTENERS or item.clips is None:
            continue
        rec = acc[(row["task"], row["level"])]
        rec.update(level_value=row["level_value"], level_unit=row["level_unit"])
        rec["n"] += 1
        got = answer(
            row["task"], row["question"], row["options"], item.clips, item.sample_rate, layout=row.get("channel_layout")
        )
        rec["correct"] += int(got == row["answer_index"])
    return {k: {**v, "accuracy": v["correct"] / v["n"]} for k, v in sorted(acc.items())}
