"""The ``command`` adapter: a local program speaking framed JSON lines.

Protocol
--------
Each request is one line on the program's stdin, a JSON object: the message (``"meta"``,
``"prompts"`` with absolute WAV paths; never the answer) plus a request ``"id"`` (an
integer, unique for the run)::

    {"id": 7, "meta": {...}, "prompts": [...]}

Each reply is one line on stdout, a JSON object carrying the id of the request it answers::

    {"id": 7, "reply": "B"}            or, to decline:   {"id": 7, "error": "out of memory"}

Replies may come in any order; up to ``model.concurrency`` requests are in flight at once
(default 1). Every other stdout line (log output, a reply split over several lines, JSON
without an ``id``, a reply to an unknown id) is appended to ``<out>/command_stdout.log``,
counted and ignored: it can never be taken for another request's reply. The program's stderr
(its own log: model loading, warnings) is kept line by line in ``<out>/command_stderr.log``. Errors of one item
(an :class:`~auralgen.evaluation.adapters.base.ModelError`, cached as ``reply: null``): no reply
with its id within ``model.timeout_s`` seconds of sending it (a total deadline; a program
that printed nothing at all meanwhile is restarted), an ``"error"`` reply, a reply
without a string ``"reply"``, or two replies with the same id (even after the first was
taken). A program that cannot start or exits ends the run
(:class:`~auralgen.evaluation.adapters.base.FatalModelError`, naming its exit code and last
stderr line).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from auralgen.core.errors import ParameterError

from .base import Adapter, BaseConfig, FatalModelError, ModelError, register

__all__ = ["CommandAdapter", "Reply", "frame_reply"]


class Reply(NamedTuple):
    """One framed reply line: the request id it answers, its text, or the error it declares."""

    id: str
    text: str | None
    error: str | None


def frame_reply(line: str) -> Reply | None:
    """The :class:`Reply` a stdout line carries, or ``None`` when it is not a reply (to be logged).

    Parameters
    ----------
    line : str
        One line of the program's stdout.

    Returns
    -------
    Reply or None
        The reply (its ``error`` set for an ``"error"`` reply or one without a string ``"reply"``);
        None for a line that is not JSON or carries no usable ``"id"``.
    """
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict) or "id" not in obj or isinstance(obj["id"], (dict, list, bool, type(None))):
        return None
    rid = str(obj["id"])
    if isinstance(obj.get("error"), str):
        return Reply(rid, None, f"the model declined: {obj['error'][:200]}")
    if isinstance(obj.get("reply"), str):
        return Reply(rid, obj["reply"], None)
    return Reply(
        rid, None, f'reply {line.strip()[:80]!r} has no string "reply"; allowed: {{"id": ..., "reply": "..."}}'
    )


@dataclass
class _Slot:
    """One request in flight."""

    uid: str
    gen: int
    sent: float
    reply: Reply | None = None
    state: str = "waiting"  # waiting | replied | duplicate | restarted | dead
    extra: list = field(default_factory=list)


@register
class CommandAdapter(Adapter):
    """A local program reading framed JSON requests on stdin (see the module docstring)."""

    kind = "command"

    @dataclass(frozen=True)
    class Config(BaseConfig):
        """``model=command``'s settings (``conf/model/command.yaml``): the command and its limits;
        with ``ray_address`` set, ``replicas`` copies of it run as a Ray actor pool."""

        cmd: str = ""
        timeout_s: float = 120.0
        concurrency: int = 1
        cwd: str | None = None
        ray_address: str | None = None  # local | auto | host:port: a Ray actor pool (adapters/_ray_pool.py)
        replicas: int = 1  # ray: actors, each running one copy of cmd (loads its model once)
        num_cpus: float = 1.0  # ray: CPUs each replica reserves
        num_gpus: float = 0.0  # ray: GPUs each replica reserves

    @staticmethod
    def check_config(cfg, key: str = "model") -> None:
        """Refuse an empty command or an out-of-range setting (no process started)."""
        if not cfg.cmd.strip():
            raise ParameterError(f"{key}.cmd='' is empty; allowed: a command line, e.g. {key}.cmd='python my_model.py'")
        if not cfg.timeout_s > 0:
            raise ParameterError(f"{key}.timeout_s={cfg.timeout_s} is out of range; allowed: > 0")
        if not 1 <= cfg.concurrency <= 64:
            raise ParameterError(f"{key}.concurrency={cfg.concurrency} is out of range; allowed: 1..64")
        pool = {"replicas": (cfg.replicas, 1), "num_cpus": (cfg.num_cpus, 1.0), "num_gpus": (cfg.num_gpus, 0.0)}
        if cfg.ray_address is None:  # the pool's settings without a pool would be ignored
            for name, (value, default) in pool.items():
                if value != default:
                    raise ParameterError(
                        f"{key}.{name}={value!r} has no effect without {key}.ray_address; "
                        f"allowed: {key}.ray_address=local|auto|host:port"
                    )
            return
        if not (isinstance(cfg.ray_address, str) and cfg.ray_address.strip()):
            raise ParameterError(f"{key}.ray_address={cfg.ray_address!r} is invalid; allowed: local, auto or host:port")
        if not 1 <= cfg.replicas <= 256:
            raise ParameterError(f"{key}.replicas={cfg.replicas} is out of range; allowed: 1..256")
        if not (cfg.num_cpus > 0 and cfg.num_gpus >= 0):
            raise ParameterError(
                f"{key}.num_cpus={cfg.num_cpus}, {key}.num_gpus={cfg.num_gpus}; allowed: num_cpus > 0, num_gpus >= 0"
            )

    @classmethod
    def build(cls, cfg, **kw) -> Adapter:
        """The adapter ``cfg`` asks for: this one, or a Ray actor pool of it (``ray_address`` set)."""
        if cfg.ray_address is None:
            return cls(cfg, **kw)
        cls.check_config(cfg)
        from ._ray_pool import RayCommandPool

        return RayCommandPool(cfg, single=cls, **kw)

    def __init__(self, cfg, **kw):
        super().__init__(cfg, **kw)
        self.check_config(cfg)
        self.argv = shlex.split(cfg.cmd)
        self.concurrency = cfg.concurrency
        self.proc: subprocess.Popen | None = None
        self.gen = 0  # which process (restarts count up)
        self.eof_gen = -1  # the last process whose stdout ended
        self.cond = threading.Condition()
        self.pending: dict[str, _Slot] = {}
        self.answered: dict[str, str] = {}  # request id -> unique_id, for replies already taken
        self.late: dict[str, str] = {}  # unique_id -> error found after its reply was taken
        self.next_id = 0
        self.ignored = 0
        self.last_output = 0.0
        self.stderr_tail: list[str] = []
        self.log_path = self.logdir / "command_stdout.log"
        self.stderr_path = self.logdir / "command_stderr.log"
        self._drainer: threading.Thread | None = None
        self._log = None

    # ------------------------------------------------------------------ process

    def _start(self) -> None:
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                cwd=self.cfg.cwd,
            )
        except OSError as exc:
            raise FatalModelError(f"model.cmd={self.cfg.cmd!r} cannot start: {exc}") from None
        self.gen += 1
        self.stderr_tail = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.gen), daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, args=(self.proc.stderr, self.gen), daemon=True)
        self._drainer.start()

    def _pump(self, stream, gen: int) -> None:
        for line in stream:
            with self.cond:
                self.last_output = time.monotonic()
                self._take(line, gen)
                self.cond.notify_all()
        with self.cond:
            self.eof_gen = max(self.eof_gen, gen)
            for slot in self.pending.values():
                if slot.gen == gen and slot.state == "waiting":
                    slot.state = "dead"
            self.cond.notify_all()

    def _drain(self, stream, gen: int) -> None:
        """Keep the program's stderr in ``command_stderr.log`` (and its last lines for error messages)."""
        log = None
        try:
            for line in stream:
                self.stderr_tail = (self.stderr_tail + [line.rstrip()])[-5:]
                if log is None:
                    self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
                    log = open(self.stderr_path, "a", encoding="utf-8")
                log.write(f"[process {gen}] {line.rstrip()}\n")
                log.flush()
        finally:
            if log is not None:
                log.close()

    def _take(self, line: str, gen: int) -> None:
        """File one stdout line: a reply to its request, or a logged, counted, ignored line."""
        reply = frame_reply(line)
        slot = self.pending.get(reply.id) if reply else None
        if slot is not None and slot.state == "waiting":
            slot.reply, slot.state = reply, "replied"
            return
        if slot is not None and slot.state in ("replied", "duplicate"):
            slot.state = "duplicate"
            why = "second reply to a pending request"
        elif reply is not None and reply.id in self.answered:
            uid = self.answered[reply.id]
            self.late[uid] = f"model.cmd replied twice to the request of {uid}; the item is not scored"
            why = "second reply to an answered request"
        else:
            why = "not a reply" if reply is None else f"reply to unknown id={reply.id}"
        self.ignored += 1
        if self._log is None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "a", encoding="utf-8")
        self._log.write(f"[process {gen}, {why}] {line.rstrip()}\n")
        self._log.flush()

    def _stop(self, state: str = "restarted", *, hung: bool = False) -> None:
        """End the process (caller holds ``cond``; a ``hung`` one is killed at once); requests in flight fail."""
        for slot in self.pending.values():
            if slot.state == "waiting":
                slot.state = state
        self.cond.notify_all()
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=0 if hung else 2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc = None

    def _dead(self) -> FatalModelError:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        last = next((ln for ln in reversed(self.stderr_tail) if ln.strip()), "")
        return FatalModelError(f"model.cmd={self.cfg.cmd!r} exited (code {code})" + (f": {last}" if last else ""))

    # ------------------------------------------------------------------ requests

    def _send(self, msg: dict) -> tuple[str, _Slot]:
        """Write one request (caller holds ``cond``); returns its id and slot."""
        if self.proc is not None and self.eof_gen == self.gen:
            raise self._dead()
        if self.proc is None:
            self._start()
        self.next_id += 1
        rid = str(self.next_id)
        slot = _Slot(uid=msg["meta"].get("unique_id", rid), gen=self.gen, sent=time.monotonic())
        self.pending[rid] = slot
        try:
            self.proc.stdin.write(json.dumps({"id": self.next_id, **msg}, ensure_ascii=False) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            del self.pending[rid]
            raise self._dead() from None
        return rid, slot

    def generate_inner(self, msg: dict) -> str:
        with self.cond:
            rid, slot = self._send(msg)
            deadline = slot.sent + self.cfg.timeout_s
            while slot.state == "waiting" and time.monotonic() < deadline:
                self.cond.wait(max(0.0, deadline - time.monotonic()))
            del self.pending[rid]
            return self._outcome(rid, slot)

    def _outcome(self, rid: str, slot: _Slot) -> str:
        """The reply text of a finished wait, or the error it ends in (caller holds ``cond``)."""
        where = f"model.cmd ({slot.uid})"  # no request id: a per-process counter, not part of the result
        if slot.state == "replied" and slot.reply.error is None:
            self.answered[rid] = slot.uid
            return slot.reply.text
        if slot.state == "replied":
            raise ModelError(f"{where}: {slot.reply.error}")
        if slot.state == "duplicate":
            raise ModelError(f"{where}: two replies carry this id; allowed: one reply per request")
        if slot.state == "dead":
            raise self._dead()
        if slot.state == "restarted":
            raise ModelError(f"{where}: the program was restarted while this request was pending")
        if self.last_output < slot.sent:  # silent since the request: hung, restart it
            self._stop(hung=True)
            raise ModelError(f"{where}: no reply within timeout_s={self.cfg.timeout_s} and no output; restarted")
        raise ModelError(
            f"{where}: no reply with this id within timeout_s={self.cfg.timeout_s} "
            f"(other lines came; see {self.log_path})"
        )

    async def agenerate(self, msg: dict) -> str:
        """:meth:`generate_inner` in a daemon thread: the event loop stays free, so Ctrl-C stops the run at once."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()

        def settle(result, exc):
            if not fut.done():
                fut.set_exception(exc) if exc is not None else fut.set_result(result)

        def work():
            try:
                result, exc = self.generate_inner(msg), None
            except Exception as e:  # handed to the awaiting task
                result, exc = None, e
            try:
                loop.call_soon_threadsafe(settle, result, exc)
            except RuntimeError:  # the loop is closed: the run has stopped
                pass

        threading.Thread(target=work, daemon=True).start()
        return await fut

    def late_errors(self) -> dict[str, str]:
        with self.cond:
            return dict(self.late)

    def protocol_report(self) -> dict:
        with self.cond:
            return {
                "ignored_stdout_lines": self.ignored,
                "stdout_log": str(self.log_path) if self.ignored else None,
            }

    def close(self) -> None:
        with self.cond:
            self._stop(state="restarted")
            if self._log is not None:
                self._log.close()
                self._log = None
        if self._drainer is not None:
            self._drainer.join(timeout=5)  # the program has ended: its stderr is at EOF
