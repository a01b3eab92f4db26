"""The serial executor: every work unit runs in the calling process."""

from __future__ import annotations


class SerialExecutor:
    """Runs every unit in the calling process (``workers=1``)."""

    def map_ordered(self, fn, work, *, setup=None, max_ahead: int = 32):
        if setup is not None:
            setup()
        for w in work:
            yield fn(w)

    def close(self, *, cancel: bool = False) -> None:
        pass
