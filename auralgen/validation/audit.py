"""Audits of an exported dataset directory: labels, audio sanity, balance, shortcuts, leakage.

:func:`audit_dataset` streams the parquet shards one row group at a time (the audio of
the whole dataset is never held in memory) and checks every item:

==================  ====================================================================
``label``           ``answer`` is ``options[answer_index]`` and is the answer ``params`` imply
                    (the task's own ``qa``); the option set is the one ``params`` imply
``unable``          "Unable to determine" is last and never the answer
``measurement``     the task's ``check(params, decoded clips)`` supports the label
``clipped``         a sample within 2^-15 of full scale (FLAC integers cannot exceed it)
``silent``          digital silence, or the loudest 50 ms far below the level ``params`` ask for
``duplicate_audio`` the same decoded samples as an earlier item
``duplicate_params`` the task's parameter tuple (``param_key``) also appears in another split
``leak``            the id, a clip ``path`` or the shard name carries the answer or a parameter value
``bad_row``         unreadable ``params`` JSON or audio
==================  ====================================================================

and, per task: answer-position balance and option balance (chi-square), the shortcut audit
(can one non-target feature alone predict the answer? see each task's ``audit.target_features``) and the
reference listener's accuracy per level (:mod:`auralgen.validation.listener`).

Tasks are rebuilt from ``manifest.json``: its ``config`` record (``dataclasses.asdict`` of the
run config) is mapped back onto the composed-config shape and passed through
:func:`auralgen.config.validate`, so the audit sees exactly the task objects that generated
the data (the fingerprint is compared to prove it). Without a manifest the tasks' default
configs are used and a note says so.

Examples
--------
>>> report = audit_dataset("data/default")   # doctest: +SKIP
>>> report.ok, report.to_dict()["items"]      # doctest: +SKIP
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from scipy import stats

from auralgen.errors import AuralgenError, ParameterError
from auralgen.export.audio import decode_flac
from auralgen.qa import UNABLE
from auralgen.tasks.base import task_class, task_names
from auralgen.validation.balance import balance
from auralgen.validation.shortcuts import (
    SHORTCUT_ALPHA,
    SHORTCUT_MARGIN,
    SHORTCUT_MIN_ITEMS,
    cv_accuracy,
    features,
    mixture_role_audit,
    scalars,
)

CLIP_PEAK = 1.0 - 2.0**-15  # at or above: pinned at full scale
SILENT_DB_BELOW = 20.0  # loudest 50 ms this far below the loudest sound's level in params -> silent
SILENT_PEAK_DBFS = -100.0  # fallback when params carry no levels
LISTENER_MIN_ITEMS = (
    5  # the listener floor of a task (AuditSpec.listener_floor) is checked from this many items at its easiest level
)

_HEX_ID = re.compile(r"^[0-9a-f]{16,}$")
_SHARD = re.compile(r"^(?P<split>[A-Za-z0-9_-]+?)-\d{5}-of-\d{5}\.parquet$")


# -- reading ----------------------------------------------------------------------------------
@dataclass
class Item:
    """One row: its columns (audio bytes dropped), decoded clips and where it came from."""

    row: dict[str, Any]
    shard: str
    clips: list[np.ndarray] | None
    sample_rate: int
    flac_bytes: int
    paths: list[str]
    error: str | None = None


def dataset_shards(path) -> list[Path]:
    """The parquet shards of a dataset directory, or ParameterError if it is not one."""
    root = Path(path)
    if not root.is_dir():
        raise ParameterError(f"dataset={str(path)!r} is not a directory; allowed: an exported dataset directory")
    shards = sorted(root.glob("data/*/*.parquet"))
    if not shards:
        raise ParameterError(
            f"dataset={str(path)!r} holds no data/<task>/*.parquet shards; allowed: an exported dataset directory"
        )
    return shards


def iter_items(path, *, batch_rows: int = 16) -> Iterator[Item]:
    """Every row of the dataset, shard by shard, ``batch_rows`` at a time, audio decoded."""
    root = Path(path)
    for shard in dataset_shards(root):
        rel = shard.relative_to(root).as_posix()
        for batch in pq.ParquetFile(shard).iter_batches(batch_size=batch_rows):
            for row in batch.to_pylist():
                audio = row.pop("audio") or []
                clips, rate, err = [], int(row.get("sampling_rate") or 0), None
                try:
                    for entry in audio:
                        x, rate = decode_flac(entry["bytes"])
                        clips.append(x)
                    if not clips:
                        err = "no audio clips"
                except Exception as exc:  # noqa: BLE001 - any decoder failure is a bad row
                    err = f"audio does not decode: {exc}"
                yield Item(row, rel, None if err else clips, rate, sum(len(e["bytes"] or b"") for e in audio),
                           [e.get("path") or "" for e in audio], err)  # fmt: skip


def tasks_for(path) -> tuple[dict, list[str]]:
    """Task objects of the dataset (from its manifest's config) and notes on how they were built."""
    from auralgen.config import validate
    from auralgen.pipeline import build_tasks, fingerprint
    from auralgen.tasks.base import AudioConfig, load_tasks

    mf = Path(path) / "manifest.json"
    try:
        manifest = json.loads(mf.read_text())
        c = manifest["config"]
        mapping = {"seed": c["seed"], "split": list(c["splits"]), "sample_rate": c["audio"]["sample_rate"],
                   "full_scale_db_spl": c["audio"]["full_scale_db_spl"], "shard_size": c["shard_size"],
                   "max_resample": c["max_resample"], "validate": c["validate"], "export": c["export"],
                   "suite_name": c["suite"], "tasks": {t["name"]: t for t in c["tasks"]}, "workers": 1,
                   "progress": False, "out": str(path)}  # fmt: skip
        run = validate(mapping)
        notes = (
            []
            if fingerprint(run) == manifest.get("fingerprint")
            else ["manifest fingerprint differs from the rebuilt config"]
        )
        return build_tasks(run), notes
    except (OSError, KeyError, TypeError, ValueError, AuralgenError) as exc:
        registry = load_tasks()
        reason = "no manifest.json" if not mf.exists() else f"manifest config not usable ({exc})"
        tasks = {name: cls(cls.Config(name=name), AudioConfig()) for name, cls in registry.items()}
        return tasks, [f"{reason}: tasks built from their default configs"]


# -- per-item checks ---------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _tokens(text: str) -> list[str]:
    """Alphanumeric tokens of ``text``; long hex blobs (opaque hashes) are dropped."""
    out = []
    for tok in re.split(r"[^A-Za-z0-9.]+", text):
        tok = tok.strip(".")
        if tok and not _HEX_ID.match(tok.lower()):
            out += re.findall(r"\d+(?:\.\d+)?|[A-Za-z]+", tok)
    return out


def leaks(row: dict, paths: list[str], shard: str, params: dict) -> list[str]:
    """What the id, clip paths and shard name give away: answer text or parameter values."""
    name = Path(shard).name
    m = _SHARD.match(name)
    canonical = m and m["split"] == row.get("split") and Path(shard).parent.name == row["task"]
    extra = [] if canonical else [name]
    rid = str(row["id"])
    carriers = [rid, *[p[: -len(f"-{k}.flac")] if p == f"{rid}-{k}.flac" else p for k, p in enumerate(paths)], *extra]
    toks = [t for c in carriers for t in _tokens(c)]
    words = {t.lower() for t in toks if t.isalpha()}
    nums = [t for t in toks if not t.isalpha() and len(t.replace(".", "").lstrip("0")) >= 2]  # >= 2 significant digits
    found = []
    text = "".join(_norm(t) for t in toks)
    if len(_norm(row["answer"])) >= 3 and _norm(row["answer"]) in text:
        found.append(f"answer {row['answer']!r}")
    for key, v in [*scalars(params), ("level_value", row["level_value"])]:
        if isinstance(v, str) and len(v) >= 2 and v.lower() in words:
            found.append(f"{key}={v!r}")
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v != 0:
            hits = [t for t in nums if round(v, len(t.partition(".")[2])) == float(t)]  # v written to t's precision
            if hits:
                found.append(f"{key}={v!r}")
    return found


def silent(clips: list[np.ndarray], sample_rate: int, params: dict) -> str | None:
    """Why the item is silent, or None. Loudness expected from ``params['sounds']`` when present."""
    if all(not np.any(c) for c in clips):
        return "digital silence"
    frame = max(1, int(0.05 * sample_rate))
    loudest = -math.inf
    for c in clips:
        n = c.shape[-1] // frame * frame or c.shape[-1]
        power = (c[..., :n].astype(np.float64) ** 2).mean(axis=0).reshape(-1, min(frame, n)).mean(axis=1)
        loudest = max(loudest, 10 * math.log10(power.max()) if power.max() > 0 else -math.inf)
    if params.get("sounds") == []:  # no sound by design (audiogram 'absent'): only digital silence is wrong
        return None
    levels = [s["level_db_spl"] for s in params.get("sounds", []) if isinstance(s, dict) and "level_db_spl" in s]
    if levels and "full_scale_db_spl" in params:
        expected = max(levels) - float(params["full_scale_db_spl"])
        if loudest < expected - SILENT_DB_BELOW:
            return f"loudest 50 ms at {loudest:.1f} dBFS, params ask for {expected:.1f} dBFS"
        return None
    peak = max(float(np.max(np.abs(c))) for c in clips)
    if 20 * math.log10(peak) < SILENT_PEAK_DBFS:
        return f"peak {20 * math.log10(peak):.1f} dBFS < {SILENT_PEAK_DBFS} dBFS"
    return None


def shortcut_audit(task: str, feats: list[dict], answers: list[str]) -> dict[str, Any]:
    """Per non-target feature: CV accuracy predicting ``answers`` vs the majority-class rate."""
    if task not in task_names():
        return {"error": f"task {task!r} is not a task of this auralgen; allowed: {', '.join(task_names())}"}
    if len(answers) < SHORTCUT_MIN_ITEMS:
        return {"skipped": f"{len(answers)} items < {SHORTCUT_MIN_ITEMS}"}
    labels = sorted(set(answers))
    y = np.array([labels.index(a) for a in answers])
    majority = float(np.bincount(y).max() / len(y))
    names = sorted({k for f in feats for k in f})
    excluded = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in task_class(task).audit.target_features)]
    tested = []
    for name in names:
        if name in excluded:
            continue
        vals = [f.get(name, math.nan) for f in feats]
        numeric = all(isinstance(v, float) for v in vals)
        vals = vals if numeric else [str(v) for v in vals]
        if len({("nan" if isinstance(v, float) and math.isnan(v) else v) for v in vals}) < 2:
            continue
        tested.append((name, cv_accuracy(vals, y)))
    rows = []
    for name, acc in tested:
        p = float(stats.binomtest(round(acc * len(y)), len(y), majority, alternative="greater").pvalue)
        flag = acc - majority >= SHORTCUT_MARGIN and p < SHORTCUT_ALPHA / max(1, len(tested))
        rows.append(
            {
                "feature": name,
                "cv_accuracy": round(acc, 4),
                "lift": round(acc - majority, 4),
                "p": p,
                "flag": bool(flag),
            }
        )
    rows.sort(key=lambda r: -r["lift"])
    return {"n": len(y), "majority_rate": round(majority, 4), "excluded": excluded, "features": rows}


