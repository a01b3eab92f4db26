"""The executor protocol: how a run maps a function over work units (generation renders items with one).

:meth:`Executor.map_ordered` yields ``fn(w)`` for each work unit ``w`` in input order (the writer
stays deterministic), with at most ``max_ahead`` units sent ahead of the consumer; ``setup`` runs
once per worker before its first unit; the first error of a unit is re-raised in the caller.
:meth:`Executor.close` releases the workers (``cancel=True``: without waiting for them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol


class Executor(Protocol):
    """What every executor offers: an ordered map over work units, and a way to release its workers."""

    def map_ordered(
        self,
        fn: Callable[[Any], Any],
        work: Iterable[Any],
        *,
        setup: Callable[[], None] | None = None,
        max_ahead: int = 32,
    ) -> Iterator[Any]:
        """Run ``fn`` on every work unit and yield the results in input order.

        Parameters
        ----------
        fn : callable
            Called once per work unit, in a worker; picklable for Ray (and a pool that spawns).
        work : iterable
            The work units, read lazily (at most ``max_ahead`` ahead of the consumer).
        setup : callable or None, optional
            Called once in each worker before its first unit (e.g. to warm caches).
        max_ahead : int, optional
            Most units sent out but not yet yielded (at least 1); bounds memory.

        Returns
        -------
        iterator
            ``fn(w)`` for each unit ``w``, in the order of ``work``; the first unit that raised
            re-raises its error here.
        """

    def close(self, *, cancel: bool = False) -> None:
        """Release the workers.

        Parameters
        ----------
        cancel : bool, optional
            True: stop the work still running instead of waiting for it.
        """
