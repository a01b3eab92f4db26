"""A throw-away Ray cluster on 127.0.0.1 for the tests and bench/bench_ray.py: ``ray start`` nodes on this
machine, stopped with ``ray stop --force``, waiting (bounded) until none of its processes is left."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
AUTH = {"RAY_AUTH_MODE": "disabled"}  # a throw-away cluster on 127.0.0.1: no token (else ~/.ray/auth_token decides)
ENV = {**os.environ, "PRA_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", **AUTH}


def ray_cmd(*args: str, timeout_s: float = 60, env: dict | None = None) -> None:
    done = subprocess.run([RAY, *args], capture_output=True, text=True, timeout=timeout_s, env={**ENV, **(env or {})})
    if done.returncode != 0:
        raise RuntimeError(f"ray {' '.join(args)} failed: {done.stderr[-2000:]}")


def processes() -> dict[int, list[str]]:
    """Every process's command line (Linux /proc; Ray workers show their title, e.g. ``ray::IDLE``)."""
    out = {}
    for d in Path("/proc").iterdir():
        try:
            out[int(d.name)] = (d / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except (ValueError, OSError):
            continue
    return out


def ray_processes(temp_dir: str) -> list[int]:
    """A cluster's processes: Ray workers (``ray::...``) and anything started with its temp dir."""
    return [pid for pid, cmd in processes().items() if cmd[0].startswith("ray::") or any(temp_dir in c for c in cmd)]


def busy_workers() -> list[int]:
    """Ray worker processes running a work unit of the RayExecutor."""
    return [pid for pid, cmd in processes().items() if cmd[0].startswith("ray::_run_unit")]


def wait_for(cond, timeout_s: float, what: str):
    """``cond()``'s first true value, polled every 50 ms; AssertionError after ``timeout_s``."""
    t0 = time.monotonic()
    while not (got := cond()):
        assert time.monotonic() - t0 < timeout_s, f"timed out after {timeout_s} s waiting for {what}"
        time.sleep(0.05)
    return got


@contextmanager
def local_cluster(nodes: int = 2, cpus_per_node: int = 1, env: dict | None = None) -> Iterator[str]:
    """``nodes`` Ray nodes of ``cpus_per_node`` CPUs on 127.0.0.1; yields the address ``127.0.0.1:<port>``.
    This process's environment gets :data:`AUTH` meanwhile (it joins the cluster too); ``env`` is added
    to the nodes' environment (their workers inherit it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths live under it
    address = f"127.0.0.1:{port}"
    saved = {k: os.environ.get(k) for k in AUTH}
    os.environ.update(AUTH)
    common = (f"--num-cpus={cpus_per_node}", "--node-ip-address=127.0.0.1", "--disable-usage-stats")
    try:
        ray_cmd(
            "start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp_dir}", *common, env=env
        )
        for _ in range(nodes - 1):
            ray_cmd("start", f"--address={address}", *common, env=env)
        yield address
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=60, env=ENV)
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        wait_for(lambda: not ray_processes(temp_dir), 15, "the Ray processes to exit")
        shutil.rmtree(temp_dir, ignore_errors=True)
