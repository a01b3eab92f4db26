"""The local process-pool executor (and :func:`make_executor`, which picks serial or pool).

:meth:`Executor.map_ordered` yields ``fn(w)`` for each work unit ``w`` in input order, with at
most ``max_ahead`` units sent ahead of the consumer (memory stays bounded). A unit goes to a worker
when it has fewer than :data:`DEPTH` units outstanding, not queued behind another's slow unit at
send time, so a worker idles only when the whole window waits on one unit. Every wait is
bounded: once ``fn`` raises in a worker, the units before it may finish within
:data:`GRACE_S` (their results are yielded), then the error is re-raised in the caller; a worker
that dies is an error of its units. :meth:`close` with ``cancel=True`` kills the workers instead
of waiting for them. Workers ignore SIGINT, so Ctrl-C reaches only the parent. The pool has no
helper threads (one pipe per worker, read by the parent alone), so nothing can block the
parent's exit, even when a worker is killed while sending a result.

Workers die with their parent, whatever kills it (SIGTERM, SIGKILL, the OOM killer), even while
blocked sending a result nobody will read: on Linux the kernel sends them SIGKILL when the thread
that started the pool exits (``PR_SET_PDEATHSIG``); everywhere, a watchdog thread in each worker
checks every :data:`POLL_S` that its parent is still the one that started it, and a worker holds
no other worker's pipe, so a send to a dead parent fails instead of waiting. An orphan would keep
the out directory's lock (inherited across fork) and refuse every rerun.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import numbers
import os
import signal
import sys
import threading
import time

from auralgen.core.errors import ParameterError
from auralgen.execution.serial import SerialExecutor

DEPTH = 2  # units outstanding per worker: the one it renders and the next, ready when it finishes
POLL_S = 0.5  # longest single wait of the consumer loop and of an idle worker
GRACE_S = 3.0  # after a unit failed: how long the units before it may take to finish (their output is kept)
KILL_WAIT_S = 3.0  # after SIGTERM, how long the workers may take to exit before SIGKILL


PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h): the signal a process gets when its parent exits


def _die_with_parent(parent_pid: int) -> None:
    """Make this worker exit when the process ``parent_pid`` is gone, whatever it is doing (also
    blocked in a send): the kernel's parent-death signal where there is one (Linux), and a watchdog
    thread polling the parent id every :data:`POLL_S` everywhere."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl in this libc: the watchdog alone
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(POLL_S)
        os._exit(0)  # nobody will read a result; exit even if the main thread is blocked in a send

    threading.Thread(target=watch, name="auralgen-parent-watch", daemon=True).start()


