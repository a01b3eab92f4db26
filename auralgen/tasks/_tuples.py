"""Parameter tuples: a hashable form of an item's parameters, and their balanced deal to the splits
(re-exported by :mod:`auralgen.tasks.design`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def freeze(value: Any) -> Any:
    """``value`` as a hashable, rounding floats to 9 significant digits (a parameter tuple's part).

    Parameters
    ----------
    value : Any
        A JSON-able value of ``params``: a number, string, list, tuple or dict (nested).

    Returns
    -------
    Any
        The same value with lists as tuples, dicts as sorted ``(key, value)`` tuples and floats rounded.

    Examples
    --------
    >>> freeze({"b": [1.0000000001, 2], "a": "x"})
    (('a', 'x'), ('b', (1.0, 2)))
    """
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    return value


def _score(split: str, key: tuple) -> bytes:
    blob = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(f"{split}|{blob}".encode()).digest()


def deal(keys, splits: tuple[str, ...]) -> dict[tuple, str]:
    """The owning split of each of a finite set of parameter tuples, balanced.

    Rendezvous hashing with bounded loads: each split may own ``n // S`` tuples (one more for
    the first ``n % S`` splits in hash order); taken in hash order, each tuple goes to the
    split of highest score (as in :func:`auralgen.core.random.owner`) that still has room. So every
    split owns at least one tuple when ``n >= S``, and a single split owns them all.

    Parameters
    ----------
    keys : iterable of tuple
        The parameter tuples (duplicates count once); JSON-able values.
    splits : tuple of str
        The split names.

    Returns
    -------
    dict of tuple to str
        Each distinct tuple's owning split.

    Examples
    --------
    >>> sorted(deal([(1,), (2,), (3,)], ("train", "test")).values())
    ['test', 'train', 'train']
    """
    keys = sorted(set(keys), key=lambda key: _score("", key))
    ranked = sorted(splits, key=lambda s: hashlib.sha256(s.encode()).digest())
    room = {s: len(keys) // len(splits) + (i < len(keys) % len(splits)) for i, s in enumerate(ranked)}
    owners = {}
    for key in keys:
        best = max((s for s in splits if room[s] > 0), key=lambda s: _score(s, key))
        room[best] -= 1
        owners[key] = best
    return owners
