"""Learned controls: can a model that never hears the attribute answer the items?

Each control is trained on one dataset (seed A, or a train split) and tested on another (seed B),
task by task; none of them sees the audio content:

- ``text_prior`` (a): the option text most often right in training, per task and question template
  (the question with its numbers masked; the level is not visible to a model, so it is not used);
- ``option_text`` (b): a conditional-logit model on token features of the question and each option
  string (option words, the whole option, question word x option word pairs), L2-regularised;
- ``metadata`` (c): k nearest neighbours (k chosen by leave-one-out on the training set) on
  everything but the audio content -- number of clips, sample rate, channels, total FLAC bytes, and
  per clip its duration (clip length), FLAC byte size, RMS and peak level, plus the clips' ranks by
  each of these -- voting for the answer text. The container features (counts, rate, channels,
  lengths, byte sizes) are always used. RMS and peak are measurements *of* the audio content: where
  the task's :class:`~auralgen.tasks.base.AuditSpec` declares the matching audit feature
  (``audio.rms_dbfs``, ``audio.peak_dbfs``; fnmatch patterns such as ``audio.*`` count) a target
  feature -- level is, or is driven by, the probed cue (loudness, tone presence, distance, a sound's
  energy over its duration, a process that grows louder) -- a model reading it is listening, not
  cheating, and the control leaves it out (:func:`content_features`); otherwise it is in. A task
  the registry does not know keeps every feature;
- ``position_prior`` (d): the answer position most often right in training;
- ``nuisance`` (e): the same k-nearest-neighbour vote on the audio's nuisance facts, per clip and per
  part (first and last sounding segment): RMS, peak, crest factor, LUFS, sounding time, span, lead and
  trail silence, number of segments (:mod:`auralgen.validation.nuisance`), leaving out those the task
  declares as its cue in its ``AuditSpec`` (a level in a loudness task, a decay's length in a
  reverberation task). Everything that is not the attribute is roved, so it must be at honest chance.

Per task the report gives each control's test accuracy with its 95 % Wilson interval, the stated
chance (mean ``1/options``), the *balanced* chance (mean ``1/k``, k = the item's options whose text is
ever right in training: what a prior reaches when the texts that can be right are balanced), the
*honest* chance (the best of (a), (d) and the stated chance: the accuracy of the best audio-free
rule), ``n`` and the minimum detectable effect at that ``n`` (the accuracy above the honest chance the
flag rule below detects with 80 % power: ``MARGIN`` plus what a one-sided binomial test at
``ALPHA / 4``, Holm's first step, sees above chance + ``MARGIN``). Flags, with ``n >= MIN_ITEMS``:

- ``control``: (b) or (c) exceeds the honest chance by more than ``MARGIN`` (a learned shortcut);
- ``prior``: (a) or (d) exceeds the stated chance by more than ``MARGIN``: the answer texts or
  positions are unbalanced, or some options are never right, so the stated chance is not the real
  one (the balanced chance column tells the two causes apart: a prior at the balanced chance means
  only never-right options);

each only when the test says so: a one-sided binomial test of "the control's accuracy is at most
its chance + ``MARGIN``" (the rule "more than 2 pp above chance" as the null hypothesis),
Holm-corrected over the task's five controls at family level ``ALPHA``. Testing against chance
itself, uncorrected, flagged about one in 40 clean control tests: 2 of 116 on the validity suite
(pitch_relative metadata 38.8 %, texture_relative text prior 39.2 %; at 1,000 items both sit at
chance); the MDE column says what the test can see at the task's ``n``. A task with fewer than ``MIN_ITEMS``
test items is reported as "too few items to call clean", never as clean.

Examples
--------
>>> report = audit_controls("data/seed0", "data/seed1")   # doctest: +SKIP
>>> print(report.table())                                  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from fnmatch import fnmatch
from functools import cache
from typing import Any

import numpy as np
from scipy import optimize

from auralgen.core.errors import AuralgenError
from auralgen.tasks.base import task_class
from auralgen.validation import nuisance
from auralgen.validation.nuisance import nuisance_features
from auralgen.validation.read import Decoded, iter_decoded
from auralgen.validation.stats import ALPHA, POWER, holm, min_detectable_effect, p_above, wilson

CONTROLS = ("text_prior", "option_text", "metadata", "position_prior", "nuisance")
PRIORS = ("text_prior", "position_prior")  # judged against the stated chance (audit "prior"); the others: "control"
MARGIN = 0.02  # a control may exceed its chance by this much (2 pp) ...
MIN_ITEMS = 200  # test items per task below which a task is never called clean
K_CHOICES = (1, 3, 9, 27)  # the metadata model's k, chosen by leave-one-out on the training set
L2 = 1.0  # the option-text model's ridge penalty (on the summed log-likelihood)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Sample:
    """One item as the controls see it: no audio content, no params, no level.

    ``meta``: the metadata features (name -> float), see :func:`metadata`.
    """

    task: str
    question: str
    options: tuple[str, ...]
    answer: int
    meta: dict[str, float]
    audio: dict[str, float] = field(default_factory=dict)  # the audio-nuisance features (validation.nuisance)

    @property
    def template(self) -> str:
        """The question with its numbers masked (``#``): the question template."""
        return _NUMBER.sub("#", self.question)


def metadata(item: Decoded) -> dict[str, float]:
    """Everything about an item but its audio content: clip count, rate, channels, and per clip
    ``dur_s``, ``bytes`` (FLAC), ``rms_db``, ``peak_db`` and the clip's rank by each of them."""
    clips = item.clips or []
    out = {
        "n_clips": float(len(clips)),
        "sample_rate": float(item.sample_rate),
        "bytes": float(item.flac_bytes),
        "channels": float(clips[0].shape[0]) if clips else 0.0,
    }
    per = defaultdict(list)
    for i, x in enumerate(clips):
        y = np.asarray(x, np.float64)
        per["dur_s"].append(y.shape[-1] / max(item.sample_rate, 1))
        per["bytes"].append(float(item.clip_bytes[i]) if i < len(item.clip_bytes) else 0.0)
        rms, peak = float(np.sqrt(np.mean(y**2))) if y.size else 0.0, float(np.max(np.abs(y))) if y.size else 0.0
        per["rms_db"].append(20 * math.log10(rms) if rms > 0 else -300.0)
        per["peak_db"].append(20 * math.log10(peak) if peak > 0 else -300.0)
    for name, values in per.items():
        ranks = np.argsort(np.argsort(values, kind="stable"), kind="stable")
        for i, (v, r) in enumerate(zip(values, ranks, strict=True)):
            out[f"clip{i}.{name}"] = float(v)
            out[f"clip{i}.{name}_rank"] = float(r)
    return out


# per-clip audio-content features of :func:`metadata` -> the audit feature each one measures
CONTENT = {"rms_db": "audio.rms_dbfs", "peak_db": "audio.peak_dbfs"}


@cache
def content_features(task: str) -> frozenset[str]:
    """The audio-content features (keys of :data:`CONTENT`) the metadata model may use for ``task``:
    those whose audit feature matches none of the task's ``AuditSpec.target_features`` (all of them
    for a task the registry does not know).

    Examples
    --------
    >>> sorted(content_features("pitch_relative")), sorted(content_features("audiogram"))
    (['peak_db', 'rms_db'], [])
    """
    try:
        targets = task_class(task).audit.target_features
    except (AuralgenError, KeyError, ImportError):
        targets = ()
    return frozenset(k for k, feature in CONTENT.items() if not any(fnmatch(feature, p) for p in targets))


def usable(task: str, name: str) -> bool:
    """Whether metadata feature ``name`` (e.g. ``clip1.rms_db_rank``) may be used for ``task``."""
    base = name.split(".", 1)[-1].removesuffix("_rank")
    return base not in CONTENT or base in content_features(task)


def samples(path) -> list[Sample]:
    """Every item of the dataset at ``path`` as a :class:`Sample` (audio decoded once, then dropped).

    An item's audio-nuisance features leave out those its task declares as cues of that item alone
    (``AuditSpec.cues_when``, :func:`auralgen.validation.nuisance.declared_for`); the model reads a
    left-out feature as 0 there.
    """
    out = []
    for item in iter_decoded(path):
        row = item.row
        item_cues = nuisance.declared_for(row["task"], _params(row))
        audio = nuisance_features(item.clips, item.sample_rate)
        out.append(
            Sample(
                row["task"],
                row["question"] or "",
                tuple(row["options"]),
                int(row["answer_index"]),
                metadata(item),
                {k: v for k, v in audio.items() if k.split(".", 1)[-1] not in item_cues},
            )
        )
    return out


def _params(row: dict) -> dict | None:
    """The row's ``params`` (only to apply the task's per-item cue declarations), None where absent or unreadable."""
    try:
        params = json.loads(row.get("params") or "null")
    except (TypeError, ValueError):
        return None
    return params if isinstance(params, dict) else None


# --- the four controls: fit(train samples of one task), predict(sample) -> option index -------------


def _argmax(scores) -> int:
    """Index of the highest score; ties go to the lowest index (deterministic)."""
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))


