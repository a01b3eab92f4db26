"""Generation under faults: an error inside a worker, Ctrl-C and a killed
run each end in bounded time with one line, and leave ``out`` resumable to the same bytes.

The failing task lives in ``tests/support/failing_task.py`` (registered only by the driver
``tests/support/run_failing.py``, which runs ``run_reported`` (``auralgen.generation``) as generate.py does).
"""

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.builders import ROOT

DRIVER = ROOT / "tests" / "support" / "run_failing.py"
ENV = {**os.environ, "PRA_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
SLEEP_S = "0.25"  # per item, so that a run is still going when it is interrupted


def argv(out, poison, workers=2, sleep=SLEEP_S):
    return [sys.executable, str(DRIVER), str(out), str(workers), str(poison), "4", sleep]


def drive(out, poison, workers=2, sleep=SLEEP_S, timeout=60):
    return subprocess.run(argv(out, poison, workers, sleep), capture_output=True, text=True, timeout=timeout, env=ENV)


def tree(root):
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """Uninterrupted runs (no poison file), per per-item sleep."""
    root = tmp_path_factory.mktemp("ref")
    poison = root / "poison"
    out = {}
    for sleep in ("0", SLEEP_S):
        done = drive(root / f"ref{sleep}", poison, sleep=sleep)
        assert done.returncode == 0, done.stderr
        out[sleep] = tree(root / f"ref{sleep}")
    assert len([p for p in out["0"] if p.endswith(".parquet")]) == 6  # 24 items in shards of 4
    return poison, out


def last_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines, "nothing on stderr"
    return lines[-1]


@pytest.mark.parametrize(
    "kind,code,cause",
    [
        ("input", 2, "failed: sources_dir file 'poison' is corrupt; allowed: a readable WAV file"),
        ("bug", 1, "failed: internal error ZeroDivisionError: integer division or modulo by zero"),
    ],
)
@pytest.mark.parametrize("workers", [2, 1])
def test_a_failing_item_stops_the_run_names_it_and_the_rerun_after_the_fix_is_identical(
    ref, kind, code, cause, workers
):
    poison, trees = ref
    out = poison.parent / f"fail-{kind}-{workers}"
    poison.write_text(kind)
    try:
        t0 = time.monotonic()
        failed = drive(out, poison, workers=workers, sleep="0", timeout=120)  # items after the bad one take 600 s
        assert time.monotonic() - t0 < 60  # a hang guard: the run ends GRACE_S after the error
    finally:
        poison.unlink()
    assert failed.returncode == code, failed.stderr
    line = last_line(failed.stderr)
    assert line.startswith("error: item task=failing_probe split=test index=13 (level 1) " + cause), line
    assert "Traceback" not in failed.stderr
    assert "in render" in (out / ".auralgen-error.log").read_text()  # the worker's traceback, for a bug report
    assert not list(out.rglob("*.tmp"))  # the partial shard's temporary file is gone
    kept = sorted(p.name for p in out.rglob("*.parquet"))
    assert kept == [f"test-0000{i}-of-00006.parquet" for i in range(len(kept))] and len(kept) <= 3
    fixed = drive(out, poison, workers=workers, sleep="0")
    assert fixed.returncode == 0, fixed.stderr
    assert tree(out) == trees["0"]


def test_an_error_behind_a_full_look_ahead_window_does_not_hang(ref):
    """300 items: the failing one (index 105) comes after more items than the executor keeps in flight
    (main hung here: the pool's feeder blocked on its semaphore while terminate waited for it)."""
    poison, _ = ref
    out = poison.parent / "window"
    poison.write_text("input")
    try:
        t0 = time.monotonic()
        cmd = [*argv(out, poison, sleep="0"), "100"]
        failed = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
        assert time.monotonic() - t0 < 60  # a hang guard (the items behind the failing one take 600 s)
    finally:
        poison.unlink()
    assert failed.returncode == 2, failed.stderr
    assert last_line(failed.stderr).startswith("error: item task=failing_probe split=test index=105 (level 1) failed")


def wait_for(cond, timeout_s=60.0):
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout_s, "timed out waiting"
        time.sleep(0.02)


def interrupt_when(proc, ready, *, timeout_s=60.0, within_s=60.0) -> str:
    """Once ``ready()``, Ctrl-C ``proc``'s process group (as a terminal does); it must exit within
    ``within_s`` (a hang guard: a run that waited for its items would take minutes). Returns its stderr; the group is
    killed if it is still there."""
    try:
        wait_for(ready, timeout_s=timeout_s)
        os.killpg(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        _, stderr = proc.communicate(timeout=within_s)
        assert time.monotonic() - t0 < within_s
        return stderr
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def group_gone(pgid) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_ctrl_c_with_two_workers_exits_at_once_and_resumes_identically(ref):
    poison, trees = ref
    out = poison.parent / "sigint"
    proc = subprocess.Popen(argv(out, poison), stderr=subprocess.PIPE, text=True, env=ENV, start_new_session=True)
    stderr = interrupt_when(proc, lambda: (out / "data" / "failing_probe" / "test-00000-of-00006.parquet").exists())
    assert proc.returncode == 130, stderr
    assert last_line(stderr).startswith("error: interrupted; finished shards are kept"), stderr
    assert "Traceback" not in stderr
    wait_for(lambda: group_gone(proc.pid), timeout_s=30)  # no worker left behind
    assert not list(out.rglob("*.tmp"))
    done = len(list(out.rglob("*.parquet")))
    assert 1 <= done < 6
    resumed = drive(out, poison)
    assert resumed.returncode == 0, resumed.stderr
    assert tree(out) == trees[SLEEP_S]


def test_a_killed_run_leaves_nothing_that_blocks_the_rerun(ref):
    """SIGKILL while the first shard is being written: no shard is complete, a temporary file is
    left; the same command then completes, byte-identical to an uninterrupted run."""
    poison, trees = ref
    out = poison.parent / "sigkill"
    proc = subprocess.Popen(argv(out, poison), stderr=subprocess.DEVNULL, env=ENV, start_new_session=True)
    try:
        wait_for(lambda: list(out.rglob("*.parquet.tmp")))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    wait_for(lambda: group_gone(proc.pid), timeout_s=30)
    assert not list(out.rglob("*.parquet"))  # killed before any shard was complete
    rerun = drive(out, poison)
    assert rerun.returncode == 0, rerun.stderr
    assert not list(out.rglob("*.tmp"))
    assert tree(out) == trees[SLEEP_S]


@pytest.mark.slow  # three generate.py runs: ~30 s on a loaded 2-core machine
def test_ctrl_c_of_generate_py_with_real_items_exits_at_once_and_resumes(tmp_path):
    """The command line with a real task (results of ~100 kB per item in flight: a worker stopped while
    sending one must not leave the parent waiting on a half-written pipe)."""
    cmd = [
        sys.executable,
        str(ROOT / "generate.py"),
        "task=pitch_relative",
        "task.items_per_level=4",
        "workers=2",
        "shard_size=4",
        "progress=false",
    ]
    ref = subprocess.run([*cmd, "out=ref"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=ENV)
    assert ref.returncode == 0, ref.stderr
    out = tmp_path / "ds"
    proc = subprocess.Popen(
        [*cmd, "out=ds"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        start_new_session=True,
    )
    stderr = interrupt_when(proc, lambda: list(out.rglob("*.parquet")), timeout_s=120)
    assert proc.returncode == 130 and last_line(stderr).startswith("error: interrupted"), stderr
    wait_for(lambda: group_gone(proc.pid), timeout_s=30)
    resumed = subprocess.run([*cmd, "out=ds"], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=ENV)
    assert resumed.returncode == 0, resumed.stderr
    assert tree(out) == tree(tmp_path / "ref")


NOISE_S = "2"  # per item: incompressible clips, so results outgrow the pipe and a worker blocks sending


def children(pid: int) -> list[int]:
    """The ids of ``pid``'s child processes (Linux's /proc)."""
    return [int(c) for c in (Path(f"/proc/{pid}/task/{pid}/children")).read_text().split()]


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie, left for an init that may not reap it, has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.fixture(scope="module")
def noise_ref(tmp_path_factory):
    root = tmp_path_factory.mktemp("noise")
    done = subprocess.run(
        [*argv(root / "ref", root / "poison"), "8", NOISE_S], capture_output=True, text=True, timeout=120, env=ENV
    )
    assert done.returncode == 0, done.stderr
    return root, tree(root / "ref")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="lists child processes through Linux's /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_workers_exit_when_the_main_process_alone_is_killed_and_the_rerun_resumes(noise_ref, sig):
    """``docker stop``, systemd, Slurm and the OOM killer signal the main process only: its workers,
    blocked sending results nobody reads, must not live on holding the out directory's lock (on the
    old pool both stayed, parent 1, and every rerun was refused)."""
    root, ref = noise_ref
    out = root / sig.name
    cmd = [*argv(out, root / "poison"), "8", NOISE_S]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL, env=ENV, start_new_session=True)
    workers = []
    try:
        wait_for(lambda: list(out.rglob("*.parquet")), timeout_s=60)  # mid-run: 1 of 6 shards written
        workers = children(proc.pid)
        assert len(workers) == 2
        os.kill(proc.pid, sig)  # the main process alone, not its group
        proc.wait(timeout=10)
        t0 = time.monotonic()
        while any(alive(w) for w in workers) and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        assert not [w for w in workers if alive(w)], "workers outlived their parent"
    finally:
        for w in [w for w in workers if alive(w)]:
            os.kill(w, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    assert len(list(out.rglob("*.parquet"))) < 6
    rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=ENV)
    assert rerun.returncode == 0, rerun.stderr  # not "being written by another auralgen run"
    assert tree(out) == ref
