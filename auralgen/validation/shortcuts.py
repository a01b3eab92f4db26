"""The shortcut audit: can one feature other than the task's target predict the answer?

A shortcut is a feature other than the task's target (see each task's ``audit.target_features``) that alone
predicts the answer: :func:`features` lists an item's candidate features, :func:`cv_accuracy` fits a
shallow tree on one of them and reports the cross-validated accuracy, :func:`shortcut_audit` tests
every non-target feature of a task (:class:`FeatureShortcuts`, the audit's check). A task may add
checks of its own over all of its items (``audit.dataset_checks``, run by :class:`TaskDatasetChecks`),
such as the mixture's role audit (``auralgen/tasks/_mixture_audit.py``).
"""

from __future__ import annotations

import fnmatch
import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from auralgen.measure import level_db_rms, segments
from auralgen.tasks.base import DatasetCheck, task_class, task_names
from auralgen.validation.read import Check, Observed

SHORTCUT_MARGIN = 0.15  # CV accuracy above the majority rate by at least this ...
SHORTCUT_ALPHA = 0.01  # ... with binomial p below this / number of features tested
SHORTCUT_MIN_ITEMS = 12
CV_FOLDS = 5
TREE_DEPTH = 2  # a depth-2 tree on one feature: at most 4 intervals


def scalars(value, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted.path, leaf)`` of nested dicts and short lists (at most 16 entries are walked).

    Parameters
    ----------
    value : object
        Nested dicts, lists and tuples; a list of more than 16 entries is skipped whole.
    prefix : str, optional
        The path of ``value`` itself (default: the root, ``""``).

    Yields
    ------
    tuple of (str, object)
        A leaf's dotted path (list entries by index, e.g. ``sounds.0.freq_hz``) and the leaf.
    """
    if isinstance(value, dict):
        for k, v in value.items():
            yield from scalars(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, (list, tuple)):
        if len(value) <= 16:
            for i, v in enumerate(value):
                yield from scalars(v, f"{prefix}.{i}")
    else:
        yield prefix, value


def features(item, params: dict) -> dict[str, Any]:
    """Every candidate shortcut of one item: params scalars, pairwise deltas, row and audio facts.

    Parameters
    ----------
    item : Decoded
        The row with its decoded clips (each shape ``(channels, samples)``; at least one clip).
    params : dict
        The row's parsed ``params``.

    Returns
    -------
    dict of str to float or str
        ``<params path>``, ``delta.<key>`` (last sound minus first), ``row.*`` and ``audio.*`` (the first
        clip, channels averaged; levels in dB FS, times in seconds); numbers as float, the rest as str.
    """
    row = item.row
    out: dict[str, Any] = {k: v for k, v in scalars(params) if k}
    sounds = (
        [s for s in params.get("sounds", []) if isinstance(s, dict)] if isinstance(params.get("sounds"), list) else []
    )
    if len(sounds) >= 2:
        for k, v in sounds[-1].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(sounds[0].get(k), (int, float)):
                out[f"delta.{k}"] = v - sounds[0][k]
    out.update(
        {
            "row.level": row["level"],
            "row.question": row["question"],
            "row.options": " | ".join(row["options"]),
            "row.flac_bytes": item.flac_bytes,
            "row.n_clips": len(item.clips),
            "row.sampling_rate": item.sample_rate,
            "row.num_channels": int(item.clips[0].shape[0]),
            "row.num_samples": int(item.clips[0].shape[-1]),
        }
    )
    x = item.clips[0].astype(np.float64).mean(axis=0)
    out["audio.rms_dbfs"] = level_db_rms(x) if np.any(x) else -300.0
    out["audio.peak_dbfs"] = 20 * math.log10(float(np.max(np.abs(x)))) if np.any(x) else -300.0
    segs = segments(x, item.sample_rate, threshold_db=-60.0) if np.any(x) else []
    out["audio.n_segments"] = len(segs)
    if segs:
        out["audio.active_s"] = sum(s.duration_s for s in segs)
        out["audio.first_onset_s"] = segs[0].onset_s
        out["audio.last_offset_s"] = segs[-1].offset_s
    if len(segs) >= 2:
        lv = [
            level_db_rms(x[int(s.onset_s * item.sample_rate) : int(s.offset_s * item.sample_rate) + 1])
            for s in (segs[0], segs[-1])
        ]
        out["audio.delta_level_db"] = lv[1] - lv[0]
        out["audio.delta_duration_s"] = segs[-1].duration_s - segs[0].duration_s
    return {
        k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)) for k, v in out.items()
    }


# -- shortcut classifier ------------------------------------------------------------------------
def _best_split(x: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[float, int] | None:
    """Threshold on sorted ``x`` maximising the correct count of majority votes on both sides."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    onehot = np.zeros((len(xs), n_classes))
    onehot[np.arange(len(xs)), ys] = 1
    left = np.cumsum(onehot, axis=0)[:-1]
    right = left[-1] + onehot[-1] - left
    ok = xs[1:] > xs[:-1]
    if not ok.any():
        return None
    score = np.where(ok, left.max(axis=1) + right.max(axis=1), -1)
    i = int(np.argmax(score))
    return (xs[i] + xs[i + 1]) / 2, int(score[i])


@dataclass(frozen=True)
class _Leaf:
    label: int


@dataclass(frozen=True)
class _Split:
    threshold: float
    low: _Leaf | _Split  # values <= threshold
    high: _Leaf | _Split  # values > threshold


