"""What ``out`` may hold and what one run may ask for:
overwrite removes only what an auralgen run recorded; absurd seeds, plans, split names and out
paths are refused in one line before anything is written."""

import time

import pytest

from auralgen import generation
from auralgen.core.errors import ParameterError
from tests.support.builders import read_rows, small_run

QUIET = lambda *_: None
TINY = ("task=duration_relative", "task.items_per_level=1", "task.levels=[0]")


def user_folder(root):
    (root / "data" / "raw").mkdir(parents=True)
    (root / "data" / "raw" / "recordings.txt").write_text("mine")
    (root / "README.md").write_text("# my project\n")
    (root / "train.py").write_text("print('hi')\n")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_overwrite_refuses_a_folder_auralgen_did_not_write(tmp_path):
    before = user_folder(tmp_path)
    with pytest.raises(ParameterError, match="is not an auralgen dataset"):
        generation.run(small_run(*TINY, out=tmp_path, overwrite="true"), log=QUIET)
    assert files(tmp_path) == before


def test_overwrite_refuses_a_dataset_holding_a_file_no_run_recorded(tmp_path):
    out = tmp_path / "ds"
    generation.run(small_run(*TINY, out=out), log=QUIET)
    (out / "data" / "notes.txt").write_text("keep me")
    before = files(out)
    with pytest.raises(ParameterError, match=r"holds 'data/notes.txt', which no auralgen run recorded"):
        generation.run(
            small_run("task=duration_absolute", "task.items_per_level=1", out=out, overwrite="true"), log=QUIET
        )
    assert files(out) == before


def test_overwrite_replaces_a_dataset_removing_only_its_recorded_files(tmp_path):
    out = tmp_path / "ds"
    generation.run(small_run(*TINY, out=out), log=QUIET)
    assert (out / "data" / "duration_relative").is_dir()
    generation.run(small_run("task=duration_absolute", "task.items_per_level=1", out=out, overwrite="true"), log=QUIET)
    assert not (out / "data" / "duration_relative").exists()  # the old task's shards and folder are gone
    assert {r["task"] for r in read_rows(out)} == {"duration_absolute"}


@pytest.mark.parametrize("out", ["", " "])
def test_empty_out_is_not_the_current_directory(out):
    with pytest.raises(ParameterError, match=r"out=.* is empty or invalid"):
        small_run(*TINY, out=f"'{out}'")


def test_seed_must_fit_int64():
    assert small_run(*TINY, seed=2**63 - 1).seed == 2**63 - 1
    with pytest.raises(ParameterError, match=r"seed=9223372036854775808 is out of range; allowed: .*< 2\*\*63"):
        small_run(*TINY, seed=2**63)


def test_a_huge_plan_is_refused_at_once(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match=r"task.items_per_level=1000000000000 makes a plan of .* at most 10000000"):
        generation.run(small_run("task=pitch_relative", "task.items_per_level=1e12", out=tmp_path / "o"), log=QUIET)
    assert time.perf_counter() - t0 < 30  # a hang guard: planning 1e12 items would never end
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["my-split", "a/b", "all", "tr ain", "x..y", ".x", "x" * 65])
def test_split_names_datasets_would_refuse_are_refused(name):
    with pytest.raises(ParameterError, match="is not a split name Hugging Face datasets accepts"):
        small_run(*TINY, split=f"['{name}']")


def test_accepted_split_names_load_with_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "ds"
    generation.run(small_run(*TINY, "split=[train_a,test.v2]", out=out), log=QUIET)
    loaded = datasets.load_dataset(str(out))
    assert sorted(loaded) == ["test.v2", "train_a"]
    assert loaded["test.v2"].num_rows == loaded["train_a"].num_rows == 1


def test_unwritable_and_overlong_out_are_refused(tmp_path):
    with pytest.raises(ParameterError, match=r"out='/sys/auralgen-test/ds' cannot be written .*allowed: a writable"):
        generation.run(small_run(*TINY, out="/sys/auralgen-test/ds"), log=QUIET)
    long = tmp_path / ("x" * 300)
    with pytest.raises(ParameterError, match=r"is too long: .*allowed: paths under"):
        generation.run(small_run(*TINY, out=long), log=QUIET)
    deep = tmp_path / "/".join(["d" * 200] * 25)
    with pytest.raises(ParameterError, match=r"is too long"):
        generation.run(small_run(*TINY, out=deep), log=QUIET)
    assert list(tmp_path.iterdir()) == []


def test_a_second_run_into_an_out_being_written_is_refused_in_one_line(tmp_path):
    """Two runs into one out would remove each other's shard files mid-write (seen: a FileNotFoundError on
    os.replace of a .parquet.tmp). While a run holds out, the CLI exits 2 with one line and writes nothing;
    once it is released, a run goes through."""
    import subprocess
    import sys
    from pathlib import Path

    from auralgen.export.manifest import out_lock

    out = tmp_path / "ds"
    cmd = [
        sys.executable,
        str(Path(__file__).resolve().parents[2] / "generate.py"),
        *TINY,
        f"out={out}",
        "progress=false",
    ]
    with out_lock(str(out)):  # what a running generation holds
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert files(out) == {}
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and "is being written by another auralgen run; allowed: one run per out directory" in lines[0]
    )
    generation.run(small_run(*TINY, out=out), log=QUIET)  # released: a run goes through (in process: 5 s less)
    assert "manifest.json" in files(out)