# -- report ----------------------------------------------------------------------------------
@dataclass
class AuditReport:
    """Result of :func:`audit_dataset`; ``ok`` when no item fails and no audit flags."""

    path: str
    items: int = 0
    failures: list[dict] = field(default_factory=list)  # {id, task, split, level, shard, reasons, details}
    flags: list[dict] = field(default_factory=list)  # {audit, task, detail}
    balance: dict[str, dict] = field(default_factory=dict)
    shortcuts: dict[str, dict] = field(default_factory=dict)
    listener: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and not self.flags

    def reasons_of(self, item_id: str) -> set[str]:
        return {r for f in self.failures if f["id"] == item_id for r in f["reasons"]}

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok, "items": self.items, "failures": self.failures, "flags": self.flags,
                "balance": self.balance, "shortcuts": self.shortcuts, "listener": self.listener, "notes": self.notes}  # fmt: skip

    def table(self) -> str:
        from auralgen.validation.__main__ import format_report

        return format_report(self)


def _read_params(item: Item, task) -> tuple[dict | None, list[tuple[str, str]]]:
    problems = [("bad_row", item.error)] if item.error else []
    if task is None:
        problems.append(("bad_row", f"unknown task {item.row['task']!r}"))
    try:
        return json.loads(item.row["params"]), problems
    except (TypeError, ValueError) as exc:
        return None, [*problems, ("bad_row", f"params is not JSON ({exc})")]


