"""SonicBench (github qiuxins/SonicBench): export a split in its layout, and score its
published result files (``Results/<system>/<attribute>_<recog|comparison>.jsonl``).

SonicBench asks 12 attributes under two paradigms: *recognition* (one clip, an absolute
judgement) and *comparison* (which of two sounds has more of the attribute), each reply a letter.
It publishes no scoring script; its result rows carry ``prompt``, ``prediction`` and
``reference`` (``"A"``/``"B"``), and the accuracy its README quotes (Qwen3-Omni "about 72 %") is
the share of rows whose ``prediction`` equals ``reference`` (72.25 % on its files): that exact
match is its scoring here (``scorer=file``).

Export (``export_format=sonicbench``)
-------------------------------------
Items whose attribute SonicBench has (:data:`ATTRIBUTES`: auralgen's azimuth is SonicBench's
direction) go to ``<out>/<attribute>/task_recog/<attribute>_single_NNN.wav`` (absolute items) or
``<out>/<attribute>/task_comparison/<attribute>_pair_NNN.wav`` (relative items: auralgen's clip
already holds both sounds), with one row per item in ``<out>/json/<attribute>_<paradigm>.jsonl``:
``{audio_path, prompt, reference, id, task, options}``. The prompt is the item's question, what each
letter means, and SonicBench's closing instruction; ``reference`` is the letter of the answer
(options in canonical order). Items of other attributes, of other regimes (mixtures), with several
clips, the threshold-detection items (tone present or not) and the spatio-temporal reasoning items
(several sources, scenes over time) are skipped and counted.

Scoring (``predictions_format=sonicbench``)
-------------------------------------------
``predictions`` is one result file or a system's directory of them. The reply is ``prediction``
(``prediction_field=full_prediction`` or ``raw_output`` for the reasoning traces some systems
have). The options the letters stand for are the row's ``options`` (auralgen's export), else read
from the prompt (``A. rain or B. sheep``, ``'A' for 6, 'B' for 3``), else the paradigm's
(comparison: ``the first clip``/``the second clip``) or the attribute's (:data:`RECOG_OPTIONS`).
A row is one run (rotation 0); the task is ``<attribute>_<paradigm>``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from auralgen.core.errors import ParameterError

from ..report import frequency_tasks
from .common import export_clip, export_text, need, parsed_record, read_predictions, write_results

ATTRIBUTES = {
    "pitch": "pitch", "brightness": "brightness", "loudness": "loudness", "duration": "duration",
    "tempo": "tempo", "azimuth": "direction", "distance": "distance", "reverberation": "reverberation",
    "timbre": "timbre", "texture": "texture", "counting": "counting",
}  # fmt: skip
PARADIGMS = {"absolute": ("recog", "single"), "relative": ("comparison", "pair")}
CLOSING = "Do not add any explanation, punctuation, or extra text."
RECOG_OPTIONS = {
    "pitch": ["high", "low"], "brightness": ["bright", "dark"], "loudness": ["loud", "soft"],
    "velocity": ["high", "low"], "duration": ["longer", "shorter"], "tempo": ["fast", "slow"],
    "direction": ["front", "back"], "distance": ["near", "far"], "reverberation": ["reverb", "no reverb"],
}  # fmt: skip
COMPARISON_OPTIONS = ["the first clip", "the second clip"]
_DOTTED = re.compile(r"\bA\.\s*([^?]+?)\s+or\s+B\.\s*([^?.]+)")
_FOR = re.compile(r"'A'\s*for\s*([\w.-]+)\s*,\s*'B'\s*for\s*([\w.-]+)")


def prompt_of(question: str, options) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    said = ", ".join(f"'{letters[i]}' for {o}" for i, o in enumerate(options))
    only = "'A' or 'B'" if len(options) == 2 else "one letter"
    return f"{question} Answer {said}. Only answer {only}. {CLOSING}"


def _skip_reason(it) -> str | None:
    if it.task in frequency_tasks():
        return "tone detection at threshold, not a judgement of the attribute"
    if it.category == "spatiotemporal_reasoning":
        return "several sources or a scene over time, not one attribute of one sound"
    if it.attribute not in ATTRIBUTES:
        return f"attribute {it.attribute!r} (SonicBench has no such attribute)"
    if it.regime not in PARADIGMS:
        return f"regime {it.regime!r} (SonicBench asks recognition or comparison)"
    if len(it.clips) != 1:
        return f"{len(it.clips)} clips (SonicBench items hold one audio)"
    return None


def export(items, out: Path, log) -> dict:
    """Write the items that map in SonicBench's layout (see the module docstring)."""
    files: dict[str, list] = {}
    skipped: dict[str, int] = {}
    for it in items:
        why = _skip_reason(it)
        if why is not None:
            key = f"{it.task}: {why}"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        attr = ATTRIBUTES[it.attribute]
        paradigm, kind = PARADIGMS[it.regime]
        rows = files.setdefault(f"{attr}_{paradigm}", [])
        rel = f"{attr}/task_{paradigm}/{attr}_{kind}_{len(rows):03d}.wav"
        export_clip(it.clips[0], out, rel)
        rows.append({"audio_path": rel, "prompt": prompt_of(it.question, it.options),
                     "reference": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[it.answer_index], "id": it.id, "task": it.task,
                     "options": list(it.options)})  # fmt: skip
    (out / "json").mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        export_text(out, f"json/{name}.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    n = sum(len(r) for r in files.values())
    log(
        f"wrote {n} items in SonicBench layout to {out} (json/: "
        + ", ".join(f"{k} {len(v)}" for k, v in sorted(files.items()))
        + ")"
        + "".join(f"; skipped {c} ({why})" for why, c in skipped.items())
    )
    return {"items": n, "format": "sonicbench", "out": str(out), "files": {k: len(v) for k, v in files.items()},
            "skipped": skipped}  # fmt: skip


def result_files(path: str) -> list[Path]:
    """One result file, or the ``*_recog.jsonl`` / ``*_comparison.jsonl`` files of a system's directory."""
    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob("*_recog.jsonl")) + sorted(p.glob("*_comparison.jsonl"))
        if not found:
            raise ParameterError(
                f"predictions={path!r} holds no <attribute>_recog.jsonl or _comparison.jsonl; "
                "allowed: a SonicBench result file or a system's directory of them"
            )
        return sorted(found)
    return [p]


