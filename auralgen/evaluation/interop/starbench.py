"""STAR-Bench (github InternLM/StarBench, ``ALMEval_code``): export a split its ``build_dataset``
loads, and score its ``infer_results.jsonl`` as its ``evaluate`` does.

Export layout (``<out>`` is the toolkit's ``--dataset_root``)
-------------------------------------------------------------
Each item goes to the file STAR-Bench would put it in (the toolkit's aliases in brackets):

``meta_info/foundation_perception.json`` (``pc``)
    every foundational item: single-attribute perception, absolute or relative;
``meta_info/foundation_perception_spatial.json`` / ``_nonspatial.json`` (``pc_sp`` / ``pc_nsp``)
    the same items split by ``Task.spatial`` (a direction, distance or motion answer);
``meta_info/holistic_reasoning_temporal.json`` (``tr``, ``tr_cap``, ``tr_uncut``)
    reorder items (three clips, options clip orders): ``audio_paths`` in chronological order and
    the options written ``"clip 2 -> clip 1 -> clip 3"``, as the toolkit expects: it shuffles the
    clips itself (``_perm_by_roundrobin`` over 3 runs) and recomputes the answer. The id ends
    ``_OSM_<crc32 of the item id>``: the toolkit reads its round-robin offset from it, so run ``r``
    shows the chronological segments in the order ``permutations((1, 2, 3))[(crc32(id) + r) % 6]``
    (:func:`clip_order`), whatever else is exported. ``uncut_audio_path`` is the
    clips joined in order; ``global_caption`` is neutral (auralgen has no scene captions, so
    ``tr_cap`` adds no information). WAV names keep the item's stored (shuffled) clip index.
``meta_info/holistic_reasoning_spatial.json`` (``sr``, ``sr_ch``)
    spatial items of the ``spatiotemporal_reasoning`` category (multi-source relations,
    trajectories); audio in ``starbench_audios/holistic_reasoning/spatial/<id>.wav`` and, for
    two-channel clips, the ``_split/<id>_left.wav`` / ``_right.wav`` files ``sr_ch`` reads.

Rows are ``{id, task, category, sub-category, question, options, answer, audio_paths}`` with
options in canonical order: the toolkit rotates them (``options[-r:] + options[:-r]``).

Scoring (``predictions_format=starbench``)
------------------------------------------
Each line of ``infer_results.jsonl`` is one run: presented ``options``, ``answer`` text,
``rotate_id``, ``model_response`` and the toolkit's own ``is_correct`` (a response the toolkit
wrote as ``"ERROR: ..."``, a failed generation, counts as an error). The rotation is stored as
the file gives it: auralgen's rotation ``r`` presents what STAR-Bench's ``rotate_id = r``
presents, options and clip orders alike. ``scorer=file`` scores the file's ``is_correct``; ``scorer=parser``
(default) reads ``model_response`` again. Either way the other verdicts are reported beside, and
``<out>/performance.json`` is written exactly as the toolkit's ``evaluate`` writes it for the
file's alias (the parent directory's name, as the toolkit lays results out; otherwise ``tr`` when
rows carry ``shuffled_seg_order``, else ``pc``): ``pc*`` macro-average over sub-categories,
``tr``/``sr`` pool the runs.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError
from auralgen.core.paths import inside
from auralgen.export.audio import decode_flac
from auralgen.tasks.base import task_class

from ..items import write_wav
from ..prompts import is_reorder, reorder_clip_order
from ..verdict import is_correct
from .common import EXPORT, ROWS, SCORE, Predictions, export_clip, export_json, need, parsed_record, write_results

FILES = {
    "pc": "foundation_perception.json",
    "pc_sp": "foundation_perception_spatial.json",
    "pc_nsp": "foundation_perception_nonspatial.json",
    "tr": "holistic_reasoning_temporal.json",
    "sr": "holistic_reasoning_spatial.json",
}
ALIASES = {
    "pc": "pc",
    "pc_sp": "pc",
    "pc_nsp": "pc",
    "tr": "tr",
    "tr_cap": "tr",
    "tr_uncut": "tr",
    "sr": "sr",
    "sr_ch": "sr",
}
TR_SUBTASK = "OSM"  # the toolkit's first SUB_TASKS entry: it adds 0 to the round-robin offset
SPATIAL_AUDIO = "starbench_audios/holistic_reasoning/spatial"
CAPTION = "One continuous sound, cut into three equal segments."


def place(item) -> str:
    """Which meta_info file (by its alias) ``item`` belongs in.

    Parameters
    ----------
    item : Item
        An evaluation item (whether it is a reorder item, its task and ``category`` decide).

    Returns
    -------
    str
        ``tr`` (reorder), ``sr`` (spatio-temporal reasoning), ``pc_sp`` or ``pc_nsp``.
    """
    if is_reorder(item):
        return "tr"
    spatial = task_class(item.task).spatial
    if item.category == "spatiotemporal_reasoning" and spatial:
        return "sr"
    return "pc_sp" if spatial else "pc_nsp"


def _row(it, options, answer, paths) -> dict:
    return {
        "id": it.id,
        "task": it.task,
        "category": it.category,
        "sub-category": it.sub_category,
        "question": it.question,
        "options": list(options),
        "answer": answer,
        "audio_paths": paths,
    }


def _clip_order(option: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", option)]


def clip_order(item_id: str, chronological: list[int], r: int) -> list[int]:
    """The item's clips (stored numbers, 1-based) in the order the toolkit shows them in run ``r``:
    ``chronological`` (the stored numbers in the order they happened) permuted as the toolkit does,
    which is auralgen's own evaluator's order (:func:`~auralgen.evaluation.prompts.reorder_clip_order`).

    Parameters
    ----------
    item_id : str
        The item's id (seeds the round-robin offset).
    chronological : list of int
        The stored clip numbers (1-based) in the order the sounds happened.
    r : int
        The run (rotation) index.

    Returns
    -------
    list of int
        The stored clip numbers in the order shown.
    """
    return reorder_clip_order(item_id, chronological, r)


def _temporal_row(it, out: Path) -> dict:
    """A reorder item as the toolkit's temporal row: clips in chronological order, clip-order options."""
    chrono = _clip_order(it.answer)  # stored clip numbers in the order they happened
    pos = {c: j + 1 for j, c in enumerate(chrono)}
    options = [" -> ".join(f"clip {pos[c]}" for c in _clip_order(o)) for o in it.options]
    paths = []
    for c in chrono:
        rel = f"audios/{it.task}/{it.id}_{c - 1}.wav"
        export_clip(it.clips[c - 1], out, rel)
        paths.append(rel)
    decoded = [decode_flac(it.clips[c - 1]) for c in chrono]
    uncut = f"audios/{it.task}/{it.id}_uncut.wav"
    write_wav(inside(out, uncut), np.concatenate([x for x, _ in decoded], axis=1), decoded[0][1], new=True)
    row = _row(it, options, " -> ".join(f"clip {j}" for j in (1, 2, 3)), paths)
    row.update(id=f"{it.id}_{TR_SUBTASK}_{zlib.crc32(it.id.encode())}", uncut_audio_path=uncut, global_caption=CAPTION)
    return row


