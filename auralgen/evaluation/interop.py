"""Interoperability with the STAR-Bench toolkit and MMAR/MMAU-style files.

Scoring external predictions (``action=score_predictions``)
-----------------------------------------------------------
``starbench``  the toolkit's ``infer_results.jsonl``: one line per run with ``id``, ``task``,
               ``category``, ``sub-category``, ``options`` (as presented), ``answer`` (text),
               ``rotate_id`` and the raw ``model_response``. The response is parsed again
               with :func:`~auralgen.evaluation.parsing.extract_choice` (the toolkit's own
               ``prediction`` is ignored).
``mmar`` / ``mmau``  a JSON list or JSONL of items with ``id``, ``choices``, ``answer`` (text)
               and a prediction field (``prediction_field``; default ``answer_prediction``
               for MMAR, ``model_prediction`` for MMAU). ``task`` (else ``sub-category``,
               else ``category``) names the task; each item is one run (rotation 0).

A line that lacks a required field, or whose answer is not among its options, ends the
run with an error naming the file and line: nothing is skipped.

Exporting a split (``action=export``)
-------------------------------------
``starbench``  ``<out>/meta_info/foundation_perception_total.json`` (and ``_spatial`` /
               ``_nonspatial`` subsets) -- lists of ``{id, task, category, sub-category,
               question, options, answer, audio_paths}`` -- plus
               ``<out>/audios/<task>/<id>_<k>.wav``, paths relative to ``<out>``, which is the
               toolkit's ``dataset_root``. An item is spatial when its task says so
               (``Task.spatial``: direction, distance or motion answers).
``mmar``       ``<out>/MMAR-meta.json`` (a JSON list) and the same rows as ``<out>/meta.jsonl``:
               ``{id, audio_path, question, choices, answer, modality, category,
               sub-category, language}``, audio in ``<out>/audio/<id>.wav``. MMAR holds one
               audio per item, so an item with several clips is an error.

WAV files keep every channel (24-bit PCM).
"""

from __future__ import annotations

import json
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.tasks.base import task_class

from .config import EvalRunConfig
from .items import export_wav, load_items
from .metrics import score
from .parsing import extract_choice
from .report import accounting, frequency_tasks, write_json

DEFAULT_FIELDS = {"starbench": "model_response", "mmar": "answer_prediction", "mmau": "model_prediction"}


