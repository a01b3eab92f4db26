"""``evaluate.py``'s work: ask a model, cache the replies, score, report.

:func:`run` dispatches on ``action``:

``evaluate``           ask every (item, rotation) not yet answered in ``<out>/replies.jsonl``,
                       then score and report (``results.json``, ``plots/``) and put the run's
                       row in the leaderboard (``<out>/leaderboard.md`` or ``leaderboard=PATH``;
                       one table per dataset fingerprint, see :mod:`.leaderboard`).
``rescore``            score the cached replies again, without a model (all must be cached).
``leaderboard``        rebuild ``leaderboard`` (default ``<out>/leaderboard.md``) from
                       ``<out>/results.json`` and ``<out>/*/results.json``.
``score_predictions``  score an external prediction file (:mod:`auralgen.evaluation.interop`).
``export``             write a split in the STAR-Bench toolkit's or MMAR's layout.

``evaluate`` and ``rescore`` are :func:`auralgen.evaluation.session.evaluate` (failures,
``eval.on_error`` and ``eval.max_error_rate`` are described there).

Every action holds ``out``'s lock (:func:`auralgen.export.manifest.out_lock`, the one generation
takes): a second run into the same ``out`` is refused at once, before it writes or removes anything.
"""

from __future__ import annotations

from auralgen.execution import Executor
from auralgen.export.manifest import out_lock

from .config import EvalRunConfig
from .leaderboard import rebuild_leaderboard
from .session import RunFailedError, evaluate, leaderboard_path

__all__ = ["RunFailedError", "evaluate", "run"]


def run(cfg: EvalRunConfig, *, executor: Executor | None = None, log=print) -> dict:
    """Carry out ``cfg.action``; returns the results (or a small summary) as a dict.

    ``executor`` prepares the messages of ``action=evaluate`` (see :func:`.session.evaluate`).

    Parameters
    ----------
    cfg : EvalRunConfig
        The validated evaluation config (:func:`~.config.validate_eval`).
    executor : Executor or None, optional
        Prepares the messages of ``action=evaluate``; None uses a serial one.
    log : callable, optional
        Called with each progress line.

    Returns
    -------
    dict
        The action's results (``results.json`` for ``evaluate`` / ``rescore``, ``adaptive.json`` for
        ``mode=adaptive``), or a summary such as ``{"leaderboard": path}``.

    Raises
    ------
    RunFailedError
        The model left too many questions without a reply (``eval.max_error_rate``).
    """
    reads_only = cfg.action in ("rescore", "leaderboard") or bool(cfg.replay)
    with out_lock(str(cfg.out), create=not reads_only):  # one run at a time per out directory
        return _dispatch(cfg, executor=executor, log=log)


def _dispatch(cfg: EvalRunConfig, *, executor: Executor | None, log) -> dict:
    if cfg.action == "leaderboard":
        path = rebuild_leaderboard(cfg.out, leaderboard_path(cfg.leaderboard, cfg.out))
        log(f"wrote {path}")
        return {"leaderboard": str(path)}
    if cfg.action == "score_predictions":
        from .interop import score_predictions_file

        return score_predictions_file(cfg, log=log)
    if cfg.action == "export":
        from .interop import export_split

        return export_split(cfg, log=log)
    if cfg.mode == "adaptive":
        return _adaptive(cfg, log=log)
    return evaluate(cfg, executor=executor, log=log)


def _adaptive(cfg: EvalRunConfig, *, log=print) -> dict:
    """``mode=adaptive``: one QUEST+ track per task of ``cfg.tasks`` (items generated on the fly, stored in ``out``)."""
    from pathlib import Path

    from .adapters import FatalModelError, build_adapter
    from .adaptive.session import build_task, run_adaptive

    tasks = [build_task(name) for name in cfg.tasks]
    out = Path(cfg.out)
    board = leaderboard_path(cfg.leaderboard, out)
    adapter = None if cfg.replay else build_adapter(cfg.model, seed=cfg.eval.seed, workdir=out / "audio", logdir=out)
    from .leaderboard import update_adaptive
    from .session import _model_desc

    try:
        results = run_adaptive(
            tasks,
            adapter,
            out=out,
            seed=cfg.eval.seed if cfg.seed is None else cfg.seed,
            settings=cfg.adaptive,
            extend=cfg.adaptive_extend,
            instruction=cfg.eval.instruction,
            keep_audio=cfg.eval.keep_audio,
            replay=cfg.replay,
            overwrite=cfg.overwrite,
            model=_model_desc(cfg.model),
            max_error_rate=cfg.eval.max_error_rate,
            log=log,
        )
    except RunFailedError:
        if board.exists():  # no row for a failed run (nor an older one of this out)
            update_adaptive(board, out, None)
        raise
    except FatalModelError as exc:  # the model stopped answering: what was asked is kept
        raise FatalModelError(
            f"{exc}; the questions so far are stored in {str(out / 'trials.jsonl')!r}: "
            "run the same command again to continue the tracks from them"
        ) from None
    finally:
        if adapter is not None:
            adapter.close()
    if not cfg.replay:
        log(f"wrote {update_adaptive(board, out, results)}")
    return results
