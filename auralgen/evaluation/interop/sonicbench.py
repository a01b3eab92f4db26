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
Binary items only, in SonicBench's two paradigms, from every task that has such a form:

* **comparison** (:data:`COMPARE`): the relative tasks that ask which way the second sound differs
  (higher/lower, louder/softer, ...; attack is SonicBench's velocity). An item whose answer is a
  direction becomes "which clip has more of it": its clip is split where the second sound starts and
  the two parts are joined by SonicBench's 0.5 s of silence (``A`` the first, ``B`` the second);
  items answered "the same" have no such form. distance_relative (which sound is closer) likewise.
* **recognition** (:data:`RECOGNISE`): one clip, two labels. An absolute task whose categories are
  ordered keeps the items whose answer is one of its two extreme categories, asked between those two
  (``A`` the upper, ``B`` the lower, as SonicBench's ``'A' if high``); azimuth_absolute asks front or
  back (SonicBench's direction recognition) from the answer's quadrant.

Every other item is skipped and counted by reason (several sources, several clips, unordered or
counted categories, same/different questions, threshold detection). Files as SonicBench's dataset
lays them out: ``<out>/<attribute>/task_<recog|comparison>/<attribute>_<single|pair>_NNN.wav`` and
``<out>/json/<attribute>_<recog|comparison>.jsonl`` rows ``{audio_path, prompt, reference}`` (plus
``id``, ``task``, ``options`` for scoring back), the prompt ending in SonicBench's instruction.

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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError
from auralgen.core.paths import inside
from auralgen.export.audio import decode_flac

from ..items import write_wav
from .common import EXPORT, SCORE, Predictions, export_text, need, parsed_record, read_predictions, write_results

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
CLOSING = "Do not add any explanation, punctuation, or extra text."
GAP_S = 0.5  # SonicBench's silence between the two clips of a comparison
# task: (SonicBench attribute, its comparison question, answers meaning "the second has more", "the first has more")
COMPARE = {
    "pitch_relative": ("pitch", "Which clip has a higher pitch?", "Higher", "Lower"),
    "loudness_relative": ("loudness", "Which clip is louder?", "Louder", "Softer"),
    "duration_relative": ("duration", "Which clip is longer?", "Longer", "Shorter"),
    "brightness_relative": ("brightness", "Which clip is brighter?", "Brighter", "Darker"),
    "tempo_relative": ("tempo", "Which clip is faster (higher tempo)?", "Faster", "Slower"),
    "counting_relative": ("counting", "Which clip contains more sound events?", "More", "Fewer"),
    "texture_relative": ("texture", "Which clip has the denser texture (more grains per second)?", "Denser", "Sparser"),
    "reverberation_relative": (
        "reverberation",
        "Which clip has stronger reverberation?",
        "More reverberant",
        "Less reverberant",
    ),
    "attack_relative": ("velocity", "Which clip has higher velocity (stronger attack)?", "More sharply", "More softly"),
    "distance_relative": ("distance", "Which clip sounds closer?", "The second sound", "The first sound"),
}
# task: (SonicBench attribute, the upper and the lower extreme category, as the start of their option text)
RECOGNISE = {
    "brightness_absolute": ("brightness", "Bright", "Dark"),
    "reverberation_absolute": ("reverberation", "Hall", "Dry"),
    "tempo_absolute": ("tempo", "Fast", "Slow"),
    "texture_absolute": ("texture", "Buzzing", "Sparse"),
    "duration_absolute": ("duration", "Longer than", "Shorter than"),
    "distance_absolute": ("distance", "Far", "Near"),
    "attack_absolute": ("velocity", "Sharp", "Soft"),
    "elevation_absolute": ("elevation", "Above", "Below"),
}
NO_FORM = {  # why the other tasks have no binary form
    "audiogram": "tone detection at threshold, not a judgement of an attribute",
    "azimuth_relative": "a same/different question, not which of two",
    "elevation_relative": "a same/different question, not which of two",
    "timbre_relative": "a same/different question, not which of two",
    "timbre_absolute": "unordered categories",
    "counting_absolute": "a count among ten, no two categories",
    "mixture": "several sources in one clip",
    "multi_source_relation": "several sources in one clip",
    "temporal_reorder": "three clips to order",
    "trajectory": "motion, no SonicBench attribute",
}
DIRECTION_OPTIONS = ("In front of the listener", "Behind the listener")
COMPARISON_OPTIONS = ["the first clip", "the second clip"]
RECOG_OPTIONS = {
    "pitch": ["high", "low"],
    "brightness": ["bright", "dark"],
    "loudness": ["loud", "soft"],
    "velocity": ["high", "low"],
    "duration": ["longer", "shorter"],
    "tempo": ["fast", "slow"],
    "direction": ["front", "back"],
    "distance": ["near", "far"],
    "reverberation": ["reverb", "no reverb"],
}
_DOTTED = re.compile(r"\bA\.\s*([^?]+?)\s+or\s+B\.\s*([^?.]+)")
_FOR = re.compile(r"'A'\s*for\s*([\w.-]+)\s*,\s*'B'\s*for\s*([\w.-]+)")


def prompt_of(question: str, options) -> str:
    """SonicBench's prompt shape: the question, what each letter stands for, its closing instruction.

    Parameters
    ----------
    question : str
        The question.
    options : sequence of str
        The answers, in letter order.

    Returns
    -------
    str
        The prompt, e.g. ``"<question> Answer 'A' for ..., 'B' for ..."`` and the instruction.
    """
    said = ", ".join(f"'{LETTERS[i]}' for {o}" for i, o in enumerate(options))
    return f"{question} Answer {said}. Only answer 'A' or 'B'. {CLOSING}"


def second_onset_s(params: dict) -> float | None:
    """Where the second of an item's two sounds (or sequences, or textures) starts, in seconds.

    Parameters
    ----------
    params : dict
        The item's recipe (``params``).

    Returns
    -------
    float or None
        The onset in seconds from the clip's start; None when the recipe holds no two timed parts.
    """
    for key, field in (("sounds", "onset_s"), ("sequences", "onsets_s"), ("textures", "start_s")):
        parts = params.get(key)
        if isinstance(parts, list) and len(parts) == 2 and isinstance(parts[1], dict) and field in parts[1]:
            at = parts[1][field]
            return float(at[0] if isinstance(at, list) else at)
    return None


@dataclass(frozen=True)
class BinaryForm:
    """An item asked in one of SonicBench's two paradigms."""

    attribute: str  # SonicBench's attribute name, e.g. ``pitch`` or ``direction``
    paradigm: str  # ``comparison`` (two sounds in one clip) or ``recog`` (one sound, two labels)
    question: str
    options: tuple[str, ...] | list[str]  # the two answers, in SonicBench's order
    truth: int  # index of the right answer in ``options``
    audio: np.ndarray  # float ``[channels, samples]``
    sr: int  # sample rate (Hz)


def _comparison(it) -> BinaryForm | str:
    """The binary form of a comparison item, or the skip reason."""
    attr, question, more, less = COMPARE[it.task]
    if it.answer not in (more, less):
        return "answered 'the same': no clip has more of it"
    at = second_onset_s(it.recipe)
    if len(it.clips) != 1 or at is None:
        return "no single clip with two timed sounds to split"
    x, sr = decode_flac(it.clips[0])
    cut = int(round(at * sr))
    joined = np.concatenate([x[:, :cut], np.zeros((x.shape[0], int(round(GAP_S * sr))), x.dtype), x[:, cut:]], axis=1)
    gap = f"Two sound clips are joined by {GAP_S:g} seconds of silence."
    return BinaryForm(attr, "comparison", f"{gap} {question}", COMPARISON_OPTIONS, int(it.answer == more), joined, sr)


def _recognition(it) -> BinaryForm | str:
    """The binary form of a recognition item (two labels of one clip), or the skip reason."""
    if it.task == "azimuth_absolute":
        attr, pair, truth = "direction", list(DIRECTION_OPTIONS), int(it.answer.lower().startswith("back"))
        question = "Is the sound in front of the listener or behind?"
    else:
        attr, upper, lower = RECOGNISE[it.task]
        pair = [next((o for o in it.options if o.startswith(p)), None) for p in (upper, lower)]
        if None in pair or it.answer not in pair:
            return "a middle category: not one of the two extremes"
        truth, question = pair.index(it.answer), f"Which describes the {attr} of this sound: {pair[0]} or {pair[1]}?"
    if len(it.clips) != 1:
        return f"{len(it.clips)} clips (a recognition item holds one)"
    audio, sr = decode_flac(it.clips[0])
    return BinaryForm(attr, "recog", question, pair, truth, audio, sr)


def binary_form(it) -> BinaryForm | str:
    """SonicBench's form of item ``it`` (see the module docstring), or why it has none.

    Parameters
    ----------
    it : Item
        An evaluation item.

    Returns
    -------
    BinaryForm or str
        The binary form, or the reason it has none.
    """
    if it.task in COMPARE:
        return _comparison(it)
    if it.task in RECOGNISE or it.task == "azimuth_absolute":
        return _recognition(it)
    return NO_FORM.get(it.task, "no binary form in SonicBench's paradigms")


def _per_task(skipped: dict[str, int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, n in skipped.items():
        task = key.split(":")[0]
        counts[task] = counts.get(task, 0) + n
    return counts


@sections(EXPORT, also=", ``files`` (rows per result file)")
def export(items, out: Path, log) -> dict:
    """Write the items that have a binary form in SonicBench's layout (see the module docstring)."""
    files: dict[str, list] = {}
    skipped: dict[str, int] = {}
    for it in items:
        form = binary_form(it)
        if isinstance(form, str):
            key = f"{it.task}: {form}"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        attr, paradigm = form.attribute, form.paradigm
        rows = files.setdefault(f"{attr}_{paradigm}", [])
        kind = "pair" if paradigm == "comparison" else "single"
        rel = f"{attr}/task_{paradigm}/{attr}_{kind}_{len(rows):03d}.wav"
        write_wav(inside(out, rel), form.audio, form.sr, new=True)
        rows.append(
            {
                "audio_path": rel,
                "prompt": prompt_of(form.question, form.options),
                "reference": LETTERS[form.truth],
                "id": it.id,
                "task": it.task,
                "options": list(form.options),
            }
        )
    (out / "json").mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        export_text(out, f"json/{name}.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    n = sum(len(r) for r in files.values())
    log(
        f"wrote {n} binary items in SonicBench layout to {out} (json/: "
        + ", ".join(f"{k} {len(v)}" for k, v in sorted(files.items()))
        + f"); skipped {sum(skipped.values())} without a binary form ("
        + ", ".join(f"{task} {n}" for task, n in sorted(_per_task(skipped).items()))
        + ")"
    )
    return {
        "items": n,
        "format": "sonicbench",
        "out": str(out),
        "files": {k: len(v) for k, v in files.items()},
        "skipped": skipped,
    }


def result_files(path: str) -> list[Path]:
    """One result file, or the ``*_recog.jsonl`` / ``*_comparison.jsonl`` files of a system's directory.

    Parameters
    ----------
    path : str
        A result file or a folder of them.

    Returns
    -------
    list of Path
        The files to score.

    Raises
    ------
    ParameterError
        ``path`` is a folder holding no result file.
    """
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
    """What the letters stand for (see the module docstring).

    Parameters
    ----------
    row : dict
        One result row.
    attr : str
        The SonicBench attribute, e.g. ``pitch``.
    paradigm : str
        ``recog`` or ``comparison``.

    Returns
    -------
    list of str
        The options in letter order.
    """
    if row.get("options"):
        return list(row["options"])
    prompt = str(row.get("prompt", ""))
    m = _DOTTED.search(prompt) or _FOR.search(prompt)
    if m:
        return [m.group(1).strip(), m.group(2).strip()]
    if paradigm == "comparison":
        return list(COMPARISON_OPTIONS)
    return list(RECOG_OPTIONS.get(attr, ["the first option", "the second option"]))


@sections(SCORE, rows="")
def score_file(job: Predictions, log) -> dict:
    """``action=score_predictions`` for SonicBench result files."""
    if job.scorer == "mmar":
        raise ParameterError("scorer=mmar with predictions_format=sonicbench; allowed: parser or file")
    field = job.field or "prediction"
    recs, toolkit = [], []
    for path in result_files(job.path):
        attr, _, paradigm = path.stem.rpartition("_")
        if paradigm not in ("recog", "comparison"):
            attr, paradigm = path.stem, "recog"
        for n, row in enumerate(read_predictions(path), 1):
            where = f"{path} entry {n}"
            options = options_of(row, attr, paradigm)
            ref = str(need(row, "reference", where)).strip()
            truth = LETTERS.find(ref) if len(ref) == 1 else -1
            if not 0 <= truth < len(options):
                raise ParameterError(
                    f"{where}: reference={ref!r} is not a letter of its {len(options)} options; allowed: A, B, ..."
                )
            audio = row.get("audio_path")
            item_id = row.get("id") or (Path(audio).stem if audio else f"{path.stem}#{n}")
            reply = need(row, field, where)
            recs.append(
                parsed_record(
                    item_id=f"{path.stem}/{item_id}",
                    task=f"{attr}_{paradigm}",
                    rotation=0,
                    options=options,
                    truth=truth,
                    reply=reply,
                    where=where,
                    field=field,
                )
            )
            toolkit.append(str(row.get("prediction", "")).strip() == ref)
    extra = {"prediction_field": field, "files": len(result_files(job.path))}
    return write_results(job, recs, toolkit=toolkit, extra=extra, log=log)
