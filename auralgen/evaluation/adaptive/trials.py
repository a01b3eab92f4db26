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
from auralgen.export.audio import encode_flac
from auralgen.tasks.base import Level, Task

from ..adapters import ModelError, strip_answer
from ..items import Item, clip_wavs
from ..parsing import extract_choice
from ..prompts import Presentation, build_message, present
from ..verdict import is_correct

__all__ = [
    "TrialAsker", "TrialItem", "make_trial_item", "read_trials", "trial_outcome", "trial_presentation", "trial_record",
]  # fmt: skip


@dataclass(frozen=True)
class TrialItem:
    """The item of one trial with what it was made from (``params``, ``measured``)."""

    item: Item
    params: dict
    measured: dict


def trial_split(track: str) -> str:
    """The ``split`` key of a track's random streams (never a dataset split name)."""
    return f"adaptive:{track}"


def make_trial_item(task: Task, value: float, *, seed: int, track: str, trial: int, validate: bool = True,
                    max_resample: int = 8, flac_bits: int = 24) -> TrialItem:  # fmt: skip
    """The item of trial ``trial`` of ``track`` at level ``value`` (see the module docstring).

    Raises
    ------
    ParameterError
        When no draw of ``max_resample + 1`` has a measurement supporting its label.
    """
    split = trial_split(track)
    rng = item_rng(seed, split, task.name, trial)
    level = Level(None, float(value))
    for _ in range(max_resample + 1):
        params = task.sample(rng, level)
        try:
            clips = task.render(params)
        except Redraw:
            continue
        measured = task.check(params, clips) if validate else {}
        if not validate or measured["valid"]:
            break
    else:
        raise ParameterError(
            f"task {task.name} at {value:g} {task.level_unit} (trial {trial}): no draw of {max_resample + 1} passed "
            "its measurement; allowed: a value inside the task's domain where items render as labelled"
        )
    qa = task.qa(params, rng, slot=answer_slot(seed, split, task.name, trial, task.n_choices))
    sr = int(params.get("sample_rate_hz", task.sample_rate))
    item = Item(
        id=f"{track}-{seed}-{trial:04d}", task=task.name, category=task.category, sub_category=task.sub_category,
        attribute=task.attribute, regime=task.regime, level=-1, level_value=float(value), level_unit=task.level_unit,
        question=qa.question, options=tuple(qa.options), answer=qa.options[qa.answer_index],
        answer_index=qa.answer_index, audio=tuple({"bytes": encode_flac(c, sr, bits=flac_bits), "path": None}
                                                  for c in clips), sampling_rate=sr,
        num_channels=int(clips[0].shape[0]), channel_layout=task.channel_layout(params), params=json.dumps(params),
        split=split,
    )  # fmt: skip
    return TrialItem(item, params, measured)


def trial_presentation(item: Item, trial: int) -> Presentation:
    """How trial ``trial`` shows ``item``: its options rotated by ``trial % n_options``."""
    return present(item, trial % len(item.options))


class TrialAsker:
    """Asks ``adapter`` the item of each trial; WAV files under ``<out>/audio`` (removed by :meth:`close`
    unless ``keep_audio``)."""

    def __init__(self, adapter, out: str | Path, *, instruction: str = "", keep_audio: bool = False):
        self.adapter, self.out = adapter, Path(out)
        self.instruction, self.keep_audio = instruction, keep_audio

    def ask(self, item: Item, p: Presentation) -> tuple[str | None, str | None, dict | None]:
        """``(reply, error, usage)``: the model's reply, or None and why there is none; the tokens the
        server reported for it (:meth:`~auralgen.evaluation.adapters.base.Adapter.take_usage`; None if none)."""
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
        if not self.keep_audio:
            shutil.rmtree(self.out / "audio", ignore_errors=True)


def trial_outcome(error: str | None, parsed, correct: bool) -> str:
    """``"correct"`` or ``"wrong"`` (by ``correct``, the verdict) for an answer (a reply naming one
    option); ``"error"`` when the model gave no reply (an error, a refusal by error, a timeout);
    ``"unanswered"`` when its reply names no single option (unparseable, a refusal in words, several
    options). Only answers reach the posterior."""
    if error is not None or parsed is None:
        return "error"
    if parsed.status != "ok":
        return "unanswered"
    return "correct" if correct else "wrong"


def trial_record(track: str, trial: int, made: TrialItem, p: Presentation, reply: str | None,
                 error: str | None, *, usage: dict | None = None) -> dict:  # fmt: skip
    """The ``trials.jsonl`` line of one asked trial: ``outcome`` (:func:`trial_outcome`) and ``correct``
    (False unless the reply names the right option)."""
    item = made.item
    parsed = extract_choice(reply, p.options) if reply is not None else None
    record = {
        "track": track, "trial": trial, "id": item.id, "task": item.task, "level_value": item.level_value,
        "level_unit": item.level_unit, "params": made.params, "measured": made.measured,
        "audio_sha256": [hashlib.sha256(c).hexdigest() for c in item.clips], "question": item.question,
        "options": list(item.options), "answer_index": item.answer_index, "rotation": p.rotation,
        "presented": p.options, "truth": p.truth, "reply": reply, "error": error,
        "parsed": None if parsed is None else {"status": parsed.status, "index": parsed.index},
        "correct": is_correct(parsed, p.truth), "outcome": None, "usage": usage,
    }  # fmt: skip
    record["outcome"] = trial_outcome(error, parsed, record["correct"])
    return record


def read_trials(path: str | Path, *, cut_partial: bool = False) -> dict[tuple[str, int], dict]:
    """The records of a ``trials.jsonl`` by ``(track, trial)`` (a later line replaces an earlier one).

    ``cut_partial``: a last line without its newline (the process was killed while writing it) is cut
    off the file, so the run can continue from the complete lines."""
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
