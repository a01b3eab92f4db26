"""``executor=ray executor.address=<host:port>`` where no cluster answers: refused in one line within
``executor.connect_timeout_s`` (Ray's own connect would retry for minutes), before anything is written.
Fast: no Ray instance starts (a port on 127.0.0.1 with nothing listening, a web server, a silent socket)."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

pytest.importorskip("ray", reason="the ray extra (pip install 'auralgen[ray]')")

from auralgen.config import validate  # noqa: E402
from auralgen.core.errors import ParameterError  # noqa: E402
from auralgen.execution.ray import RayExecutor  # noqa: E402
from auralgen.generation.run import run_reported  # noqa: E402
from tests.support.builders import small_run  # noqa: E402


def dead_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_address_is_refused_once_the_timeout_is_up():
    port = dead_port()
    ex = RayExecutor(f"127.0.0.1:{port}", connect_timeout_s=1.5)
    t0 = time.monotonic()
    with pytest.raises(ParameterError) as err:
        ex.workers  # noqa: B018  (connects)
    took = time.monotonic() - t0
    assert str(err.value) == (
        f"executor.address='127.0.0.1:{port}': no Ray cluster answers at 127.0.0.1:{port} within "
        "executor.connect_timeout_s=1.5 s (Connection refused); allowed: the address of a running cluster's head "
        "(ray start --head prints it), or no executor.address for a local Ray instance"
    )
    assert 1.5 <= took < 20  # it waited for a head still starting, and no longer than the timeout (a hang guard)
    assert not ex._ray.is_initialized()


def test_generate_with_a_dead_address_exits_2_in_one_line_and_writes_nothing(tmp_path, capsys):
    port, out = dead_port(), tmp_path / "out"
    cfg = small_run(
        "task=pitch_relative",
        "task.items_per_level=1",
        "executor=ray",
        f"executor.address=127.0.0.1:{port}",
        "executor.connect_timeout_s=1",
        out=out,
    )
    t0 = time.monotonic()
    assert run_reported(cfg, log=lambda *_: None) == 2
    assert time.monotonic() - t0 < 30  # a hang guard
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: executor.address='127.0.0.1:{port}': no Ray cluster answers at 127.0.0.1:{port} within "
        "executor.connect_timeout_s=1 s"
    )
    assert not out.exists()  # refused before the out directory, its lock or journal


@pytest.mark.parametrize(
    ("executor", "message"),
    [
        (
            {"kind": "ray", "connect_timeout_s": 0},
            r"^executor.connect_timeout_s=0.0; allowed: a number of seconds > 0$",
        ),
        (
            {"kind": "ray", "connect_timeout_s": -5},
            r"^executor.connect_timeout_s=-5.0; allowed: a number of seconds > 0$",
        ),
    ],
)
def test_a_bad_connect_timeout_is_one_line(executor, message):
    with pytest.raises(ParameterError, match=message):
        validate({"task": {"name": "pitch_relative"}, "executor": executor})


def test_an_address_that_is_not_host_port_is_one_line():
    with pytest.raises(ParameterError, match=r"^executor.address='head-node'; allowed: auto, or host:port of a Ray"):
        RayExecutor("head-node", connect_timeout_s=1).workers  # noqa: B018


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep the test's output clean
        pass


@pytest.fixture
def web_server():
    """An HTTP/1 web server on 127.0.0.1 (not a Ray head: it answers, but not with gRPC)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture
def silent_listener():
    """A socket on 127.0.0.1 that accepts connections and never says anything."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield s.getsockname()[1]


@pytest.mark.parametrize("server", ["web_server", "silent_listener"])
def test_an_address_where_something_else_answers_is_refused_in_one_line(server, request):
    port = request.getfixturevalue(server)
    ex = RayExecutor(f"127.0.0.1:{port}", connect_timeout_s=1.5)
    t0 = time.monotonic()
    with pytest.raises(ParameterError) as err:
        ex.workers  # noqa: B018  (connects)
    assert time.monotonic() - t0 < 30  # a hang guard: ray.init itself would retry for minutes here
    assert str(err.value) == (
        f"executor.address='127.0.0.1:{port}': no Ray cluster answers at 127.0.0.1:{port} within "
        "executor.connect_timeout_s=1.5 s (it answers, but not as a Ray head (no gRPC/HTTP/2 handshake)); "
        "allowed: the address of a running cluster's head (ray start --head prints it), or no executor.address "
        "for a local Ray instance"
    )
    assert not ex._ray.is_initialized()
