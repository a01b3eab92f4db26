"""Scores of a circular (rotated-options) evaluation run.

One *record* is one answer: an item asked under one rotation of its options. Records are
dicts with

========================  ==========================================================
``id``                    item id (unique across tasks)
``task``                  task name
``rotation``              rotation index ``r`` (see :func:`~auralgen.evaluation.parsing.rotate_options`)
``correct``               bool: the verdict (:func:`~auralgen.evaluation.verdict.is_correct`),
                          counted as recorded (a peer file's verdict may call an
                          unparsed reply correct)
``status``                ``ok`` | ``unparseable`` | ``refusal`` | ``multiple`` | ``error``
                          (``error``: no reply after retries; scored wrong)
``category``              optional; e.g. ``foundational_perception``
``sub_category``          optional; e.g. ``relative_discrimination``
``level`` / ``level_value``  optional; difficulty index and its physical value
``n_options``             optional (or ``options``, a list); gives the stated chance ``1/n_options``
``options`` / ``truth``   optional: the presented option texts and the presented index of the
                          correct one; give the honest chance (below)
========================  ==========================================================

Definitions (as in STAR-Bench's circular evaluation)
----------------------------------------------------
AA
    Average accuracy: correct answers / all answers, pooled over every rotation of
    every item in the group.
ACR
    All-correct rate: share of items answered correctly under *every* recorded rotation.
Unparseable, refusal and multiple-choice answers stay in every denominator and count as
wrong.

Chance
    ``chance`` is the **honest** chance: the AA of the best rule that ignores the
    audio -- always the most frequent answer text, always the most frequent presented position,
    or a uniform guess, whichever scores best on the group's answers
    (:mod:`~auralgen.evaluation.chance`; ``chance_rule`` names it). ``chance_ACR`` is the same for
    ACR (under circular rotation a position rule is right under one rotation only, a text rule
    under all of them or none). ``stated_chance`` is the mean ``1 / n_options`` beside it. A
    task's rule is fitted on the task's answers and a (task, level)'s on that level's answers (so
    at a level where one text is always right the chance is 100 %); a group spanning several
    tasks (overall, category, sub-category) gets the answer-weighted (ACR: item-weighted) mean of
    its tasks' honest chances, since a rule may know the task (the question names it) but not the
    level. Records without presented ``options`` and ``truth`` give only the stated chance
    (``chance_rule`` says so; ``chance_ACR`` is then ``None``).

Macro averages follow STAR-Bench's perception scorer: AA and ACR are pooled within each
sub-category; a category's macro score is the unweighted mean over its sub-categories; the
overall macro score is the unweighted mean over **all** sub-categories (not a mean of
category means). Pooled (micro) scores per category and overall are reported too.

The Wilson intervals on AA treat the answers as independent; the rotations of one item
are not, so the AA interval is optimistic. The ACR interval is over items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

from auralgen.core.errors import ParameterError

from .chance import audio_free_chance, has_answers
from .parsing import STATUSES

__all__ = ["MACRO_DEFINITION", "RECORD_STATUSES", "score", "wilson_interval"]

RECORD_STATUSES = (*STATUSES, "error")  # "error": the model gave no reply (transport failure after retries)

MACRO_DEFINITION = (
    "AA/ACR pooled within each (category, sub_category); category macro = unweighted mean over its "
    "sub-categories; overall macro = unweighted mean over all sub-categories (STAR-Bench perception scorer)"
)
_REQUIRED = ("id", "task", "rotation", "correct", "status")


def wilson_interval(k, n, *, confidence: float = 0.95):
    """Wilson score interval for a binomial proportion ``k / n``.

    Parameters
    ----------
    k : int or array_like of int
        Successes, ``0 <= k <= n``.
    n : int or array_like of int
        Trials, ``>= 0``. ``n = 0`` gives the uninformative interval ``(0, 1)``.
    confidence : float in (0, 1)
        Two-sided coverage.

    Returns
    -------
    low : float or ndarray
        Lower end of the interval, a proportion in [0, 1]; an array of the broadcast shape of ``k`` and
        ``n`` when either is an array.
    high : float or ndarray
        Upper end, likewise.

    Examples
    --------
    >>> lo, hi = wilson_interval(8, 10)
    >>> round(lo, 3), round(hi, 3)
    (0.49, 0.943)
    """
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence={confidence!r} is out of range; allowed: 0 < confidence < 1")
    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    if np.any(n_arr < 0) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ParameterError(f"wilson_interval(k={k!r}, n={n!r}) is invalid; allowed: 0 <= k <= n")
    z = float(norm.ppf(0.5 + confidence / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k_arr / n_arr
        denom = 1.0 + z * z / n_arr
        centre = (p + z * z / (2.0 * n_arr)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n_arr + z * z / (4.0 * n_arr * n_arr)) / denom
        low = np.where(n_arr > 0, np.clip(centre - half, 0.0, 1.0), 0.0)
        high = np.where(n_arr > 0, np.clip(centre + half, 0.0, 1.0), 1.0)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def _column(records: Sequence[dict], key: str, *, required: bool) -> list:
    try:
        return [r[key] for r in records] if required else [r.get(key) for r in records]
    except KeyError:
        bad = next(i for i, r in enumerate(records) if key not in r)
        raise ParameterError(f"record {bad} has no {key!r}; required keys: {', '.join(_REQUIRED)}") from None


def _codes(values: list) -> tuple[list, np.ndarray]:
    """Distinct values (sorted by str, None last) and each record's code."""
    uniq = {v: None for v in values}
    labels = sorted(uniq, key=lambda v: (v is None, str(v)))
    index = {v: i for i, v in enumerate(labels)}
    return labels, np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))


