"""Serial and local process-pool executors.

:meth:`Executor.map_ordered` yields ``fn(w)`` for each work unit ``w`` in input order, with at
most ``max_ahead`` units submitted ahead of the consumer (memory stays bounded). Every wait is
bounded: the first error raised by ``fn`` in any worker is re-raised in the caller within about
a second, even while an earlier unit is still running, and :meth:`close` with ``cancel=True``
kills the workers instead of waiting for them. Workers ignore SIGINT, so Ctrl-C reaches only
the parent, which then cancels and kills the pool.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

POLL_S = 0.5  # longest single wait of the consumer loop
GRACE_S = 3.0  # after a unit failed: how long the units before it may take to finish (their output is kept)
KILL_WAIT_S = 3.0  # after SIGTERM, how long a worker may take to exit before SIGKILL

_END = object()


class Executor(Protocol):
    def map_ordered(
        self, fn: Callable[[Any], Any], work: Iterable[Any], *, setup: Callable[[], None] | None = None,
        max_ahead: int = 32,
    ) -> Iterator[Any]: ...  # fmt: skip

    def close(self, *, cancel: bool = False) -> None: ...


class SerialExecutor:
    """Runs every unit in the calling process (``workers=1``)."""

    def map_ordered(self, fn, work, *, setup=None, max_ahead: int = 32):
        if setup is not None:
            setup()
        for w in work:
            yield fn(w)

    def close(self, *, cancel: bool = False) -> None:
        pass


def _worker_init(setup: Callable[[], None] | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    if setup is not None:
        setup()


class LocalPoolExecutor:
    """A pool of ``workers`` processes (fork where available)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._pool: cf.ProcessPoolExecutor | None = None

    def map_ordered(self, fn, work, *, setup=None, max_ahead: int = 32):
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_worker_init, initargs=(setup,))
        window: deque[cf.Future] = deque()
        units = iter(work)
        failed: list = []  # [future, deadline] once some unit has failed
        while True:
            while not failed and len(window) < max(1, max_ahead):
                unit = next(units, _END)
                if unit is _END:
                    break
                window.append(self._pool.submit(fn, unit))
            if not window:
                return
            _wait_head(window, failed)
            yield window.popleft().result()

    def close(self, *, cancel: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if not cancel:
            pool.shutdown(wait=True)
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        _kill(procs)


def _wait_head(window: deque[cf.Future], failed: list) -> None:
    """Wait until the first future is done. Once a later one has failed, the units before it
    still yield if they finish within :data:`GRACE_S` (their shards are kept); then its error is raised."""
    while not window[0].done():
        if not failed:
            done, _ = cf.wait(window, timeout=POLL_S, return_when=cf.FIRST_EXCEPTION)
            bad = [f for f in window if f in done and f.exception() is not None]
            if bad:
                failed[:] = [bad[0], time.monotonic() + GRACE_S]
        elif time.monotonic() > failed[1]:
            raise failed[0].exception()
        else:
            cf.wait([window[0]], timeout=min(POLL_S, max(0.0, failed[1] - time.monotonic())))


def _kill(procs) -> None:
    """SIGTERM the workers, then SIGKILL those still alive after :data:`KILL_WAIT_S`; bounded."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(KILL_WAIT_S / max(1, len(procs)))
        if p.is_alive():
            p.kill()
            p.join(1.0)


def make_executor(workers: int) -> SerialExecutor | LocalPoolExecutor:
    return SerialExecutor() if workers <= 1 else LocalPoolExecutor(workers)
