"""MMAR (github ddlBoJack/MMAR, ``code/evaluation.py``) and MMAU (github Sakshi113/MMAU,
``evaluation.py``): export a split as MMAR or MMAU metadata, and score files in their format.

Export (``export_format=mmar``)
-------------------------------
``<out>/MMAR-meta.json`` (a JSON list) and the same rows as ``<out>/MMAR-meta.jsonl``:
``{id, audio_path, question, choices, answer, modality, category, sub-category, language, task}``,
audio in ``<out>/audio/<id>.wav``. ``modality`` is ``sound`` and ``category`` one of MMAR's layers
(its evaluation script counts per layer and fails on any other name): ``Signal Layer`` for the
foundational single-sound attributes, ``Perception Layer`` for spatial and spatio-temporal items;
``sub-category`` is the item's own, ``task`` the auralgen task. MMAR holds one audio per item: an
item with several clips is skipped, counted, with the reason in the log and the summary.

Export (``export_format=mmau``)
-------------------------------
``<out>/mmau-test.json``, a JSON list as MMAU's ``mmau-test-mini.json``: ``{id, audio_id, question,
choices, answer, dataset, task, split, category, sub-category, difficulty}`` plus ``auralgen_task``,
audio in ``<out>/test-audios/<id>.wav`` (``audio_id`` ``./test-audios/<id>.wav``). MMAU's script
counts per ``task`` (sound, music or speech: always ``sound``, auralgen's items are sounds) and per
``difficulty`` (easy, medium or hard: the thirds of the task's level values present in the export,
from its easiest end, :func:`difficulty_of`); ``sub-category`` is the auralgen task, ``category``
the item's own. One audio per item, as for MMAR. Add the replies as ``model_output`` (what MMAU's
current script reads) and run ``python evaluation.py --input mmau-test.json``.

Scoring (``predictions_format=mmar`` / ``mmau``)
------------------------------------------------
Rows carry ``id``, ``choices``, ``answer`` (text) and the reply. Which key holds the reply differs
between the toolkits and their versions: MMAU's README names ``model_prediction``, its current
script reads ``model_output``, MMAR's script reads ``answer_prediction``. ``prediction_field``
names it; unset, the first of ``model_prediction``, ``answer_prediction``, ``model_output`` found
in the file is used (and named in ``results.json``). ``task`` (else ``sub-category``, else
``category``) names the task; each row is one run (rotation 0).

``scorer=mmar`` scores as both scripts do: a reply is right when its word tokens (``\\w+``,
lower-cased) contain every token of the answer and none of the tokens that only wrong choices
have; rows without the reply key are left out of the count, as the scripts skip them (their number
is reported). ``scorer=parser`` (default) reads the reply with the answer parser; the other
verdicts are reported beside. A letter-only reply (``"B"``) is right under the parser and wrong
under MMAR's rule, which matches words only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError
from auralgen.tasks.base import task_class

from .common import (
    EXPORT,
    ROWS,
    SCORE,
    Predictions,
    export_clip,
    export_json,
    export_text,
    need,
    parsed_record,
    write_results,
)

FIELDS = ("model_prediction", "answer_prediction", "model_output")
DIFFICULTIES = ("easy", "medium", "hard")
LAYERS = {"foundational_perception": "Signal Layer"}  # every other category: "Perception Layer"


def layer(item) -> str:
    """The MMAR layer an item is counted under.

    Parameters
    ----------
    item : Item
        An evaluation item (its task and ``category`` decide).

    Returns
    -------
    str
        ``Signal Layer`` or ``Perception Layer``.
    """
    if task_class(item.task).spatial:
        return "Perception Layer"
    return LAYERS.get(item.category, "Perception Layer")


def one_clip(items, peer: str) -> tuple[list, dict[str, int]]:
    """The items with one clip, and the others counted by reason (MMAR and MMAU hold one audio per item).

    Parameters
    ----------
    items : iterable of Item
        The split's items (:class:`~auralgen.evaluation.items.Item`), as loaded for evaluation.
    peer : str
        The peer's name, for the reason text.

    Returns
    -------
    kept : list of Item
        The items with one clip.
    skipped : dict of str to int
        Reason to number of items skipped.
    """
    kept, skipped = [], {}
    for it in items:
        if len(it.clips) != 1:
            why = f"{it.task}: {len(it.clips)} clips per item ({peer} holds one audio per item)"
            skipped[why] = skipped.get(why, 0) + 1
        else:
            kept.append(it)
    return kept, skipped


def _clip_rows(kept, out: Path, audio: tuple[str, str], fields: Callable[[Any], dict]) -> list[dict]:
    """One row per item of ``kept``, its clip written to ``out/<folder>/<id>.wav``: ``id``, the clip's
    path under ``key`` (``audio = (folder, key)``), ``question``, ``choices``, ``answer``, then ``fields(item)``."""
    folder, key = audio
    rows = []
    for it in kept:
        export_clip(it.clips[0], out, f"{folder}/{it.id}.wav")
        path = f"./{folder}/{it.id}.wav"
        rows.append({"id": it.id, key: path, "question": it.question, "choices": list(it.options), "answer": it.answer})
        rows[-1].update(fields(it))
    return rows


@sections(EXPORT, also="")
def export(items, out: Path, log) -> dict:
    """Write the one-clip items of ``items`` in MMAR's layout; items with several clips are skipped and counted."""
    kept, skipped = one_clip(items, "MMAR")
    rows = _clip_rows(
        kept,
        out,
        ("audio", "audio_path"),
        lambda it: {
            "modality": "sound",
            "category": layer(it),
            "sub-category": it.sub_category,
            "language": "en",
            "task": it.task,
        },
    )
    out.mkdir(parents=True, exist_ok=True)
    export_json(out, "MMAR-meta.json", rows)
    export_text(out, "MMAR-meta.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    log(
        f"wrote {len(rows)} items in MMAR layout to {out} (MMAR-meta.json, MMAR-meta.jsonl, audio/)"
        + "".join(f"; skipped {n} ({why})" for why, n in skipped.items())
    )
    return {"items": len(rows), "format": "mmar", "out": str(out), "skipped": skipped}


