"""Failures of the machine, not of the input, through the command line's own error handling: a full
disk or an exceeded quota is an environment error with its own line and exit code 75 (never
"internal error"), and Ctrl-C while the command starts is one line and exit code 130."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from auralgen.cli import main as cli
from auralgen.core.errors import EXIT_ENVIRONMENT
from tests.support.builders import ROOT


def _full(code):
    def write(*_a, **_k):
        raise OSError(code, os.strerror(code))

    return write


def _run(args, capsys):
    try:
        code = cli(args)
    except SystemExit as exc:
        code = exc.code
    return code, [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_generate_disk_full_is_an_environment_error(tmp_path, monkeypatch, capsys, code):
    import importlib

    gen = importlib.import_module("auralgen.generation.run")  # the module (the package exports its run())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(gen, "_write_shard", _full(code))
    status, lines = _run(
        ["generate", "task=duration_absolute", "task.items_per_level=1", "workers=1", "out=ds", "progress=false"],
        capsys,
    )
    assert status == EXIT_ENVIRONMENT == 75 and len(lines) == 1, lines
    what = "no space left on the device" if code == errno.ENOSPC else "the disk quota is exceeded"
    assert lines[0].startswith(f"error: environment: {what} (writing under out='ds': [Errno {code}]")
    assert "internal error" not in lines[0] and "allowed: free space (or a larger quota)" in lines[0]


def test_evaluate_disk_full_is_an_environment_error(tiny_dataset, tmp_path, monkeypatch, capsys):
    import importlib

    session = importlib.import_module("auralgen.evaluation.session")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(session, "write_json", _full(errno.ENOSPC))
    status, lines = _run(
        ["evaluate", "model=random", f"data={tiny_dataset}", "out=res", "task=[duration_absolute]", "progress=false"],
        capsys,
    )
    assert status == EXIT_ENVIRONMENT and len(lines) == 1, lines
    assert lines[0].startswith("error: environment: no space left on the device (writing under out='res'")


def test_ctrl_c_while_starting_is_one_line_exit_130(tmp_path):
    """SIGINT half a second in (Python is up; auralgen is still importing and checking the config)."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "generate.py"), "task=duration_absolute", "out=ds"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.startswith("error: interrupted") and err.count("\n") == 1 and "Traceback" not in err, err
