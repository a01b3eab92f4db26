"""The serial executor: every work unit runs in the calling process."""

from __future__ import annotations


class SerialExecutor:
    """Runs every unit in the calling process (``workers=1``)."""

    def map_ordered(self, fn, work, *, setup=None, max_ahead: int = 32):
        """Run ``fn`` on each unit of ``work`` here, one after the other.

        Parameters
        ----------
        fn : callable
            Called once per work unit.
        work : iterable
            The work units, read lazily.
        setup : callable or None, optional
            Called once before the first unit.
        max_ahead : int, optional
            Ignored: a unit runs only when its result is asked for.

        Yields
        ------
        object
            ``fn(w)`` for each unit ``w``, in input order.
        """
        if setup is not None:
            setup()
        for w in work:
            yield fn(w)

    def close(self, *, cancel: bool = False) -> None:
        """Nothing to release (no workers).

        Parameters
        ----------
        cancel : bool, optional
            Ignored.
        """
