"""The audio-free controls' models and the features they may read, for :mod:`auralgen.validation.controls`.

A :class:`Sample` is one item without its audio content; each control model has ``fit(train)`` (the
training samples of one task; returns the model) and ``predict(sample)`` (an option index). The
metadata and nuisance models leave out the features a task declares as its cue (:func:`usable`,
:func:`auralgen.validation.nuisance.usable`). :mod:`auralgen.validation.controls` re-exports every
public name here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from scipy import optimize

from auralgen.core.docstrings import sections
from auralgen.validation import nuisance

K_CHOICES = (1, 3, 9, 27)  # the metadata model's k, chosen by leave-one-out on the training set
L2 = 1.0  # the option-text model's ridge penalty (on the summed log-likelihood)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Sample:
    """One item as the controls see it: no audio content, no params, no level.

    ``meta``: the metadata features (name -> float), see :func:`~auralgen.validation.controls.metadata`.
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


# per-clip audio-content features of :func:`metadata` -> the audit feature each one measures
CONTENT = {"rms_db": "audio.rms_dbfs", "peak_db": "audio.peak_dbfs"}


@cache
def content_features(task: str) -> frozenset[str]:
    """The audio-content features (keys of :data:`CONTENT`) the metadata model may use for ``task``:
    those whose audit feature matches none of the task's ``AuditSpec.target_features`` (all of them
    for a task the registry does not know).

    Parameters
    ----------
    task : str
        The task name, as for :func:`auralgen.validation.nuisance.declared` (the nuisance counterpart).

    Returns
    -------
    frozenset of str
        A subset of ``{"rms_db", "peak_db"}``.

    Examples
    --------
    >>> sorted(content_features("pitch_relative")), sorted(content_features("audiogram"))
    (['peak_db', 'rms_db'], [])
    """
    spec = nuisance.audit_spec(task)
    return frozenset(CONTENT) - nuisance.matching(CONTENT, spec.target_features if spec else ())


def usable(task: str, name: str) -> bool:
    """Whether metadata feature ``name`` (e.g. ``clip1.rms_db_rank``) may be used for ``task``.

    Parameters
    ----------
    task, name : str
        As in :func:`auralgen.validation.nuisance.usable`, ``name`` a key of
        :func:`~auralgen.validation.controls.metadata`.

    Returns
    -------
    bool
        True for a container feature, or a content feature in :func:`content_features`.
    """
    base = name.split(".", 1)[-1].removesuffix("_rank")
    return base not in CONTENT or base in content_features(task)


# --- the five controls: fit(train samples of one task), predict(sample) -> option index -------------

# The sections of every control's ``fit`` and ``predict``, written once (``sections`` names the model).
FIT = """
Parameters
----------
train : list of Sample
    The training items of one task.

Returns
-------
{model}
    This model, fitted.
"""
PREDICT = """
Parameters
----------
s : Sample
    A test item of the task the model was fitted on.

Returns
-------
int
    The predicted answer's index in ``s.options``.
"""


def _argmax(scores) -> int:
    """Index of the highest score; ties go to the lowest index (deterministic)."""
    return int(np.argmax(np.asarray(scores, dtype=np.float64)))


class TextPrior:
    """(a) The option text most often right in training (per question template, else per task);
    a text's score is its smoothed rate of being right when offered, ``(right + 1) / (offered + 2)``."""

    @sections(FIT, model="TextPrior")
    def fit(self, train: list[Sample]) -> TextPrior:
        """Count, per question template and over the task, how often each text is offered and right."""
        self.right, self.offered = Counter(), Counter()
        for s in train:
            for key in (s.template, None):
                self.offered.update((key, o) for o in s.options)
                self.right[(key, s.options[s.answer])] += 1
        self.templates = {s.template for s in train}
        return self

    def scores(self, s: Sample) -> list[float]:
        """Each option's smoothed rate of being right, by its template's counts (the task's for a new template).

        Parameters
        ----------
        s : Sample
            An item.

        Returns
        -------
        list of float
            One score in (0, 1) per option of ``s``, in option order.
        """
        key = s.template if s.template in self.templates else None
        return [(self.right[(key, o)] + 1) / (self.offered[(key, o)] + 2) for o in s.options]

    @sections(PREDICT)
    def predict(self, s: Sample) -> int:
        """The option with the highest :meth:`scores` (ties: the lowest index)."""
        return _argmax(self.scores(s))


class PositionPrior:
    """(d) The answer position most often right in training (among the item's positions)."""

    @sections(FIT, model="PositionPrior")
    def fit(self, train: list[Sample]) -> PositionPrior:
        """Count how often each answer position is right."""
        self.counts = Counter(s.answer for s in train)
        return self

    @sections(PREDICT)
    def predict(self, s: Sample) -> int:
        """The position most often right in training among ``s``'s positions (ties: the lowest)."""
        return _argmax([self.counts[i] for i in range(len(s.options))])


def _pair_tokens(question: str, option: str) -> list[str]:
    """Token features of one (question, option) pair: option words, the whole option, and
    question word x option word pairs (lower case, numbers kept as words)."""
    q, o = set(_WORD.findall(question.lower())), sorted(set(_WORD.findall(option.lower())))
    return [f"o:{w}" for w in o] + [f"O:{option.strip().lower()}"] + [f"q:{a}|o:{b}" for a in sorted(q) for b in o]


class OptionText:
    """(b) A conditional-logit choice model: ``P(option j) = softmax_j(w . phi(question, option_j))``
    with binary token features ``phi`` (:func:`_pair_tokens`), fitted by L-BFGS with an L2 penalty."""

    @sections(FIT, model="OptionText")
    def fit(self, train: list[Sample]) -> OptionText:
        """Fit the token weights (at most 200 L-BFGS iterations; all zero without tokens or items)."""
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

    @sections(PREDICT)
    def predict(self, s: Sample) -> int:
        """The option of highest utility ``w . phi`` (tokens unseen in training count nothing)."""
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
        """Whether feature ``name`` may be used for ``task`` (:func:`usable`).

        Parameters
        ----------
        task, name : str
            As in :func:`usable`, ``name`` a key of the model's ``source`` field.

        Returns
        -------
        bool
            False for a feature that measures the task's declared cue.
        """
        return usable(task, name)

    @sections(FIT, model="Metadata")
    def fit(self, train: list[Sample]) -> Metadata:
        """Standardise the allowed, non-constant features and choose k by leave-one-out."""
        self.names = sorted({k for s in train for k in getattr(s, self.source) if self.allowed(s.task, k)})
        x = self._matrix(train)
        mean, std = x.mean(axis=0), x.std(axis=0)
        # a feature constant in training says nothing (all of them: the text prior); a constant that is not exact in
        # binary (a clip of 2.2 s) has a spread of rounding error, ~1e-15 of it, which is constant too
        keep = std > 1e-9 * np.maximum(1.0, np.abs(mean))
        self.names = [n for n, k in zip(self.names, keep, strict=True) if k]
        self.mean, self.std = mean[keep], std[keep]
        self.x, self.train = (x[:, keep] - self.mean) / self.std, train
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

    @sections(PREDICT)
    def predict(self, s: Sample) -> int:
        """The answer text most voted by the k nearest training items, among ``s``'s options."""
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
        """Whether nuisance feature ``name`` may be used for ``task`` (:func:`auralgen.validation.nuisance.usable`)."""
        return nuisance.usable(task, name)


MODELS = {
    "text_prior": TextPrior,
    "option_text": OptionText,
    "metadata": Metadata,
    "position_prior": PositionPrior,
    "nuisance": Nuisance,
}
