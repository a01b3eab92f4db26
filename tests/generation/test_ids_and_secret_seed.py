"""Ids carry no answer and differ between configs; a secret seed is never written."""

import hashlib
import json

import pytest

from auralgen import generation
from auralgen.config import SECRET_SEED_ENV
from auralgen.core.errors import ParameterError
from tests.support.builders import read_rows, small_run

ARGS = ("task=pitch_relative", "task.levels=[0,100]", "task.items_per_level=3")
SECRET = "0123456789abcdef0123456789abcdef"


def make(tmp_path, name, *extra):
    generation.run(small_run(*ARGS, *extra, out=tmp_path / name), log=lambda *_: None)
    return read_rows(tmp_path / name)


def test_ids_are_unique_and_differ_between_configs(tmp_path):
    a = make(tmp_path, "a", "sample_rate=48000")
    b = make(tmp_path, "b", "sample_rate=16000")
    assert len({r["id"] for r in a}) == len(a) == 3 + 2  # level 100: 3; level 0: ceil(3 / 2) (Task.items_at)
    assert not {r["id"] for r in a} & {r["id"] for r in b}  # same seed/split/task/index, another config
    # the id is not the hash of the public coordinates alone (what 0.1.0 wrote)
    old = {hashlib.sha256(f"0/test/pitch_relative/{i}".encode()).hexdigest()[:20] for i in range(6)}
    assert not old & {r["id"] for r in a}


def test_a_secret_seed_is_written_nowhere_and_committed_to(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_SEED_ENV, SECRET)
    rows = make(tmp_path, "s", "seed_secret=true")
    public = make(tmp_path, "p")
    assert {r["seed"] for r in rows} == {-1}
    assert [r["params"] for r in rows] != [r["params"] for r in public]
    seed = int(SECRET, 16)
    for path in (tmp_path / "s").rglob("*"):
        if path.is_file():
            blob = path.read_bytes()
            assert SECRET.encode() not in blob and str(seed).encode() not in blob, path
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["seed"] is None and manifest["config"]["seed"] is None
    c = manifest["seed_commitment"]
    assert c["sha256"] == hashlib.sha256(f"{c['salt']}:{int(SECRET, 16):x}".encode()).hexdigest()
    assert "secret seed" in (tmp_path / "s" / "README.md").read_text()
    # the same secret regenerates the same rows (the salt is drawn once per directory)
    again = make(tmp_path, "s2", "seed_secret=true")
    assert [r["params"] for r in again] == [r["params"] for r in rows]
    assert [r["answer"] for r in again] == [r["answer"] for r in rows]


def test_another_secret_gives_other_items_and_resume_keeps_the_commitment(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_SEED_ENV, SECRET)
    first = make(tmp_path, "s", "seed_secret=true")
    before = json.loads((tmp_path / "s" / "manifest.json").read_text())["seed_commitment"]
    make(tmp_path, "s", "seed_secret=true")  # resumes: nothing to render, same commitment
    assert json.loads((tmp_path / "s" / "manifest.json").read_text())["seed_commitment"] == before
    monkeypatch.setenv(SECRET_SEED_ENV, SECRET[::-1])
    other = make(tmp_path, "o", "seed_secret=true")
    assert not {r["params"] for r in first} & {r["params"] for r in other}


@pytest.mark.parametrize("value", [None, "1234", "not-hex-" * 5])
def test_a_missing_or_short_secret_is_one_error_line(monkeypatch, value):
    if value is None:
        monkeypatch.delenv(SECRET_SEED_ENV, raising=False)
    else:
        monkeypatch.setenv(SECRET_SEED_ENV, value)
    with pytest.raises(
        ParameterError, match=r"^seed_secret=true but AURALGEN_SECRET_SEED .*allowed: 32-64 hex digits"
    ) as err:
        small_run(*ARGS, "seed_secret=true")
    assert "\n" not in str(err.value) and (value is None or value not in str(err.value))
