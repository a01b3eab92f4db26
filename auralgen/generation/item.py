"""The item factory: one item from its coordinates — sample, render, measure, QA, encode, :class:`Row`.

:func:`make_row` is the whole life of an item and holds no state; :class:`Renderer` keeps a run's
task objects in a worker process and calls it for each :class:`~auralgen.generation.plan.ItemSpec`.
Draw ``d`` of an item comes from its own stream (:func:`auralgen.generation.answers.draw_rng`, keyed
by ``(seed, split, task, index, d)``): sample, then QA. An item is drawn again until its answer
text is the one the plan dealt it and its measurement supports the label, so its bytes depend on
its coordinates and the number of its accepted draw only.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from auralgen import __version__
from auralgen.config import RunConfig, build_tasks, id_key
from auralgen.core.errors import AuralgenError, ParameterError, Redraw
from auralgen.core.qa import QA, answer_slot
from auralgen.core.schema import Row
from auralgen.export.audio import encode_flac
from auralgen.generation.answers import draw_rng
from auralgen.generation.plan import ItemSpec, item_id
from auralgen.tasks.base import Task

MAX_ANSWER_DRAWS = 256  # draws of one item allowed to miss its dealt answer text
SECRET_SEED_COLUMN = -1  # the ``seed`` column of a secret-seed run


@dataclass(frozen=True)
class ItemResult:
    """What one item produced: its :class:`Row` (``None`` when dropped), its stats for the
    validation report and the seconds it took."""

    row: Row | None
    stat: dict[str, Any]
    seconds: float

    def to_wire(self) -> dict[str, Any]:
        """The plain dict a worker sends back: ``{"row": record or None, "stat": ..., "seconds": ...}``.

        Returns
        -------
        dict of str to object
            ``row`` as :meth:`Row.to_record` (None when dropped), ``stat`` and ``seconds`` as held.
        """
        return {"row": None if self.row is None else self.row.to_record(), "stat": self.stat, "seconds": self.seconds}


def worst_error(measured: dict[str, Any]) -> float:
    """Largest |measured - expected| over a check's records (0 if it has none).

    Parameters
    ----------
    measured : dict of str to object
        The item's check records; those with a numeric ``measured`` and an ``expected`` count.

    Returns
    -------
    float
        The largest absolute error, in each record's own unit (cents, dB, seconds, ...), so only
        comparable within one task.
    """
    worst = 0.0
    for rec in measured.values():
        if isinstance(rec, dict) and isinstance(rec.get("measured"), (int, float)) and "expected" in rec:
            worst = max(worst, abs(rec["measured"] - rec["expected"]))
    return worst


@dataclass(frozen=True)
class Draw:
    """The accepted (or last) draw of one item: its ``params``, rendered ``clips`` (None when a check
    asked for a redraw), ``measured`` check records and ``qa``; ``resampled`` draws before it had a
    measurement that contradicted the label, ``redraws`` counts them by failed check; ``reason`` says
    why the item is dropped, or is None."""

    params: dict[str, Any]
    clips: list[np.ndarray] | None
    measured: dict[str, Any]
    qa: QA
    resampled: int
    redraws: dict[str, int]
    reason: str | None = None


def _miss_error(task: Task, spec: ItemSpec) -> ParameterError:
    value, unit = task.design.level_value(spec.level), task.design.level_info(spec.level).unit
    return ParameterError(
        f"task {spec.task} level {spec.level} ({value:g} {unit}) "
        f"split {spec.split}: no draw in {MAX_ANSWER_DRAWS} gave the dealt answer {spec.target!r}; allowed: a sampler "
        "that gives every text expected_answers lists at that level"
    )


def _draw_valid(task: Task, spec: ItemSpec, splits, *, seed: int, validate: bool, max_resample: int) -> Draw:
    """Draw until the answer text is the dealt one (:attr:`ItemSpec.target`; at most
    :data:`MAX_ANSWER_DRAWS` misses), then render and measure; an item whose measurement does not
    support its label is drawn again (at most ``max_resample`` times). Draw ``d`` uses its own stream
    (:func:`~auralgen.generation.answers.draw_rng`): ``sample`` then ``qa`` (render draws nothing).

    Returns the :class:`Draw`; its ``redraws`` count the failed checks (:func:`failed_checks`; a draw may
    fail several); its ``reason`` says why the item is dropped, or is None."""
    splits = tuple(splits or (spec.split,))  # default: the item's split alone
    slot = answer_slot(seed, spec.split, spec.task, spec.index, task.n_choices)
    redraws: dict[str, int] = {}
    resampled, misses, draw = 0, 0, 0
    while True:
        rng = draw_rng(seed, spec.split, spec.task, spec.index, draw)
        draw += 1
        params = task.design.draw(task.sample, rng, spec.level, spec.k, spec.split, splits)
        qa = task.qa(params, rng, slot=slot)
        if spec.target is not None and qa.answer != spec.target:
            misses += 1
            if misses >= MAX_ANSWER_DRAWS:
                raise _miss_error(task, spec)
            continue
        try:
            clips = task.render(params)
            measured = task.check(params, clips) if validate else {}
        except Redraw as exc:
            clips, measured = None, {exc.check: {"ok": False, "why": str(exc)}, "valid": False}
        except Exception as exc:
            try:
                exc.source_files = source_files_of(params)  # named by ItemError: the file is what to look at
            except AttributeError:
                pass
            raise
        if clips is not None and (not validate or measured["valid"]):
            return Draw(params, clips, measured, qa, resampled, redraws)
        if resampled == max_resample:
            reason = "label not supported by measurement: " + json.dumps(
                {k: v for k, v in measured.items() if k != "valid"}, sort_keys=True
            )
            return Draw(params, clips, measured, qa, resampled, redraws, reason)
        resampled += 1
        for name in failed_checks(measured):
            redraws[name] = redraws.get(name, 0) + 1


def source_files_of(params: Any) -> list[str]:
    """The source files an item's ``params`` name (a recording's ``file``, a ``sources_dir`` file's
    name), in order, each once.

    Parameters
    ----------
    params : object
        An item's ``params``, nested dicts and lists.

    Returns
    -------
    list of str
        The files in the order found: a recording's ``file`` (when it carries a ``sha256``) as written,
        a ``{"kind": "file", "path": ...}`` entry's base name.

    Examples
    --------
    >>> source_files_of({"a": {"file": "dog/1.wav", "sha256": "ab"}, "b": [{"kind": "file", "path": "/x/y.wav"}]})
    ['dog/1.wav', 'y.wav']
    """
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            if v.get("kind") == "file" and isinstance(v.get("path"), str):
                found.append(Path(v["path"]).name)
            elif isinstance(v.get("file"), str) and "sha256" in v:
                found.append(v["file"])
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(params)
    return list(dict.fromkeys(found))


def failed_checks(measured: dict) -> list[str]:
    """Names of the checks of a ``measured`` record that failed: entries (or lists of entries) whose
    ``ok`` is false; else the record's ``note`` (why nothing could be measured), or ``"valid"``.

    Parameters
    ----------
    measured : dict
        An item's check records, with its ``valid`` verdict.

    Returns
    -------
    list of str
        The failed checks' names, sorted; never empty.

    Examples
    --------
    >>> failed_checks({"pitch": {"ok": True}, "level": [{"ok": True}, {"ok": False}], "valid": False})
    ['level']
    >>> failed_checks({"sounds": [None], "valid": False, "note": "no onset found"})
    ['unmeasurable (no onset found)']
    """

    def bad(v) -> bool:
        if isinstance(v, dict):
            return v.get("ok") is False
        return isinstance(v, list) and any(bad(x) for x in v)

    names = sorted(k for k, v in measured.items() if k != "valid" and bad(v))
    if names:
        return names
    return [f"unmeasurable ({measured['note']})"] if measured.get("note") else ["valid"]


def item_columns(
    task: Task, qa: QA, params: dict, clips: list, *, flac_bits: int, paths: list | None, fixed_size: bool = True
) -> dict[str, Any]:
    """The columns a generated row and an adaptive trial's item fill in the same way.

    Parameters
    ----------
    task : Task
        The task that drew the item; its names and channel layout are copied.
    qa : QA
        The item's question, options and answer.
    params : dict
        The drawn parameters; ``sample_rate_hz`` (if present) is the clips' rate, else the task's.
    clips : list of numpy.ndarray
        The rendered clips, each ``(channels, samples)``.
    flac_bits : int
        Bits per FLAC sample (16 or 24).
    paths : list of (str or None) or None
        The file name recorded beside each clip's bytes; None records none for any clip.
    fixed_size : bool, optional
        Pad each FLAC file to its size bound (see :func:`~auralgen.export.audio.encode_flac`).

    Returns
    -------
    dict
        ``category``, ``sub_category``, ``question``, ``answer``, ``answer_index``, ``audio`` (a list of
        ``{"bytes", "path"}``), ``sampling_rate``, ``num_channels`` and ``channel_layout``.
    """
    sr = int(params.get("sample_rate_hz", task.sample_rate))
    paths = paths or [None] * len(clips)
    return {
        "category": task.category,
        "sub_category": task.sub_category,
        "question": qa.question,
        "answer": qa.answer,
        "answer_index": qa.answer_index,
        "audio": [
            {"bytes": encode_flac(c, sr, bits=flac_bits, fixed_size=fixed_size), "path": path}
            for c, path in zip(clips, paths, strict=True)
        ],
        "sampling_rate": sr,
        "num_channels": int(clips[0].shape[0]),
        "channel_layout": task.channel_layout(params),
    }


def _row(
    task: Task,
    spec: ItemSpec,
    drawn: Draw,
    *,
    seed: int,
    validate: bool,
    flac_bits: int,
    fp: str,
    seed_secret: bool,
    fixed_size: bool = True,
) -> Row:
    """The :class:`Row` of an accepted draw: its QA, FLAC-encoded clips, params and measurements."""
    params, clips, measured, qa = drawn.params, drawn.clips, drawn.measured, drawn.qa
    attribute, regime, unit = task.design.level_info(spec.level)
    iid = item_id(fp, seed, spec)
    paths = [f"{iid}-{k}.flac" for k in range(len(clips))]
    return Row(
        id=iid,
        task=spec.task,
        attribute=attribute,
        regime=regime,
        level=spec.level,
        level_value=task.design.level_value(spec.level),
        level_unit=unit,
        options=list(qa.options),
        params=json.dumps(params, sort_keys=True),
        measured=json.dumps(measured, sort_keys=True),
        valid=bool(measured.get("valid", True)) if validate else True,
        seed=SECRET_SEED_COLUMN if seed_secret else seed,
        split=spec.split,
        generator_version=__version__,
        **item_columns(task, qa, params, clips, flac_bits=flac_bits, paths=paths, fixed_size=fixed_size),
    )


def _stat(task: Task, spec: ItemSpec, drawn: Draw) -> dict[str, Any]:
    """An item's record for the validation report: its coordinates, redraws, drop reason and worst error."""
    return {
        "task": spec.task,
        "split": spec.split,
        "level": spec.level,
        "level_value": task.design.level_value(spec.level),
        "resampled": drawn.resampled,
        "redraws": drawn.redraws,
        "dropped": drawn.reason,
        "worst_error": worst_error(drawn.measured) if drawn.measured else 0.0,
    }