def _label_problems(row: dict, task, params: dict | None, rng) -> list[tuple[str, str]]:
    """The stored answer against the options and against what ``params`` imply (the task's ``qa``)."""
    opts, ai, out = list(row["options"]), row["answer_index"], []
    if not (0 <= ai < len(opts)) or opts[ai] != row["answer"]:
        out.append(("label", f"answer {row['answer']!r} is not options[{ai}] of {opts!r}"))
    if not opts or opts[-1] != UNABLE or row["answer"] == UNABLE or ai == len(opts) - 1:
        out.append(("unable", f"{UNABLE!r} must be last and never the answer; options={opts!r}, answer_index={ai}"))
    if task is None or params is None:
        return out
    try:
        qa = task.qa(params, rng, slot=0)
    except Exception as exc:  # noqa: BLE001 - params the task cannot read make a bad row
        return [*out, ("bad_row", f"task.qa failed on params: {exc}")]
    if qa.answer != row["answer"]:
        out.append(("label", f"params imply {qa.answer!r}, stored answer is {row['answer']!r}"))
    if sorted(qa.options) != sorted(opts):
        out.append(("label", f"params imply options {sorted(qa.options)!r}, stored {sorted(opts)!r}"))
    return out


def _audio_problems(item: Item, params: dict, task) -> list[tuple[str, str]]:
    """Clipping, silence and the task's own measurement of the decoded clips."""
    out = []
    peak = max(float(np.max(np.abs(c))) for c in item.clips)
    if peak >= CLIP_PEAK:
        out.append(("clipped", f"peak {peak:.6f} at full scale"))
    if why := silent(item.clips, item.sample_rate, params):
        out.append(("silent", why))
    if task is not None:
        try:
            measured = task.check(params, item.clips)
            if not measured.get("valid", False):
                shown = {k: v for k, v in measured.items() if k != "valid"}
                out.append(("measurement", json.dumps(shown, sort_keys=True, default=str)))
        except Exception as exc:  # noqa: BLE001 - a check that cannot measure is a failed check
            out.append(("measurement", f"check raised {type(exc).__name__}: {exc}"))
    return out


