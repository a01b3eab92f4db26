"""A small OpenAI-compatible chat-completions server for tests and benchmarks (127.0.0.1 only).

It speaks the real protocol over HTTP (``POST /v1/chat/completions``), checks each request
(``model``, ``messages``, ``input_audio`` parts holding base64 WAV), and can misbehave on
purpose: a fixed reply ``delay_s``, and per request body a scripted list of ``faults`` for
its first attempts -- ``"429"`` (with ``Retry-After``), ``"500"``, ``"503"``,
``"malformed"`` (a 200 with a body that is not chat-completions JSON), ``"slow"`` (sleeps
``slow_s`` before answering, to trigger client timeouts), ``"drop"`` (closes the
connection without answering). Bodies containing ``fail_substring`` always get a 500.

Whole-server modes (every request): ``status`` answers that HTTP status with an error body
(e.g. 401, 403, 404, 500); ``garbage`` answers 200 with a body that is not JSON;
``max_audio`` answers 400 to a request with more audio parts than that (vLLM's
``--limit-mm-per-prompt``); ``echo_auth`` puts the request's ``Authorization`` header into
the reply text; ``drip_s`` sends the whole response (status line, headers, body) one byte
every ``drip_s`` seconds, from request number ``drip_from`` on (0 = every request);
``dripping`` counts the responses being dripped. A reply carries ``usage`` as a server's would (words of the
request's text plus 100 per clip as prompt tokens, words of the reply as completion tokens).

It measures what a client does: requests, in-flight maximum and time-weighted mean, the
``Authorization`` headers seen.

Examples
--------
>>> with ChatServer(reply=lambda text: "Answer: B") as srv:   # doctest: +SKIP
...     url = srv.base_url        # "http://127.0.0.1:<port>/v1"
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import soundfile as sf


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        """A client that hung up (it timed out, or was stopped) is expected here, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ChatServer:
    """Start with ``with ChatServer(...) as srv`` (or :meth:`start` / :meth:`stop`)."""

    def __init__(
        self,
        *,
        reply: Callable[[str], str] | None = None,
        delay_s: float = 0.0,
        faults: list[str] | None = None,
        slow_s: float = 2.0,
        fail_substring: str | None = None,
        expect_model: str | None = None,
        status: int | None = None,
        garbage: bool = False,
        max_audio: int | None = None,
        echo_auth: bool = False,
        drip_s: float | None = None,
        drip_from: int = 0,
    ):
        self.reply = reply or (lambda text: "Answer: A")
        self.delay_s = delay_s
        self.faults = list(faults or [])
        self.slow_s = slow_s
        self.fail_substring = fail_substring
        self.expect_model = expect_model
        self.status = status
        self.garbage = garbage
        self.max_audio = max_audio
        self.echo_auth = echo_auth
        self.drip_s = drip_s
        self.drip_from = drip_from
        self.stopped = threading.Event()
        self.dripping = 0  # responses being dripped right now
        self.lock = threading.Lock()
        self.attempts: Counter = Counter()
        self.auth_headers: set[str] = set()
        self.paths: set[str] = set()
        self.statuses: Counter = Counter()
        self.n_requests = 0
        self.total_tokens = 0  # the usage.total_tokens of every reply sent
        self.in_flight = 0
        self.max_in_flight = 0
        self._area = 0.0
        self._t_last = None
        self._t_first = None
        self._t_end = None
        self.audio_shapes: list[tuple[int, int]] = []
        self._httpd: _Server | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> ChatServer:
        handler = _make_handler(self)
        self._httpd = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopped.set()  # ends every drip in progress
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # -- measurements -------------------------------------------------------------------

    def _enter(self):
        with self.lock:
            now = time.perf_counter()
            if self._t_first is None:
                self._t_first = now
            elif self._t_last is not None:
                self._area += self.in_flight * (now - self._t_last)
            self._t_last = now
            self.in_flight += 1
            self.n_requests += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self):
        with self.lock:
            now = time.perf_counter()
            self._area += self.in_flight * (now - self._t_last)
            self._t_last = self._t_end = now
            self.in_flight -= 1

    @property
    def mean_in_flight(self) -> float:
        """Time-weighted mean of requests in flight between the first arrival and the last reply."""
        if self._t_first is None or self._t_end is None or self._t_end <= self._t_first:
            return 0.0
        return self._area / (self._t_end - self._t_first)

    # -- one request --------------------------------------------------------------------

    def handle(self, body: bytes, auth: str = "") -> tuple[int, dict, bytes] | None:
        """(status, headers, payload) for a request body; ``None`` drops the connection."""
        if self.status is not None:
            return self.status, {}, _error(f"status {self.status} (test server mode)")
        try:
            req = json.loads(body)
            text, n_audio = _check_request(req, self)
        except (ValueError, KeyError, TypeError) as exc:
            return 400, {}, _error(f"bad request: {exc}")
        if self.max_audio is not None and n_audio > self.max_audio:
            # vLLM's wording for --limit-mm-per-prompt
            return (
                400,
                {},
                _error(
                    f"At most {self.max_audio} audio(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to "
                    "increase this limit."
                ),
            )
        if self.garbage:
            return 200, {}, b"<html>502 Bad Gateway</html>"
        if self.expect_model is not None and req["model"] != self.expect_model:
            return 404, {}, json.dumps({"error": {"message": f"model {req['model']!r} not found"}}).encode()
        if self.fail_substring and self.fail_substring in text:
            return 500, {}, b'{"error": {"message": "internal error"}}'
        digest = hashlib.sha1(body).hexdigest()
        with self.lock:
            attempt = self.attempts[digest]
            self.attempts[digest] += 1
        fault = self.faults[attempt] if attempt < len(self.faults) else None
        if fault == "429":
            return 429, {"Retry-After": "0"}, b'{"error": {"message": "rate limited"}}'
        if fault in ("500", "503"):
            return int(fault), {}, b'{"error": {"message": "server error"}}'
        if fault == "malformed":
            return 200, {}, b'{"choices": [ this is not json'
        if fault == "drop":
            return None
        if fault == "slow":
            time.sleep(self.slow_s)
        if self.delay_s:
            time.sleep(self.delay_s)
        content = self.reply(text)
        if self.echo_auth:
            content = f"{content} (you sent Authorization: {auth})"
        out = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            # as servers count: words stand in for tokens, 100 per clip
            "usage": {
                "prompt_tokens": len(text.split()) + 100 * n_audio,
                "completion_tokens": len(content.split()),
                "total_tokens": len(text.split()) + 100 * n_audio + len(content.split()),
            },
        }
        with self.lock:
            self.total_tokens += out["usage"]["total_tokens"]
        return 200, {}, json.dumps(out).encode()