def make_row(
    task: Task,
    spec: ItemSpec,
    *,
    seed: int,
    splits: tuple[str, ...] | None = None,
    validate: bool = True,
    max_resample: int = 8,
    flac_bits: int = 24,
    fp: str = "",
    seed_secret: bool = False,
    fixed_size: bool = True,
) -> ItemResult:
    """Make the item ``spec`` of ``task``: draw, render, measure, ask and encode it.

    Parameters
    ----------
    task : Task
        The item's task, configured.
    spec : ItemSpec
        The item's coordinates and dealt answer text (ParameterError if no draw in :data:`MAX_ANSWER_DRAWS` has it).
    seed : int
        The run's seed.
    splits : tuple of str, optional
        The run's splits; the parameters are owned by ``spec.split`` among them (default: that split alone).
    validate : bool, optional
        Measure the label; an item whose measurement does not support it is drawn again.
    max_resample : int, optional
        Redraws allowed for a failed measurement before the item is dropped.
    flac_bits : int, optional
        FLAC bit depth of the clips (16 or 24).
    fp : str, optional
        The task's :func:`~auralgen.config.id_key`, which keys the item's id.
    seed_secret : bool, optional
        Write :data:`SECRET_SEED_COLUMN` as the row's seed.
    fixed_size : bool, optional
        Pad each FLAC to a size set by its length and channels alone (:func:`~auralgen.export.audio.encode_flac`).

    Returns
    -------
    ItemResult
        The row (None when dropped), the item's stats and the seconds it took.
    """
    t0 = time.perf_counter()
    drawn = _draw_valid(task, spec, splits, seed=seed, validate=validate, max_resample=max_resample)
    stat = _stat(task, spec, drawn)
    if drawn.reason is not None:
        return ItemResult(None, stat, time.perf_counter() - t0)
    row = _row(
        task,
        spec,
        drawn,
        seed=seed,
        validate=validate,
        flac_bits=flac_bits,
        fp=fp,
        seed_secret=seed_secret,
        fixed_size=fixed_size,
    )
    return ItemResult(row, stat, time.perf_counter() - t0)


