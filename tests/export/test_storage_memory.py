"""``out=<url>``: a run into object storage (fsspec's in-process ``memory://`` filesystem here; the
same code against a real S3 server is in ``test_storage_s3.py``). The bucket holds the same bytes a
local run writes, resumes from its journal, and ``overwrite`` removes only the run's own keys."""

import json
import os
import socket

import fsspec
import pytest

from auralgen import generation
from auralgen.core.errors import ParameterError
from auralgen.export.storage import LOCK, local_dataset
from tests.support.builders import small_run

QUIET = lambda *_: None
TINY = ("task=duration_relative", "task.items_per_level=2", "task.levels=[0,1]", "shard_size=2")


def bucket_files(fs, root):
    return {k[len(root) + 1 :]: fs.cat_file(k) for k in fs.find(root)}


def local_files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def mem():
    fs = fsspec.filesystem("memory")
    root = f"/auralgen-test-{os.getpid()}"
    yield fs, root
    if fs.exists(root):
        fs.rm(root, recursive=True)


def test_a_memory_bucket_holds_the_bytes_of_a_local_run_and_nothing_lands_in_the_cwd(mem, tmp_path, monkeypatch):
    fs, root = mem
    monkeypatch.chdir(tmp_path)
    generation.run(small_run(*TINY, out=tmp_path / "local"), log=QUIET)
    generation.run(small_run(*TINY, out=f"memory://{root}/run1"), log=QUIET)
    local, remote = local_files(tmp_path / "local"), bucket_files(fs, f"{root}/run1")
    assert sorted(remote) == sorted(local)
    assert remote == local  # the manifest too: it records no out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["local"]  # no folder "memory:"
    assert LOCK not in remote  # the lease ended with the run
    # evaluation reads the bucket through a verified local copy of its manifest and shards
    copy = local_dataset(f"memory://{root}/run1", cache_root=tmp_path / "cache")
    assert local_files(tmp_path / "cache") and (tmp_path / "cache").as_posix() in copy
    assert json.loads(open(f"{copy}/manifest.json").read()) == json.loads(local["manifest.json"])


def test_a_bucket_run_resumes_from_its_journal_in_the_bucket(mem):
    fs, root = mem
    url = f"memory://{root}/run1"
    generation.run(small_run(*TINY, out=url), log=QUIET)
    before = bucket_files(fs, f"{root}/run1")
    fs.rm_file(f"{root}/run1/manifest.json")  # as after a crash: shards and journal there, no manifest
    fs.rm_file(f"{root}/run1/data/duration_relative/test-00001-of-00002.parquet")
    lines = []
    generation.run(small_run(*TINY, out=url), log=lines.append)
    assert "resuming: 1 of 2 shards already complete" in lines
    assert bucket_files(fs, f"{root}/run1") == before


def test_overwrite_removes_only_the_runs_own_keys_and_refuses_a_foreign_one(mem):
    fs, root = mem
    url = f"memory://{root}/run1"
    generation.run(small_run(*TINY, out=url), log=QUIET)
    fs.pipe_file(f"{root}/run1-notes.txt", b"mine")  # beside the prefix: never touched
    generation.run(
        small_run("task=duration_relative", "task.items_per_level=1", "task.levels=[0]", out=url, overwrite="true"),
        log=QUIET,
    )
    keys = sorted(bucket_files(fs, f"{root}/run1"))
    assert "data/duration_relative/test-00000-of-00001.parquet" in keys
    assert not any("of-00002" in k for k in keys)
    assert fs.cat_file(f"{root}/run1-notes.txt") == b"mine"
    fs.pipe_file(f"{root}/run1/train.py", b"print(1)")
    with pytest.raises(ParameterError, match="'train.py', which no auralgen run recorded"):
        generation.run(small_run(*TINY, out=url, overwrite="true"), log=QUIET)
    assert fs.cat_file(f"{root}/run1/train.py") == b"print(1)"


def test_a_live_lock_object_refuses_a_second_run_and_a_dead_ones_is_taken_over(mem):
    fs, root = mem
    url = f"memory://{root}/run1"
    live = {"host": socket.gethostname(), "pid": os.getpid(), "token": "x", "expires": 4e9}
    fs.pipe_file(f"{root}/run1/{LOCK}", json.dumps(live).encode())
    with pytest.raises(ParameterError, match="is being written by another auralgen run"):
        generation.run(small_run(*TINY, out=url), log=QUIET)
    dead = {**live, "pid": 2**22 + 12345}  # above pid_max's default: no such process
    fs.pipe_file(f"{root}/run1/{LOCK}", json.dumps(dead).encode())
    generation.run(small_run(*TINY, out=url), log=QUIET)
    assert fs.exists(f"{root}/run1/manifest.json") and not fs.exists(f"{root}/run1/{LOCK}")


def test_an_unknown_scheme_is_one_line_naming_it():
    with pytest.raises(ParameterError, match=r"no filesystem for nosuchfs:// is installed"):
        generation.run(small_run(*TINY, out="nosuchfs://b/run1"), log=QUIET)