def _fit(x, y, n_classes, depth) -> _Leaf | _Split:
    """A depth-limited tree on one numeric feature."""
    label = int(np.bincount(y, minlength=n_classes).argmax())
    if depth == 0 or len(y) < 2:
        return _Leaf(label)
    split = _best_split(x, y, n_classes)
    if split is None or split[1] <= np.bincount(y).max():
        return _Leaf(label)
    t = split[0]
    return _Split(t, _fit(x[x <= t], y[x <= t], n_classes, depth - 1), _fit(x[x > t], y[x > t], n_classes, depth - 1))


def _predict(node: _Leaf | _Split, v: float) -> int:
    while isinstance(node, _Split):
        node = node.low if v <= node.threshold else node.high
    return node.label


def cv_accuracy(values: list, y: np.ndarray, *, folds: int = CV_FOLDS, depth: int = TREE_DEPTH) -> float:
    """Cross-validated accuracy of a shallow one-feature classifier (``k``-fold, fixed shuffle).

    Numeric values: a depth-``depth`` threshold tree, missing values (nan) in a leaf of their
    own. Other values: the majority answer of each category.

    Parameters
    ----------
    values : list, length n
        One feature value per item: all floats (numeric) or any hashable values (categories).
    y : np.ndarray of int, shape (n,)
        Answer index per item.
    folds : int >= 2
        Cross-validation folds.
    depth : int >= 0
        Depth of the threshold tree.

    Returns
    -------
    float
        Accuracy in [0, 1].
    """
    n, k = len(y), int(y.max()) + 1
    numeric = all(isinstance(v, float) for v in values)
    fold = np.random.default_rng(0).permutation(n) % folds
    correct = 0
    for f in range(folds):
        tr, te = fold != f, fold == f
        base = int(np.bincount(y[tr], minlength=k).argmax())
        if numeric:
            x = np.asarray(values, dtype=float)
            miss = np.isnan(x)
            fit_m = tr & ~miss
            tree = _fit(x[fit_m], y[fit_m], k, depth) if fit_m.any() else _Leaf(base)
            nan_lab = int(np.bincount(y[tr & miss], minlength=k).argmax()) if (tr & miss).any() else base
            pred = [nan_lab if math.isnan(v) else _predict(tree, v) for v in x[te]]
        else:
            table: dict[Any, Counter] = defaultdict(Counter)
            for v, lab in zip(np.asarray(values, dtype=object)[tr], y[tr]):
                table[v][lab] += 1
            pred = [table[v].most_common(1)[0][0] if v in table else base for v in np.asarray(values, dtype=object)[te]]
        correct += int(np.sum(np.asarray(pred) == y[te]))
    return correct / n


def shortcut_audit(task: str, feats: list[dict], answers: list[str]) -> dict[str, Any]:
    """Per non-target feature: CV accuracy predicting ``answers`` vs the majority-class rate.

    Parameters
    ----------
    task : str
        Task name (its audit spec names the target features, which are not tested).
    feats : list of dict
        The features of each item (:func:`features`).
    answers : list of str
        The answer of each item.

    Returns
    -------
    dict
        ``{"n", "majority_rate", "excluded", "features": [{"feature", "cv_accuracy", "lift", "p", "flag"}]}``,
        or ``{"skipped": reason}`` / ``{"error": reason}``.
    """
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


class FeatureShortcuts(Check):
    """Collects every audible item's features and answer per known task; :meth:`finish` runs
    :func:`shortcut_audit` per task (sorted by name), each flagged feature a ``shortcut`` flag."""

    def __init__(self):
        self.feats: dict[str, list[dict]] = defaultdict(list)
        self.answers: dict[str, list[str]] = defaultdict(list)

    def observe(self, seen: Observed) -> None:
        if seen.audible and seen.task is not None:
            self.feats[seen.row["task"]].append(features(seen.item, seen.params))
            self.answers[seen.row["task"]].append(seen.row["answer"])

    def finish(self, report) -> None:
        for name in sorted(self.feats):
            res = shortcut_audit(name, self.feats[name], self.answers[name])
            report.shortcuts[name] = res
            if "error" in res:
                report.flag("shortcut", name, res["error"])
            for r in res.get("features", []):
                if r["flag"]:
                    report.flag(
                        "shortcut",
                        name,
                        f"{r['feature']} alone predicts the answer: CV accuracy "
                        f"{r['cv_accuracy']:.2f} vs majority {res['majority_rate']:.2f} (p={r['p']:.1e})",
                    )


class TaskDatasetChecks(Check):
    """The checks a task declares over all of its items (``AuditSpec.dataset_checks``): one instance
    per task, fed the ``params`` of each audible item; each result is stored under the check's
    name in ``report.shortcuts`` and each problem line becomes a ``shortcut`` flag of the task."""

    def __init__(self):
        self.running: dict[str, list[DatasetCheck]] = {}  # task -> its checks, in declared order

    def observe(self, seen: Observed) -> None:
        if not seen.audible or seen.task is None:
            return
        name = seen.row["task"]
        if name not in self.running:
            self.running[name] = [cls() for cls in type(seen.task).audit.dataset_checks]
        for check in self.running[name]:
            check.observe(seen.params)

    def finish(self, report) -> None:
        for name in sorted(self.running):
            for check in self.running[name]:
                entry, problems = check.finish()
                report.shortcuts[check.name] = entry
                for detail in problems:
                    report.flag("shortcut", name, detail)
