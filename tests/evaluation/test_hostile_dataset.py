"""A crafted dataset cannot write outside ``out``: its ids and task names are checked when it is read,
every path the evaluator or an exporter writes is checked to lie inside ``out``, and an export never
overwrites a file. The shard is edited and the manifest re-hashed, as an attacker would."""

import os
import shutil

import pytest

from auralgen.cli import main as cli

from .test_bad_datasets import edit_row, rewrite

RUNS = {
    "evaluate": ["model=random"],
    "starbench": ["action=export", "export_format=starbench"],
    "mmar": ["action=export", "export_format=mmar"],
    "sonicbench": ["action=export", "export_format=sonicbench"],
}


def listing(root):
    """Every path under ``root`` (symlinks not followed) with its size: what a run may have added or changed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            out[os.path.relpath(p, root)] = os.lstat(p).st_size if name in filenames else "dir"
    return out


def run(tmp_path, capsys, data, out, args):
    """``auralgen evaluate`` in this process (working directory ``tmp_path``): ``(exit code, stderr lines)``."""
    try:
        code = cli(["evaluate", *args, f"data={data}", f"out={out}", "task=[pitch_relative]", "progress=false"])
    except SystemExit as exc:
        code = exc.code
    return code, [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.fixture
def setting(tiny_dataset, tmp_path, monkeypatch):
    """``tmp/ds`` (a copy of the tiny dataset to craft), ``tmp/victim/`` holding a file of the user's."""
    monkeypatch.chdir(tmp_path)
    ds = shutil.copytree(tiny_dataset, tmp_path / "ds")
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "mine.wav").write_bytes(b"the user's file")
    return ds


def attacks(tmp_path):
    return {
        "relative id": {"id": "../../../../victim/pwn"},
        "absolute id": {"id": str(tmp_path / "victim" / "mine")},
        "task field": {"task": "../../../victim/t"},
    }


@pytest.mark.parametrize("attack", ["relative id", "absolute id", "task field"])
@pytest.mark.parametrize("kind", list(RUNS))
def test_crafted_row_is_refused_and_nothing_is_written_outside_out(setting, tmp_path, capsys, attack, kind):
    rewrite(setting, edit_row(**attacks(tmp_path)[attack]))
    before = listing(tmp_path)
    code, lines = run(tmp_path, capsys, setting, tmp_path / "a" / "o", RUNS[kind])
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: item"), lines
    field = "task" if attack == "task field" else "id"
    assert f"has {field}=" in lines[0] and "allowed:" in lines[0]
    after = {k: v for k, v in listing(tmp_path).items() if not k.startswith("a")}
    assert after == before
    assert (tmp_path / "victim" / "mine.wav").read_bytes() == b"the user's file"


@pytest.mark.parametrize("kind", list(RUNS))
def test_a_symlinked_folder_inside_out_cannot_lead_outside(setting, tmp_path, capsys, kind):
    """Valid ids, but out's audio folder is a symlink to the user's folder: refused, nothing written there."""
    out = tmp_path / "a" / "o"
    folder = {"evaluate": "audio", "starbench": "audios", "mmar": "audio", "sonicbench": "pitch"}[kind]
    out.mkdir(parents=True)
    (out / folder).symlink_to(tmp_path / "victim")
    code, lines = run(tmp_path, capsys, setting, out, RUNS[kind])
    assert code == 2 and len(lines) == 1 and "leads outside out=" in lines[0], lines
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == ["mine.wav"]


@pytest.mark.parametrize("kind", ["starbench", "mmar", "sonicbench"])
def test_an_export_never_overwrites_a_file(setting, tmp_path, capsys, kind):
    out = tmp_path / "exp"
    assert run(tmp_path, capsys, setting, out, RUNS[kind])[0] in (0, None)
    files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    victim = next(p for p in sorted(files) if p.suffix == ".wav")
    victim.write_bytes(b"edited by the user")
    code, lines = run(tmp_path, capsys, setting, out, RUNS[kind])
    assert code == 2 and len(lines) == 1 and "exists already" in lines[0] and "never overwrites" in lines[0], lines
    assert victim.read_bytes() == b"edited by the user"
    assert {p for p in out.rglob("*") if p.is_file()} == set(files)