class _Scorer:
    """Pooled AA/ACR/status rates for any grouping of the records."""

    def __init__(self, records: Sequence[dict]):
        n = len(records)
        if n == 0:
            raise ParameterError("records is empty; allowed: at least one record")
        ids = _column(records, "id", required=True)
        self.tasks, self.task_code = _codes(_column(records, "task", required=True))
        rotation = np.asarray(_column(records, "rotation", required=True))
        correct = np.asarray(_column(records, "correct", required=True))
        statuses, status_code = _codes(_column(records, "status", required=True))
        unknown = [s for s in statuses if s not in RECORD_STATUSES]
        if unknown:
            raise ParameterError(f"status={unknown[0]!r} is unknown; allowed: {', '.join(RECORD_STATUSES)}")
        if correct.dtype != bool:
            if not np.isin(correct, (0, 1)).all():
                raise ParameterError(f"correct has non-boolean values; allowed: True/False (got {correct[:5]!r}...)")
            correct = correct.astype(bool)
        self.status = {s: status_code == statuses.index(s) for s in RECORD_STATUSES if s in statuses}
        self.correct = correct  # the verdict as recorded (verdict.is_correct); never re-derived here

        if rotation.dtype.kind not in "iu":
            raise ParameterError(f"rotation has non-integer values (dtype {rotation.dtype}); allowed: int >= 0")
        id_arr = np.asarray(ids)
        item_labels, first, self.item_code = np.unique(id_arr, return_index=True, return_inverse=True)
        self.item_code = self.item_code.ravel()
        self.item_first = first
        self.n_items = len(item_labels)
        pair = self.item_code.astype(np.int64) * (int(rotation.max()) - int(rotation.min()) + 1) + (
            rotation.astype(np.int64) - int(rotation.min())
        )
        if len(np.unique(pair)) != n:
            dup = np.flatnonzero(np.bincount(pair) > 1)[0]
            item = str(item_labels[dup // (int(rotation.max()) - int(rotation.min()) + 1)])
            raise ParameterError(
                f"item id={item!r} has a rotation recorded twice; allowed: one record per (id, rotation)"
            )
        self.item_n = np.bincount(self.item_code, minlength=self.n_items)
        self.item_all = np.bincount(self.item_code, weights=self.correct, minlength=self.n_items) == self.item_n
        self.item_labels = item_labels
        self._check_item_attr(self.task_code, "task")

        n_opt = [
            r.get("n_options") if "n_options" in r else (len(r["options"]) if "options" in r else None) for r in records
        ]
        if all(v is not None for v in n_opt):
            arr = np.asarray(n_opt, dtype=float)
            if np.any(arr < 2):
                raise ParameterError(f"n_options={int(arr.min())} is out of range; allowed: >= 2")
            self.chance = 1.0 / arr
        else:
            self.chance = None

    def _check_item_attr(self, code: np.ndarray, key: str) -> None:
        per_item = code[self.item_first]
        bad = np.flatnonzero(per_item[self.item_code] != code)
        if len(bad):
            item = str(self.item_labels[self.item_code[bad[0]]])
            raise ParameterError(f"item id={item!r} has more than one {key}; allowed: one {key} per item")

    def stats(self, code: np.ndarray, n_groups: int) -> list[dict]:
        """Per-group statistics for record-level group codes ``0 .. n_groups-1``."""
        self._check_item_attr(code, "group")
        n = np.bincount(code, minlength=n_groups)
        k = np.bincount(code, weights=self.correct, minlength=n_groups)
        item_group = code[self.item_first]
        n_items = np.bincount(item_group, minlength=n_groups)
        k_items = np.bincount(item_group, weights=self.item_all, minlength=n_groups)
        aa_lo, aa_hi = wilson_interval(k, n)
        acr_lo, acr_hi = wilson_interval(k_items, n_items)
        rates = {s: np.bincount(code, weights=m, minlength=n_groups) for s, m in self.status.items()}
        chance = None if self.chance is None else np.bincount(code, weights=self.chance, minlength=n_groups)
        rot_min = np.full(n_groups, np.iinfo(np.int64).max)
        rot_max = np.zeros(n_groups, dtype=np.int64)
        np.minimum.at(rot_min, item_group, self.item_n)
        np.maximum.at(rot_max, item_group, self.item_n)
        out = []
        for g in range(n_groups):
            ng = int(n[g])
            entry = {
                "AA": float(k[g] / ng) if ng else None,
                "ACR": float(k_items[g] / n_items[g]) if n_items[g] else None,
                "AA_ci95": [float(aa_lo[g]), float(aa_hi[g])],
                "ACR_ci95": [float(acr_lo[g]), float(acr_hi[g])],
                "n_answers": ng,
                "n_items": int(n_items[g]),
                "answers_per_item": [int(rot_min[g]), int(rot_max[g])] if n_items[g] else [0, 0],
            }
            for s in RECORD_STATUSES[1:]:
                entry[f"{s}_rate"] = float(rates[s][g] / ng) if s in rates and ng else 0.0
            entry["stated_chance"] = None if chance is None or not ng else float(chance[g] / ng)
            out.append(entry)
        return out


def _group_stats(scorer: _Scorer, values: list, *, key: str) -> list[tuple[object, dict]]:
    """``(label, stats)`` of each group of ``values`` that is not None, in label order (errors name ``key``)."""
    labels, code = _codes(values)
    present = [i for i, v in enumerate(labels) if v is not None]
    if not present:
        return []
    try:
        stats = scorer.stats(code, len(labels))
    except ParameterError as err:
        raise ParameterError(str(err).replace("group", key)) from None
    return [(labels[i], stats[i]) for i in present]


def _grouped(scorer: _Scorer, values: list, *, key: str) -> dict:
    return {str(label): stats for label, stats in _group_stats(scorer, values, key=key)}


def score(records: Sequence[dict]) -> dict:
    """Score a circular evaluation run.

    Parameters
    ----------
    records : sequence of dict
        The answer records (one per item and rotation), with the keys the module docstring lists.

    Returns
    -------
    dict
        JSON-able::

            {"n_answers", "n_items",
             "overall": stats,                       # pooled over everything
             "by_task": {task: stats},
             "by_category": {category: stats},       # pooled
             "by_sub_category": {category: {sub_category: stats}},
             "by_task_level": {task: {level: stats + "level_value"}},
             "macro": {"AA", "ACR", "n_sub_categories", "by_category": {...}, "definition"}}

        where ``stats`` holds ``AA``, ``ACR`` (fractions in [0, 1]), their 95 % Wilson
        intervals, ``n_answers``, ``n_items``, ``answers_per_item`` ([min, max]),
        ``unparseable_rate``, ``refusal_rate``, ``multiple_rate``, ``error_rate``, ``stated_chance``
        (mean ``1/options``; ``None`` when the records carry no ``n_options``/``options``) and the
        honest ``chance``, ``chance_ACR``, ``chance_rule`` (module docstring, "Chance").

    Examples
    --------
    >>> recs = [dict(id="x", task="t", rotation=r, correct=r != 1, status="ok", n_options=2) for r in (0, 1)]
    >>> s = score(recs)
    >>> s["by_task"]["t"]["AA"], s["by_task"]["t"]["ACR"], s["by_task"]["t"]["chance"]
    (0.5, 0.0, 0.5)

    With presented options and truth, "always first" is right for two items of three:

    >>> opts = [["first", "second"], ["second", "first"]]
    >>> recs = [dict(id=i, task="t", rotation=r, correct=True, status="ok", options=opts[r],
    ...              truth=opts[r].index(a)) for i, a in zip("xyz", ["first", "first", "second"]) for r in (0, 1)]
    >>> t = score(recs)["by_task"]["t"]
    >>> round(t["chance"], 3), round(t["chance_ACR"], 3), t["chance_rule"], t["stated_chance"]
    (0.667, 0.667, 'text "first"', 0.5)
    """
    scorer = _Scorer(records)
    n = len(records)
    overall = scorer.stats(np.zeros(n, dtype=np.int64), 1)[0]
    result: dict = {"n_answers": n, "n_items": scorer.n_items, "overall": overall}
    result["by_task"] = {str(t): s for t, s in zip(scorer.tasks, scorer.stats(scorer.task_code, len(scorer.tasks)))}

    categories = _column(records, "category", required=False)
    subs = _column(records, "sub_category", required=False)
    result["by_category"] = _grouped(scorer, categories, key="category")
    by_pair = _grouped_pairs(scorer, [None if s is None else (c, s) for c, s in zip(categories, subs)])
    result["by_sub_category"] = by_pair

    levels = _column(records, "level", required=False)
    result["by_task_level"] = _by_task_level(scorer, levels, _column(records, "level_value", required=False))
    result["macro"] = _macro(by_pair)
    _add_chance(result, records, categories, subs, levels)
    return result


def _add_chance(result: dict, records: Sequence[dict], categories: list, subs: list, levels: list) -> None:
    """Put ``chance``, ``chance_ACR`` and ``chance_rule`` beside every group's ``stated_chance``
    (see "Chance" in the module docstring)."""
    if not has_answers(records):
        for entry in _entries(result):
            entry.update(chance=entry["stated_chance"], chance_ACR=None, chance_rule=STATED_ONLY)
        return
    by_task: dict[str, list[int]] = {}
    by_level: dict[tuple, list[int]] = {}
    for i, r in enumerate(records):
        by_task.setdefault(str(r["task"]), []).append(i)
        if levels[i] is not None:
            by_level.setdefault((str(r["task"]), str(levels[i])), []).append(i)
    fits = {t: audio_free_chance([records[i] for i in idx]) for t, idx in by_task.items()}
    for t, entry in result["by_task"].items():
        _put(entry, fits[t])
    for (t, level), idx in by_level.items():
        _put(result["by_task_level"][t][level], audio_free_chance([records[i] for i in idx]))
    tasks = [str(r["task"]) for r in records]
    ids = [r["id"] for r in records]
    _mixed(result["overall"], range(len(records)), tasks, ids, fits)
    for cat, entry in result["by_category"].items():
        _mixed(entry, [i for i, c in enumerate(categories) if c is not None and str(c) == cat], tasks, ids, fits)
    for cat, by_sub in result["by_sub_category"].items():
        for sub, entry in by_sub.items():
            idx = [
                i for i, (c, s) in enumerate(zip(categories, subs)) if s is not None and (str(c), str(s)) == (cat, sub)
            ]
            _mixed(entry, idx, tasks, ids, fits)


STATED_ONLY = "stated: 1/options (the records carry no presented options/truth)"
MIXED_RULE = "per task: the mean of its tasks' honest chances"


def _entries(result: dict):
    yield result["overall"]
    yield from result["by_task"].values()
    yield from result["by_category"].values()
    for by_sub in result["by_sub_category"].values():
        yield from by_sub.values()
    for by_level in result["by_task_level"].values():
        yield from by_level.values()


def _put(entry: dict, fit: dict) -> None:
    entry.update(chance=fit["AA"], chance_ACR=fit["ACR"], chance_rule=fit["rule"])


def _mixed(entry: dict, idx, tasks: list[str], ids: list, fits: dict) -> None:
    """A group of several tasks: answer-weighted mean of the tasks' honest AA chance, item-weighted of ACR."""
    answers = Counter(tasks[i] for i in idx)
    items = Counter(tasks[i] for i in {ids[i]: i for i in idx}.values())
    if len(answers) == 1:
        _put(entry, fits[next(iter(answers))])
        return
    entry["chance"] = sum(n * fits[t]["AA"] for t, n in answers.items()) / sum(answers.values())
    entry["chance_ACR"] = sum(n * fits[t]["ACR"] for t, n in items.items()) / sum(items.values())
    entry["chance_rule"] = MIXED_RULE


def _grouped_pairs(scorer: _Scorer, pairs: list) -> dict:
    out: dict = {}
    for (cat, sub), stats in _group_stats(scorer, pairs, key="sub_category"):
        out.setdefault(str(cat), {})[str(sub)] = stats
    return out


def _by_task_level(scorer: _Scorer, levels: list, level_values: list) -> dict:
    if all(v is None for v in levels):
        return {}
    keys = [None if lv is None else (t, lv) for t, lv in zip((scorer.tasks[c] for c in scorer.task_code), levels)]
    labels, code = _codes(keys)
    stats = scorer.stats(code, len(labels))
    values = np.asarray([np.nan if v is None else float(v) for v in level_values])
    finite = np.isfinite(values)
    sums = np.bincount(code, weights=np.where(finite, values, 0.0), minlength=len(labels))
    counts = np.bincount(code, weights=finite, minlength=len(labels))
    out: dict = {}
    for i, label in enumerate(labels):
        if label is None:
            continue
        task, level = label
        entry = dict(stats[i])
        entry["level_value"] = float(sums[i] / counts[i]) if counts[i] else None
        out.setdefault(str(task), {})[str(level)] = entry
    return out


def _macro(by_pair: dict) -> dict:
    all_aa, all_acr, by_cat = [], [], {}
    for cat, subs in by_pair.items():
        aa = [s["AA"] for s in subs.values()]
        acr = [s["ACR"] for s in subs.values()]
        by_cat[cat] = {"AA": float(np.mean(aa)), "ACR": float(np.mean(acr)), "n_sub_categories": len(subs)}
        all_aa += aa
        all_acr += acr
    return {
        "AA": float(np.mean(all_aa)) if all_aa else None,
        "ACR": float(np.mean(all_acr)) if all_acr else None,
        "n_sub_categories": len(all_aa),
        "by_category": by_cat,
        "definition": MACRO_DEFINITION,
    }
