"""executor=ray on a real two-node Ray cluster on 127.0.0.1: the same bytes as the local pool,
a killed Ray worker is retried with no row lost or duplicated, a bad item stops the run with the local
one-line error within 10 s, Ctrl-C cancels the tasks, and the cluster leaves no process behind.

The cluster is two ``ray start`` nodes of 1 CPU each, started and stopped (``ray stop --force``) by the
module fixture. Slow (about two minutes): ``make test-slow``, with the ``ray`` extra installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from auralgen import generation
from auralgen.execution import LocalPoolExecutor
from auralgen.execution.ray import RayExecutor
from tests.execution.cluster import ENV, busy_workers, local_cluster, wait_for
from tests.support.builders import ROOT, read_rows, small_run

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).with_name("ray_driver.py")
DROP = (
    "azimuth_absolute",
    "elevation_absolute",
    "elevation_relative",
    "distance_relative",
    "distance_absolute",
    "trajectory",
)
SPATIAL = [
    "suite=spatial",
    *(f"~tasks.{t}" for t in DROP),
    "tasks.azimuth_relative.items_per_level=2",
    "+task@tasks.pitch_relative=pitch_relative",
    "tasks.pitch_relative.items_per_level=2",
    "tasks.pitch_relative.levels=[0,100,400]",
]  # 12 binaural items and 6 tones, in 5 shards of 4


@pytest.fixture(scope="module")
def cluster():
    """A head node and a second node, 1 CPU each, on 127.0.0.1; yields the address ``127.0.0.1:<port>``."""
    with local_cluster(nodes=2, cpus_per_node=1) as address:
        yield address


def digest_tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def local_ref(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "out"
    generation.run(small_run(*SPATIAL, out=out, shard_size=4), executor=LocalPoolExecutor(2), log=lambda *_: None)
    return digest_tree(out)


def test_two_nodes_give_the_local_bytes_and_a_killed_worker_is_retried(cluster, local_ref, tmp_path):
    """Run 1: nothing killed. Run 2: the first busy Ray worker is SIGKILLed mid-run; Ray reruns its task."""
    ex = RayExecutor(cluster)
    assert ex.workers == 2  # both nodes joined
    generation.run(small_run(*SPATIAL, out=tmp_path / "a", shard_size=4), executor=ex, log=lambda *_: None)
    assert digest_tree(tmp_path / "a") == local_ref
    assert sum(p.endswith(".parquet") for p in local_ref) == 5 and {"manifest.json", "README.md"} <= set(local_ref)

    killed: list[int] = []

    def kill_one():
        try:
            victim = wait_for(busy_workers, 60, "a busy Ray worker")[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)
        except (AssertionError, ProcessLookupError):
            pass

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    generation.run(
        small_run(*SPATIAL, out=tmp_path / "b", shard_size=4), executor=RayExecutor(cluster), log=lambda *_: None
    )
    killer.join(5)
    assert killed and not Path(f"/proc/{killed[0]}").exists()
    assert digest_tree(tmp_path / "b") == local_ref
    ids = [r["id"] for r in read_rows(tmp_path / "b")]
    assert len(ids) == len(set(ids)) == 18


def drive(out: Path, poison: Path, executor: str, sleep_s: str = "0", **kw):
    argv = [sys.executable, str(DRIVER), str(out), str(poison), executor, sleep_s]
    return subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT, **kw)


def last_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert lines, "nothing on stderr"
    return lines[-1]


def test_a_bad_item_stops_the_run_with_the_local_one_line_error_at_once(cluster, tmp_path):
    poison = tmp_path / "poison"
    poison.write_text("input")
    lines = {}
    for executor in ("local", cluster):
        t0 = time.monotonic()
        out = tmp_path / executor.replace(":", "_")
        proc = drive(out, poison, executor)
        _, stderr = proc.communicate(timeout=120)  # the items after the bad one take 600 s each
        assert time.monotonic() - t0 < 60, f"{executor}: {time.monotonic() - t0:.1f} s"  # a hang guard
        assert proc.returncode == 2, stderr[-2000:]
        assert "Traceback" not in stderr and "Token authentication" not in stderr  # one line, no Ray notice
        lines[executor] = last_line(stderr).replace(str(out), "<out>")
        assert "in render" in (out / ".auralgen-error.log").read_text()  # the worker's traceback
    assert lines[cluster] == lines["local"]
    assert lines["local"].startswith(
        "error: item task=failing_probe split=test index=13 (level 1) failed: sources_dir file 'poison' is corrupt"
    )


def test_ctrl_c_cancels_the_ray_tasks_and_the_rerun_resumes(cluster, tmp_path):
    poison, out = tmp_path / "no-poison", tmp_path / "sigint"
    proc = drive(out, poison, cluster, sleep_s="0.25", start_new_session=True)
    try:
        wait_for(lambda: (out / "data" / "failing_probe" / "test-00000-of-00006.parquet").exists(), 60, "a shard")
        os.killpg(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        _, stderr = proc.communicate(timeout=90)
        assert time.monotonic() - t0 < 60  # a hang guard
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr[-2000:]
    assert last_line(stderr).startswith("error: interrupted; finished shards are kept")
    wait_for(lambda: not busy_workers() or None, 10, "the cancelled Ray tasks to stop")
    done = drive(out, poison, cluster, sleep_s="0.25")
    _, stderr = done.communicate(timeout=60)
    assert done.returncode == 0, stderr[-2000:]
    ref = drive(tmp_path / "ref", poison, "local", sleep_s="0.25")
    assert ref.wait(timeout=60) == 0
    assert digest_tree(out) == digest_tree(tmp_path / "ref") and len(list(out.rglob("*.parquet"))) == 6


def worker_facts(x):
    time.sleep(0.2 if x < 4 else 300)  # the units from 4 on would run for 300 s each
    return x, os.environ.get("PRA_NUM_THREADS"), os.environ.get("NUMBA_CACHE_DIR"), os.getpid()


def record_setup(path):
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")


def test_an_open_connection_is_used_setup_runs_once_per_process_and_cancel_stops_running_tasks(cluster, tmp_path):
    import ray
    from ray.exceptions import TaskCancelledError

    ray.init(address=cluster, log_to_driver=False)
    try:
        ex = RayExecutor(cluster, runtime_env={"env_vars": {"NUMBA_CACHE_DIR": "/tmp/auralgen-numba-test"}})
        setups = tmp_path / "setups"
        got = []
        for res in ex.map_ordered(worker_facts, range(8), setup=partial(record_setup, setups), max_ahead=6):
            got.append(res)
            if len(got) == 4:
                break
        assert [g[:3] for g in got] == [(x, "1", "/tmp/auralgen-numba-test") for x in range(4)]
        pids = setups.read_text().split()
        assert len(pids) == len(set(pids)) and {str(g[3]) for g in got} <= set(pids)  # once in each process
        running = list(ex._inflight)
        assert len(running) == 4
        t0 = time.monotonic()
        ex.close(cancel=True)
        for ref in running:
            with pytest.raises(TaskCancelledError):
                ray.get(ref, timeout=60)
        assert time.monotonic() - t0 < 60  # a hang guard: the running units take 300 s
        assert ray.is_initialized()  # not ours to shut down
    finally:
        ray.shutdown()


# ---- evaluation: the command adapter as a Ray actor pool --------------------------------------------

POOL_MODEL = """import json, os, sys, zlib
open(sys.argv[1], "a").write(f"{os.getpid()}\\n")  # one line per start: the model loads once per replica
for line in sys.stdin:
    m = json.loads(line)
    uid = m["meta"]["unique_id"]
    k = zlib.crc32(uid.encode()) % 4
    out = {"id": m["id"], "error": "out of memory"} if k == 3 else {"id": m["id"], "reply": "ABC"[k]}
    print("loading...", flush=True) if k == 0 else None
    print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def eval_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("pool") / "ds"
    overrides = [
        "suite=tones",
        "~tasks.audiogram",
        *(
            f"tasks.{t}.items_per_level=1"
            for t in ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute")
        ),
    ]
    generation.run(small_run(*overrides, out=out), log=lambda *_: None)
    return out


