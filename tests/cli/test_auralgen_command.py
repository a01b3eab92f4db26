"""The ``auralgen`` command (auralgen/cli): dispatch, one-line refusals, the packaged conf, no test code shipped."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from auralgen.cli import COMMANDS, main
from auralgen.core.resources import conf_dir, conf_path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_unknown_command_is_refused_in_one_line(capsys):
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: command='bogus' is unknown; allowed: {', '.join(COMMANDS)}"
    assert sorted(COMMANDS) == ["audit", "evaluate", "generate", "listen"]


def test_no_command_prints_usage_and_exits_2(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: auralgen <command>") and all(f"  {name} " in out for name in COMMANDS)
    assert main(["--help"]) == 0


@pytest.mark.parametrize("entry", [["-m", "auralgen.cli", "audit"], ["-m", "auralgen.validation"]])
def test_audit_of_a_missing_folder_exits_2_in_one_line(entry, tmp_path):
    proc = _run(*entry, str(tmp_path / "nope"), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"error: dataset={str(tmp_path / 'nope')!r} is not a directory; allowed: an exported dataset directory"
    ]


def test_generate_refuses_a_bad_override_in_one_line_from_another_folder(tmp_path):
    proc = _run("-m", "auralgen.cli", "generate", "task=pitch_relative", "seed=-1", "out=x", cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: seed=") and not (tmp_path / "x").exists()


def test_conf_is_the_package_auralgen_conf():
    spec = importlib.util.find_spec("auralgen.conf")
    assert spec is not None and Path(spec.origin).parent == conf_dir()
    assert (conf_path("room", "hall.yaml")).is_file() and (conf_dir() / "config.yaml").is_file()
    assert conf_dir().resolve() == (ROOT / "conf").resolve()  # an editable install reads the repository's conf/


@pytest.mark.parametrize("module", ["auralgen.testing", "auralgen.evaluation.chat_server"])
def test_test_support_is_not_in_the_package(module):
    assert importlib.util.find_spec(module) is None
    import auralgen.rooms.receivers as receivers

    assert not hasattr(receivers, "_render_binaural_reference")
