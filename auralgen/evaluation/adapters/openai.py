"""The ``openai`` adapter: any OpenAI-compatible chat-completions server taking ``input_audio``.

Works with vLLM serving Qwen2-Audio / Qwen2.5-Omni, and with OpenAI's audio models. Each
message becomes one ``POST <base_url>/chat/completions``::

    {"model": <model.name>, "temperature": ..., "max_tokens": ...,
     "messages": [{"role": "system", "content": <model.system_prompt>},   # if set
                  {"role": "user", "content": [
                      {"type": "input_audio", "input_audio": {"data": <base64 WAV>, "format": "wav"}},
                      {"type": "text", "text": "Audio 2:"}, ...,
                      {"type": "text", "text": "<question and lettered options>"}]}]}

and the reply is ``choices[0].message.content``. The prompt parts keep the message's order.

Concurrency, deadlines and retries
----------------------------------
``agenerate`` keeps at most ``model.concurrency`` requests in flight (an asyncio semaphore;
each blocking ``http.client`` request runs in a worker thread with its own keep-alive
connection). ``model.timeout_s`` is a *total* deadline per request: a watchdog closes the
socket when the complete response has not arrived by then, however slowly the server
trickles bytes. 429, 408 and 5xx answers, timeouts, dropped connections and malformed
bodies are retried up to ``model.max_retries`` times with exponential backoff and jitter
(``backoff_s * 2**attempt``, capped at ``max_backoff_s``; a ``Retry-After`` header is
honoured within that cap), and never beyond ``model.retry_budget_s`` seconds per message
counted from its first attempt (the last attempt's deadline is cut to what is left). Then
the message fails with :class:`~auralgen.evaluation.adapters.base.ModelError` (an item error).

Other answers:

* 400 and the other 4xx not listed below (413, 422, ...): the server rejected *this*
  request -- e.g. vLLM's ``--limit-mm-per-prompt`` refusing an item with 3 clips. An item
  error (:class:`ModelError`), not retried; the next run asks it again.
* 401, 403, 404, 405, 407 (rejected key, wrong URL, unknown model name), connection
  refused and a host name that does not resolve: nothing else would succeed either, so
  :class:`~auralgen.evaluation.adapters.base.FatalModelError` ends the run at once.

:meth:`close` aborts requests still in flight (it closes their sockets), so Ctrl-C ends a
run within a second even while the server hangs.

Secrets
-------
The API key is read from the environment variable named by ``model.api_key_env`` (default
``OPENAI_API_KEY``) and sent as ``Authorization: Bearer ...``; it is never part of the
config. When the variable is unset no ``Authorization`` header is sent (a local vLLM needs
none). Credentials inside ``base_url`` -- ``http://user:KEY@host/v1`` (sent as HTTP Basic
auth) or a query parameter such as ``?api_key=KEY`` (sent as given) -- are replaced by
``***`` wherever the URL is recorded (:func:`redact_url`, :func:`redact`). Every secret
is scrubbed from error messages and from replies (a server that echoes the request
headers cannot get the key into ``replies.jsonl``).

Only the standard library is used (``http.client`` in threads), so the harness adds no
HTTP dependency.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import random
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from urllib.parse import unquote, urlsplit

from auralgen.core.errors import ParameterError

from ..redaction import redact, redact_url, scrub, url_secrets
from .base import Adapter, BaseConfig, FatalModelError, ModelError, register

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
FATAL_STATUS = {
    401: "a key the server accepts, in the environment variable model.api_key_env",
    403: "a key the server accepts, in the environment variable model.api_key_env",
    404: "the server's chat-completions base URL (e.g. http://127.0.0.1:8000/v1) and a model.name it serves",
    405: "the server's chat-completions base URL (e.g. http://127.0.0.1:8000/v1)",
    407: "a proxy that lets the request through",
}


class _Transient(Exception):
    """A failure worth retrying; ``retry_after_s`` from the server when given."""

    def __init__(self, text: str, retry_after_s: float | None = None):
        super().__init__(text)
        self.retry_after_s = retry_after_s


class _Deadline:
    """Closes a connection's socket unless :meth:`finish` is called within ``seconds``."""

    def __init__(self, conn: http.client.HTTPConnection, seconds: float):
        self.conn = conn
        self.lock = threading.Lock()
        self.done = self.fired = False
        self.timer = threading.Timer(seconds, self.fire)
        self.timer.daemon = True
        self.timer.start()

    def fire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.fired = True
        sock = self.conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked on it
            except OSError:
                pass

    def finish(self) -> bool:
        """Stop the watchdog; True when it fired first."""
        with self.lock:
            self.done = True
        self.timer.cancel()
        return self.fired