def _spatial_row(it, out: Path) -> tuple[dict, bool]:
    """A holistic spatial row, and whether its channel-split files were written (one stereo clip only)."""
    paths = []
    for k, data in enumerate(it.clips):
        paths.append(f"{SPATIAL_AUDIO}/{it.id}.wav" if len(it.clips) == 1 else f"{SPATIAL_AUDIO}/{it.id}_{k}.wav")
        export_clip(data, out, paths[-1])
    x, sr = decode_flac(it.clips[0])
    if len(it.clips) != 1 or x.shape[0] != 2:
        return _row(it, it.options, it.answer, paths), False
    for side, ch in (("left", 0), ("right", 1)):
        write_wav(inside(out, f"{SPATIAL_AUDIO}_split/{it.id}_{side}.wav"), x[ch : ch + 1], sr, new=True)
    return _row(it, it.options, it.answer, paths), True


@sections(EXPORT, also=", ``files`` (rows per alias), ``sr_ch_split``")
def export(items, out: Path, log) -> dict:
    """Write ``items`` in the toolkit's layout under ``out`` (see the module docstring)."""
    rows: dict[str, list] = {k: [] for k in ("pc_sp", "pc_nsp", "tr", "sr")}
    skipped: dict[str, int] = {}
    split_files = 0
    for it in items:
        where = place(it)
        if where == "tr" and len(it.clips) != 3:
            why = f"{it.task}: {len(it.clips)} clips (STAR-Bench temporal items hold 3)"
            skipped[why] = skipped.get(why, 0) + 1
        elif where == "tr":
            rows["tr"].append(_temporal_row(it, out))
        elif where == "sr":
            row, split = _spatial_row(it, out)
            rows["sr"].append(row)
            split_files += split
        else:
            paths = []
            for k, data in enumerate(it.clips):
                paths.append(f"audios/{it.task}/{it.id}_{k}.wav")
                export_clip(data, out, paths[-1])
            rows[where].append(_row(it, it.options, it.answer, paths))
    meta = out / "meta_info"
    meta.mkdir(parents=True, exist_ok=True)
    files = {"pc": rows["pc_sp"] + rows["pc_nsp"], **rows}
    for alias, name in FILES.items():
        export_json(out, f"meta_info/{name}", files[alias])
    counts = {alias: len(files[alias]) for alias in FILES}
    log(
        f"wrote {sum(len(v) for v in rows.values())} items in STAR-Bench layout to {out} (meta_info/: "
        + ", ".join(f"{a} {n}" for a, n in counts.items())
        + f"; sr_ch split files for {split_files} of {counts['sr']})"
        + "".join(f"; skipped {n} ({why})" for why, n in skipped.items())
    )
    return {
        "items": sum(counts[a] for a in ("pc", "tr", "sr")),
        "format": "starbench",
        "out": str(out),
        "files": counts,
        "sr_ch_split": split_files,
        "skipped": skipped,
    }


