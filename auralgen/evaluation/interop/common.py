"""What every toolkit's reader and scorer shares: reading prediction files, checked fields,
scoring records, and ``results.json`` with the toolkit's verdicts beside the parser's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.core.jsonl import jsonl_rows
from auralgen.core.paths import create_new, inside

from ..items import export_wav
from ..metrics import score
from ..parsing import extract_choice
from ..report import accounting, frequency_tasks, write_json
from ..verdict import is_correct


@dataclass(frozen=True)
class Predictions:
    """A prediction file to score (``action=score_predictions``) and where its results go.

    Attributes
    ----------
    path : str
        The file (or folder of SonicBench result files), ``predictions=``.
    format : str
        ``predictions_format=`` (``starbench``, ``mmar``, ``mmau``, ``sonicbench``).
    field : str or None
        ``prediction_field=``: the row field holding the model's reply (None: the format's own).
    scorer : str
        Whose verdict decides ``scores``: ``parser``, ``file`` or ``mmar``.
    out : Path
        The folder ``results.json`` (and STAR-Bench's ``performance.json``) is written to.
    """

    path: str
    format: str
    field: str | None
    scorer: str
    out: Path


EXPORT = """
Parameters
----------
items : iterable of Item
    The split's items (:class:`~auralgen.evaluation.items.Item`), as loaded for evaluation.
out : Path
    The export folder (the peer's dataset root); existing files are never overwritten.
log : callable
    Called with the one-line summary (str).

Returns
-------
dict
    The summary: ``items`` (how many were written), ``format``, ``out``, ``skipped`` (the items
    left out, counted by reason){also}.
"""
"""The sections of every toolkit's ``export`` (:func:`~auralgen.core.docstrings.sections`); ``also``
names the summary keys that toolkit adds."""

SCORE = """
Parameters
----------
job : Predictions
    The prediction file, its format, reply field, scorer and output folder.{rows}
log : callable
    Called with the one-line summary (str).

Returns
-------
dict
    The ``results.json`` content, as :func:`~auralgen.evaluation.interop.common.write_results`
    writes it (``scores``, ``accounting``, the other verdicts beside).
"""
"""The sections of every toolkit's ``score_file``; ``rows`` is :data:`ROWS` where it takes the
rows read already, else empty."""

ROWS = """
rows : list of dict
    The file's rows, as :func:`~auralgen.evaluation.interop.common.read_predictions` reads them."""


def export_clip(flac: bytes, out: Path, rel: str) -> None:
    """An export's WAV at ``out/rel`` (``rel`` built from checked ids and task names): refused when
    it would lie outside ``out`` or exists already (an export never overwrites a file).

    Parameters
    ----------
    flac : bytes
        One clip as stored (FLAC); written as 24-bit PCM WAV, every channel kept.
    out : Path
        The export folder.
    rel : str
        The file's path relative to ``out``.
    """
    export_wav(flac, inside(out, rel), new=True)


def export_text(out: Path, rel: str, text: str) -> None:
    """An export's text file at ``out/rel``, refused like :func:`export_clip`.

    Parameters
    ----------
    out, rel : Path, str
        Where the file goes, as for :func:`export_clip`.
    text : str
        The content, written as UTF-8.
    """
    with create_new(inside(out, rel)) as f:
        f.write(text.encode("utf-8"))


def export_json(out: Path, rel: str, obj) -> None:
    """An export's JSON file (as :func:`~auralgen.evaluation.report.write_json` formats it).

    Parameters
    ----------
    out, rel : Path, str
        Where the file goes, as for :func:`export_clip`.
    obj : object
        JSON-able content (no NaN), indented by 2.
    """
    export_text(out, rel, json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def read_predictions(path: str | Path) -> list[dict]:
    """Rows of a JSON list or JSONL file; errors name the file and line.

    Parameters
    ----------
    path : str or Path
        A JSON file holding a list, or a JSONL file (one object per line).

    Returns
    -------
    list of dict
        The rows, at least one.

    Raises
    ------
    ParameterError
        No such file, invalid JSON, no row, or a row that is not an object.
    """
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
        rows = jsonl_rows(text, f"predictions={str(path)!r}")
    if not rows:
        raise ParameterError(f"predictions={str(path)!r} holds no prediction; allowed: at least one")
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise ParameterError(f"predictions={str(path)!r} entry {n} is {type(row).__name__}; allowed: JSON objects")
    return rows


def need(row: dict, key: str, where: str):
    """``row[key]``, or one line naming the entry and the missing key.

    Parameters
    ----------
    row : dict
        One prediction row.
    key : str
        The field required.
    where : str
        The row's place, e.g. ``"<file> entry 3"``.

    Returns
    -------
    object
        The value (never None).

    Raises
    ------
    ParameterError
        ``key`` is missing or null.
    """
    if key not in row or row[key] is None:
        raise ParameterError(
            f"{where} has no {key!r}; allowed: rows with {key!r} (set prediction_field= for the reply)"
        )
    return row[key]


def parsed_record(*, item_id, task, rotation, options, truth, reply, where, field) -> dict:
    """One scoring record: the reply read by :func:`~auralgen.evaluation.parsing.extract_choice`
    against the *presented* ``options`` (``truth`` = presented index of the answer).

    Parameters
    ----------
    item_id : object
        The item's id (stored as str).
    task : object
        The task name (stored as str).
    rotation : int
        The run's rotation index.
    options : list of str
        The options as presented.
    truth : int
        Index of the answer in ``options``.
    reply : str
        The model's reply (the first 300 characters are kept).
    where : str
        The row's place, named in errors.
    field : str
        The row key the reply came from, named in errors.

    Returns
    -------
    dict
        ``id``, ``task``, ``rotation``, ``status``, ``correct``, ``choice``, ``n_options``, ``options``,
        ``truth`` and ``reply``.

    Raises
    ------
    ParameterError
        ``reply`` is not a string.
    """
    if not isinstance(reply, str):
        raise ParameterError(f"{where}: {field}={reply!r} is not text; allowed: the model's reply as a string")
    parsed = extract_choice(reply, options)
    return {
        "id": str(item_id),
        "task": str(task),
        "rotation": int(rotation),
        "status": parsed.status,
        "correct": is_correct(parsed, truth),
        "choice": parsed.index,
        "n_options": len(options),
        "options": list(options),
        "truth": int(truth),
        "reply": reply[:300],
    }


def verdict_summary(records: list[dict], toolkit: list[bool], *, examples: int = 20) -> dict:
    """How the toolkit's verdicts and the parser's compare, answer by answer, with the first
    ``examples`` answers they disagree on (id, reply, the parser's reading, both verdicts).

    Parameters
    ----------
    records : list of dict
        Scoring records (:func:`parsed_record`); their ``correct`` is the parser's verdict.
    toolkit : list of bool
        The toolkit's verdict per record.
    examples : int, optional
        Most disagreements listed.

    Returns
    -------
    dict
        ``answers``, ``agree``, ``toolkit_right_parser_wrong``, ``parser_right_toolkit_wrong`` (counts)
        and ``differ_examples``.
    """
    pairs = list(zip((bool(r["correct"]) for r in records), toolkit, strict=True))
    differ = [
        {
            "id": r["id"],
            "task": r["task"],
            "reply": r["reply"],
            "parser": r["status"] if r["choice"] is None else "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[r["choice"]],
            "parser_correct": p,
            "toolkit_correct": t,
        }
        for r, (p, t) in zip(records, pairs)
        if p != t
    ][:examples]
    return {
        "answers": len(pairs),
        "agree": sum(p == t for p, t in pairs),
        "toolkit_right_parser_wrong": sum(t and not p for p, t in pairs),
        "parser_right_toolkit_wrong": sum(p and not t for p, t in pairs),
        "differ_examples": differ,
    }


def write_results(job: Predictions, records: list[dict], *, toolkit: list[bool] | None, extra: dict, log) -> dict:
    """Score ``records`` into ``<out>/results.json``.

    ``toolkit`` (one verdict per record, or ``None``) is what the toolkit's own scoring says;
    with ``job.scorer != "parser"`` it is the verdict of every record, parsed or not
    (:func:`~auralgen.evaluation.verdict.is_correct`): ``scores``, ``accounting`` and the printed
    line count it, and the parser's ``parser_scores`` stand beside; with the parser deciding, the
    toolkit's stand beside as ``toolkit_scores``. The printed AA has two decimals, as the peers' scripts print.

    Parameters
    ----------
    job : Predictions
        The scored file, its format and scorer, and the output folder.
    records : list of dict
        Scoring records (:func:`parsed_record`).
    toolkit : list of bool or None
        The toolkit's verdict per record.
    extra : dict
        Added to ``results["dataset"]``.
    log : callable
        Called with the one-line summary (str).

    Returns
    -------
    dict
        The ``results.json`` content.
    """
    parser_recs = records
    toolkit_recs = None if toolkit is None else _with_verdicts(records, toolkit)
    main = toolkit_recs if job.scorer != "parser" else parser_recs
    results = {
        "model": {"label": job.out.name, "kind": "predictions", "config": {"file": job.path}},
        "dataset": {
            "path": job.path,
            "format": job.format,
            "scorer": job.scorer,
            "tasks": sorted({r["task"] for r in records}),
            **extra,
        },
        "accounting": accounting(main),
        "scores": score(main),
        "psychometric": {},
        **{task: {} for task in frequency_tasks()},
    }
    if toolkit_recs is not None:
        other, key = (parser_recs, "parser_scores") if job.scorer != "parser" else (toolkit_recs, "toolkit_scores")
        results[key] = score(other)
        results["verdicts"] = verdict_summary(parser_recs, list(toolkit))
    out = job.out
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "results.json", results)
    log(f"{_summary_line(results, len(records), job.scorer)} -> {out / 'results.json'}")
    return results


def _with_verdicts(records: list[dict], toolkit: list[bool]) -> list[dict]:
    """Copies of ``records`` whose ``correct`` is the toolkit's verdict (parsed or not)."""
    return [
        dict(r, correct=is_correct(None, r["truth"], file_verdict=bool(t)))
        for r, t in zip(records, toolkit, strict=True)
    ]


def _summary_line(results: dict, n: int, scorer: str) -> str:
    """The printed line: AA and ACR (two decimals, as the peers' scripts print) of every verdict."""
    s = results["scores"]["overall"]
    msg = (
        f"{n} predictions ({scorer} verdicts): AA {100 * s['AA']:.2f} %, ACR {100 * s['ACR']:.2f} %, "
        f"{results['accounting']['overall']['unparseable']} unparseable"
    )
    for key in ("parser_scores", "toolkit_scores"):
        if key in results:
            o = results[key]["overall"]
            msg += f"; {key.split('_')[0]} verdicts: AA {100 * o['AA']:.2f} %, ACR {100 * o['ACR']:.2f} %"
    return msg
