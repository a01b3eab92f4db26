"""Fixed-item evaluation: ask a model every (item, presentation) of a split, cache, score, report.

:func:`evaluate` is ``action=evaluate`` (and ``rescore``, which asks nothing). The messages
(clips decoded, WAV files written) are prepared through an
:class:`~auralgen.execution.Executor` (default: in this process, one at a time, as the
model's workers ask for them); the model's replies are awaited with ``adapter.concurrency``
requests in flight and cached as they come, so an interrupted run resumes.

The dataset is read record batch by record batch, several times (checked; the questions to ask;
the questions asked, with their audio; scored), and the reply cache keeps an index, not the
replies: the memory a run takes does not grow with the dataset, only the scoring records
(a few hundred bytes per question) do. A reply longer than ``eval.max_reply_chars`` is stored
cut (its head and its tail) and counted (``replies.truncated`` in ``results.json``).

Adaptive evaluation (a level chosen trial by trial, ``mode=adaptive``) does not go through here but
through a :class:`~auralgen.evaluation.procedure.Procedure`; see that module.

Failures after retries (``eval.on_error=count``, the default) are cached with
``reply: null``, reported under ``accounting.error`` and scored wrong; the next run asks
them again. With ``eval.on_error=stop`` the first failure ends the run (replies so far
stay cached). A run whose questions failed more often than ``eval.max_error_rate`` (or
all of them) is failed: ``results.json`` says so (``status: failed``), the leaderboard gets
no row, and :class:`RunFailedError` ends the run (``auralgen evaluate`` exits 3).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass
from functools import partial
from itertools import tee
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.execution import Executor, SerialExecutor
from auralgen.export.storage import is_url, local_dataset

from .adapters import Adapter, FatalModelError, ModelError, build_adapter, check_model_config, strip_answer
from .adapters.base import RUNTIME_MODEL_KEYS, RunFailedError
from .cache import ReplyCache
from .config import EvalRunConfig, EvalSettings
from .items import Item, clip_wavs, dataset_fingerprint, iter_items
from .judge import make_judge
from .leaderboard import update_leaderboard
from .metrics import score
from .parsing import extract_choice
from .prompts import Presentation, build_message, cache_key, n_runs, present
from .redaction import redact
from .report import accounting, frequency_analyses, frequency_levels, psychometrics, write_json, write_plots
from .verdict import is_correct

__all__ = ["RunFailedError", "evaluate", "leaderboard_path", "plan"]

ERROR_POLICY = {
    "count": "a reply that failed after every retry is an 'error' answer: cached with reply=null, counted wrong, "
    "reported under accounting.error, and asked again by the next run",
    "stop": "the first reply that failed after every retry stops the run; replies so far stay cached",
}


def leaderboard_path(leaderboard: str | None, out: str | Path) -> Path:
    """Where the leaderboard goes: ``leaderboard=PATH``, else ``<out>/leaderboard.md``.

    Parameters
    ----------
    leaderboard : str or None
        The ``leaderboard`` setting.
    out : str or Path
        The run's output folder.

    Returns
    -------
    Path
        The leaderboard markdown file.
    """
    return Path(leaderboard) if leaderboard else Path(out) / "leaderboard.md"


def plan(items: list[Item], settings: EvalSettings) -> list[tuple[Item, Presentation]]:
    """Every (item, presentation) to ask, item by item.

    Parameters
    ----------
    items : list of Item
        The items of the run.
    settings : EvalSettings
        The ``eval`` settings (``rotations``, ``reorder_runs``).

    Returns
    -------
    list of (Item, Presentation)
        One pair per question, an item's presentations in run order.
    """
    return [(it, p) for it in items for p in presentations(it, settings)]


def presentations(item: Item, settings: EvalSettings) -> list[Presentation]:
    """The presentations of ``item`` asked (its rotations, or clip orders).

    Parameters
    ----------
    item : Item
        An item of the run.
    settings : EvalSettings
        As in :func:`plan`.

    Returns
    -------
    list of Presentation
        One per run ``r = 0 .. n_runs - 1`` (:func:`~.prompts.n_runs`).
    """
    runs = n_runs(item, rotations=settings.rotations, reorder_runs=settings.reorder_runs)
    return [present(item, r) for r in range(runs)]


def _fingerprint(model_desc: dict, *, data: str, split: str, settings: EvalSettings) -> dict:
    """What the cached replies depend on; a run into an ``out`` with another fingerprint is refused."""
    s = settings
    return {
        "model": {k: v for k, v in model_desc.items() if k not in RUNTIME_MODEL_KEYS},
        "data": data if is_url(data) else str(Path(data).resolve()),
        "split": split,
        "eval": {
            "rotations": s.rotations,
            "reorder_runs": s.reorder_runs,
            "instruction": s.instruction,
            "seed": s.seed,
        },
    }


def _model_desc(model: dict) -> dict:
    """The model config as written to disk (defaults filled, no secrets; built without side effects)."""
    return redact(asdict(check_model_config(model)))  # no credentials from a base_url


def _check_out(out: Path, fp: dict, *, overwrite: bool) -> None:
    run_json = out / "run.json"
    if overwrite and out.exists():
        for name in ("replies.jsonl", "run.json", "results.json", "judge.jsonl", "command_stdout.log"):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "plots", ignore_errors=True)
    if run_json.exists():
        old = json.loads(run_json.read_text(encoding="utf-8"))
        if old != fp:
            diff = sorted(k for k in fp if old.get(k) != fp[k])
            raise ParameterError(
                f"out={str(out)!r} holds replies of another run (different {', '.join(diff)}); "
                "allowed: a new out, or overwrite=true to discard them"
            )
    out.mkdir(parents=True, exist_ok=True)
    write_json(run_json, fp)


def evaluate(cfg: EvalRunConfig, *, executor: Executor | None = None, log=print) -> dict:
    """Ask, cache, score and report (``action=evaluate``; ``rescore`` asks nothing).

    Parameters
    ----------
    cfg : EvalRunConfig
        The validated run (:func:`~auralgen.evaluation.config.validate_eval`).
    executor : Executor, optional
        Writes each item's clips as WAV files for the model (one work unit per item); the paths
        come back in item order, so the replies, the cache and the scores do not depend on it.
        Default: :class:`~auralgen.execution.SerialExecutor`. The caller closes its executor.
    log : callable
        Progress lines.

    Returns
    -------
    dict
        The content of ``results.json`` (model, dataset, accounting, scores, psychometric fits, protocol).

    Raises
    ------
    RunFailedError
        More questions than ``eval.max_error_rate`` got no reply (``results.json`` is written, ``status: failed``).
    """
    s = cfg.eval
    data = local_dataset(cfg.data)  # a bucket's dataset: copied once into the local cache
    items = partial(iter_items, data, split=cfg.split, tasks=cfg.tasks, max_items=cfg.max_items)
    n_items = sum(1 for _ in items())  # every item checked (audio decoded) before anything is written
    out = Path(cfg.out)
    if cfg.action == "rescore":
        model_desc, fp = _recorded_run(out)
    else:
        model_desc = _model_desc(cfg.model)
        fp = _fingerprint(model_desc, data=cfg.data, split=cfg.split, settings=s)
        _check_out(out, fp, overwrite=cfg.overwrite)
    cache = ReplyCache(out / "replies.jsonl")
    n_jobs, n_todo = _todo(items(audio=False), cache, s, data=cfg.data)
    if cfg.action == "rescore" and n_todo:
        raise ParameterError(
            f"{n_todo} of {n_jobs} replies are not cached in {str(out / 'replies.jsonl')!r}; "
            "allowed: action=evaluate to ask them"
        )
    log(f"{n_items} items, {n_jobs} questions; {n_jobs - n_todo} cached, asking {n_todo}")
    protocol = {}
    if n_todo:
        todo = _unanswered(items(), cache, s)
        asking = Asking(model=cfg.model, settings=s, out=out, progress=cfg.progress)
        protocol = _ask_todo(asking, todo, n_todo, cache, executor or SerialExecutor(), log=log)
    cache.close()
    records = _records(items(audio=False), cache, s, out)
    results = build_results(records, model_desc, fp, settings=s, data=cfg.data, split=cfg.split, dataset_items=n_items)
    results["protocol"] = protocol or _previous_protocol(out)
    _publish(out, results, max_error_rate=s.max_error_rate, leaderboard=leaderboard_path(cfg.leaderboard, out), log=log)
    return results


def _recorded_run(out: Path) -> tuple[dict, dict]:
    """``(model description, run fingerprint)`` recorded by the run ``rescore`` scores again."""
    if not (out / "run.json").exists():
        raise ParameterError(f"out={str(out)!r} holds no run.json; allowed: the out folder of an earlier evaluate run")
    fp = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return fp["model"], fp


def _todo(items, cache: ReplyCache, settings: EvalSettings, *, data: str) -> tuple[int, int]:
    """``(questions, questions without a cached reply)``; a cache asked with other options than
    ``data`` gives now is refused."""
    n_jobs = n_todo = 0
    for item in items:
        for p in presentations(item, settings):
            key = cache_key(item.id, p.rotation)
            n_jobs += 1
            if cache.answered(key):
                entry = cache.get(key)
                if entry.get("options") != p.options or entry.get("truth") != p.truth:
                    raise ParameterError(
                        f"reply cache entry {key!r} was asked with other options than data={data!r} gives now; "
                        "allowed: the same dataset, or overwrite=true"
                    )
            else:
                n_todo += 1
    return n_jobs, n_todo


def _unanswered(items, cache: ReplyCache, settings: EvalSettings):
    """``(item, presentations without a cached reply)`` per item that has any, lazily."""
    for item in items:
        todo = [p for p in presentations(item, settings) if not cache.answered(cache_key(item.id, p.rotation))]
        if todo:
            yield item, todo


@dataclass(frozen=True)
class Asking:
    """What asking the model needs: its config, the ``eval`` settings, where the run writes, and
    whether progress lines are printed."""

    model: dict
    settings: EvalSettings
    out: Path
    progress: bool = True


def _ask_todo(asking: Asking, todo, n_todo: int, cache: ReplyCache, executor: Executor, *, log) -> dict:
    """Ask ``todo`` (``(item, presentations)`` pairs; messages prepared by ``executor``).

    Returns the adapter's protocol report.
    """
    out, s = asking.out, asking.settings
    adapter = build_adapter(asking.model, seed=s.seed, workdir=out / "audio", logdir=out)
    to_executor, to_messages = tee(todo)  # the executor runs at most its look-ahead window in front
    wavs = executor.map_ordered(partial(clip_wavs, audio_dir=out / "audio"), (item for item, _ in to_executor))
    messages = _messages(to_messages, wavs, instruction=s.instruction)
    try:
        t0 = time.perf_counter()
        asyncio.run(ask(adapter, messages, n_todo, cache, asking, log=log))
        log(f"asked {n_todo} questions in {time.perf_counter() - t0:.1f} s")
    finally:
        messages.close()
        getattr(wavs, "close", lambda: None)()
        protocol = _settle_protocol(adapter, cache, log)
        adapter.close()
        cache.close()
        if not s.keep_audio:
            shutil.rmtree(out / "audio", ignore_errors=True)
    return protocol


def _messages(todo, wavs, *, instruction: str | None):
    """``((item, presentation), message)`` per question of ``todo``, without the answer; ``wavs`` yields
    the WAV paths of each item of ``todo`` in turn (written once, whatever the rotations)."""
    for (item, ps), paths in zip(todo, wavs):
        for p in ps:
            yield (item, p), strip_answer(build_message(item, p, paths, instruction=instruction))


def _records(items, cache: ReplyCache, settings: EvalSettings, out: Path) -> list[dict]:
    """The scoring records of the cached replies (unparseable ones judged where ``eval.judge`` is set)."""
    judge = make_judge(settings, out)
    records = [
        record(item, p, cache.get(cache_key(item.id, p.rotation)), judge)
        for item in items
        for p in presentations(item, settings)
    ]
    cache.close()
    if judge is not None:
        judge.close()
    return records


def _publish(out: Path, results: dict, *, max_error_rate: float, leaderboard: Path, log) -> None:
    """Write ``results.json``, the plots and the leaderboard row (into ``leaderboard``); a failed run raises
    :class:`RunFailedError`."""
    failure = _failure(results["accounting"]["overall"], max_error_rate)
    results["status"] = "ok" if failure is None else "failed"
    if failure is not None:
        results["failure"] = failure
    results["plots"] = write_plots(results, out / "plots")
    write_json(out / "results.json", results)
    board = update_leaderboard(leaderboard, out, None if failure else results)
    if failure is not None:
        raise RunFailedError(f"{failure}; no leaderboard row written; details in {str(out / 'results.json')!r}")
    acc = results["accounting"]["overall"]
    macro = results["scores"]["macro"]
    log(
        f"{results['model']['label']}: macro AA {100 * macro['AA']:.1f} %, ACR {100 * macro['ACR']:.1f} % "
        f"({acc['asked']} asked, {acc['unparseable']} unparseable, {acc['refusal']} refused, {acc['error']} errors) "
        f"-> {out / 'results.json'}; leaderboard {board}"
    )
    if acc["error"]:
        log(
            f"warning: {acc['error']} questions got no reply and are scored wrong: accuracy "
            f"{100 * acc['accuracy_over_asked']:.1f} % over all questions, "
            f"{100 * acc['accuracy_over_answered']:.1f} % over the answered ones"
        )


def _failure(acc: dict, max_error_rate: float) -> str | None:
    """Why the run cannot be scored (every question, or more than ``max_error_rate`` of them, failed), or None."""
    if acc["asked"] and (acc["error"] == acc["asked"] or acc["error"] / acc["asked"] > max_error_rate):
        return (
            f"{acc['error']} of {acc['asked']} questions got no reply (error rate {acc['error'] / acc['asked']:.2f} "
            f"> eval.max_error_rate={max_error_rate:g}, or every question failed)"
        )
    return None


def _settle_protocol(adapter: Adapter, cache: ReplyCache, log) -> dict:
    """Turn replies found invalid after the fact (a duplicated id) into errors; the adapter's protocol counts."""
    for uid, reason in adapter.late_errors().items():
        entry = cache.get(uid)
        if entry is not None and entry.get("reply") is not None:
            cache.put({**entry, "reply": None, "error": reason})
    report = adapter.protocol_report()
    if report.get("ignored_stdout_lines"):
        log(
            f"warning: the model printed {report['ignored_stdout_lines']} line(s) that are no reply; "
            f"ignored, kept in {report.get('stdout_log') or ', '.join(report.get('stdout_logs', []))}"
        )
    return report


