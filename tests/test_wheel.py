"""auralgen installs like a library: a wheel, installed elsewhere, works from any folder.

The wheel is built from a copy of the files a build needs (pyproject.toml, setup.py, README.md,
auralgen/, conf/), installed with ``pip install --no-deps --target``, and run from another folder
with only that target on PYTHONPATH (the dependencies come from this venv). It must carry every
YAML of ``conf/`` as package data of ``auralgen.conf`` and none of the test support; the installed
``auralgen`` script must generate, evaluate and audit; rooms must come from the installed package
data (a room YAML added there is found, ``hall`` is the YAML's room).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "auralgen", "conf")
TIMEOUT_S = 300


def _run(cmd: list[str], *, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for name in BUILD_INPUTS:  # a copy: the build writes build/ and *.egg-info beside the sources
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(path, src / name)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp / "dist"),
            str(src),
        ],
        cwd=tmp,
    )
    (whl,) = (tmp / "dist").glob("auralgen-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, dict]:
    site = tmp_path_factory.mktemp("site")
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)], cwd=site)
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "PRA_NUM_THREADS": "1",
        "PYTHONWARNINGS": "ignore",
        "NUMBA_CACHE_DIR": str(tmp_path_factory.mktemp("numba")),
    }
    return site, env


@pytest.mark.slow  # builds and installs a wheel, then generates and evaluates with it (~1 min)
def test_wheel_ships_conf_and_no_test_support(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    conf = {f"auralgen/conf/{p.relative_to(ROOT / 'conf').as_posix()}" for p in (ROOT / "conf").rglob("*.yaml")}
    assert conf and conf <= names, sorted(conf - names)
    assert "auralgen/conf/room/hall.yaml" in names and "auralgen/conf/config.yaml" in names
    static = {f"auralgen/listen/static/{n}" for n in ("index.html", "app.js", "style.css")}  # auralgen listen's page
    assert static <= names, sorted(static - names)
    assert not [
        n
        for n in names
        if n.startswith(("auralgen/testing/", "tests/")) or "chat_server" in n or "binaural_reference" in n
    ], sorted(names)
    packages = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "auralgen").rglob("__init__.py")}
    assert {f"{p}/__init__.py" for p in packages} <= names  # every package of the source tree is shipped
    (entry,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "auralgen = auralgen.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


@pytest.mark.slow
def test_installed_wheel_reads_its_package_data_from_another_folder(installed, tmp_path):
    site, env = installed
    room = {"name": "probe_room", "dims_m": [7.25, 5.5, 3.0], "rt60_s": 0.35}
    (site / "auralgen" / "conf" / "room" / "probe_room.yaml").write_text(yaml.safe_dump(room))
    code = (
        "import json, auralgen; from auralgen.core.resources import conf_dir; "
        "from auralgen.rooms.spec import load_preset, room_names; "
        "print(json.dumps({'module': auralgen.__file__, 'conf': str(conf_dir()), 'rooms': room_names(), "
        "'hall': load_preset('hall').dims_m, 'probe': load_preset('probe_room').dims_m}))"
    )
    got = json.loads(_run([sys.executable, "-c", code], cwd=tmp_path, env=env).stdout)
    assert Path(got["module"]).is_relative_to(site) and Path(got["conf"]).is_relative_to(site), got
    assert "probe_room" in got["rooms"] and got["probe"] == room["dims_m"]
    hall = yaml.safe_load((site / "auralgen" / "conf" / "room" / "hall.yaml").read_text())
    assert got["hall"] == hall["dims_m"]


@pytest.mark.slow
def test_installed_auralgen_command_generates_evaluates_and_audits(installed, tmp_path):
    site, env = installed
    script = site / "bin" / "auralgen"  # the console script pip wrote for [project.scripts]
    assert script.is_file()
    auralgen = [sys.executable, str(script)]
    _run(
        [
            *auralgen,
            "generate",
            "task=pitch_relative",
            "task.items_per_level=1",
            "out=x",
            "progress=false",
            "workers=1",
        ],
        cwd=tmp_path,
        env=env,
    )
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    assert manifest and list((tmp_path / "x" / "data" / "pitch_relative").glob("*.parquet"))
    _run([*auralgen, "evaluate", "model=random", "data=x", "out=y", "progress=false"], cwd=tmp_path, env=env)
    results = json.loads((tmp_path / "y" / "results.json").read_text())
    assert results
    audit = subprocess.run(
        [*auralgen, "audit", "x", "--no-listener"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert audit.returncode in (0, 1) and audit.stdout.startswith(
        f"audit of x: {manifest['items']['written']} items"
    ), audit.stderr
    bad = subprocess.run(
        [*auralgen, "generate", "task=nope"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error:") and "pitch_relative" in bad.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x", "y"]