def read_predictions(path: str | Path) -> list[dict]:
    """Rows of a JSON list or JSONL file; errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise ParameterError(f"predictions={str(path)!r} is not a file; allowed: a JSON or JSONL prediction file")
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except ValueError as exc:
            raise ParameterError(
                f"predictions={str(path)!r} is not valid JSON ({exc}); allowed: a JSON list or JSONL"
            ) from None
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    raise ParameterError(
                        f"predictions={str(path)!r} line {n} is not JSON; allowed: one JSON object per line"
                    ) from None
    if not rows:
        raise ParameterError(f"predictions={str(path)!r} holds no prediction; allowed: at least one")
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise ParameterError(f"predictions={str(path)!r} entry {n} is {type(row).__name__}; allowed: JSON objects")
    return rows


def _need(row: dict, key: str, where: str):
    if key not in row or row[key] is None:
        raise ParameterError(
            f"{where} has no {key!r}; allowed: rows with {key!r} (set prediction_field= for the reply)"
        )
    return row[key]


def prediction_records(
    rows: list[dict], fmt: str, *, path: str = "predictions", field: str | None = None
) -> list[dict]:
    """Scoring records (see :func:`~auralgen.evaluation.metrics.score`) from prediction rows."""
    field = field or DEFAULT_FIELDS[fmt]
    records = []
    for n, row in enumerate(rows, 1):
        where = f"{path} entry {n}"
        options = list(_need(row, "options" if fmt == "starbench" else "choices", where))
        answer = _need(row, "answer", where)
        reply = _need(row, field, where)
        if answer not in options:
            raise ParameterError(f"{where}: answer={answer!r} is not among the options; allowed: one of {options!r}")
        if not isinstance(reply, str):
            raise ParameterError(f"{where}: {field}={reply!r} is not text; allowed: the model's reply as a string")
        parsed = extract_choice(reply, options)
        truth = options.index(answer)
        sub = row.get("sub-category", row.get("sub_category"))
        task = row.get("task") or sub or row.get("category") or fmt
        rec = {
            "id": str(_need(row, "id", where)),
            "task": str(task),
            "rotation": int(row.get("rotate_id", 0)) if fmt == "starbench" else 0,
            "status": parsed.status,
            "correct": parsed.status == "ok" and parsed.index == truth,
            "n_options": len(options),
        }
        if row.get("category") is not None and sub is not None:
            rec["category"], rec["sub_category"] = str(row["category"]), str(sub)
        records.append(rec)
    return records


def score_predictions_file(cfg: EvalRunConfig, *, log=print) -> dict:
    """``action=score_predictions``: score ``cfg.predictions`` into ``<out>/results.json``."""
    rows = read_predictions(cfg.predictions)
    records = prediction_records(rows, cfg.predictions_format, path=cfg.predictions, field=cfg.prediction_field)
    results = {
        "model": {"label": Path(cfg.out).name, "kind": "predictions", "config": {"file": cfg.predictions}},
        "dataset": {
            "path": cfg.predictions,
            "format": cfg.predictions_format,
            "tasks": sorted({r["task"] for r in records}),
        },
        "accounting": accounting(records),
        "scores": score(records),
        "psychometric": {},
        **{task: {} for task in frequency_tasks()},
    }
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "results.json", results)
    s = results["scores"]
    log(
        f"{len(records)} predictions: AA {100 * s['overall']['AA']:.1f} %, ACR {100 * s['overall']['ACR']:.1f} %, "
        f"{results['accounting']['overall']['unparseable']} unparseable -> {out / 'results.json'}"
    )
    return results


def export_split(cfg: EvalRunConfig, *, log=print) -> dict:
    """``action=export``: write ``cfg.split`` of ``cfg.data`` in ``cfg.export_format``'s layout."""
    items = load_items(cfg.data, split=cfg.split, tasks=cfg.tasks, max_items=cfg.max_items)
    out = Path(cfg.out)
    if cfg.export_format == "mmar":
        multi = next((it for it in items if len(it.clips) != 1), None)
        if multi is not None:
            raise ParameterError(
                f"task={multi.task!r} has {len(multi.clips)} clips per item; allowed for export_format=mmar: one clip per item"
            )
        rows = []
        for it in items:
            export_wav(it.clips[0], out / "audio" / f"{it.id}.wav")
            rows.append({
                "id": it.id, "audio_path": f"./audio/{it.id}.wav", "question": it.question, "choices": list(it.options),
                "answer": it.answer, "modality": "sound", "category": it.category, "sub-category": it.sub_category,
                "language": "en", "task": it.task,
            })  # fmt: skip
        write_json(out / "MMAR-meta.json", rows)
        (out / "meta.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        log(f"wrote {len(rows)} items in MMAR layout to {out} (MMAR-meta.json, meta.jsonl, audio/)")
        return {"items": len(rows), "format": "mmar", "out": str(out)}
    rows = []
    for it in items:
        paths = []
        for k, data in enumerate(it.clips):
            rel = f"audios/{it.task}/{it.id}_{k}.wav"
            export_wav(data, out / rel)
            paths.append(rel)
        rows.append({
            "id": it.id, "task": it.task, "category": it.category, "sub-category": it.sub_category,
            "question": it.question, "options": list(it.options), "answer": it.answer, "audio_paths": paths,
        })  # fmt: skip
    meta = out / "meta_info"
    meta.mkdir(parents=True, exist_ok=True)
    spatial = {it.id for it in items if task_class(it.task).spatial}
    write_json(meta / "foundation_perception_total.json", rows)
    write_json(meta / "foundation_perception_spatial.json", [r for r in rows if r["id"] in spatial])
    write_json(meta / "foundation_perception_nonspatial.json", [r for r in rows if r["id"] not in spatial])
    log(f"wrote {len(rows)} items in STAR-Bench layout to {out} (meta_info/, audios/)")
    return {"items": len(rows), "format": "starbench", "out": str(out)}
