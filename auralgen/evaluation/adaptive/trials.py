"""One adaptive trial: an item made at a level value, asked, parsed and recorded.

:func:`make_trial_item` composes the steps of :func:`auralgen.generation.item.make_row` from the
task's public methods, at a :class:`~auralgen.tasks.base.Level` off the grid (``index=None``):
sample, render, measure (redrawn while the measurement does not support the label), QA, FLAC.
Every draw comes from ``item_rng(seed, "adaptive:<track>", task, trial)``, so trial ``i`` of a
track at value ``v`` is the same item on every run. Adaptive items belong to no split (their
parameter tuples are not kept disjoint from a dataset's).

:class:`TrialAsker` asks a model one trial: its option order rotated by the trial index
(rotation ``trial % n_options``), its clips written as WAV, the reply parsed with
:func:`~auralgen.evaluation.parsing.extract_choice`. :func:`trial_record` is the line of
``trials.jsonl``: everything needed to audit the item and to replay the run without a model, its
``outcome`` (:func:`trial_outcome`: only ``correct``/``wrong`` answers reach the posterior) and the
tokens the server reported for it (``usage``, None for a model that reports none).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from auralgen.core.errors import ParameterError, Redraw
from auralgen.core.qa import answer_slot
from auralgen.core.random import item_rng
from auralgen.generation.item import item_columns
from auralgen.tasks.base import Level, Task

from ..adapters import ModelError, strip_answer
from ..items import Item, clip_wavs
from ..parsing import extract_choice
from ..prompts import Presentation, build_message, present
from ..verdict import is_correct

__all__ = [
    "TrialAsker",
    "TrialItem",
    "make_trial_item",
    "read_trials",
    "trial_outcome",
    "trial_presentation",
    "trial_record",
]


@dataclass(frozen=True)
class TrialItem:
    """The item of one trial with what it was made from (``params``, ``measured``)."""

    item: Item
    params: dict
    measured: dict


def trial_split(track: str) -> str:
    """The ``split`` key of a track's random streams (never a dataset split name).

    Parameters
    ----------
    track : str
        The track's name: the task's, or e.g. ``audiogram@1000Hz`` for one of a task's several tracks.

    Returns
    -------
    str
        ``"adaptive:<track>"``.
    """
    return f"adaptive:{track}"


def make_trial_item(
    task: Task,
    value: float,
    *,
    seed: int,
    track: str,
    trial: int,
    validate: bool = True,
    max_resample: int = 8,
    flac_bits: int = 24,
) -> TrialItem:
    """The item of trial ``trial`` of ``track`` at level ``value`` (see the module docstring).

    Parameters
    ----------
    task : Task
        A configured task that samples at any value.
    value : float
        The level value asked, in the task's level unit.
    seed : int
        The run's seed.
    track : str
        The track's name (:func:`trial_split`).
    trial : int
        The question's index in its track.
    validate : bool, optional
        Measure each draw and redraw until the measurement supports the label.
    max_resample : int, optional
        Redraws allowed after the first draw.
    flac_bits : int, optional
        Bit depth of the FLAC clips (16 or 24).

    Returns
    -------
    TrialItem
        The item (id ``<track>-<seed>-<trial>``, level -1), its ``params`` and ``measured``.

    Raises
    ------
    ParameterError
        When no draw of ``max_resample + 1`` has a measurement supporting its label.
    """
    split = trial_split(track)
    rng = item_rng(seed, split, task.name, trial)
    params, clips, measured = _valid_draw(task, rng, value, trial, validate=validate, max_resample=max_resample)
    qa = task.qa(params, rng, slot=answer_slot(seed, split, task.name, trial, task.n_choices))
    return TrialItem(
        _trial_row(task, f"{track}-{seed}-{trial:04d}", value, split, params, clips, qa, flac_bits), params, measured
    )


def _valid_draw(task: Task, rng, value: float, trial: int, *, validate: bool, max_resample: int):
    """``(params, clips, measured)`` of the first draw at ``value`` that renders and (``validate``) measures
    as labelled; a :class:`ParameterError` when none of ``max_resample + 1`` does."""
    level = Level(None, float(value))
    for _ in range(max_resample + 1):
        params = task.sample(rng, level)
        try:
            clips = task.render(params)
        except Redraw:
            continue
        measured = task.check(params, clips) if validate else {}
        if not validate or measured["valid"]:
            return params, clips, measured
    raise ParameterError(
        f"task {task.name} at {value:g} {task.level_unit} (trial {trial}): no draw of {max_resample + 1} passed "
        "its measurement; allowed: a value inside the task's domain where items render as labelled"
    )


def _trial_row(task: Task, item_id: str, value: float, split: str, params: dict, clips, qa, flac_bits: int) -> Item:
    """The evaluation :class:`Item` of a trial's draw (level -1: off the grid)."""
    columns = item_columns(task, qa, params, clips, flac_bits=flac_bits, paths=None)
    columns["audio"] = tuple(columns["audio"])
    return Item(
        id=item_id,
        task=task.name,
        attribute=task.attribute,
        regime=task.regime,
        level=-1,
        level_value=float(value),
        level_unit=task.level_unit,
        options=tuple(qa.options),
        params=json.dumps(params),
        split=split,
        **columns,
    )


def trial_presentation(item: Item, trial: int) -> Presentation:
    """How trial ``trial`` shows ``item``: its options rotated by ``trial % n_options``.

    Parameters
    ----------
    item : Item
        The trial's item.
    trial : int
        The question's index in its track (as for :func:`make_trial_item`).

    Returns
    -------
    Presentation
        The rotated options and the presented index of the answer.
    """
    return present(item, trial % len(item.options))