class TextPrior:
    """(a) The option text most often right in training (per question template, else per task);
    a text's score is its smoothed rate of being right when offered, ``(right + 1) / (offered + 2)``."""

    def fit(self, train: list[Sample]) -> TextPrior:
        self.right, self.offered = Counter(), Counter()
        for s in train:
            for key in (s.template, None):
                self.offered.update((key, o) for o in s.options)
                self.right[(key, s.options[s.answer])] += 1
        self.templates = {s.template for s in train}
        return self

    def scores(self, s: Sample) -> list[float]:
        key = s.template if s.template in self.templates else None
        return [(self.right[(key, o)] + 1) / (self.offered[(key, o)] + 2) for o in s.options]

    def predict(self, s: Sample) -> int:
        return _argmax(self.scores(s))


class PositionPrior:
    """(d) The answer position most often right in training (among the item's positions)."""

    def fit(self, train: list[Sample]) -> PositionPrior:
        self.counts = Counter(s.answer for s in train)
        return self

    def predict(self, s: Sample) -> int:
        return _argmax([self.counts[i] for i in range(len(s.options))])


def _pair_tokens(question: str, option: str) -> list[str]:
    """Token features of one (question, option) pair: option words, the whole option, and
    question word x option word pairs (lower case, numbers kept as words)."""
    q, o = set(_WORD.findall(question.lower())), sorted(set(_WORD.findall(option.lower())))
    return [f"o:{w}" for w in o] + [f"O:{option.strip().lower()}"] + [f"q:{a}|o:{b}" for a in sorted(q) for b in o]