# --------------------------------------------------------------------------- scoring


def alias_of(path: str, rows: list[dict]) -> tuple[str, str]:
    """``(alias, how it was found)`` of an ``infer_results.jsonl``.

    Parameters
    ----------
    path : str
        The file; its parent folder's name is the alias when it is one.
    rows : list of dict
        The file's rows.

    Returns
    -------
    tuple of (str, str)
        The alias (a key of :data:`ALIASES`) and how it was found.
    """
    parent = Path(path).parent.name.lower()
    if parent in ALIASES:
        return parent, "directory name"
    if any("shuffled_seg_order" in r for r in rows):
        return "tr", "rows carry shuffled_seg_order"
    return "pc", "default (directory name is no alias)"


def records(rows: list[dict], path: str, field: str | None) -> tuple[list[dict], list[bool]]:
    """Scoring records read by the parser, and the file's own ``is_correct`` per row.

    Parameters
    ----------
    rows : list of dict
        The file's rows (:func:`~auralgen.evaluation.interop.common.read_predictions`).
    path : str
        The file, named in errors.
    field : str or None
        The row key holding the reply (None: ``model_response``).

    Returns
    -------
    records : list of dict
        One scoring record per row (a response ``"ERROR: ..."`` is an error).
    toolkit : list of bool or None
        The row's ``is_correct``, None where the row has none.

    Raises
    ------
    ParameterError
        A row lacks a field, or its answer is not among its options.
    """
    field = field or "model_response"
    recs, toolkit = [], []
    for n, row in enumerate(rows, 1):
        where = f"{path} entry {n}"
        options = list(need(row, "options", where))
        answer = need(row, "answer", where)
        if answer not in options:
            raise ParameterError(f"{where}: answer={answer!r} is not among the options; allowed: one of {options!r}")
        r = int(row.get("rotate_id", 0))
        rec = parsed_record(
            item_id=need(row, "id", where),
            task=row.get("task") or row.get("sub-category") or row.get("category") or "starbench",
            rotation=r,
            options=options,
            truth=options.index(answer),
            reply=need(row, field, where),
            where=where,
            field=field,
        )
        rec["starbench_rotate_id"] = r
        if str(row.get(field, "")).startswith("ERROR: "):  # the toolkit's mark of a failed generation
            rec.update(status="error", correct=is_correct(None, rec["truth"]), choice=None)
        if row.get("category") is not None and row.get("sub-category") is not None:
            rec["category"], rec["sub_category"] = str(row["category"]), str(row["sub-category"])
        recs.append(rec)
        toolkit.append(bool(row["is_correct"]) if "is_correct" in row else None)
    return recs, toolkit