class TrialAsker:
    """Asks ``adapter`` the item of each trial; WAV files under ``<out>/audio`` (removed by :meth:`close`
    unless ``keep_audio``)."""

    def __init__(self, adapter, out: str | Path, *, instruction: str = "", keep_audio: bool = False):
        self.adapter, self.out = adapter, Path(out)
        self.instruction, self.keep_audio = instruction, keep_audio

    def ask(self, item: Item, p: Presentation) -> tuple[str | None, str | None, dict | None]:
        """``(reply, error, usage)``: the model's reply, or None and why there is none; the tokens the
        server reported for it (:meth:`~auralgen.evaluation.adapters.base.Adapter.take_usage`; None if none).

        Parameters
        ----------
        item : Item
            The trial's item; its clips are written as WAV under ``<out>/audio``.
        p : Presentation
            How the item is shown (:func:`trial_presentation`).

        Returns
        -------
        reply : str or None
            The model's reply text; None when there is none.
        error : str or None
            Why there is no reply (a :class:`~auralgen.evaluation.adapters.base.ModelError`'s text).
        usage : dict or None
            The tokens the server reported for this question.
        """
        paths = clip_wavs(item, self.out / "audio")
        msg = strip_answer(build_message(item, p, paths, instruction=self.instruction))
        try:
            reply = asyncio.run(self.adapter.agenerate(msg))
        except ModelError as exc:
            return None, str(exc), self.adapter.take_usage()
        if not isinstance(reply, str):
            return None, f"adapter returned {type(reply).__name__}; allowed: str", self.adapter.take_usage()
        return reply, None, self.adapter.take_usage()

    def close(self) -> None:
        """Remove ``<out>/audio`` unless ``keep_audio``."""
        if not self.keep_audio:
            shutil.rmtree(self.out / "audio", ignore_errors=True)


def trial_outcome(error: str | None, parsed, correct: bool) -> str:
    """``"correct"`` or ``"wrong"`` (by ``correct``, the verdict) for an answer (a reply naming one
    option); ``"error"`` when the model gave no reply (an error, a refusal by error, a timeout);
    ``"unanswered"`` when its reply names no single option (unparseable, a refusal in words, several
    options). Only answers reach the posterior.

    Parameters
    ----------
    error : str or None
        Why the model gave no reply, or None.
    parsed : ParseResult or None
        The reply read by :func:`~auralgen.evaluation.parsing.extract_choice`; None without a reply.
    correct : bool
        The verdict of the reply.

    Returns
    -------
    str
        ``correct``, ``wrong``, ``error`` or ``unanswered``.
    """
    if error is not None or parsed is None:
        return "error"
    if parsed.status != "ok":
        return "unanswered"
    return "correct" if correct else "wrong"


def trial_record(
    track: str,
    trial: int,
    made: TrialItem,
    p: Presentation,
    reply: str | None,
    error: str | None,
    *,
    usage: dict | None = None,
) -> dict:
    """The ``trials.jsonl`` line of one asked trial: ``outcome`` (:func:`trial_outcome`) and ``correct``
    (False unless the reply names the right option).

    Parameters
    ----------
    track, trial : str, int
        The track and the question's index in it, as for :func:`make_trial_item`.
    made : TrialItem
        The trial's item and what it was made from.
    p : Presentation
        How the item was shown.
    reply : str or None
        The model's reply; None when there is none.
    error : str or None
        Why there is no reply, or None.
    usage : dict or None, optional
        The tokens the server reported for the question.

    Returns
    -------
    dict
        The record: the item's recipe, measurements and clip hashes, the presentation, ``reply``,
        ``parsed``, ``correct``, ``outcome`` and ``usage``.
    """
    parsed = extract_choice(reply, p.options) if reply is not None else None
    record = {
        "track": track,
        "trial": trial,
        **_item_fields(made),
        "rotation": p.rotation,
        "presented": p.options,
        "truth": p.truth,
        "reply": reply,
        "error": error,
        "parsed": None if parsed is None else {"status": parsed.status, "index": parsed.index},
        "correct": is_correct(parsed, p.truth),
        "outcome": None,
        "usage": usage,
    }
    record["outcome"] = trial_outcome(error, parsed, record["correct"])
    return record


def _item_fields(made: TrialItem) -> dict:
    """What a trial record holds of its item: enough to regenerate and audit it."""
    item = made.item
    return {
        "id": item.id,
        "task": item.task,
        "level_value": item.level_value,
        "level_unit": item.level_unit,
        "params": made.params,
        "measured": made.measured,
        "audio_sha256": [hashlib.sha256(c).hexdigest() for c in item.clips],
        "question": item.question,
        "options": list(item.options),
        "answer_index": item.answer_index,
    }


def read_trials(path: str | Path, *, cut_partial: bool = False) -> dict[tuple[str, int], dict]:
    """The records of a ``trials.jsonl`` by ``(track, trial)`` (a later line replaces an earlier one).

    Parameters
    ----------
    path : str or Path
        The ``trials.jsonl`` of a run.
    cut_partial : bool, optional
        Cut a last line without its newline (the process was killed while writing it) off the file,
        so the run can continue from the complete lines.

    Returns
    -------
    dict of (str, int) to dict
        ``(track, trial)`` to its record.

    Raises
    ------
    ParameterError
        The file does not exist, or a line is not a trial record.
    """
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"replay: {str(path)!r} does not exist; allowed: the trials.jsonl of an earlier run")
    data = path.read_bytes()
    if cut_partial and data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with path.open("r+b") as f:
            f.truncate(len(data))
    out = {}
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        try:
            rec = json.loads(line)
            out[(rec["track"], int(rec["trial"]))] = rec
        except (ValueError, KeyError, TypeError) as exc:
            raise ParameterError(f"{str(path)!r} line {n} is not a trial record ({exc}); allowed: JSON lines") from None
    return out
