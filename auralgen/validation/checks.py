"""The audit's per-item checks, each a :class:`~auralgen.validation.read.Check` over the rows.

==================  ====================================================================
``label``           ``answer`` is ``options[answer_index]`` and is the answer ``params`` imply
                    (the task's own ``qa``); the option set is the one ``params`` imply
``measurement``     the task's ``check(params, decoded clips)`` supports the label
``clipped``         a sample within 2^-15 of full scale (FLAC integers cannot exceed it)
``silent``          digital silence, or the loudest 50 ms far below the level ``params`` ask for
``duplicate_audio`` the same decoded samples as an earlier item
``duplicate_params`` the task's parameter tuple (``design.param_key``) also appears in another split
``leak``            the id, a clip ``path`` or the shard name carries the answer or a parameter value
==================  ====================================================================

(``bad_row``, an unreadable row, is found while reading it: :func:`auralgen.validation.read.observe`.)
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from auralgen.validation.read import Check, Observed
from auralgen.validation.shortcuts import scalars

CLIP_PEAK = 1.0 - 2.0**-15  # at or above: pinned at full scale
SILENT_DB_BELOW = 20.0  # loudest 50 ms this far below the loudest sound's level in params -> silent
SILENT_PEAK_DBFS = -100.0  # fallback when params carry no levels

_HEX_ID = re.compile(r"^[0-9a-f]{16,}$")
_SHARD = re.compile(r"^(?P<split>[A-Za-z0-9_-]+?)-\d{5}-of-\d{5}\.parquet$")


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
    """What the id, clip paths and shard name give away: answer text or parameter values.

    Parameters
    ----------
    row : dict
        The row's columns (``id``, ``task``, ``split``, ``answer``, ``level_value``).
    paths : list of str
        The clips' ``path`` values; generate.py's ``<id>-<k>.flac`` counts as the id alone.
    shard : str
        The shard's path relative to the dataset; its name counts only when it is not the canonical
        ``<task>/<split>-NNNNN-of-NNNNN.parquet``.
    params : dict
        The row's parsed ``params``; every scalar in it is looked for.

    Returns
    -------
    list of str
        ``"answer 'text'"`` and ``"key=value"`` entries for what appears (a number written to the
        same precision with at least two significant digits); empty when nothing leaks.
    """
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
    """Why the item is silent, or None. Loudness expected from ``params['sounds']`` when present.

    Parameters
    ----------
    clips : list of ndarray
        The decoded clips, each shape ``(channels, samples)``, float, full scale 1.0.
    sample_rate : int
        In Hz (sets the 50 ms frame).
    params : dict
        The row's ``params``; ``sounds[*].level_db_spl`` and ``full_scale_db_spl`` (dB SPL) give the
        expected level.

    Returns
    -------
    str or None
        Digital silence, a loudest 50 ms frame more than :data:`SILENT_DB_BELOW` dB under the loudest
        sound asked for (dB FS, mean power over channels), or a peak under :data:`SILENT_PEAK_DBFS`
        when ``params`` carry no level; None when the audio is audible.
    """
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


class LabelCheck(Check):
    """``label``: the stored answer against the options and against what ``params``
    imply (the task's ``qa``, drawn from one generator shared by every row, seed 0)."""

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def observe(self, seen: Observed) -> None:
        row, task, params = seen.row, seen.task, seen.params
        opts, ai, out = list(row["options"]), row["answer_index"], seen.problems
        if not (0 <= ai < len(opts)) or opts[ai] != row["answer"]:
            out.append(("label", f"answer {row['answer']!r} is not options[{ai}] of {opts!r}"))
        if task is None or params is None:
            return
        try:
            qa = task.qa(params, self.rng, slot=0)
        except Exception as exc:  # noqa: BLE001 - params the task cannot read make a bad row
            out.append(("bad_row", f"task.qa failed on params: {exc}"))
            return
        if qa.answer != row["answer"]:
            out.append(("label", f"params imply {qa.answer!r}, stored answer is {row['answer']!r}"))
        if sorted(qa.options) != sorted(opts):
            out.append(("label", f"params imply options {sorted(qa.options)!r}, stored {sorted(opts)!r}"))


class IdentityCheck(Check):
    """``leak`` (the answer or a parameter in names) and ``duplicate_params`` (a parameter tuple
    seen in another split)."""

    def __init__(self):
        self.key_seen: dict[tuple, dict[str, str]] = defaultdict(dict)  # (task, param_key) -> {split: first id}

    def observe(self, seen: Observed) -> None:
        row, item = seen.row, seen.item
        if seen.task is None or seen.params is None:
            return
        if found := leaks(row, item.paths, item.shard, seen.params):
            seen.problems.append(("leak", ", ".join(found[:4])))
        splits = self.key_seen[(row["task"], seen.task.design.param_key(seen.params))]
        others = sorted((s, i) for s, i in splits.items() if s != row["split"])
        if others:
            seen.problems.append(
                ("duplicate_params", f"parameter tuple also in split {others[0][0]!r} (id {others[0][1]})")
            )
        splits.setdefault(row["split"], row["id"])


def _audio_digest(clips: list[np.ndarray]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for c in clips:
        h.update(str(c.shape).encode() + c.tobytes())
    return h.hexdigest()


class AudioCheck(Check):
    """``clipped``, ``silent``, ``measurement`` (the task's own ``check`` of the decoded clips)
    and ``duplicate_audio``."""

    def __init__(self):
        self.audio_seen: dict[str, str] = {}  # digest -> first id

    def observe(self, seen: Observed) -> None:
        if not seen.audible:
            return
        item, out = seen.item, seen.problems
        peak = max(float(np.max(np.abs(c))) for c in item.clips)
        if peak >= CLIP_PEAK:
            out.append(("clipped", f"peak {peak:.6f} at full scale"))
        if why := silent(item.clips, item.sample_rate, seen.params):
            out.append(("silent", why))
        if seen.task is not None:
            out += _measurement(seen)
        digest = _audio_digest(item.clips)
        if digest in self.audio_seen:
            out.append(("duplicate_audio", f"same samples as item {self.audio_seen[digest]}"))
        self.audio_seen.setdefault(digest, seen.row["id"])


def _measurement(seen: Observed) -> list[tuple[str, str]]:
    """The task's own measurement of the decoded clips, when it does not support the label."""
    try:
        measured = seen.task.check(seen.params, seen.item.clips)
        if measured.get("valid", False):
            return []
        shown = {k: v for k, v in measured.items() if k != "valid"}
        return [("measurement", json.dumps(shown, sort_keys=True, default=str))]
    except Exception as exc:  # noqa: BLE001 - a check that cannot measure is a failed check
        return [("measurement", f"check raised {type(exc).__name__}: {exc}")]
