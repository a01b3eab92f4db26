"""Adaptive evaluation: one QUEST+ track per task, items generated at the values it asks for.

:func:`run_track` is the loop every track runs -- ask the procedure for a value, get the outcome
of a trial there from a *responder* (``respond(trial, value) -> record``), update, until the
procedure is done. Responders: :class:`ItemResponder` (makes the item and asks a model through a
:class:`~.trials.TrialAsker`, or, replaying, takes the reply stored in ``trials.jsonl`` and checks
the regenerated item is the one asked), or a
:class:`~.observers.SimulatedObserver` (no audio).

:func:`run_adaptive` runs a list of tasks against a model, their tracks interleaved
(:func:`run_interleaved`: one trial of each in turn; a task may run several tracks, e.g. the
audiogram one per frequency, :meth:`~auralgen.tasks.design.Design.adaptive_tracks`): it writes every
trial to ``<out>/trials.jsonl`` as it is asked and the thresholds, each beside the published human
JND of its attribute (:mod:`.jnd`), to ``<out>/adaptive.json``.

A question without an answer -- no reply (a model error, a refusal by error, a timeout) or a reply
naming no single option -- is counted and asked again (a new item at the value the posterior still
wants), never fed to the posterior as wrong (:class:`Budget` bounds how often); a run whose questions
got no reply more often than ``max_error_rate`` fails (:func:`run_failure`), as in grid mode.

A run interrupted (Ctrl-C, a crash, a killed process) continues when started again with the same
settings into the same ``out``: the questions stored in ``trials.jsonl`` are taken from there (each
item regenerated and checked against its record), so the posterior and the next value are those of
an uninterrupted run, and ``trials.jsonl`` ends byte-identical to it (a line cut by a kill is dropped
and asked again). ``<out>/adaptive_run.json`` records what the trials depend on (tasks, seed,
settings, model); a run with other values into the same ``out`` is refused. ``overwrite=True`` starts
afresh.
``replay=True`` asks nothing: the replies come from ``<out>/trials.jsonl`` and the run must
reproduce the same sequence of values (a :class:`ParameterError` names the first trial that
differs), so the thresholds can be recomputed with no model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.core.mapping import plain
from auralgen.tasks.base import Task
from auralgen.tasks.design import track_tasks

from ..procedure import Procedure
from ._run_dir import appender, prepare_out, run_stamp, write_report
from .domain import domain_for
from .jnd import human_jnd
from .quest import QuestPlusProcedure, QuestSettings
from .trials import TrialAsker, make_trial_item, trial_presentation, trial_record

__all__ = [
    "Budget",
    "ItemResponder",
    "TrackResult",
    "outcome",
    "run_adaptive",
    "run_failure",
    "run_interleaved",
    "run_track",
    "track_summary",
]


ANSWERS = ("correct", "wrong")  # the outcomes that reach the posterior


def outcome(rec: dict) -> str:
    """A record's outcome: ``correct``, ``wrong``, ``error`` or ``unanswered`` (see :func:`.trials.trial_outcome`);
    a record without one (a simulated observer's) is an answer.

    Parameters
    ----------
    rec : dict
        A trial record (:func:`.trials.trial_record`, or an observer's with ``correct`` only).

    Returns
    -------
    str
        ``correct``, ``wrong``, ``error`` or ``unanswered``.
    """
    return rec.get("outcome") or ("correct" if rec["correct"] else "wrong")


@dataclass(frozen=True)
class Budget:
    """When a track stops asking for want of answers, and how many questions a whole run may ask.

    A question that got no answer (``error``: no reply, a refusal by error, a timeout; ``unanswered``:
    a reply naming no single option) is not fed to the posterior: the track asks again at the value
    the posterior still wants (a new item), until it has ``errors`` errors or ``unanswered`` unanswered
    questions, or ``patience`` non-answers in a row (a model that answers nothing stops early).
    ``questions`` caps the questions of the whole run (0: no cap).
    """

    errors: int = 80
    unanswered: int = 80
    patience: int = 12
    questions: int = 0

    @classmethod
    def of(cls, settings: QuestSettings, max_error_rate: float = 0.5) -> Budget:
        """The budget of a run with ``settings``: as many errors per track as keep a track run to its
        ``max_trials`` answers within ``max_error_rate`` (at most 4x ``max_trials``), as many unanswered
        questions as ``max_trials``, ``patience`` = ``max(min_trials, 10)``.

        Parameters
        ----------
        settings : QuestSettings
            The procedure's settings (``max_trials``, ``min_trials``, ``max_questions``).
        max_error_rate : float, optional
            Share of questions without reply the run tolerates (0..1).

        Returns
        -------
        Budget
            The run's budget.
        """
        r = float(max_error_rate)
        errors = 4 * settings.max_trials if r >= 0.8 else math.ceil(settings.max_trials * r / (1.0 - r))
        return cls(
            errors=errors,
            unanswered=settings.max_trials,
            patience=max(settings.min_trials, 10),
            questions=int(getattr(settings, "max_questions", 0) or 0),
        )


@dataclass(frozen=True)
class TrackResult:
    """A finished track: its procedure (estimate, posterior), the records of its questions, and why it
    stopped before its procedure was done (``None``: the stop rule; ``"errors"``, ``"unanswered"``,
    ``"max_questions"``)."""

    name: str
    procedure: QuestPlusProcedure | Procedure
    records: list[dict]
    stopped: str | None = None


def run_track(
    name: str, procedure: Procedure, respond: Callable[[int, float], dict], *, budget: Budget | None = None
) -> TrackResult:
    """Run ``procedure`` to its stop rule; ``respond(trial, value)`` returns a record with ``correct``.

    Parameters
    ----------
    name : str
        The track's name.
    procedure : Procedure
        The adaptive procedure (e.g. :class:`~.quest.QuestPlusProcedure`).
    respond : callable
        ``respond(trial, value) -> record``: the outcome of question ``trial`` (int) at ``value``
        (float, the task's level unit); the record has ``correct`` and may have ``outcome``.
    budget : Budget or None, optional
        When a track stops for want of answers, and the run's question cap (default :class:`Budget`).

    Returns
    -------
    TrackResult
        The procedure, the records of its questions and why it stopped early (if it did).
    """
    return run_interleaved([(name, procedure, respond)], budget=budget)[0]


def _gave_up(records: list[dict], budget: Budget) -> str | None:
    """Why a track stops for want of answers (see :class:`Budget`), or None."""
    kinds = [outcome(r) for r in records]
    if kinds.count("error") >= max(budget.errors, 1):
        return "errors"
    if kinds.count("unanswered") >= budget.unanswered:
        return "unanswered"
    tail = kinds[-budget.patience :] if budget.patience else []
    if len(tail) == budget.patience and tail and not any(k in ANSWERS for k in tail):
        return "errors" if tail.count("error") >= tail.count("unanswered") else "unanswered"
    return None


def run_interleaved(
    tracks: list[tuple[str, Procedure, Callable[[int, float], dict]]], *, budget: Budget | None = None
) -> list[TrackResult]:
    """Run several tracks interleaved: one question of each unfinished track in turn, until every
    procedure is done or has stopped (:class:`Budget`). Each track's values, items and estimate are
    those it would have alone (its items are seeded by track and question); only the order in which
    the model meets them changes. Only answers (``correct``/``wrong``) update a procedure.

    Parameters
    ----------
    tracks : list of tuple of (str, Procedure, callable)
        ``(name, procedure, respond)`` per track, as :func:`run_track` takes them.
    budget : Budget or None, optional
        When a track stops for want of answers, and the run's question cap (default :class:`Budget`).

    Returns
    -------
    list of TrackResult
        One per track, in the order given.
    """
    budget = budget or Budget()
    records: list[list[dict]] = [[] for _ in tracks]
    stopped: list[str | None] = [None] * len(tracks)
    asked = 0
    while True:
        active = [k for k, (_, proc, _) in enumerate(tracks) if stopped[k] is None and not proc.done()]
        if not active:
            return [TrackResult(name, proc, records[k], stopped[k]) for k, (name, proc, _) in enumerate(tracks)]
        for k in active:
            if budget.questions and asked >= budget.questions:
                stopped[k] = "max_questions"
                continue
            _, proc, respond = tracks[k]
            value = proc.next_level()
            rec = respond(len(records[k]), value)
            asked += 1
            if outcome(rec) in ANSWERS:
                proc.update(value, outcome(rec) == "correct")
            records[k].append(rec)
            stopped[k] = _gave_up(records[k], budget)


class ItemResponder:
    """Makes the item of each question of ``task`` and gets its reply: from ``stored`` records where
    they hold it (replay, or a run continued after an interruption; the regenerated item must be the
    recorded one), else from ``asker`` (a model), the new record going to ``sink``."""

    def __init__(
        self,
        task: Task,
        *,
        seed: int,
        track: str,
        asker: TrialAsker | None = None,
        stored: dict | None = None,
        sink: Callable[[dict], None] = lambda rec: None,
    ):
        if asker is None and stored is None:
            raise ParameterError("ItemResponder needs a model (asker) or stored replies (replay); allowed: one or both")
        self.task, self.seed, self.track = task, seed, track
        self.asker, self.stored, self.sink = asker, stored or {}, sink

    def __call__(self, trial: int, value: float) -> dict:
        made = make_trial_item(self.task, value, seed=self.seed, track=self.track, trial=trial)
        p = trial_presentation(made.item, trial)
        old = self.stored.get((self.track, trial))
        if old is None and self.asker is not None:
            reply, error, usage = self.asker.ask(made.item, p)
            rec = trial_record(self.track, trial, made, p, reply, error, usage=usage)
            self.sink(rec)
            return rec
        rec = trial_record(
            self.track, trial, made, p, old and old["reply"], old and old["error"], usage=old and old.get("usage")
        )
        _check_replay(old, rec)
        return rec


def _check_replay(old: dict | None, new: dict) -> None:
    where = f"replay: track {new['track']} trial {new['trial']}"
    if old is None:
        raise ParameterError(f"{where} was not recorded; allowed: a trials.jsonl holding the whole run")
    for key in ("level_value", "audio_sha256", "presented", "truth"):
        if old.get(key) != new[key]:
            raise ParameterError(
                f"{where}: {key} is {new[key]!r}, the recorded run had {old.get(key)!r}; "
                "allowed: the same seed, task config and settings as the recorded run"
            )


def track_summary(result: TrackResult) -> dict:
    """The JSON-able report of one track: threshold, 95 % interval, answered trials, status, the questions
    asked and how they ended, the track of values and outcomes of the answers; ``reason`` says why a track
    reports no threshold.

    Parameters
    ----------
    result : TrackResult
        A finished track.

    Returns
    -------
    dict
        ``threshold`` and ``ci95`` (level unit; None for no number), ``n_trials``, ``status``, ``questions``,
        ``stopped``, ``tokens``, ``answer_bias``, ``levels``, ``correct``, the procedure's posterior summary.
    """
    est = result.procedure.estimate()
    kinds = [outcome(r) for r in result.records]
    answers = [r for r, k in zip(result.records, kinds) if k in ANSWERS]
    summary = {
        "track": result.name,
        "threshold": None if est.threshold == float("inf") else est.threshold,
        "ci95": [None if v == float("inf") else v for v in est.ci95],
        "n_trials": est.n_trials,
        **est.posterior,
        "questions": {
            "asked": len(kinds),
            "answered": len(answers),
            "error": kinds.count("error"),
            "unanswered": kinds.count("unanswered"),
        },
        "stopped": result.stopped or "stop_rule",
        "tokens": _tokens(result.records),
        "answer_bias": answer_bias(answers),
        "levels": [round(r["level_value"], 6) for r in answers],
        "correct": [bool(r["correct"]) for r in answers],
    }
    if hasattr(result.procedure, "marginal"):
        summary["posterior_threshold"] = result.procedure.marginal()
    summary.update(_no_number(result, summary))
    if summary["threshold"] is None and "bound" not in summary:
        summary["reason"] = summary.get("message", "") + _bias_note(summary["answer_bias"])
    return summary


def _no_number(result: TrackResult, summary: dict) -> dict:
    """What replaces a track's threshold when it may not report one: a track stopped for want of answers,
    or a bound where the threshold lies past the hardest level tested; empty otherwise."""
    domain = getattr(result.procedure, "domain", None)
    if result.stopped in ("errors", "unanswered"):  # too few answers: no number
        q = summary["questions"]
        what = "no reply (errors)" if result.stopped == "errors" else "no single option named (unanswered)"
        return dict(
            threshold=None,
            ci95=[None, None],
            status="stopped",
            message=f"no threshold: {q[result.stopped if result.stopped == 'unanswered' else 'error']} of "
            f"{q['asked']} questions got {what}",
        )
    if summary.get("status") == "below_range" and domain is not None:  # a bound, never a number past the data
        hard = domain.hard_value()
        side = "below" if domain.easier == "larger" else "above"
        return dict(
            threshold=None,
            bound=hard,
            bound_side="<" if side == "below" else ">",
            message=f"{side} {hard:g} {domain.unit} (the hardest level tested)",
        )
    return {}


def _tokens(records: list[dict]) -> dict | None:
    """The tokens of a track's questions, summed from the server's ``usage`` (None when none was reported)."""
    used = [r["usage"] for r in records if r.get("usage")]
    if not used:
        return None
    return {k: sum(int(u.get(k, 0)) for u in used) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}


def _choice(rec: dict) -> tuple[str | None, int | None]:
    """``(option text, presented position)`` an answer chose."""
    if "choice_position" in rec:  # a simulated observer's record
        return rec.get("choice_text"), rec["choice_position"]
    parsed = rec.get("parsed") or {}
    if parsed.get("index") is None:
        return None, None
    return rec["presented"][parsed["index"]], int(parsed["index"])


def answer_bias(answers: list[dict]) -> dict | None:
    """The commonest option text and presented position among a track's answers, with their shares
    (a model that always says "the same" or always picks the first option shows here; None without answers).

    Parameters
    ----------
    answers : list of dict
        The records of a track's answers (``correct`` or ``wrong``).

    Returns
    -------
    dict or None
        ``text``, ``text_share``, ``position`` (0-based, as presented), ``position_share`` and ``answers``.
    """
    picks = [_choice(r) for r in answers]
    texts = [t for t, _ in picks if t is not None]
    spots = [k for _, k in picks if k is not None]
    if not spots:
        return None
    text = max(set(texts), key=lambda t: (texts.count(t), t)) if texts else None
    spot = max(set(spots), key=lambda k: (spots.count(k), -k))
    return {
        "text": text,
        "text_share": round(texts.count(text) / len(texts), 4) if texts else None,
        "position": spot,
        "position_share": round(spots.count(spot) / len(spots), 4),
        "answers": len(spots),
    }


BIAS_SHARE = 0.9  # an option text or position chosen in at least this share of the answers is named in the reason


def _bias_note(bias: dict | None) -> str:
    if not bias:
        return ""
    if bias["text_share"] is not None and bias["text_share"] >= BIAS_SHARE:
        return f"; the model answered {bias['text']!r} in {100 * bias['text_share']:.0f} % of {bias['answers']} answers"
    if bias["position_share"] >= BIAS_SHARE:
        return (
            f"; the model chose option {'ABCDEFGHIJ'[bias['position']]} (position {bias['position'] + 1}) in "
            f"{100 * bias['position_share']:.0f} % of {bias['answers']} answers"
        )
    return ""


def run_failure(results: list[TrackResult], max_error_rate: float) -> str | None:
    """Why a run's thresholds cannot be published: more than ``max_error_rate`` of its questions (or all of
    them) got no reply -- as in grid mode; None otherwise.

    Parameters
    ----------
    results : list of TrackResult
        Every track of the run.
    max_error_rate : float
        Largest share of questions without reply (0..1).

    Returns
    -------
    str or None
        The reason, naming the counts and the rate.
    """
    kinds = [outcome(r) for res in results for r in res.records]
    asked, errors = len(kinds), kinds.count("error")
    if asked and (errors == asked or errors / asked > max_error_rate):
        return (
            f"{errors} of {asked} questions got no reply (error rate {errors / asked:.2f} > "
            f"eval.max_error_rate={max_error_rate:g}, or every question failed)"
        )
    return None


def run_adaptive(
    tasks: list[Task],
    adapter=None,
    *,
    out: str | Path,
    seed: int = 0,
    settings: QuestSettings | None = None,
    extend: float = 16.0,
    instruction: str = "",
    keep_audio: bool = False,
    replay: bool = False,
    overwrite: bool = False,
    model: dict | None = None,
    max_error_rate: float = 0.5,
    log=print,
) -> dict:
    """One QUEST+ track per task against ``adapter``, or replayed from ``trials.jsonl`` (see the module docstring).

    Parameters
    ----------
    tasks : list of Task
        Configured tasks, each run as its tracks (:func:`~auralgen.tasks.design.track_tasks`).
    adapter : Adapter or None, optional
        The model asked; None only with ``replay``.
    out : str or Path
        The run folder: ``trials.jsonl``, ``adaptive_run.json``, ``adaptive.json``, ``plots/``.
    seed : int, optional
        Seeds every trial's item, with its track and index.
    settings : QuestSettings or None, optional
        The procedure's grids and stop rule (default :class:`~.quest.QuestSettings`).
    extend : float, optional
        How far each domain reaches past its grid's hard end (:func:`~.domain.domain_for`).
    instruction : str, optional
        Text appended to every question.
    keep_audio : bool, optional
        Keep the trials' WAV files under ``<out>/audio``.
    replay, overwrite : bool, optional
        ``replay``: ask nothing, take every reply from ``trials.jsonl`` and write nothing; ``overwrite``:
        delete a previous run's files in ``out`` and start afresh.
    model : dict or None, optional
        The model mapping, recorded: a continued run must have the same (runtime keys aside).
    max_error_rate : float, optional
        Largest share of questions without reply (0..1); above it, ``RunFailedError`` after writing the report.
    log : callable, optional
        Called with each progress line (str).

    Returns
    -------
    dict
        What ``<out>/adaptive.json`` holds: ``tracks`` (name to :func:`track_summary`), ``seed``, ``status``, ...
    """
    out, settings = Path(out), settings or QuestSettings()
    if not replay and adapter is None:
        raise ParameterError("run_adaptive: no model; allowed: an adapter, or replay=True with a recorded run")
    stored = prepare_out(out, run_stamp(tasks, seed, settings, extend, model), replay, overwrite, log)
    asker = None if replay else TrialAsker(adapter, out, instruction=instruction, keep_audio=keep_audio)
    plan = [(name, sub) for task in tasks for name, sub in track_tasks(task)]
    runs = _run_plan(plan, asker, stored, out, seed, extend, settings, Budget.of(settings, max_error_rate))
    head = {"seed": seed, "extend": extend, "settings": plain(asdict(settings)), "replay": replay, "model": model or {}}
    return _finish(out, plan, runs, head, max_error_rate, log)


def _run_plan(
    plan: list, asker, stored: dict, out: Path, seed: int, extend: float, settings: QuestSettings, budget: Budget
) -> list[TrackResult]:
    """Every ``(track name, task)`` of ``plan`` as a QUEST+ track on the task's domain, run interleaved; new
    records appended to ``<out>/trials.jsonl`` (none without ``asker``: a replay); ``asker`` closed at the end."""
    sink = (lambda rec: None) if asker is None else appender(out / "trials.jsonl")
    try:
        tracks = [
            (
                name,
                QuestPlusProcedure(domain_for(sub, extend=extend), chance=1.0 / sub.n_choices, settings=settings),
                ItemResponder(sub, seed=seed, track=name, asker=asker, stored=stored, sink=sink),
            )
            for name, sub in plan
        ]
        return run_interleaved(tracks, budget=budget)
    finally:
        if asker is not None:
            asker.close()


def _finish(out: Path, plan: list, runs: list[TrackResult], head: dict, max_error_rate: float, log) -> dict:
    """The run's results, logged and (unless replayed) written to ``out``; a RunFailedError when more than
    ``max_error_rate`` of the questions got no reply."""
    summaries = {name: {**track_summary(result), **human_jnd(sub)} for (name, sub), result in zip(plan, runs)}
    _log_tracks(summaries, dict(plan), log)
    failure = run_failure(runs, max_error_rate)
    results = _results(summaries, head, failure)
    if not head["replay"]:
        write_report(out, results)
    if failure is not None:
        from ..adapters.base import RunFailedError

        raise RunFailedError(f"{failure}; no leaderboard row written; details in {str(out / 'adaptive.json')!r}")
    return results


def _results(tracks: dict, head: dict, failure: str | None) -> dict:
    """The content of ``adaptive.json``: the track summaries, what they depend on (``head``) and the run's status."""
    return {
        "tracks": tracks,
        **head,
        "status": "failed" if failure else "ok",
        **({"failure": failure} if failure else {}),
    }


def _log_tracks(tracks: dict, subs: dict, log) -> None:
    for name, t in tracks.items():
        unit = subs[name].level_unit
        shown = t.get("message") or f"{t['threshold']:.4g} {unit} (95 % CI {t['ci95'][0]:.4g}-{t['ci95'][1]:.4g})"
        human = f"; human {t['human_jnd']:g} {t['human_jnd_unit']}" if t.get("human_jnd") is not None else ""
        q = t["questions"]
        extra = (
            f" ({q['asked']} questions: {q['error']} without reply, {q['unanswered']} unanswered)"
            if (q["error"] or q["unanswered"])
            else ""
        )
        extra += f", {t['tokens']['total_tokens']} tokens" if t.get("tokens") else ""
        log(f"{name}: {shown}, {t['n_trials']} trials{extra}{human}")


def build_task(name: str, audio=None, **overrides) -> Task:
    """Task ``name`` with its default config (plus ``overrides``), validated -- for library callers and tests.

    Parameters
    ----------
    name : str
        A registered task name.
    audio : AudioConfig or None, optional
        Sample rate, full-scale level and sound source (default :class:`~auralgen.tasks.base.AudioConfig`).
    **overrides
        Fields of the task's ``Config`` to change.

    Returns
    -------
    Task
        The configured task.

    Raises
    ------
    ParameterError
        An override out of its allowed range.
    """
    from auralgen.tasks.base import AudioConfig, task_class

    cls = task_class(name)
    audio = audio or AudioConfig()
    cfg = cls.Config(**overrides)
    cfg.check(audio, f"tasks.{name}")
    return cls(cfg, audio)
