"""Adaptive evaluation: one QUEST+ track per task, items generated at the values it asks for.

:func:`run_track` is the loop every track runs -- ask the procedure for a value, get the outcome
of a trial there from a *responder* (``respond(trial, value) -> record``), update, until the
procedure is done. Responders: :class:`ItemResponder` (makes the item and asks a model through a
:class:`~.trials.TrialAsker`, or, replaying, takes the reply stored in ``trials.jsonl`` and checks
the regenerated item is the one asked), or a
:class:`~.observers.SimulatedObserver` (no audio).

:func:`run_adaptive` runs a list of tasks against a model, their tracks interleaved
(:func:`run_interleaved`: one trial of each in turn; a task may run several tracks, e.g. the
audiogram one per frequency, :meth:`~auralgen.tasks.base.Task.adaptive_tracks`): it writes every
trial to ``<out>/trials.jsonl`` as it is asked and the thresholds, each beside the published human
JND of its attribute (:mod:`.jnd`), to ``<out>/adaptive.json``.
``replay=True`` asks nothing: the replies come from ``<out>/trials.jsonl`` and the run must
reproduce the same sequence of values (a :class:`ParameterError` names the first trial that
differs), so the thresholds can be recomputed with no model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.core.mapping import plain
from auralgen.tasks.base import Task

from ..procedure import Procedure
from .domain import domain_for
from .jnd import human_jnd
from .quest import QuestPlusProcedure, QuestSettings
from .trials import TrialAsker, make_trial_item, read_trials, trial_presentation, trial_record

__all__ = ["ItemResponder", "TrackResult", "run_adaptive", "run_interleaved", "run_track", "track_summary"]


@dataclass(frozen=True)
class TrackResult:
    """A finished track: its procedure (estimate, posterior) and the records of its trials."""

    name: str
    procedure: QuestPlusProcedure | Procedure
    records: list[dict]


def run_track(name: str, procedure: Procedure, respond: Callable[[int, float], dict]) -> TrackResult:
    """Run ``procedure`` to its stop rule; ``respond(trial, value)`` returns a record with ``correct``."""
    return run_interleaved([(name, procedure, respond)])[0]


def run_interleaved(tracks: list[tuple[str, Procedure, Callable[[int, float], dict]]]) -> list[TrackResult]:
    """Run several tracks interleaved: one trial of each unfinished track in turn, until every
    procedure is done. Each track's values, items and estimate are those it would have alone (its
    items are seeded by track and trial); only the order in which the model meets them changes."""
    records: list[list[dict]] = [[] for _ in tracks]
    while True:
        active = [k for k, (_, proc, _) in enumerate(tracks) if not proc.done()]
        if not active:
            return [TrackResult(name, proc, records[k]) for k, (name, proc, _) in enumerate(tracks)]
        for k in active:
            _, proc, respond = tracks[k]
            value = proc.next_level()
            rec = respond(len(records[k]), value)
            proc.update(value, bool(rec["correct"]))
            records[k].append(rec)


class ItemResponder:
    """Makes the item of each trial of ``task`` and gets its reply: from ``asker`` (a model) or from
    ``stored`` records (replay; the regenerated item must be the recorded one). Each record goes to ``sink``."""

    def __init__(self, task: Task, *, seed: int, track: str, asker: TrialAsker | None = None,
                 stored: dict | None = None, sink: Callable[[dict], None] = lambda rec: None):  # fmt: skip
        if (asker is None) == (stored is None):
            raise ParameterError("ItemResponder needs a model (asker) or stored replies (replay); allowed: exactly one")
        self.task, self.seed, self.track = task, seed, track
        self.asker, self.stored, self.sink = asker, stored, sink

    def __call__(self, trial: int, value: float) -> dict:
        made = make_trial_item(self.task, value, seed=self.seed, track=self.track, trial=trial)
        p = trial_presentation(made.item, trial)
        if self.stored is None:
            reply, error = self.asker.ask(made.item, p)
            rec = trial_record(self.track, trial, made, p, reply, error)
        else:
            old = self.stored.get((self.track, trial))
            rec = trial_record(self.track, trial, made, p, old and old["reply"], old and old["error"])
            _check_replay(old, rec)
        self.sink(rec)
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
    """The JSON-able report of one track: threshold, 95 % interval, trials, status, the track of values and outcomes."""
    est = result.procedure.estimate()
    summary = {
        "track": result.name,
        "threshold": None if est.threshold == float("inf") else est.threshold,
        "ci95": [None if v == float("inf") else v for v in est.ci95],
        "n_trials": est.n_trials,
        **est.posterior,
        "levels": [round(r["level_value"], 6) for r in result.records],
        "correct": [bool(r["correct"]) for r in result.records],
    }
    if hasattr(result.procedure, "marginal"):
        summary["posterior_threshold"] = result.procedure.marginal()
    domain = getattr(result.procedure, "domain", None)
    if summary.get("status") == "below_range" and domain is not None:  # a bound, never a number past the data
        hard = domain.hard_value()
        side = "below" if domain.easier == "larger" else "above"
        summary.update(threshold=None, bound=hard, bound_side="<" if side == "below" else ">",
                       message=f"{side} {hard:g} {domain.unit} (the hardest level tested)")  # fmt: skip
    return summary


def run_adaptive(tasks: list[Task], adapter=None, *, out: str | Path, seed: int = 0,
                 settings: QuestSettings | None = None, extend: float = 16.0, instruction: str = "",
                 keep_audio: bool = False, replay: bool = False, overwrite: bool = False, model: dict | None = None,
                 log=print) -> dict:  # fmt: skip
    """One QUEST+ track per task against ``adapter`` (or the stored replies with ``replay``); see the module docstring.

    Returns the results written to ``<out>/adaptive.json``: ``{"tracks": {task: track_summary}, "seed", "settings"}``.
    """
    out = Path(out)
    settings = settings or QuestSettings()
    trials_path = out / "trials.jsonl"
    stored = read_trials(trials_path) if replay else None
    if not replay:
        if adapter is None:
            raise ParameterError("run_adaptive: no model; allowed: an adapter, or replay=True with a recorded run")
        if trials_path.exists() and not overwrite:
            raise ParameterError(
                f"out={str(out)!r} already holds trials.jsonl; allowed: replay=true, a new out, or overwrite=true"
            )
        out.mkdir(parents=True, exist_ok=True)
        trials_path.write_text("", encoding="utf-8")
    asker = None if replay else TrialAsker(adapter, out, instruction=instruction, keep_audio=keep_audio)
    sink = (lambda rec: None) if replay else _appender(trials_path)
    plan = [(name, sub) for task in tasks for name, sub in task.adaptive_tracks()]
    try:
        runs = run_interleaved([
            (name, QuestPlusProcedure(domain_for(sub, extend=extend), chance=1.0 / sub.n_choices, settings=settings),
             ItemResponder(sub, seed=seed, track=name, asker=asker, stored=stored, sink=sink))
            for name, sub in plan
        ])  # fmt: skip
    finally:
        if asker is not None:
            asker.close()
    tracks = {}
    for (name, sub), result in zip(plan, runs):
        t = tracks[name] = {**track_summary(result), **human_jnd(sub)}
        shown = (
            t.get("message") or f"{t['threshold']:.4g} {sub.level_unit} (95 % CI {t['ci95'][0]:.4g}-{t['ci95'][1]:.4g})"
        )
        human = f"; human {t['human_jnd']:g} {t['human_jnd_unit']}" if t.get("human_jnd") is not None else ""
        log(f"{name}: {shown}, {t['n_trials']} trials{human}")
    results = {"tracks": tracks, "seed": seed, "extend": extend, "settings": plain(asdict(settings)), "replay": replay,
               "model": model or {}}  # fmt: skip
    if not replay:
        (out / "adaptive.json").write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        from auralgen.evaluation.plots import plot_adaptive_track

        for name, t in tracks.items():  # the run's report: one figure per track
            if t["levels"]:
                plot_adaptive_track(t, out / "plots" / f"adaptive_{name.replace('@', '_')}.png")
    return results


def _appender(path: Path) -> Callable[[dict], None]:
    def append(rec: dict) -> None:
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")

    return append


def build_task(name: str, audio=None, **overrides) -> Task:
    """Task ``name`` with its default config (plus ``overrides``), validated -- for library callers and tests."""
    from auralgen.tasks.base import AudioConfig, task_class

    cls = task_class(name)
    audio = audio or AudioConfig()
    cfg = cls.Config(**overrides)
    cfg.check(audio, f"tasks.{name}")
    return cls(cfg, audio)
