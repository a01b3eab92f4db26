"""Honest chance: the accuracy of the best rule that never hears the audio.

The stated chance of a multiple-choice item is ``1/options``; it is the real chance only when
every option is equally often right. When some answer text or answer position is right more
often than others, a rule that ignores the audio beats ``1/options``, so a model's accuracy is
read against the best such rule. For a set of answers (records; one record = one item asked
under one presentation) three audio-free rules are scored, and the best is the honest chance:

``text``
    always answer the answer text most often right in the set (ties: the first in sorted
    order); where that text is not offered, guess uniformly (``1/options``);
``position``
    always answer the presented position most often right in the set (``A``, ``B``, ...);
    where the item has fewer options, guess uniformly;
``guess``
    a uniform guess: ``1/options`` (the stated chance).

Each rule is fitted on the very set it is scored on: the honest chance is an upper bound of what
the most frequent text or position gives, not a held-out estimate (the learned controls of
:mod:`auralgen.validation.controls` are the held-out ones).

Under circular evaluation (every item asked under ``k`` rotations of its options) a position
rule is right under exactly one rotation of a ``k``-option item, so its AA is ``1/k``; a text
rule keeps its answer under every rotation, so it is right under all of them or none. The chance
of **ACR** (an item right under every presentation) is therefore the same maximum over rules of
each rule's ACR: ``text`` -> the share of items whose answer is that text (each presentation a
guess, ``1/k``, where it is not offered), ``position`` -> 0 once an item is asked under two
rotations, ``guess`` -> ``prod 1/k`` over the item's presentations. Reorder items (the clips,
not the options, are permuted) change their correct text between presentations, and the rules
are scored on what was presented, so they need no special case.

A record carries what was presented: ``options`` (the presented option texts) and ``truth``
(the presented index of the correct one). Without them the answers are unknown and only the
stated chance can be given.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

__all__ = ["RULES", "audio_free_chance", "has_answers"]

RULES = ("text", "position", "guess")


def has_answers(records: Sequence[dict]) -> bool:
    """Whether every record carries its presented ``options`` and ``truth`` (the honest chance needs both).

    Parameters
    ----------
    records : sequence of dict
        Answer records, one per item and presentation.

    Returns
    -------
    bool
        True when ``records`` is non-empty and every record has both keys.
    """
    return bool(records) and all("options" in r and "truth" in r for r in records)


def audio_free_chance(records: Sequence[dict]) -> dict:
    """The best audio-free rule's AA and ACR on ``records`` (see the module docstring).

    Parameters
    ----------
    records : sequence of dict
        Each with ``id``, ``options`` (presented texts) and ``truth`` (presented index of the
        correct option); non-empty.

    Returns
    -------
    dict
        ``{"AA", "ACR", "rule", "rule_ACR", "stated"}``: the honest chance of AA and of ACR,
        the rule reaching each (e.g. ``'text "second"'``, ``"position B"``, ``"guess"``) and the
        stated chance (mean ``1/options``).

    Examples
    --------
    >>> recs = [dict(id=str(i), options=["first", "second", "same"], truth=i % 2) for i in range(3)]
    >>> c = audio_free_chance(recs)
    >>> round(c["AA"], 3), c["rule"], round(c["stated"], 3)  # "always A" ties "always first": the plainer is named
    (0.667, 'position A', 0.333)
    """
    k = np.array([len(r["options"]) for r in records], dtype=float)
    truth = np.array([int(r["truth"]) for r in records], dtype=np.int64)
    answer = [r["options"][int(r["truth"])] for r in records]
    items: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        items[str(r["id"])].append(i)
    groups = list(items.values())
    stated = float(np.mean(1.0 / k))
    guess_acr = float(np.mean([np.prod(1.0 / k[g]) for g in groups]))
    scores = {"guess": (stated, guess_acr)}
    scores.update(_text_rules(records, answer, k, groups))
    scores.update(_position_rules(truth, k, groups))
    best = max(scores, key=lambda name: (round(scores[name][0], 12), -_order(name)))  # float ties -> plainest rule
    best_acr = max(scores, key=lambda name: (round(scores[name][1], 12), -_order(name)))
    return {"AA": scores[best][0], "ACR": scores[best_acr][1], "rule": best, "rule_ACR": best_acr, "stated": stated}


def _order(name: str) -> int:
    """Tie order: a guess wins a tie (the plainest rule), then a position, then a text."""
    return ("guess", "position", "text").index(name.split(" ")[0])


def _text_rules(records, answer: list[str], k: np.ndarray, groups: list[list[int]]) -> dict[str, tuple]:
    """AA and ACR of "always answer text T" for every T that is right somewhere."""
    n = len(records)
    right = Counter(answer)
    offered_mass: Counter = Counter()  # sum of 1/k over the records offering T
    for i, r in enumerate(records):
        for t in set(r["options"]):
            offered_mass[t] += 1.0 / k[i]
    total_mass = float(np.sum(1.0 / k))
    acr: Counter = Counter()
    guess_all = 0.0
    for g in groups:  # per item: the product of its presentations' hit probabilities
        g_guess = float(np.prod(1.0 / k[g]))
        guess_all += g_guess
        offered = set().union(*(set(records[i]["options"]) for i in g))
        for t in offered:
            acr[t] -= g_guess  # T is offered somewhere: not a guess on every presentation
            if all(answer[i] == t or t not in records[i]["options"] for i in g):
                acr[t] += float(np.prod([1.0 if answer[i] == t else 1.0 / k[i] for i in g]))
    out = {}
    for t in sorted(right):
        # an accuracy: at most 1 (the mass difference can round 1 ulp above it when T is always the answer)
        aa = min(1.0, (right[t] + total_mass - offered_mass[t]) / n)
        out[f'text "{t}"'] = (float(aa), float((guess_all + acr[t]) / len(groups)))
    return out


def _position_rules(truth: np.ndarray, k: np.ndarray, groups: list[list[int]]) -> dict[str, tuple]:
    """AA and ACR of "always answer presented position j" for every position."""
    out = {}
    for j in range(int(k.max())):
        hit = np.where(j < k, (truth == j).astype(float), 1.0 / k)
        acr = float(np.mean([np.prod(hit[g]) for g in groups]))
        out[f"position {chr(ord('A') + j)}"] = (float(hit.mean()), acr)
    return out