def _pool_eval(data, out, script, pids, *extra):
    from auralgen.evaluation.runner import run
    from tests.evaluation.test_harness import cfg_of

    cfg = cfg_of(
        f"data={data}",
        f"out={out}",
        "progress=false",
        "eval.n_boot=0",
        "model=command",
        f"model.cmd='{sys.executable} {script} {pids}'",
        "model.timeout_s=20",
        *extra,
    )
    return run(cfg, log=lambda *_: None)


def _replies(out: Path) -> list[dict]:
    rows = [json.loads(x) for x in (out / "replies.jsonl").read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k != "latency_s"} for r in rows), key=lambda r: r["key"])


def test_command_adapter_as_a_ray_actor_pool_gives_the_local_results(cluster, eval_data, tmp_path):
    """Two replicas on the two nodes (1 CPU each): every question answered by one of them, each
    program started once, and the replies, errors, accounting and scores of a local run."""
    script = tmp_path / "model.py"
    script.write_text(POOL_MODEL)
    local = _pool_eval(eval_data, tmp_path / "local", script, tmp_path / "pids_local")
    pool = _pool_eval(
        eval_data,
        tmp_path / "pool",
        script,
        tmp_path / "pids_pool",
        f"model.ray_address={cluster}",
        "model.replicas=2",
        "model.num_cpus=1",
    )
    assert _replies(tmp_path / "pool") == _replies(tmp_path / "local")
    asked = local["accounting"]["overall"]["asked"]
    assert asked >= 30 and 0 < local["accounting"]["overall"]["error"] < asked
    assert pool["accounting"] == local["accounting"] and pool["scores"] == local["scores"]
    pids = (tmp_path / "pids_pool").read_text().split()
    assert len(pids) == 2 == len(set(pids))  # one start per replica, for every question
    logs = sorted((tmp_path / "pool").glob("replica*/command_stdout.log"))
    assert pool["protocol"]["replicas"] == 2 and pool["protocol"]["replicas_lost"] == 0
    assert pool["protocol"]["ignored_stdout_lines"] == local["protocol"]["ignored_stdout_lines"] > 0
    assert sum(p.read_text().count("loading...") for p in logs) == local["protocol"]["ignored_stdout_lines"]


def test_a_replica_whose_program_dies_ends_the_run_in_one_line(cluster, eval_data, tmp_path):
    from auralgen.evaluation.adapters.base import FatalModelError

    script = tmp_path / "dies.py"
    script.write_text("import sys\nsys.stdin.readline()\nsys.exit(3)\n")
    t0 = time.monotonic()
    with pytest.raises(FatalModelError, match="exit"):
        _pool_eval(
            eval_data, tmp_path / "dies", script, tmp_path / "p", f"model.ray_address={cluster}", "model.replicas=2"
        )
    assert time.monotonic() - t0 < 60
