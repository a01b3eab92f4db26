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
    def map_ordered(
        self,
        fn: Callable[[Any], Any],
        work: Iterable[Any],
        *,
        setup: Callable[[], None] | None = None,
        max_ahead: int = 32,
    ) -> Iterator[Any]: ...

    def close(self, *, cancel: bool = False) -> None: ...