def _audio_digest(clips: list[np.ndarray]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for c in clips:
        h.update(str(c.shape).encode() + c.tobytes())
    return h.hexdigest()


@dataclass
class _Tally:
    """What :func:`audit_dataset` accumulates while it streams the rows once."""

    audio_seen: dict[str, str] = field(default_factory=dict)
    key_seen: dict[tuple, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    positions: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    n_positions: dict[str, int] = field(default_factory=dict)
    by_level: dict[tuple, Counter] = field(default_factory=lambda: defaultdict(Counter))
    expected: dict[tuple, Counter] = field(default_factory=dict)
    unexpected_rows: dict[tuple, list] = field(default_factory=lambda: defaultdict(list))
    feats: dict[str, list] = field(default_factory=lambda: defaultdict(list))
    mixture_params: list[dict] = field(default_factory=list)
    answers: dict[str, list] = field(default_factory=lambda: defaultdict(list))
    heard: dict[tuple, list] = field(default_factory=lambda: defaultdict(lambda: [0, 0, None, None]))


def audit_dataset(path, *, listen: bool = True) -> AuditReport:
    """Run every audit on the exported dataset at ``path``.

    Raises
    ------
    ParameterError
        If ``path`` is not a dataset directory (no ``data/<task>/*.parquet``).
    """
    from auralgen.validation import listener as L

    dataset_shards(path)
    tasks, notes = tasks_for(path)
    report = AuditReport(str(path), notes=notes)
    rng0 = np.random.default_rng(0)
    tally = _Tally()
    for item in iter_items(path):
        report.items += 1
        _audit_item(report, tally, item, tasks.get(item.row["task"]), rng0, L if listen else None)
    balance(report, tally.positions, tally.n_positions, tally.by_level, tally.expected, tally.unexpected_rows)
    _shortcut_flags(report, tally)
    _listener(report, tally.heard)
    return report


def _audit_item(report: AuditReport, tally: _Tally, item: Item, task, rng0, listener) -> None:
    """Every per-item check of one row; its counts go to ``tally``, its failure to ``report``."""
    row = item.row
    params, problems = _read_params(item, task)
    problems += _label_problems(row, task, params, rng0)
    if task is not None and params is not None:
        problems += _identity_problems(tally, item, task, params)
    if item.clips is not None and params is not None:
        problems += _audio_problems(item, params, task)
        digest = _audio_digest(item.clips)
        if digest in tally.audio_seen:
            problems.append(("duplicate_audio", f"same samples as item {tally.audio_seen[digest]}"))
        tally.audio_seen.setdefault(digest, row["id"])
        if task is not None:
            tally.feats[row["task"]].append(features(item, params))
            tally.answers[row["task"]].append(row["answer"])
            if row["task"] == "mixture":
                tally.mixture_params.append(params)
        if listener is not None and row["task"] in listener.LISTENERS:
            _hear(tally, item, listener)
    _count_answers(tally, row, task)
    if problems:
        reasons = list(dict.fromkeys(code for code, _ in problems))
        report.failures.append({"id": row["id"], "task": row["task"], "split": row["split"], "level": row["level"],
                                "shard": item.shard, "reasons": reasons,
                                "details": [f"{c}: {d}" for c, d in problems]})  # fmt: skip


def _identity_problems(tally: _Tally, item: Item, task, params: dict) -> list[tuple[str, str]]:
    """A leak of the answer or a parameter in names, and a parameter tuple seen in another split."""
    row = item.row
    problems = [("leak", ", ".join(found[:4]))] if (found := leaks(row, item.paths, item.shard, params)) else []
    splits = tally.key_seen[(row["task"], task.param_key(params))]
    others = sorted((s, i) for s, i in splits.items() if s != row["split"])
    if others:
        problems.append(("duplicate_params", f"parameter tuple also in split {others[0][0]!r} (id {others[0][1]})"))
    splits.setdefault(row["split"], row["id"])
    return problems


def _hear(tally: _Tally, item: Item, listener) -> None:
    """The reference listener's answer to one item, counted per (task, level)."""
    row = item.row
    rec = tally.heard[(row["task"], row["level"])]
    rec[0] += 1
    got = listener.answer(row["task"], row["question"], list(row["options"]), item.clips, item.sample_rate,
                          layout=row.get("channel_layout"))  # fmt: skip
    rec[1] += int(got == row["answer_index"])
    rec[2], rec[3] = row["level_value"], row["level_unit"]


def _count_answers(tally: _Tally, row: dict, task) -> None:
    """Answer positions and answers per level, and the answers each item could have had."""
    opts, ai = list(row["options"]), row["answer_index"]
    tally.positions[row["task"]][ai] += 1
    tally.n_positions[row["task"]] = max(tally.n_positions.get(row["task"], 0), len(opts) - 1)
    tally.by_level[(row["task"], row["level"])][row["answer"]] += 1
    if task is None:
        return
    exp_i = task.expected_answers(row["level_value"], opts)  # each item's expected answers share its weight
    bucket = tally.expected.setdefault((row["task"], row["level"]), Counter())
    for a in exp_i:
        bucket[a] += 1.0 / len(exp_i)
    if row["answer"] not in exp_i:
        tally.unexpected_rows[(row["task"], row["level"])].append(row["answer"])


def _shortcut_flags(report: AuditReport, tally: _Tally) -> None:
    """The mixture role audit and the one-feature shortcut audit of every task, flagged into ``report``."""
    if tally.mixture_params:
        roles = mixture_role_audit(tally.mixture_params)
        report.shortcuts["mixture_roles"] = roles
        for r in roles.get("cues", []):
            if r["flag"]:
                report.flags.append({"audit": "shortcut", "task": "mixture", "detail": f"the answer to '{r['sub_question']}' is "
                                     f"the {r['cue']} sound in {r['rate']:.2f} of items vs chance {r['chance']:.2f} (p={r['p']:.1e})"})  # fmt: skip
    for name in sorted(tally.feats):
        res = shortcut_audit(name, tally.feats[name], tally.answers[name])
        report.shortcuts[name] = res
        if "error" in res:
            report.flags.append({"audit": "shortcut", "task": name, "detail": res["error"]})
        for r in res.get("features", []):
            if r["flag"]:
                report.flags.append({"audit": "shortcut", "task": name, "detail": f"{r['feature']} alone predicts the answer: "
                                     f"CV accuracy {r['cv_accuracy']:.2f} vs majority {res['majority_rate']:.2f} (p={r['p']:.1e})"})  # fmt: skip


def _listener(report, heard) -> None:
    for (name, level), (n, correct, value, unit) in sorted(heard.items()):
        report.listener.append({"task": name, "level": level, "level_value": value, "level_unit": unit, "n": n,
                                "correct": correct, "accuracy": correct / n})  # fmt: skip
    for name in sorted({r["task"] for r in report.listener}):
        recs = [r for r in report.listener if r["task"] == name]
        unit = Counter(r["level_unit"] for r in recs).most_common(1)[0][0]
        if name not in task_names():
            continue  # a task this auralgen does not know: flagged by the shortcut audit
        spec = task_class(name).audit
        rule = spec.listener_easiest
        if rule is None:
            continue
        pick = min if rule == "min" else max
        easy = pick((r for r in recs if r["level_unit"] == unit), key=lambda r: r["level_value"])
        floor = spec.listener_floor
        if easy["n"] >= LISTENER_MIN_ITEMS and easy["accuracy"] < floor:
            report.flags.append({"audit": "listener", "task": name, "detail": f"reference listener {easy['accuracy']:.0%} at the easiest "
                                 f"level ({easy['level_value']:g} {unit}); expected >= {floor:.0%}"})  # fmt: skip