@register
class OpenAIAdapter(Adapter):
    """A model behind an OpenAI-compatible chat-completions server (see the module docstring)."""

    kind = "openai"

    @dataclass(frozen=True)
    class Config(BaseConfig):
        """``model=openai``'s settings (``conf/model/openai.yaml``): the server and the served model,
        the request limits and retries, and what every request asks for (sampling, system prompt)."""

        base_url: str = ""
        name: str = ""
        api_key_env: str = "OPENAI_API_KEY"
        concurrency: int = 8
        timeout_s: float = 120.0
        max_retries: int = 5
        backoff_s: float = 1.0
        max_backoff_s: float = 30.0
        retry_budget_s: float = 300.0
        temperature: float = 0.0
        max_tokens: int = 512
        system_prompt: str | None = None
        extra_body: dict | None = None

    @staticmethod
    def check_config(cfg, key: str = "model") -> None:
        """Raise ParameterError on a bad URL, name or numeric setting (no network)."""
        try:
            url = urlsplit(cfg.base_url)
            url.port  # noqa: B018  (raises on a bad port)
        except ValueError:
            url = None
        if url is None or url.scheme not in ("http", "https") or not url.hostname:
            raise ParameterError(
                f"{key}.base_url={redact_url(cfg.base_url)!r} is not an http(s) URL; "
                "allowed: e.g. http://127.0.0.1:8000/v1"
            )
        if not cfg.name:
            raise ParameterError(
                f"{key}.name='' is empty; allowed: the served model name, e.g. Qwen/Qwen2-Audio-7B-Instruct"
            )
        for name, value, low in (
            ("concurrency", cfg.concurrency, 1),
            ("max_retries", cfg.max_retries, 0),
            ("max_tokens", cfg.max_tokens, 1),
        ):
            if value < low:
                raise ParameterError(f"{key}.{name}={value} is out of range; allowed: an integer >= {low}")
        for name in ("timeout_s", "max_backoff_s", "retry_budget_s"):
            if not getattr(cfg, name) > 0:
                raise ParameterError(f"{key}.{name}={getattr(cfg, name)} is out of range; allowed: > 0")
        if not cfg.backoff_s >= 0:
            raise ParameterError(f"{key}.backoff_s={cfg.backoff_s} is out of range; allowed: >= 0")

    def __init__(self, cfg, **kw):
        super().__init__(cfg, **kw)
        self.check_config(cfg)
        url = urlsplit(cfg.base_url)
        self.url = url
        self.shown_url = redact_url(cfg.base_url)
        self.path = url.path.rstrip("/") + "/chat/completions" + (f"?{url.query}" if url.query else "")
        self._key = os.environ.get(cfg.api_key_env) or None
        self._auth = self._authorization()
        self._secrets = [s for s in (self._key, self._auth) if s] + url_secrets(cfg.base_url)
        self.concurrency = cfg.concurrency
        self._local = threading.local()
        self._pool: ThreadPoolExecutor | None = None
        self._sem: asyncio.Semaphore | None = None
        self._rng = random.Random(self.seed)
        self._active: set[_Deadline] = set()
        self._closed = False
        self.in_flight = 0
        self.max_in_flight = 0
        self.n_requests = 0
        self.n_retries = 0
        self._count_lock = threading.Lock()
        self._usage: dict[str, int] | None = None  # tokens reported since take_usage()

    def _authorization(self) -> str | None:
        """``Authorization`` header value: the key as Bearer, else the URL's user info as Basic."""
        if self._key:
            return f"Bearer {self._key}"
        if self.url.username is not None:
            user_pass = f"{unquote(self.url.username)}:{unquote(self.url.password or '')}"
            return "Basic " + base64.b64encode(user_pass.encode()).decode("ascii")
        return None

    # -- payload ---------------------------------------------------------------------------

    def payload(self, msg: dict) -> bytes:
        """The JSON body of the request for ``msg`` (audio inlined as base64 WAV).

        Parameters
        ----------
        msg : dict
            A toolkit message without the answer; its audio parts are WAV paths, read here.

        Returns
        -------
        bytes
            A UTF-8 chat-completions request: model name, messages, temperature, ``max_tokens``
            and ``extra_body``.

        Raises
        ------
        ParameterError
            A prompt of a type other than ``text`` or ``audio``.
        """
        content = []
        for p in msg["prompts"]:
            if p["type"] == "audio":
                with open(p["value"], "rb") as fh:
                    data = base64.b64encode(fh.read()).decode("ascii")
                content.append({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
            elif p["type"] == "text":
                content.append({"type": "text", "text": p["value"]})
            else:
                raise ParameterError(f"prompt type={p['type']!r} is unknown; allowed: text, audio")
        messages = []
        if self.cfg.system_prompt:
            messages.append({"role": "system", "content": self.cfg.system_prompt})
        messages.append({"role": "user", "content": content})
        body = {
            "model": self.cfg.name,
            "messages": messages,
            "temperature": self.cfg.temperature,
            "max_tokens": self.cfg.max_tokens,
            **(self.cfg.extra_body or {}),
        }
        return json.dumps(body).encode("utf-8")

    # -- one HTTP exchange (runs in a worker thread) ------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            host, port = self.url.hostname, self.url.port
            if self.url.scheme == "https":
                conn = http.client.HTTPSConnection(
                    host, port, timeout=self.cfg.timeout_s, context=ssl.create_default_context()
                )
            else:
                conn = http.client.HTTPConnection(host, port, timeout=self.cfg.timeout_s)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _exchange(self, body: bytes, limit_s: float) -> tuple[http.client.HTTPResponse, bytes]:
        """POST ``body``; the complete response must arrive within ``limit_s`` seconds."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._auth:
            headers["Authorization"] = self._auth
        conn = self._connection()
        conn.timeout = limit_s  # bounds the connect; the watchdog bounds the whole exchange
        deadline = _Deadline(conn, limit_s)
        with self._count_lock:
            self._active.add(deadline)
        try:
            if conn.sock is None:
                conn.connect()
                if deadline.fired:
                    raise TimeoutError("deadline passed while connecting")
            conn.request("POST", self.path, body=body, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            self._drop_connection()
            raise self._classify(exc, deadline.finish(), limit_s) from None
        finally:
            deadline.finish()
            with self._count_lock:
                self._active.discard(deadline)
        if deadline.fired or resp.getheader("Connection", "").lower() == "close":
            self._drop_connection()
        return resp, raw

    def _classify(self, exc: Exception, timed_out: bool, limit_s: float) -> Exception:
        """The exception a failed exchange becomes: fatal, or transient (retried)."""
        where = f"model.base_url={self.shown_url!r}"
        if self._closed:
            return FatalModelError(f"{where}: request aborted, the run is stopping")
        if timed_out or isinstance(exc, TimeoutError):
            return _Transient(f"no complete reply within {limit_s:.3g} s (model.timeout_s={self.cfg.timeout_s:g})")
        if isinstance(exc, socket.gaierror):
            return FatalModelError(
                f"{where}: host {self.url.hostname!r} does not resolve ({exc.strerror}); "
                "allowed: the URL of a reachable OpenAI-compatible server"
            )
        if isinstance(exc, ConnectionRefusedError):
            return FatalModelError(
                f"{where}: connection refused (is the server running?); "
                "allowed: the URL of a running OpenAI-compatible server"
            )
        if isinstance(exc, ssl.SSLCertVerificationError):
            return FatalModelError(self._scrub(f"{where}: {exc}; allowed: a server with a valid certificate"))
        return _Transient(self._scrub(f"connection failed: {type(exc).__name__}: {exc}"))

    def _post(self, body: bytes, limit_s: float | None = None) -> str:
        if self._closed:
            raise FatalModelError(f"model.base_url={self.shown_url!r}: request aborted, the run is stopping")
        with self._count_lock:
            self.in_flight += 1
            self.n_requests += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            resp, raw = self._exchange(body, limit_s or self.cfg.timeout_s)
        finally:
            with self._count_lock:
                self.in_flight -= 1
        status = resp.status
        if status in RETRY_STATUS or status >= 500:
            raise _Transient(f"HTTP {status}", _retry_after(resp.getheader("Retry-After")))
        if status >= 300:
            text = raw[:200].decode("utf-8", "replace").replace("\n", " ")
            msg = f"model.base_url={self.shown_url!r} answered HTTP {status}: {text}"
            if status in FATAL_STATUS or status < 400:
                allowed = FATAL_STATUS.get(status, "a URL that answers without redirection")
                raise FatalModelError(self._scrub(f"{msg} (model.name={self.cfg.name!r}); allowed: {allowed}"))
            raise ModelError(self._scrub(f"{msg} (this request was rejected; not retried)"))
        content = self._scrub(_content(raw))
        self._add_usage(raw)
        return content

    def _add_usage(self, raw: bytes) -> None:
        """Add the body's ``usage`` (prompt, completion, total tokens) to the tokens not yet taken."""
        try:
            usage = json.loads(raw).get("usage") or {}
        except (ValueError, AttributeError):
            return
        keys = ("prompt_tokens", "completion_tokens", "total_tokens")
        counts = {k: usage[k] for k in keys if isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool)}
        if not counts:
            return
        with self._count_lock:
            self._usage = self._usage or dict.fromkeys(keys, 0)
            for k, v in counts.items():
                self._usage[k] += v

    def take_usage(self) -> dict | None:
        with self._count_lock:
            usage, self._usage = self._usage, None
        return usage

    # -- retries ----------------------------------------------------------------------------

    def _delay(self, attempt: int, exc: _Transient) -> float:
        delay = min(self.cfg.max_backoff_s, self.cfg.backoff_s * 2**attempt) * (0.5 + 0.5 * self._rng.random())
        if exc.retry_after_s is not None:
            delay = max(delay, min(exc.retry_after_s, self.cfg.max_backoff_s))
        return delay

    def _limit(self, t0: float) -> float:
        """The deadline of the next attempt: ``timeout_s``, cut to what is left of the retry budget."""
        left = self.cfg.retry_budget_s - (time.monotonic() - t0)
        return max(0.05, min(self.cfg.timeout_s, left))

    def _next_delay(self, attempt: int, exc: _Transient, t0: float) -> float:
        """Seconds to wait before retry ``attempt + 1``; raises the item's ModelError when none is left."""
        if attempt >= self.cfg.max_retries:
            raise ModelError(self._scrub(f"no reply after {attempt} retries: {exc}"))
        delay = self._delay(attempt, exc)
        if time.monotonic() - t0 + delay >= self.cfg.retry_budget_s:
            raise ModelError(
                self._scrub(
                    f"no reply within model.retry_budget_s={self.cfg.retry_budget_s:g} ({attempt} retries): {exc}"
                )
            )
        with self._count_lock:
            self.n_retries += 1
        return delay

    def generate_inner(self, msg: dict) -> str:
        body = self.payload(msg)
        t0 = time.monotonic()
        for attempt in range(self.cfg.max_retries + 1):
            try:
                return self._post(body, self._limit(t0))
            except _Transient as exc:
                time.sleep(self._next_delay(attempt, exc, t0))
        raise AssertionError("unreachable")

    async def agenerate(self, msg: dict) -> str:
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.cfg.concurrency, thread_name_prefix="openai")
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.cfg.concurrency)
        async with self._sem:
            body = await loop.run_in_executor(self._pool, self.payload, msg)
            t0 = time.monotonic()
            for attempt in range(self.cfg.max_retries + 1):
                try:
                    return await loop.run_in_executor(self._pool, self._post, body, self._limit(t0))
                except _Transient as exc:
                    await asyncio.sleep(self._next_delay(attempt, exc, t0))
        raise AssertionError("unreachable")

    def describe(self) -> dict:
        d = redact(asdict(self.cfg))
        d["api_key_set"] = self._key is not None  # whether a key was found, never the key
        return d

    def close(self) -> None:
        """Abort requests still in flight (after Ctrl-C), then release the threads and connections."""
        with self._count_lock:
            active = list(self._active)
        if active:
            self._closed = True
            for deadline in active:
                deadline.fire()
        if self._pool is not None:
            self._pool.submit(self._drop_connection)
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._sem = None


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _content(raw: bytes) -> str:
    """``choices[0].message.content`` of a chat-completions body; malformed bodies are transient."""
    try:
        body = json.loads(raw)
        message = body["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise _Transient(f"malformed body: {raw[:80]!r}") from None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if content is None:
        refusal = message.get("refusal") if isinstance(message, dict) else None
        return refusal if isinstance(refusal, str) else ""
    if not isinstance(content, str):
        raise _Transient(f"malformed body: content is {type(content).__name__}")
    return content
