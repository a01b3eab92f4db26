"""Structured configuration of the evaluation harness (``evaluate.py``, ``conf/evaluate.yaml``).

:func:`validate_eval` turns a composed mapping (DictConfig or dict) into frozen dataclasses
before any work, raising :class:`~auralgen.core.errors.ParameterError` with one line naming the
key, the value and what is allowed. The model section is validated by the adapter's own
``Config`` dataclass (see :mod:`auralgen.evaluation.adapters`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auralgen.core.errors import ParameterError
from auralgen.core.mapping import coerce as _coerce
from auralgen.core.mapping import did_you_mean, from_mapping
from auralgen.core.mapping import plain as _plain
from auralgen.core.paths import check_out

if TYPE_CHECKING:  # imported where used: the adaptive machinery loads only for mode=adaptive
    from auralgen.evaluation.adaptive.quest import QuestSettings

ACTIONS = ("evaluate", "rescore", "leaderboard", "score_predictions", "export")
PREDICTION_FORMATS = ("starbench", "mmar", "mmau", "sonicbench")
EXPORT_FORMATS = ("starbench", "mmar", "mmau", "sonicbench")
SCORERS = ("parser", "file", "mmar")  # whose verdict scores a prediction file (evaluation.interop)
ON_ERROR = ("count", "stop")


@dataclass(frozen=True)
class EvalSettings:
    """How items are asked and scored (config group ``eval``).

    Attributes
    ----------
    rotations : int or None
        Circular option rotations per item; ``None`` = as STAR-Bench's toolkit asks: the item's
        number of options, 3 for a holistic reasoning item (:func:`~auralgen.evaluation.prompts.n_runs`).
    reorder_runs : int
        Clip orders asked per reorder item (items whose options are clip sequences).
    instruction : str
        Line appended after the options (``""`` for none).
    criterion : float in (0, 1)
        Accuracy defining a psychometric / audiogram threshold.
    n_boot : int >= 0
        0 leaves each threshold's 95 % interval out; > 0 reports it (psignifit's credible interval,
        computed from the posterior grid: no random draws, so the value of n_boot does not matter).
    seed : int >= 0
        Seeds the random baseline and the noise control.
    on_error : {"count", "stop"}
        A reply that failed after every retry: ``count`` caches it as an error (scored
        wrong, reported, asked again on the next run); ``stop`` ends the run.
    max_error_rate : float in [0, 1]
        A run whose questions got no reply more often than this (or all of them) is
        failed: no leaderboard row, ``evaluate.py`` exits 3.
    judge : dict or None
        Optional LLM judge (an ``openai`` model config) consulted for unparseable replies.
    keep_audio : bool
        Keep the WAV files written for the model under ``<out>/audio``.
    max_reply_chars : int >= 100 or None
        Longest reply stored in the cache (characters); a longer one is stored as its head and
        tail (half each) and counted (``replies.truncated`` in ``results.json``). ``None``: no cap.
    """

    rotations: int | None = None
    reorder_runs: int = 3
    instruction: str = "Answer with the letter of the correct option."
    criterion: float = 0.75
    n_boot: int = 200
    seed: int = 0
    on_error: str = "count"
    max_error_rate: float = 0.5
    judge: dict | None = None
    keep_audio: bool = False
    max_reply_chars: int | None = 20000


@dataclass(frozen=True)
class EvalRunConfig:
    action: str
    data: str
    out: str
    model: dict[str, Any]
    eval: EvalSettings
    tasks: tuple[str, ...] | None = None  # set by task= (one name or a list; None: all); tasks= is its former spelling
    split: str = "test"
    max_items: int | None = None
    predictions: str | None = None
    predictions_format: str = "starbench"
    prediction_field: str | None = None
    export_format: str = "starbench"
    scorer: str = "parser"
    progress: bool = True
    overwrite: bool = False
    leaderboard: str | None = None  # None: <out>/leaderboard.md
    mode: str = "grid"  # grid: score the items of `data`; adaptive: QUEST+ tracks generated on the fly
    adaptive: QuestSettings | None = None  # mode=adaptive: the QUEST+ settings
    adaptive_extend: float = 16.0  # mode=adaptive: the grid's hard end widened by this factor
    replay: bool = False  # mode=adaptive: replay the trials stored in `out` with no model
    seed: int | None = None  # mode=adaptive: seeds the items of the tracks (None: eval.seed)


TOP_KEYS = {
    "action",
    "data",
    "out",
    "model",
    "eval",
    "task",
    "tasks",
    "split",
    "max_items",
    "predictions",
    "predictions_format",
    "prediction_field",
    "export_format",
    "scorer",
    "progress",
    "overwrite",
    "leaderboard",
    "mode",
    "adaptive",
    "replay",
    "seed",
}
MODES = ("grid", "adaptive")


def _choice(key: str, value, allowed) -> str:
    if value not in allowed:
        raise ParameterError(f"{key}={value!r} is unknown; allowed: {', '.join(allowed)}")
    return value


def validate_eval(cfg) -> EvalRunConfig:
    """Validate a composed ``conf/evaluate.yaml`` mapping into an :class:`EvalRunConfig`.

    The model section is checked by building its adapter config (no network, no process).

    Parameters
    ----------
    cfg : DictConfig or dict
        The composed evaluation config; a missing key takes its default.

    Returns
    -------
    EvalRunConfig
        The frozen, checked config.
    """
    from auralgen.evaluation.adapters import check_model_config

    for k in cfg.keys():
        if k not in TOP_KEYS and k != "hydra":
            raise ParameterError(
                f"{k}: unknown key{did_you_mean(k, TOP_KEYS)}; allowed keys: {', '.join(sorted(TOP_KEYS))}"
            )
    action = _choice("action", cfg.get("action", "evaluate"), ACTIONS)
    settings = _eval_settings(cfg.get("eval", {}) or {})
    model = _plain(cfg.get("model") or {})
    mode = _choice("mode", cfg.get("mode", "grid"), MODES)
    replay = _coerce("replay", cfg.get("replay", False), bool)
    if action in ("evaluate",) and not (mode == "adaptive" and replay):
        check_model_config(model, "model")
    tasks, max_items = _selection(cfg)
    quest, extend = _adaptive(cfg, mode, action, tasks)
    seed = _seed(cfg.get("seed"), mode)
    predictions = _predictions(cfg, action)
    out = _coerce("out", cfg.get("out", "results/run"), str)
    check_out("out", out)
    return EvalRunConfig(
        action=action,
        data=_coerce("data", cfg.get("data", "data/default"), str),
        out=out,
        model=model,
        eval=settings,
        tasks=tasks,
        split=_coerce("split", cfg.get("split", "test"), str),
        max_items=max_items,
        predictions=None if predictions is None else _coerce("predictions", predictions, str),
        predictions_format=_choice(
            "predictions_format", cfg.get("predictions_format", "starbench"), PREDICTION_FORMATS
        ),
        prediction_field=cfg.get("prediction_field"),
        export_format=_choice("export_format", cfg.get("export_format", "starbench"), EXPORT_FORMATS),
        scorer=_choice("scorer", cfg.get("scorer", "parser"), SCORERS),
        progress=_coerce("progress", cfg.get("progress", True), bool),
        overwrite=_coerce("overwrite", cfg.get("overwrite", False), bool),
        leaderboard=_leaderboard(cfg.get("leaderboard")),
        mode=mode,
        adaptive=quest,
        adaptive_extend=extend,
        replay=replay,
        seed=seed,
    )


def _predictions(cfg, action: str):
    """``predictions=`` as given; refused when missing for ``action=score_predictions``."""
    predictions = cfg.get("predictions")
    if action == "score_predictions" and not predictions:
        raise ParameterError(
            "predictions=null is missing; allowed: a path to a prediction file (action=score_predictions)"
        )
    return predictions


def _seed(value, mode: str) -> int | None:
    """``seed=``: the items of an adaptive run (a dataset's items were drawn when it was generated)."""
    if value is None:
        return None
    seed = _coerce("seed", value, int)
    if mode != "adaptive":
        raise ParameterError(
            f"seed={seed} applies to mode=adaptive (a dataset's items were drawn by generate.py); "
            "allowed: seed=null here, eval.seed for the random baseline"
        )
    if seed < 0:
        raise ParameterError(f"seed={seed} is negative; allowed: an integer >= 0")
    return seed


def _adaptive(cfg, mode: str, action: str, tasks) -> tuple[QuestSettings | None, float]:
    """``(QuestSettings, extend)`` of ``mode=adaptive`` (``(None, 16.0)`` otherwise), checked."""
    if mode != "adaptive":
        return None, 16.0
    from auralgen.evaluation.adaptive.quest import QuestSettings

    if action != "evaluate":
        raise ParameterError(f"mode=adaptive with action={action!r}; allowed: action=evaluate")
    if not tasks:
        raise ParameterError(
            "mode=adaptive needs tasks; allowed: task=<relative task> or task=[<relative task>, ...], "
            "e.g. task=pitch_relative"
        )
    data = dict(_plain(cfg.get("adaptive") or {}))
    extend = _coerce("adaptive.extend", data.pop("extend", 16.0), float)
    if extend < 1.0:
        raise ParameterError(f"adaptive.extend={extend} is out of range; allowed: >= 1")
    quest = from_mapping(QuestSettings, data, "adaptive")
    quest.check("adaptive")
    return quest, extend


def _eval_settings(data) -> EvalSettings:
    """The ``eval`` section, each value checked against its range."""
    from auralgen.evaluation.adapters import check_model_config

    settings = from_mapping(EvalSettings, data, "eval")
    if settings.rotations is not None and settings.rotations < 1:
        raise ParameterError(f"eval.rotations={settings.rotations} is out of range; allowed: null or an integer >= 1")
    if settings.reorder_runs < 1:
        raise ParameterError(f"eval.reorder_runs={settings.reorder_runs} is out of range; allowed: an integer >= 1")
    if not 0.0 < settings.criterion < 1.0:
        raise ParameterError(f"eval.criterion={settings.criterion} is out of range; allowed: 0 < criterion < 1")
    if settings.n_boot < 0 or settings.seed < 0:
        bad = ("n_boot", settings.n_boot) if settings.n_boot < 0 else ("seed", settings.seed)
        raise ParameterError(f"eval.{bad[0]}={bad[1]} is negative; allowed: an integer >= 0")
    _choice("eval.on_error", settings.on_error, ON_ERROR)
    if not 0.0 <= settings.max_error_rate <= 1.0:
        raise ParameterError(f"eval.max_error_rate={settings.max_error_rate} is out of range; allowed: 0 <= rate <= 1")
    if settings.max_reply_chars is not None and settings.max_reply_chars < 100:
        raise ParameterError(
            f"eval.max_reply_chars={settings.max_reply_chars} is out of range; allowed: null or an integer >= 100"
        )
    if settings.judge is not None:
        check_model_config(settings.judge, "eval.judge", kinds=("openai",))
    return settings


def _selection(cfg) -> tuple[tuple[str, ...] | None, int | None]:
    """``(tasks, max_items)``: which items of the split are asked (``None``: all).

    ``task`` names them, as ``auralgen generate`` does: one name or a list. ``tasks`` is its former
    spelling, still accepted (the command line prints a deprecation note); giving both is refused.
    """
    task, tasks = cfg.get("task"), cfg.get("tasks")
    if task is not None and tasks is not None:
        raise ParameterError(
            f"task={_shown(task)} and tasks={_shown(tasks)} both select tasks; allowed: task= alone "
            "(tasks= is its former spelling)"
        )
    key, tasks = ("task", task) if tasks is None else ("tasks", tasks)
    if tasks is not None:
        tasks = (tasks,) if isinstance(tasks, str) else _coerce(key, tasks, tuple)
        if not tasks or not all(isinstance(t, str) and t for t in tasks):
            raise ParameterError(
                f"{key}={_shown(tasks)} is invalid; allowed: null (every task), a task name (task=pitch_relative) "
                "or a list of names (task=[pitch_relative,audiogram])"
            )
    max_items = cfg.get("max_items")
    if max_items is not None:
        max_items = _coerce("max_items", max_items, int)
        if max_items < 1:
            raise ParameterError(f"max_items={max_items} is out of range; allowed: null or an integer >= 1")
    return tasks, max_items


def _shown(value) -> str:
    """A task selection as written on the command line: ``pitch_relative`` or ``[a,b]``."""
    if isinstance(value, str):
        return value
    try:
        return "[" + ",".join(str(v) for v in value) + "]"
    except TypeError:
        return repr(value)


def _leaderboard(value) -> str | None:
    if value is None:
        return None
    value = _coerce("leaderboard", value, str)
    if not value.endswith(".md") or value.endswith("/.md"):
        raise ParameterError(f"leaderboard={value!r} is not a markdown file; allowed: null or a path ending in .md")
    return value
