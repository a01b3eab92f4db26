"""The Ray executor: the same :class:`~auralgen.execution.base.Executor` contract as the local pool,
with each work unit run as a Ray task on a cluster (or on a local Ray instance).

Results come back to the caller in input order, so a run's bytes do not depend on where the units
ran (a run into a bucket sends whole shards as units, and the workers put them there themselves:
:attr:`RayExecutor.remote`). Joining ``address`` first checks, for at most ``connect_timeout_s``,
that a Ray head answers there (:func:`check_reachable`). ``setup`` runs once per Ray worker process
(a guard keyed by the call, so a reused process runs it again for a new call); every worker gets
``PRA_NUM_THREADS=1`` and a numba cache directory through the job's ``runtime_env``. Every wait
is bounded (:data:`POLL_S`): once a unit raises, the units before it may finish within
:data:`~auralgen.execution.local.GRACE_S`, then the unit's own exception (not Ray's wrapper) is
re-raised in the caller. A worker process that dies is Ray's to retry (``max_retries``); only when
its retries are used up is it an error here.
:meth:`RayExecutor.close` with ``cancel=True`` cancels the tasks still running (``ray.cancel``).

Ray is an optional dependency (``pip install 'auralgen[ray]'``).

Examples
--------
>>> from auralgen.execution.ray import RayExecutor  # doctest: +SKIP
>>> ex = RayExecutor()  # a local Ray instance, one task per CPU  # doctest: +SKIP
>>> list(ex.map_ordered(abs, [-1, -2]))  # doctest: +SKIP
[1, 2]
>>> ex.close()  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import os
import re
import socket
import tempfile
import time
import uuid
from collections import deque

from auralgen.core.errors import ParameterError
from auralgen.execution.local import GRACE_S, KILL_WAIT_S

INSTALL_HINT = "executor=ray needs the optional dependency: pip install 'auralgen[ray]'"
POLL_S = 0.5  # longest single wait of the consumer loop
MAX_RETRIES = 3  # times Ray reruns a task whose worker process died (not a task that raised)
CONNECT_TIMEOUT_S = 30.0  # how long joining a cluster may wait for its address to answer

_READY: set[str] = set()  # in a Ray worker process: the calls whose ``setup`` this process has run


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ParameterError(INSTALL_HINT) from None
    return ray


def _run_unit(job, unit):
    """A Ray task: ``fn(unit)``, after ``setup()`` once per worker process and call."""
    token, fn, setup = job
    if token not in _READY:
        if setup is not None:
            setup()
        _READY.add(token)
    return fn(unit)


def worker_env() -> dict[str, str]:
    """Environment of every Ray worker: one thread per room simulation and a numba cache directory
    (the caller's ``NUMBA_CACHE_DIR`` when set, else one in each node's temporary directory).

    Returns
    -------
    dict of str to str
        ``PRA_NUM_THREADS`` and ``NUMBA_CACHE_DIR``, for the job's ``runtime_env["env_vars"]``.
    """
    cache = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "auralgen-numba")
    return {"PRA_NUM_THREADS": "1", "NUMBA_CACHE_DIR": cache}


RAY_TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"


class RayExecutor:
    """Runs work units as Ray tasks of ``num_cpus_per_task`` CPUs each.

    Parameters
    ----------
    address : str or None
        ``None`` starts a local Ray instance of ``num_cpus`` CPUs (all of them when ``None``) that
        :meth:`close` shuts down; ``"auto"`` or ``"host:port"`` joins a running cluster (and
        :meth:`close` disconnects from it). When Ray is already initialised in this process, that
        connection is used and left open.
    num_cpus_per_task : float > 0
        CPUs Ray reserves for each task; :attr:`workers` is the cluster's CPUs over this.
    max_retries : int >= 0
        Reruns of a task whose worker process died.
    runtime_env : dict or None
        Merged into the job's ``runtime_env`` (its ``env_vars`` into :func:`worker_env`).
    connect_timeout_s : float > 0
        How long joining a cluster waits for its address to accept a connection before it is
        refused in one line (:func:`check_reachable`); Ray's own connect would wait minutes.

    Work units run in processes that may be on other machines: :attr:`remote` tells the caller
    that they share no filesystem with it (a run into a bucket has them write their shards there).
    """

    remote = True

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus_per_task: float = 1,
        num_cpus: int | None = None,
        max_retries: int = MAX_RETRIES,
        runtime_env: dict | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ):
        if not num_cpus_per_task > 0:
            raise ParameterError(f"executor.num_cpus_per_task={num_cpus_per_task!r}; allowed: a number > 0")
        if max_retries < 0:
            raise ParameterError(f"executor.max_retries={max_retries!r}; allowed: an integer >= 0")
        if not connect_timeout_s > 0:
            raise ParameterError(f"executor.connect_timeout_s={connect_timeout_s!r}; allowed: a number of seconds > 0")
        self._ray = _import_ray()
        self.address, self.num_cpus_per_task, self.num_cpus = address, num_cpus_per_task, num_cpus
        self.max_retries, self.connect_timeout_s = max_retries, connect_timeout_s
        extra = dict(runtime_env or {})
        self.runtime_env = {**extra, "env_vars": {**worker_env(), **extra.get("env_vars", {})}}
        self._owns = False  # whether close() shuts the connection down
        self._inflight: deque = deque()

    def check(self) -> None:
        """Refuse a cluster address that does not answer (:func:`check_reachable`), before any work."""
        if self.address is not None and not self._ray.is_initialized():
            check_reachable(self.address, self.connect_timeout_s)

    def _connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():
            return
        common = dict(runtime_env=self.runtime_env, log_to_driver=False, logging_level=logging.WARNING)
        # Ray's notice that token authentication is on is not a problem of the run: without this, it
        # would stand beside a one-line error as a second line
        logging.getLogger(RAY_TOKEN_NOTICE_LOGGER).setLevel(logging.ERROR)
        if self.address is None:
            ray.init(address="local", num_cpus=self.num_cpus, include_dashboard=False, **common)
        else:
            check_reachable(self.address, self.connect_timeout_s)
            ray.init(address=self.address, **common)
        self._owns = True

    @property
    def workers(self) -> int:
        """Tasks the cluster runs at once (connects on first use)."""
        self._connect()
        return max(1, int(self._ray.cluster_resources().get("CPU", 1) // self.num_cpus_per_task))

    def map_ordered(self, fn, work, *, setup=None, max_ahead: int = 32):
        """Run ``fn`` on each unit of ``work`` as a Ray task (connects on first use).

        Parameters
        ----------
        fn, work, setup, max_ahead
            As for :meth:`~auralgen.execution.base.Executor.map_ordered`, with Ray tasks for workers:
            ``fn`` and ``setup`` are pickled with the job, each unit is sent with its task, ``setup``
            runs once per Ray worker process and call, and ``max_ahead`` bounds the tasks submitted.

        Yields
        ------
        object
            ``fn(w)`` for each unit ``w``, in input order, whatever order the tasks finish in.

        Raises
        ------
        Exception
            The unit's own exception, after the units before it finished (within
            :data:`~auralgen.execution.local.GRACE_S`); ``RuntimeError`` for a Ray failure
            (a lost worker or node once its retries are used up).
        """
        ray = self._ray
        self._connect()
        task = ray.remote(_run_unit).options(
            num_cpus=self.num_cpus_per_task,
            max_retries=self.max_retries,
            retry_exceptions=False,
            runtime_env=None if self._owns else self.runtime_env,
        )
        job = ray.put((uuid.uuid4().hex, fn, setup))
        units, inflight, done, failed = iter(work), self._inflight, {}, None
        exhausted = False
        while True:
            while not exhausted and failed is None and len(inflight) < max(1, max_ahead):
                unit = next(units, _END)
                if unit is _END:
                    exhausted = True
                    break
                inflight.append(task.remote(job, unit))
            if not inflight:
                return
            head = inflight[0]
            if head in done or ray.wait([head], timeout=POLL_S)[0]:
                ok, value = done.pop(head) if head in done else self._get(head)
                inflight.popleft()
                if not ok:
                    raise value
                yield value
                continue
            if failed is not None and time.monotonic() > failed[1]:
                raise failed[0]
            failed = failed or self._scan(inflight, done)

    def _get(self, ref) -> tuple[bool, object]:
        """``(True, result)`` or ``(False, the unit's own exception)`` of a finished task."""
        try:
            return True, self._ray.get(ref, timeout=POLL_S * 20)
        except Exception as exc:
            return False, self._unwrap(exc)

    def _scan(self, inflight, done: dict) -> list | None:
        """Collect the finished tasks behind the head; returns ``[error, deadline]`` if one failed."""
        rest = [r for r in list(inflight)[1:] if r not in done]
        if not rest:
            return None
        ready, _ = self._ray.wait(rest, num_returns=len(rest), timeout=0)
        first = None
        for ref in ready:
            done[ref] = self._get(ref)
            if not done[ref][0] and first is None:
                first = [done[ref][1], time.monotonic() + GRACE_S]
        return first

    def _unwrap(self, exc: Exception) -> BaseException:
        """The exception the unit raised (as the local pool re-raises it), else one line naming Ray's error."""
        from ray import exceptions as rex

        cause = getattr(exc, "cause", None)
        if (
            isinstance(exc, rex.RayTaskError)
            and isinstance(cause, BaseException)
            and not isinstance(cause, rex.RayError)
        ):
            return cause
        text = " ".join(_ANSI.sub("", str(exc)).split())[:300]
        if isinstance(exc, (rex.WorkerCrashedError, rex.NodeDiedError, rex.OwnerDiedError)):
            return RuntimeError(
                f"the Ray cluster lost a worker or node while rendering (max_retries={self.max_retries}): {text}"
            )
        return RuntimeError(f"Ray failed to run a work unit: {type(exc).__name__}: {text}")

    def close(self, *, cancel: bool = False) -> None:
        """Disconnect from Ray when this executor connected (a local instance it started shuts down).

        Parameters
        ----------
        cancel : bool, optional
            True: first cancel the tasks still running, for at most
            :data:`~auralgen.execution.local.KILL_WAIT_S`.
        """
        ray, refs = self._ray, list(self._inflight)
        self._inflight.clear()
        if cancel and refs and ray.is_initialized():
            self._cancel(refs)
        if self._owns and ray.is_initialized():
            ray.shutdown()
        self._owns = False

    def _cancel(self, refs: list) -> None:
        """``ray.cancel`` the tasks, again every :data:`POLL_S` for those still running (a task being handed
        to a worker can miss a cancel), for at most :data:`~auralgen.execution.local.KILL_WAIT_S`."""
        ray, deadline = self._ray, time.monotonic() + KILL_WAIT_S
        while refs and time.monotonic() < deadline:
            for ref in refs:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # already finished, or its worker is gone
                    pass
            refs = ray.wait(refs, num_returns=len(refs), timeout=POLL_S)[1]


def _bootstrap(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of the cluster ``address`` names (``auto``: the one ``ray start`` recorded on this
    machine), or None when Ray resolves it itself (no recorded cluster: Ray's own one-line error)."""
    text = re.sub(r"^ray://", "", address.strip())
    if text == "auto":
        try:
            from ray._private.services import canonicalize_bootstrap_address

            text = canonicalize_bootstrap_address("auto")
        except Exception:  # Ray's internals moved: leave it to ray.init
            return None
        if not text:  # no cluster recorded on this machine: ray.init says so in one line
            return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ParameterError(f"executor.address={address!r}; allowed: auto, or host:port of a Ray cluster's head")
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout_s: float) -> None:
    """Wait until the cluster's address answers as a Ray head does, for at most ``timeout_s`` (a head
    still starting is waited for); else one line naming the address and what answered.

    A Ray head speaks gRPC, so the check is a TCP connection and then an HTTP/2 handshake
    (:func:`_speaks_http2`): a closed port, a silent socket and a server of another protocol (an HTTP/1
    web server, a database) are all refused here, where ``ray.init`` would retry for minutes. With
    ``RAY_USE_TLS`` set, only the TCP connection is checked (the handshake would need the certificates).

    Parameters
    ----------
    address : str
        ``host:port``, ``ray://host:port`` or ``auto``.
    timeout_s : float
        The longest wait, in seconds.

    Raises
    ------
    ParameterError
        ``address`` is not ``auto`` or ``host:port``, or no Ray head answers there within ``timeout_s``.
    """
    target = _bootstrap(address)
    if target is None:
        return
    deadline, why = time.monotonic() + timeout_s, "no answer"
    handshake = os.environ.get("RAY_USE_TLS", "0").lower() in ("", "0", "false")
    while True:
        try:
            with socket.create_connection(target, timeout=max(0.1, min(deadline - time.monotonic(), 5.0))) as conn:
                if not handshake or _speaks_http2(conn, deadline):
                    return
                why = "it answers, but not as a Ray head (no gRPC/HTTP/2 handshake)"
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(POLL_S, left))
    raise ParameterError(
        f"executor.address={address!r}: no Ray cluster answers at {target[0]}:{target[1]} within "
        f"executor.connect_timeout_s={timeout_s:g} s ({why}); allowed: the address of a running cluster's head "
        "(ray start --head prints it), or no executor.address for a local Ray instance"
    )


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # preface + empty SETTINGS
HTTP2_SETTINGS = 4  # the frame type every HTTP/2 server sends first


def _speaks_http2(conn: socket.socket, deadline: float) -> bool:
    """Whether the peer of ``conn`` answers an HTTP/2 client preface with a SETTINGS frame before
    ``deadline`` (a ``time.monotonic`` value), as a gRPC server does."""
    try:
        conn.settimeout(max(0.1, min(deadline - time.monotonic(), 5.0)))
        conn.sendall(HTTP2_PREFACE)
        head = b""
        while len(head) < 9:
            conn.settimeout(max(0.05, deadline - time.monotonic()))
            chunk = conn.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except OSError:
        return False
    return head[3] == HTTP2_SETTINGS


_END = object()
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours its error texts