def _error(message: str) -> bytes:
    return json.dumps({"error": {"message": message}}).encode()


def _check_request(req: dict, server: ChatServer) -> tuple[str, int]:
    """Validate a chat-completions request; returns its text parts joined and its number of clips."""
    if not isinstance(req["model"], str) or not req["model"]:
        raise ValueError("model must be a non-empty string")
    texts = []
    n_audio = 0
    for m in req["messages"]:
        if m["role"] not in ("system", "user", "assistant"):
            raise ValueError(f"role {m['role']!r}")
        content = m["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content:
            if part["type"] == "text":
                texts.append(part["text"])
            elif part["type"] == "input_audio":
                audio = part["input_audio"]
                if audio["format"] != "wav":
                    raise ValueError(f"input_audio format {audio['format']!r}")
                x, _ = sf.read(io.BytesIO(base64.b64decode(audio["data"], validate=True)), always_2d=True)
                n_audio += 1
                with server.lock:
                    server.audio_shapes.append(x.shape)
            else:
                raise ValueError(f"content part type {part['type']!r}")
    return "\n".join(texts), n_audio


def _make_handler(server: ChatServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def setup(self):
            super().setup()
            # headers and body go out in two writes: without NODELAY, Nagle + delayed ACK add ~40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(length)
            auth = self.headers.get("Authorization", "")
            with server.lock:
                server.auth_headers.add(auth)
                server.paths.add(self.path)
                self.drip = server.drip_s if server.n_requests >= server.drip_from else None
            if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                self._send(404, {}, b'{"error": {"message": "not found"}}')
                return
            server._enter()
            try:
                result = server.handle(body, auth)
            finally:
                server._leave()
            if result is None:
                self.close_connection = True
                self.connection.close()
                return
            self._send(*result)

        def _send(self, status, headers, payload):
            with server.lock:
                server.statuses[status] += 1
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in headers.items():
                self.send_header(k, v)
            if self.drip:
                self._headers_buffer.append(b"\r\n")
                self._drip(b"".join(self._headers_buffer) + payload)
                self._headers_buffer = []
                return
            self.end_headers()
            self.wfile.write(payload)

        def _drip(self, data: bytes):
            """Send ``data`` one byte every ``drip_s`` seconds (until the server stops)."""
            with server.lock:
                server.dripping += 1
            try:
                for i in range(len(data)):
                    if server.stopped.wait(self.drip):
                        break
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
            except OSError:  # the client gave up
                pass
            finally:
                with server.lock:
                    server.dripping -= 1
            self.close_connection = True

    return Handler