def difficulty_of(items) -> dict[str, str]:
    """``easy`` / ``medium`` / ``hard`` per item id: each task's distinct level values, ordered from
    the easier end (the task's :func:`~auralgen.evaluation.adaptive.domain.easier_end`; larger when it
    states none), split in thirds (value at rank ``k`` of ``n``: ``DIFFICULTIES[3 * k // n]``).

    Parameters
    ----------
    items : iterable of Item
        Items with ``id``, ``task`` and ``level_value``.

    Returns
    -------
    dict of str to str
        Item id to ``easy``, ``medium`` or ``hard``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> its = [SimpleNamespace(id=str(v), task="pitch_relative", level_value=v) for v in (0, 25, 50, 100, 200, 400)]
    >>> list(difficulty_of(its).values())
    ['hard', 'hard', 'medium', 'medium', 'easy', 'easy']
    """
    from ..adaptive.domain import easier_end

    values: dict[str, set[float]] = {}
    for it in items:
        values.setdefault(it.task, set()).add(float(it.level_value))
    rank = {}
    for task, vs in values.items():
        order = sorted(vs, reverse=easier_end(task_class(task)) != "smaller")
        rank[task] = {v: DIFFICULTIES[3 * k // len(order)] for k, v in enumerate(order)}
    return {it.id: rank[it.task][float(it.level_value)] for it in items}


@sections(EXPORT, also=", ``difficulty`` (items per third)")
def export_mmau(items, out: Path, log) -> dict:
    """Write the one-clip items of ``items`` as MMAU's test file (see the module docstring)."""
    kept, skipped = one_clip(items, "MMAU")
    difficulty = difficulty_of(kept)
    rows = _clip_rows(
        kept,
        out,
        ("test-audios", "audio_id"),
        lambda it: {
            "dataset": "auralgen",
            "task": "sound",
            "split": it.split,
            "category": it.category,
            "sub-category": it.task,
            "difficulty": difficulty[it.id],
            "auralgen_task": it.task,
        },
    )
    export_json(out, "mmau-test.json", rows)
    by = {d: sum(r["difficulty"] == d for r in rows) for d in DIFFICULTIES}
    log(
        f"wrote {len(rows)} items in MMAU layout to {out} (mmau-test.json, test-audios/; "
        + ", ".join(f"{d} {n}" for d, n in by.items())
        + ")"
        + "".join(f"; skipped {n} ({why})" for why, n in skipped.items())
    )
    return {"items": len(rows), "format": "mmau", "out": str(out), "difficulty": by, "skipped": skipped}


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"\b\w+\b", text.lower()))