def _worker_loop(conn, fn, setup, parent_pid: int, others=()) -> None:
    """A worker: runs ``(seq, unit)`` requests from ``conn`` and sends ``(seq, ok, result or error)``.
    ``others`` are the parent's ends of the pipes of workers started before this one (inherited by
    fork): closed at once, so that only the parent can read them."""
    for other in others:
        other.close()
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    if setup is not None:
        setup()
    while True:
        while not conn.poll(POLL_S):
            if os.getppid() != parent_pid:  # the parent is gone: nobody will read a result
                return
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        seq, unit = msg
        try:
            reply = (seq, True, fn(unit))
        except Exception as exc:
            reply = (seq, False, exc)
        try:
            conn.send(reply)
        except OSError:  # the parent's end is closed: nobody will read a result
            return
        except Exception as exc:  # an unpicklable result or error
            try:
                conn.send((seq, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            except OSError:
                return


class LocalPoolExecutor:
    """A pool of ``workers`` processes (fork where available), one pipe each."""

    def __init__(self, workers: int):
        if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
            raise ParameterError(f"workers={workers!r} is invalid; allowed: an integer >= 1")
        self.workers = workers
        self.forks = "fork" in mp.get_all_start_methods()  # workers inherit this process's memory
        self._procs: list = []
        self._conns: list = []

    def _start(self, fn, setup) -> None:
        fork = "fork" in mp.get_all_start_methods()
        ctx = mp.get_context("fork" if fork else "spawn")
        for _ in range(self.workers):
            parent, child = ctx.Pipe()
            others = tuple(self._conns) if fork else ()  # a spawned worker inherits no descriptor
            proc = ctx.Process(target=_worker_loop, args=(child, fn, setup, os.getpid(), others), daemon=True)
            proc.start()
            child.close()  # the worker holds the only other end: its death is an EOF here
            self._procs.append(proc)
            self._conns.append(parent)

    def map_ordered(self, fn, work, *, setup=None, max_ahead: int = 32):
        """Run ``fn`` on the units of ``work`` in the pool's processes (see the module docstring).

        Parameters
        ----------
        fn, work, setup, max_ahead
            As for :meth:`~auralgen.execution.base.Executor.map_ordered`; the workers inherit
            ``fn`` and ``setup`` by fork (else they are pickled), and each unit is pickled to its worker.

        Yields
        ------
        object
            ``fn(w)`` for each unit ``w``, in input order.

        Raises
        ------
        Exception
            The first unit's error, after the units before it finished (within :data:`GRACE_S`);
            ``RuntimeError`` when a worker process died with units outstanding.
        """
        self._start(fn, setup)
        units, done, failed = enumerate(work), {}, None
        busy: list[list[int]] = [[] for _ in self._procs]  # seqs sent to each worker, not yet answered
        next_seq, sent, exhausted = 0, 0, False
        while True:
            while not exhausted and failed is None and sent - next_seq < max(1, max_ahead):
                w = min(range(len(busy)), key=lambda i: len(busy[i]))
                if len(busy[w]) >= DEPTH:
                    break
                seq, unit = next(units, (None, None))
                if seq is None:
                    exhausted = True
                    break
                self._conns[w].send((seq, unit))
                busy[w].append(seq)
                sent += 1
            if next_seq in done:
                ok, value = done.pop(next_seq)
                if not ok:
                    raise value
                next_seq += 1
                yield value
                continue
            if exhausted and next_seq >= sent:
                return
            if failed is not None and time.monotonic() > failed[1]:
                raise failed[0]
            got = self._receive(busy, done)
            failed = failed or got

    def _receive(self, busy: list[list[int]], done: dict) -> list | None:
        """Wait up to :data:`POLL_S` for results; returns ``[error, deadline]`` if one is a failure."""
        from multiprocessing.connection import wait

        ready = wait([*self._conns, *(p.sentinel for p in self._procs)], timeout=POLL_S)
        first, closed = None, set()
        for i, conn in enumerate(self._conns):
            if conn in ready:
                try:
                    seq, ok, value = conn.recv()
                except (EOFError, OSError):  # the worker's end is closed: it died (its pipe stays readable)
                    closed.add(i)
                    continue
                busy[i].remove(seq)
                done[seq] = (ok, value)
                if not ok and first is None:
                    first = [value, time.monotonic() + GRACE_S]
        for i, proc in enumerate(self._procs):
            gone = i in closed or (proc.sentinel in ready and not self._conns[i].poll())
            if gone and busy[i]:
                proc.join(1.0)  # its sentinel is ready: reaps it at once
                err = RuntimeError(f"a worker process died (exit code {proc.exitcode}) while rendering")
                for seq in busy[i]:
                    done[seq] = (False, err)
                first = first or [err, time.monotonic() + GRACE_S]
                busy[i].clear()
        return first

    def close(self, *, cancel: bool = False) -> None:
        """Stop the workers, bounded by :data:`KILL_WAIT_S` (then SIGTERM, then SIGKILL).

        Parameters
        ----------
        cancel : bool, optional
            True: terminate the workers at once (SIGTERM, then SIGKILL) instead of asking them to exit.
        """
        procs, conns = self._procs, self._conns
        self._procs, self._conns = [], []
        if not cancel:
            for conn in conns:
                try:
                    conn.send(None)
                except OSError:
                    pass
            deadline = time.monotonic() + KILL_WAIT_S
            for p in procs:
                p.join(max(0.0, deadline - time.monotonic()))
        _kill(procs)
        for conn in conns:
            conn.close()


def _kill(procs) -> None:
    """SIGTERM the workers still alive, then SIGKILL those alive after :data:`KILL_WAIT_S`; bounded."""
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + KILL_WAIT_S
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)


def make_executor(workers: int) -> SerialExecutor | LocalPoolExecutor:
    """The executor for a number of worker processes.

    Parameters
    ----------
    workers : int
        Worker processes; 1 or less runs every unit in the calling process.

    Returns
    -------
    SerialExecutor or LocalPoolExecutor
        A :class:`SerialExecutor` for ``workers <= 1``, else a pool of ``workers`` processes.
    """
    return SerialExecutor() if workers <= 1 else LocalPoolExecutor(workers)
