"""Interoperability with peers' toolkits: export a split in their layout (``action=export``),
score their result files (``action=score_predictions``).

One module per toolkit, each documenting its layout and its scoring:

``starbench``   STAR-Bench's ``ALMEval_code`` (:mod:`.starbench`): ``meta_info/*.json`` its
                ``build_dataset`` loads for every alias; its ``infer_results.jsonl`` scored, with
                ``performance.json`` as its ``evaluate`` writes it.
``mmar`` / ``mmau``  MMAR's and MMAU's metadata (MMAR-meta.json, mmau-test.json) and prediction
                files (:mod:`.mmar`), with their token string-match (``scorer=mmar``).
``sonicbench``  SonicBench's layout and its published result files (:mod:`.sonicbench`).

``scorer`` picks whose verdict decides ``scores``: ``parser`` (auralgen's answer parser, the
default), ``file`` (the verdict the toolkit records or computes: STAR-Bench's ``is_correct``,
SonicBench's exact letter match) or ``mmar``; the other verdicts are reported beside
(``parser_scores`` / ``toolkit_scores`` and ``verdicts`` in ``results.json``). A line that lacks a
required field, or whose answer is not among its options, ends the run with an error naming the
file and line. WAV files keep every channel (24-bit PCM).
"""

from __future__ import annotations

from pathlib import Path

from auralgen.core.errors import ParameterError

from ..config import EvalRunConfig
from ..items import load_items
from . import mmar, sonicbench, starbench
from .common import Predictions, read_predictions

__all__ = ["export_split", "prediction_records", "read_predictions", "score_predictions_file"]

EXPORTERS = {
    "starbench": starbench.export,
    "mmar": mmar.export,
    "mmau": mmar.export_mmau,
    "sonicbench": sonicbench.export,
}


def prediction_records(
    rows: list[dict], fmt: str, *, path: str = "predictions", field: str | None = None
) -> list[dict]:
    """Scoring records read by the answer parser from STAR-Bench or MMAR/MMAU prediction rows.

    Parameters
    ----------
    rows : list of dict
        Prediction rows, one run each.
    fmt : str
        ``starbench``, ``mmar`` or ``mmau``.
    path : str, optional
        The rows' source, named in error messages.
    field : str or None, optional
        The row key holding the reply (None: the format's own, see :func:`.mmar.pick_field`).

    Returns
    -------
    list of dict
        One scoring record per row (id, task, rotation, parse status, ``correct``, options, ...).
    """
    if fmt == "starbench":
        return starbench.records(rows, path, field)[0]
    return mmar.records(rows, fmt, path, mmar.pick_field(rows, field, path))[0]


def score_predictions_file(cfg: EvalRunConfig, *, log=print) -> dict:
    """``action=score_predictions``: score ``cfg.predictions`` into ``<out>/results.json``.

    Parameters
    ----------
    cfg : EvalRunConfig
        The run config: ``predictions``, ``predictions_format``, ``prediction_field``, ``scorer``, ``out``.
    log : callable, optional
        Called with the one-line summary (str).

    Returns
    -------
    dict
        The ``results.json`` content.

    Raises
    ------
    ParameterError
        A scorer the format has no verdict for, or a row that lacks a field or whose answer is not an option.
    """
    job = Predictions(cfg.predictions, cfg.predictions_format, cfg.prediction_field, cfg.scorer, Path(cfg.out))
    if job.format == "sonicbench":
        return sonicbench.score_file(job, log)
    rows = read_predictions(job.path)
    if job.format == "starbench":
        if job.scorer == "mmar":
            raise ParameterError("scorer=mmar with predictions_format=starbench; allowed: parser or file")
        return starbench.score_file(job, rows, log)
    return mmar.score_file(job, rows, log)


def export_split(cfg: EvalRunConfig, *, log=print) -> dict:
    """``action=export``: write ``cfg.split`` of ``cfg.data`` in ``cfg.export_format``'s layout.

    Parameters
    ----------
    cfg : EvalRunConfig
        The run config: ``data``, ``split``, ``tasks``, ``max_items``, ``export_format``, ``out``.
    log : callable, optional
        Called with the one-line summary (str).

    Returns
    -------
    dict
        The export's summary: ``items`` written, ``format``, ``out`` and the items ``skipped`` by reason.
    """
    items = load_items(cfg.data, split=cfg.split, tasks=cfg.tasks, max_items=cfg.max_items)
    return EXPORTERS[cfg.export_format](items, Path(cfg.out), log)