class OptionText:
    """(b) A conditional-logit choice model: ``P(option j) = softmax_j(w . phi(question, option_j))``
    with binary token features ``phi`` (:func:`_pair_tokens`), fitted by L-BFGS with an L2 penalty."""

    def fit(self, train: list[Sample]) -> OptionText:
        vocab = sorted({t for s in train for o in s.options for t in _pair_tokens(s.question, o)})
        self.index = {t: i for i, t in enumerate(vocab)}
        x, groups, answers = self._design(train)
        w0 = np.zeros(len(vocab))
        if len(vocab) and train:
            res = optimize.minimize(
                _logit_loss, w0, args=(x, groups, answers), jac=True, method="L-BFGS-B", options={"maxiter": 200}
            )
            w0 = res.x
        self.w = w0
        return self

    def _design(self, data: list[Sample]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows = (item, option) pairs: features, the item's row offsets, the answer's row."""
        rows = [(s, o) for s in data for o in s.options]
        x = np.zeros((len(rows), len(self.index)))
        for r, (s, o) in enumerate(rows):
            cols = [self.index[t] for t in _pair_tokens(s.question, o) if t in self.index]
            x[r, cols] = 1.0
        sizes = np.array([len(s.options) for s in data], dtype=np.int64)
        groups = np.concatenate([[0], np.cumsum(sizes)])
        answers = groups[:-1] + np.array([s.answer for s in data], dtype=np.int64)
        return x, groups, answers

    def predict(self, s: Sample) -> int:
        x, _, _ = self._design([s])
        return _argmax(x @ self.w)


def _logit_loss(w: np.ndarray, x: np.ndarray, groups: np.ndarray, answers: np.ndarray):
    """Negative conditional log-likelihood + ``L2/2 |w|^2`` and its gradient (rows of one item are
    contiguous: ``groups`` holds their offsets)."""
    z = x @ w
    starts, sizes = groups[:-1], np.diff(groups)
    z = z - np.repeat(np.maximum.reduceat(z, starts), sizes)
    e = np.exp(z)
    total = np.add.reduceat(e, starts)
    grad_z = e / np.repeat(total, sizes)
    grad_z[answers] -= 1.0
    loss = float(np.sum(np.log(total)) - np.sum(z[answers]))
    return loss + 0.5 * L2 * float(w @ w), x.T @ grad_z + L2 * w


class Metadata:
    """(c) k nearest neighbours on the standardised metadata features (:func:`metadata`, those
    :func:`usable` for the task), voting
    for the answer text among the item's options; k from ``K_CHOICES`` by leave-one-out accuracy on
    the training set; ties go to the text prior's order, then the lowest index. Features constant in
    training are dropped; with none left the model is the text prior (k = 0)."""

    source = "meta"  # the Sample field read

    @staticmethod
    def allowed(task: str, name: str) -> bool:
        return usable(task, name)

    def fit(self, train: list[Sample]) -> Metadata:
        self.names = sorted({k for s in train for k in getattr(s, self.source) if self.allowed(s.task, k)})
        x = self._matrix(train)
        keep = x.std(axis=0) > 0  # a feature constant in training says nothing (all of them: the text prior)
        self.names = [n for n, k in zip(self.names, keep, strict=True) if k]
        x = x[:, keep]
        self.mean, self.std = x.mean(axis=0), x.std(axis=0)
        self.x, self.train = (x - self.mean) / self.std, train
        self.prior = TextPrior().fit(train)
        if not self.names:
            self.k = 0
            return self
        d = _sq_distances(self.x, self.x)
        np.fill_diagonal(d, np.inf)
        order = np.argsort(d, axis=1, kind="stable")
        best = max(
            K_CHOICES, key=lambda k: (sum(self._vote(s, order[i, :k]) == s.answer for i, s in enumerate(train)), -k)
        )
        self.k = min(best, max(len(train) - 1, 1))
        return self

    def _matrix(self, data: list[Sample]) -> np.ndarray:
        return np.array(
            [[getattr(s, self.source).get(k, 0.0) for k in self.names] for s in data], dtype=np.float64
        ).reshape(len(data), len(self.names))

    def _vote(self, s: Sample, neighbours) -> int:
        votes = Counter(self.train[j].options[self.train[j].answer] for j in neighbours)
        prior = self.prior.scores(s)
        return _argmax([votes[o] + 1e-3 * p for o, p in zip(s.options, prior, strict=True)])

    def predict(self, s: Sample) -> int:
        d = _sq_distances((self._matrix([s]) - self.mean) / self.std, self.x)[0]
        return self._vote(s, np.argsort(d, kind="stable")[: self.k])


def _sq_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``[len(a), len(b)]``."""
    return np.maximum((a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2 * a @ b.T, 0.0)


class Nuisance(Metadata):
    """(e) the audio-nuisance control: the same k-nearest-neighbour vote on the level, loudness and
    timing facts of :func:`~auralgen.validation.nuisance.nuisance_features` (per clip and per part),
    leaving out those the task declares as its cue (:func:`auralgen.validation.nuisance.usable`)."""

    source = "audio"

    @staticmethod
    def allowed(task: str, name: str) -> bool:
        return nuisance.usable(task, name)


MODELS = {
    "text_prior": TextPrior,
    "option_text": OptionText,
    "metadata": Metadata,
    "position_prior": PositionPrior,
    "nuisance": Nuisance,
}


# --- the audit -----------------------------------------------------------------------------------


@dataclass
class ControlsReport:
    """Result of :func:`audit_controls`: one row per task (see the module docstring), the flags
    (``{audit, task, detail}``, audit = ``control`` or ``prior``) and the verdict."""

    train: str
    test: str
    tasks: list[dict] = field(default_factory=list)
    flags: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``fail`` (a flag), ``too few items`` (a task with n < MIN_ITEMS, no flag) or ``clean``."""
        if self.flags:
            return "fail"
        if not self.tasks or any(t["status"] == "too few items" for t in self.tasks):
            return "too few items"
        return "clean"

    @property
    def ok(self) -> bool:
        return self.verdict == "clean"

    def to_dict(self) -> dict[str, Any]:
        return {
            "train": self.train,
            "test": self.test,
            "verdict": self.verdict,
            "ok": self.ok,
            "tasks": self.tasks,
            "flags": self.flags,
            "notes": self.notes,
        }

    def table(self) -> str:
        """The per-task table: controls' accuracy against the chance levels, n and MDE."""
        short = {
            "text_prior": "text",
            "option_text": "words",
            "metadata": "meta",
            "position_prior": "pos",
            "nuisance": "audio",
        }
        head = (
            f"{'task':<22} {'n':>5} {'1/opt':>6} {'bal':>6} {'honest':>6} {'MDE':>6} "
            + " ".join(f"{short[c]:>14}" for c in CONTROLS)
            + "  status"
        )
        out = [f"learned controls: trained on {self.train}, tested on {self.test} -> {self.verdict.upper()}", head]
        for t in self.tasks:
            cells = []
            for c in CONTROLS:
                r = t["controls"][c]
                cells.append(f"{r['accuracy']:>5.1%} [{r['ci'][0]:.0%},{r['ci'][1]:.0%}]".rjust(14))
            out.append(
                f"{t['task']:<22} {t['n']:>5} {t['stated_chance']:>6.1%} {t['balanced_chance']:>6.1%} "
                f"{t['honest_chance']:>6.1%} {t['mde']:>6.1%} " + " ".join(cells) + f"  {t['status']}"
            )
        out += [f"flag [{f['audit']}] {f['task']}: {f['detail']}" for f in self.flags]
        out += [f"note: {n}" for n in self.notes]
        out.append(
            f"columns: text=(a) answer-text prior, words=(b) option-text model, meta=(c) metadata kNN, "
            f"pos=(d) position prior, audio=(e) audio-nuisance kNN (level, loudness, span, silences, segments); "
            f"bal = 1/(options ever right in training); honest = best of text, "
            f"pos, 1/opt; MDE at alpha {ALPHA:g}, power {POWER:.0%}; flags need n >= {MIN_ITEMS}"
        )
        return "\n".join(out)


def audit_controls(train_dir, test_dir, *, min_items: int = MIN_ITEMS) -> ControlsReport:
    """Train the audio-free controls on the dataset at ``train_dir`` and test them on ``test_dir``, per task.

    Parameters
    ----------
    train_dir, test_dir : str or os.PathLike
        Exported dataset directories (two seeds of one config).
    min_items : int
        Test items a task needs before a flag (or "clean") is called.

    Returns
    -------
    ControlsReport
        One row per task (accuracies, intervals, chance levels, MDE) and the flags.

    Raises
    ------
    ParameterError
        If either path is not a dataset directory.
    """
    train, test = samples(train_dir), samples(test_dir)
    report = ControlsReport(str(train_dir), str(test_dir))
    by_task = defaultdict(list)
    for s in train:
        by_task[s.task].append(s)
    for name in sorted({s.task for s in test}):
        held = [s for s in test if s.task == name]
        if not by_task.get(name):
            report.notes.append(f"task {name!r} has no training items in {train_dir}: not tested")
            continue
        report.tasks.append(task_controls(name, by_task[name], held, report, min_items=min_items))
    return report


def task_controls(
    name: str, train: list[Sample], test: list[Sample], report: ControlsReport, *, min_items: int = MIN_ITEMS
) -> dict:
    """One task's row of the report (and its flags added to ``report``)."""
    n = len(test)
    correct = {
        c: sum(m.predict(s) == s.answer for s in test) for c, m in ((c, MODELS[c]().fit(train)) for c in CONTROLS)
    }
    stated = float(np.mean([1 / len(s.options) for s in test]))
    ever = {s.options[s.answer] for s in train}
    balanced = float(np.mean([1 / max(1, sum(o in ever for o in s.options)) for s in test]))
    honest = max(correct["text_prior"] / n, correct["position_prior"] / n, stated)
    row = {
        "task": name,
        "n": n,
        "n_train": len(train),
        "stated_chance": stated,
        "balanced_chance": balanced,
        "honest_chance": honest,
        "mde": MARGIN + min_detectable_effect(n, min(honest + MARGIN, 1.0), alpha=ALPHA / len(CONTROLS)),
        "controls": {},
    }
    for c in CONTROLS:
        ref = stated if c in PRIORS else honest
        acc = correct[c] / n
        row["controls"][c] = {
            "correct": correct[c],
            "accuracy": acc,
            "ci": list(wilson(correct[c], n)),
            "chance": ref,
            "excess": acc - ref,
            "p": p_above(correct[c], n, ref + MARGIN),
        }
    flagged = holm({c: v["p"] for c, v in row["controls"].items()}) if n >= min_items else set()
    for c in CONTROLS:
        if c in flagged:
            v, audit = row["controls"][c], "prior" if c in PRIORS else "control"
            report.flags.append(
                {
                    "audit": audit,
                    "task": name,
                    "detail": f"{c} {v['accuracy']:.1%} on {n} items vs "
                    f"{'stated' if audit == 'prior' else 'honest'} chance {v['chance']:.1%} "
                    f"+ {MARGIN:.0%} (Holm p={v['p']:.2g})",
                }
            )
    row["status"] = "fail" if flagged else ("too few items" if n < min_items else "clean")
    return row
