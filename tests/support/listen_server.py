"""``auralgen listen`` as a real server: uvicorn in a child process on 127.0.0.1 (a free port)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def write_study(path: Path, node: dict) -> Path:
    path.write_text(yaml.safe_dump(node), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ListenServer:
    """``python -m auralgen.cli listen STUDY --port P`` until :meth:`stop` (or :meth:`kill`, SIGKILL)."""

    def __init__(self, study_file: Path, port: int | None = None, *, timeout_s: float = 120.0):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-m", "auralgen.cli", "listen", str(study_file), "--port", str(self.port)]
        self.proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"listen server exited: {self.proc.stdout.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.kill()
        raise RuntimeError(f"listen server did not answer within {timeout_s:g} s")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
