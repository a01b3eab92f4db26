"""A bounded per-process memo: the values of a pure function kept for the calls that repeat it.

An item computes some values more than once (a sound is synthesized when it is sampled, rendered
and measured; a source is rendered in its room for the mix and again alone for the measurement).
:class:`BoundedMemo` keeps the last ``size`` of them, the least recently used dropped first, and
returns the stored value itself: an array is stored read-only, so no caller can change what the
next one gets.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np


class BoundedMemo:
    """At most ``size`` values by key, least recently used dropped first; safe to share between threads.

    Parameters
    ----------
    size : int
        How many values are kept (>= 1).

    Examples
    --------
    >>> memo = BoundedMemo(2)
    >>> a = memo.get("a", lambda: np.zeros(3))
    >>> memo.get("a", lambda: np.ones(3)) is a, a.flags.writeable
    (True, False)
    >>> _ = memo.get("b", lambda: 1.0), memo.get("c", lambda: 2.0)
    >>> len(memo), memo.get("a", lambda: "made again")
    (2, 'made again')
    """

    def __init__(self, size: int):
        self.size = int(size)
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value stored under ``key``, else ``make()`` stored there (an array made read-only).

        Parameters
        ----------
        key : hashable
            What the value is a pure function of.
        make : callable
            Computes the value; called outside the lock, only on a miss.

        Returns
        -------
        Any
            The stored value (the same object for every hit).
        """
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