class Renderer:
    """Renders the items of one run; lives in each worker process (it holds the run's task objects)."""

    def __init__(self, run: RunConfig):
        self.run = run
        self.tasks = build_tasks(run)
        self.id_keys = {tc.name: id_key(run, tc) for tc in run.tasks}  # one per task: ids never span tasks

    def __call__(self, spec: ItemSpec) -> dict[str, Any]:
        """The item ``spec`` as :meth:`ItemResult.to_wire` (what the shard writer reads)."""
        run = self.run
        return make_row(
            self.tasks[spec.task],
            spec,
            seed=run.seed,
            splits=run.splits,
            validate=run.validate,
            max_resample=run.max_resample,
            flac_bits=run.export.flac_bits,
            fp=self.id_keys[spec.task],
            seed_secret=run.seed_secret,
            fixed_size=run.export.fixed_size,
        ).to_wire()


class ItemError(Exception):
    """An item failed while rendering: names the item (task, split, index, level) and the cause.

    ``bad_input`` tells a user's bad input (an :class:`AuralgenError`, exit code 2) from an internal
    error (exit code 1); ``trace`` holds the worker's traceback for the error log.
    """

    def __init__(self, task: str, split: str, index: int, level: int, cause: str, bad_input: bool, trace: str = ""):
        super().__init__(task, split, index, level, cause, bad_input, trace)
        self.task, self.split, self.index, self.level = task, split, index, level
        self.cause, self.bad_input, self.trace = cause, bad_input, trace

    @classmethod
    def of(cls, spec: ItemSpec, exc: BaseException) -> ItemError:
        """The error of item ``spec`` caused by ``exc``.

        Parameters
        ----------
        spec : ItemSpec
            The item that failed: its task, split, index and level become the error's coordinates.
        exc : BaseException
            What the item raised. A ``source_files`` attribute on it names the recordings being
            rendered, which the cause then quotes unless the message names them already.

        Returns
        -------
        ItemError
            The cause on one line (prefixed by the exception type unless it is an
            :class:`~auralgen.core.errors.AuralgenError`) with the worker's traceback.
        """
        text = " ".join(str(exc).split()) or type(exc).__name__
        cause = text if isinstance(exc, AuralgenError) else f"{type(exc).__name__}: {text}"
        files = getattr(exc, "source_files", None)
        if files and not any(f in cause for f in files):
            cause += f" (rendering source file {', '.join(repr(f) for f in files)})"
        trace = "".join(traceback.format_exception(exc))
        return cls(spec.task, spec.split, spec.index, spec.level, cause, isinstance(exc, AuralgenError), trace)

    def __str__(self) -> str:
        where = f"task={self.task} split={self.split} index={self.index} (level {self.level})"
        kind = "" if self.bad_input else "internal error "
        return f"item {where} failed: {kind}{self.cause}"