def _metrics(rows: list[tuple[str, bool]]) -> dict:
    """The toolkit's ``_calculate_metrics``: AA over runs, ACR over ids, as ``"12.34%"`` strings."""
    if not rows:
        return {"AA": "0.00%", "ACR": "0.00%", "count": 0}
    by_id: dict[str, bool] = {}
    for i, c in rows:
        by_id[i] = by_id.get(i, True) and c
    aa = sum(c for _, c in rows) / len(rows) * 100
    acr = sum(by_id.values()) / len(by_id) * 100
    return {"AA": f"{aa:.2f}%", "ACR": f"{acr:.2f}%", "total_runs": len(rows), "unique_samples": len(by_id)}


def _groups(rows: list[dict], key: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        if r.get(key) is not None:
            out.setdefault(str(r[key]), []).append(r)
    return dict(sorted(out.items()))


def performance(rows: list[dict], verdicts: list[bool], alias: str) -> dict:
    """``performance.json`` as the toolkit's ``evaluate`` computes it for ``alias``, from ``verdicts``.

    Parameters
    ----------
    rows : list of dict
        The file's rows (:func:`~auralgen.evaluation.interop.common.read_predictions`).
    verdicts : list of bool
        The verdict per row.
    alias : str
        A key of :data:`ALIASES`.

    Returns
    -------
    dict
        ``Total``, ``By Category``, ``By Sub-category``: AA and ACR as ``"12.34%"`` strings, with counts.
    """
    rows = [dict(r, is_correct=bool(v)) for r, v in zip(rows, verdicts, strict=True)]

    def m(group):
        return _metrics([(str(r["id"]), r["is_correct"]) for r in group])

    if ALIASES[alias] != "pc":
        res = {"Total": m(rows)}
        for key, name in (("category", "By Category"), ("sub-category", "By Sub-category")):
            if any(r.get(key) is not None for r in rows):
                res[name] = {k: m(g) for k, g in _groups(rows, key).items()}
        return res
    by_sub = {k: m(g) for k, g in _groups(rows, "sub-category").items()}
    subs = [
        (g[0].get("category"), float(by_sub[k]["AA"][:-1]), float(by_sub[k]["ACR"][:-1]), k)
        for k, g in _groups(rows, "sub-category").items()
    ]

    def mean(values):
        return float(np.sum(np.asarray(values, dtype=np.float64)) / len(values))

    by_cat = {}
    for cat in sorted({str(c) for c, *_ in subs if c is not None}):
        mine = [s for s in subs if str(s[0]) == cat]
        cat_rows = [r for r in rows if str(r.get("category")) == cat]
        by_cat[cat] = {
            "AA": f"{mean([s[1] for s in mine]):.2f}%",
            "ACR": f"{mean([s[2] for s in mine]):.2f}%",
            "n_subcategories": len(mine),
            "total_runs": len(cat_rows),
            "unique_samples": len({str(r["id"]) for r in cat_rows}),
        }
    total = {
        "AA": f"{mean([s[1] for s in subs]):.2f}%",
        "ACR": f"{mean([s[2] for s in subs]):.2f}%",
        "n_subcategories": len(subs),
        "total_runs": len(rows),
        "unique_samples": len({str(r["id"]) for r in rows}),
    }
    return {"By Sub-category": by_sub, "By Category": by_cat, "Total": total}


@sections(SCORE, rows=ROWS)
def score_file(job: Predictions, rows: list[dict], log) -> dict:
    """``action=score_predictions`` for a STAR-Bench ``infer_results.jsonl``."""
    recs, toolkit = records(rows, job.path, job.field)
    missing = sum(t is None for t in toolkit)
    if job.scorer == "file" and missing:
        first = toolkit.index(None) + 1
        raise ParameterError(
            f"{job.path} entry {first} has no 'is_correct' ({missing} rows lack it); "
            "allowed for scorer=file: the toolkit's infer_results.jsonl, which records it on every row"
        )
    alias, how = alias_of(job.path, rows)
    toolkit = None if missing else toolkit
    verdicts = toolkit if job.scorer == "file" else [r["correct"] for r in recs]
    perf = performance(rows, verdicts, alias)
    out = job.out
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "performance.json", "w", encoding="utf-8") as f:  # byte for byte as the toolkit dumps it
        json.dump(perf, f, indent=4, ensure_ascii=False)
    extra = {"starbench_alias": alias, "starbench_alias_from": how, "performance": perf["Total"]}
    return write_results(job, recs, toolkit=toolkit, extra=extra, log=log)