def options_of(row: dict, attr: str, paradigm: str) -> list[str]:
    """What the letters stand for (see the module docstring)."""
    if row.get("options"):
        return list(row["options"])
    prompt = str(row.get("prompt", ""))
    m = _DOTTED.search(prompt) or _FOR.search(prompt)
    if m:
        return [m.group(1).strip(), m.group(2).strip()]
    if paradigm == "comparison":
        return list(COMPARISON_OPTIONS)
    return list(RECOG_OPTIONS.get(attr, ["the first option", "the second option"]))


def score_file(cfg, log) -> dict:
    """``action=score_predictions`` for SonicBench result files."""
    if cfg.scorer == "mmar":
        raise ParameterError("scorer=mmar with predictions_format=sonicbench; allowed: parser or file")
    field = cfg.prediction_field or "prediction"
    recs, toolkit = [], []
    for path in result_files(cfg.predictions):
        attr, _, paradigm = path.stem.rpartition("_")
        if paradigm not in ("recog", "comparison"):
            attr, paradigm = path.stem, "recog"
        for n, row in enumerate(read_predictions(path), 1):
            where = f"{path} entry {n}"
            options = options_of(row, attr, paradigm)
            ref = str(need(row, "reference", where)).strip()
            truth = "ABCDEFGHIJKLMNOPQRSTUVWXYZ".find(ref) if len(ref) == 1 else -1
            if not 0 <= truth < len(options):
                raise ParameterError(
                    f"{where}: reference={ref!r} is not a letter of its {len(options)} options; allowed: A, B, ..."
                )
            audio = row.get("audio_path")
            item_id = row.get("id") or (Path(audio).stem if audio else f"{path.stem}#{n}")
            reply = need(row, field, where)
            recs.append(parsed_record(item_id=f"{path.stem}/{item_id}", task=f"{attr}_{paradigm}", rotation=0,
                                      options=options, truth=truth, reply=reply, where=where, field=field))  # fmt: skip
            toolkit.append(str(row.get("prediction", "")).strip() == ref)
    extra = {"prediction_field": field, "files": len(result_files(cfg.predictions))}
    return write_results(cfg, recs, toolkit=toolkit, extra=extra, log=log)