def token_match(answer: str, reply: str, choices: list[str]) -> bool:
    """MMAR's / MMAU's string-match verdict (see the module docstring).

    Parameters
    ----------
    answer : str
        The right choice's text.
    reply : str
        The model's reply.
    choices : list of str
        Every choice's text.

    Returns
    -------
    bool
        Whether the reply's tokens hold every answer token and no token only wrong choices have.
    """
    said, right = _tokens(reply), _tokens(answer)
    if not said:
        return False
    wrong = set().union(*(_tokens(c) - right for c in choices if _tokens(c) != right))
    return right <= said and not (said & wrong)


def pick_field(rows: list[dict], field: str | None, path: str) -> str:
    """The key that holds the replies: ``field``, else the first of :data:`FIELDS` the file has.

    Parameters
    ----------
    rows : list of dict
        The file's rows (:func:`~auralgen.evaluation.interop.common.read_predictions`).
    field : str or None
        ``prediction_field=`` (None: look for :data:`FIELDS`).
    path : str
        The file, named in the error.

    Returns
    -------
    str
        The reply's key.

    Raises
    ------
    ParameterError
        ``field`` is unset and no row has any of :data:`FIELDS`.
    """
    if field:
        return field
    found = next((f for f in FIELDS if any(f in r for r in rows)), None)
    if found is None:
        raise ParameterError(
            f"{path} has none of {', '.join(FIELDS)}; allowed: one of them, or prediction_field=<the reply's key>"
        )
    return found


def records(rows: list[dict], fmt: str, path: str, field: str, *, skip_missing: bool = False):
    """``(records read by the parser, token-match verdicts, rows left out for lacking the reply)``.

    Parameters
    ----------
    rows : list of dict
        The file's rows (:func:`~auralgen.evaluation.interop.common.read_predictions`).
    fmt : str
        ``mmar`` or ``mmau``, the task name of last resort.
    path : str
        The file, named in errors.
    field : str
        The row key holding the reply.
    skip_missing : bool, optional
        Leave out rows without ``field`` (as MMAR's and MMAU's scripts do) instead of refusing them.

    Returns
    -------
    records : list of dict
        One scoring record per row kept.
    toolkit : list of bool
        The token-match verdict per record.
    left_out : int
        Rows left out for lacking ``field``.

    Raises
    ------
    ParameterError
        A row lacks a field, or its answer is not among its choices.
    """
    recs, toolkit, left_out = [], [], 0
    for n, row in enumerate(rows, 1):
        where = f"{path} entry {n}"
        if skip_missing and field not in row:
            left_out += 1  # the scripts skip a row without the reply key
            continue
        options = list(need(row, "choices", where))
        answer = need(row, "answer", where)
        if answer not in options:
            raise ParameterError(f"{where}: answer={answer!r} is not among the options; allowed: one of {options!r}")
        sub = row.get("sub-category", row.get("sub_category"))
        task = row.get("auralgen_task") or row.get("task") or sub or row.get("category") or fmt
        rec = parsed_record(
            item_id=need(row, "id", where),
            task=task,
            rotation=0,
            options=options,
            truth=options.index(answer),
            reply=need(row, field, where),
            where=where,
            field=field,
        )
        if row.get("category") is not None and sub is not None:
            rec["category"], rec["sub_category"] = str(row["category"]), str(sub)
        recs.append(rec)
        toolkit.append(token_match(answer, row[field], options))
    return recs, toolkit, left_out


@sections(SCORE, rows=ROWS)
def score_file(job: Predictions, rows: list[dict], log) -> dict:
    """``action=score_predictions`` for an MMAR / MMAU prediction file."""
    field = pick_field(rows, job.field, job.path)
    if job.scorer == "file":
        raise ParameterError(
            f"scorer=file with predictions_format={job.format}; allowed: parser or mmar "
            "(MMAR/MMAU files record no verdict)"
        )
    recs, toolkit, left_out = records(rows, job.format, job.path, field, skip_missing=job.scorer == "mmar")
    if not recs:
        raise ParameterError(f"{job.path}: no row has {field!r}; allowed: rows with the model's reply")
    extra = {"prediction_field": field, "rows_without_reply": left_out}
    return write_results(job, recs, toolkit=toolkit, extra=extra, log=log)