def _previous_protocol(out: Path) -> dict:
    """The protocol counts of the run that asked the cached replies (kept across rescoring)."""
    try:
        return json.loads((out / "results.json").read_text(encoding="utf-8")).get("protocol") or {}
    except (OSError, ValueError, AttributeError):
        return {}


async def ask(adapter: Adapter, questions, n: int, cache: ReplyCache, asking: Asking, *, log=print) -> None:
    """Ask ``questions`` (``n`` pairs ``((item, presentation), message)``, taken as workers get free) with
    ``adapter.concurrency`` requests in flight; cache every reply as it comes.

    Parameters
    ----------
    adapter : Adapter
        The model.
    questions : iterable of ((Item, Presentation), dict)
        The questions and their toolkit messages (without the answer).
    n : int
        How many questions ``questions`` holds (for the progress lines).
    cache : ReplyCache
        Where each reply (or failure) is appended.
    asking : Asking
        The ``eval`` settings (``on_error``, ``max_reply_chars``) and whether progress is printed.
    log : callable, optional
        Called with each progress line.
    """
    s = asking.settings
    questions = iter(questions)
    done = 0
    step = max(1, n // 10)
    stop: list[BaseException] = []

    async def worker():
        nonlocal done
        while not stop:
            question = next(questions, None)
            if question is None:
                return
            (item, p), msg = question
            t0 = time.perf_counter()
            try:
                reply, error = _capped(await _reply(adapter, msg), s.max_reply_chars), None
            except ModelError as exc:
                if s.on_error == "stop":
                    stop.append(exc)
                    return
                reply, error = None, str(exc)
            except FatalModelError as exc:
                stop.append(exc)
                return
            cache.put(_entry(item, p, reply, error, time.perf_counter() - t0))
            done += 1
            if asking.progress and (done % step == 0 or done == n):
                log(f"  {done}/{n}")

    workers = [asyncio.create_task(worker()) for _ in range(max(1, adapter.concurrency))]
    await asyncio.gather(*workers)
    if stop:
        raise stop[0]


def _entry(item: Item, p: Presentation, reply, error: str | None, latency_s: float) -> dict:
    """The cache line of one question asked (see :mod:`.cache`)."""
    entry = {
        "key": cache_key(item.id, p.rotation),
        "id": item.id,
        "rotation": p.rotation,
        "reply": reply,
        "error": error,
        "options": p.options,
        "truth": p.truth,
        "clip_order": p.clip_order,
        "latency_s": round(latency_s, 4),
    }
    if reply is not None and reply.cut:
        entry["reply_chars"] = reply.cut  # the length of the reply before it was cut
    return entry


class _Reply(str):
    """A reply as stored: ``cut`` is the length of the model's reply when it was cut, else 0."""

    cut = 0


def _capped(reply: str, max_chars: int | None) -> _Reply:
    """``reply``, or its head and tail (``max_chars`` characters in all, a final answer is usually at
    the end) joined by a line ``[...]`` when it is longer."""
    if max_chars is None or len(reply) <= max_chars:
        return _Reply(reply)
    head = max_chars // 2
    capped = _Reply(reply[:head] + "\n[...]\n" + reply[len(reply) - (max_chars - head) :])
    capped.cut = len(reply)
    return capped


async def _reply(adapter: Adapter, msg: dict) -> str:
    reply = await adapter.agenerate(msg)
    if not isinstance(reply, str):
        raise ModelError(f"adapter returned {type(reply).__name__}; allowed: str")
    return reply


def record(item: Item, p: Presentation, entry: dict, judge=None) -> dict:
    """The scoring record of one cached reply (``status`` ``error`` when there is no reply).

    Parameters
    ----------
    item : Item
        The item asked.
    p : Presentation
        How it was shown.
    entry : dict or None
        Its cache entry (:meth:`~.cache.ReplyCache.get`); None or ``reply: null`` is an error answer.
    judge : Judge or None, optional
        Reads a reply the parser could not (``eval.judge``).

    Returns
    -------
    dict
        The item's record fields with ``rotation``, presented ``options`` and ``truth``, ``status``,
        ``correct``, ``choice`` (presented index or None), ``truncated`` and, when judged, ``judged``.
    """
    rec = item.record_fields()
    rec["rotation"] = p.rotation
    rec["options"], rec["truth"] = list(p.options), p.truth  # as presented: the honest chance reads them
    rec["truncated"] = bool(entry and entry.get("reply_chars"))
    if entry is None or entry.get("reply") is None:
        rec.update(status="error", correct=is_correct(None, p.truth), choice=None)
        return rec
    parsed = extract_choice(entry["reply"], p.options)
    if parsed.status == "unparseable" and judge is not None:
        parsed = judge(item, p, entry["reply"])
        rec["judged"] = parsed.status == "ok"
    rec.update(status=parsed.status, correct=is_correct(parsed, p.truth), choice=parsed.index)
    return rec


def build_results(
    records, model_desc: dict, fp: dict, *, settings: EvalSettings, data: str, split: str, dataset_items: int
) -> dict:
    """``results.json`` of ``records`` asked from split ``split`` of ``data``.

    Parameters
    ----------
    records : list of dict
        The scoring records (:func:`record`).
    model_desc : dict
        The model config as written (defaults filled, no secrets), with ``label`` and ``kind``.
    fp : dict
        The run fingerprint (``run.json``): what the cached replies depend on.
    settings : EvalSettings
        The ``eval`` settings.
    data : str
        The dataset (a folder or a bucket URL).
    split : str
        The split asked.
    dataset_items : int
        How many items were selected.

    Returns
    -------
    dict
        Model, dataset (with its key), eval settings, accounting, scores, psychometric fits, per-frequency analyses.
    """
    s = settings
    manifest = dataset_fingerprint(local_dataset(data))  # names every shard by its SHA-256
    ids = sorted({r["id"] for r in records})
    return {
        "model": {"label": model_desc["label"], "kind": model_desc["kind"], "config": model_desc},
        "dataset": {
            "path": data,
            "split": split,
            "tasks": sorted({r["task"] for r in records}),
            "items": dataset_items,
            "manifest_sha256": manifest,
            "key": hashlib.sha256(json.dumps([manifest, split, ids]).encode()).hexdigest()[:12],
        },
        "eval": {
            "rotations": s.rotations,
            "reorder_runs": s.reorder_runs,
            "instruction": s.instruction,
            "criterion": s.criterion,
            "n_boot": s.n_boot,
            "seed": s.seed,
            "on_error": s.on_error,
            "max_error_rate": s.max_error_rate,
            "judge": None if s.judge is None else s.judge.get("name"),
        },
        "error_policy": ERROR_POLICY[s.on_error],
        "replies": {"truncated": sum(r["truncated"] for r in records), "max_reply_chars": s.max_reply_chars},
        "accounting": accounting(records),
        "scores": score(records),
        "psychometric": psychometrics(records, criterion=s.criterion, n_boot=s.n_boot, seed=s.seed),
        **frequency_analyses(records, criterion=s.criterion),
        **frequency_levels(records),
        "fingerprint": hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16],
    }
