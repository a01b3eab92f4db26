"""``executor=ray out=s3://...`` on a real Ray cluster on 127.0.0.1 and a real S3 API server (moto in server
mode) on 127.0.0.1: the Ray workers render whole shards and put them in the bucket themselves (the driver
writes only the journal, card and manifest), with the bytes of a local run; a node whose raylet is killed
mid-run loses nothing: its shard is rerun on the other node and the bucket ends with the local bytes, no
object duplicated. The nodes get the S3 endpoint and credentials from their environment only (the standard
chain), never through Ray. Slow: ``make test-slow``, with the ``ray`` and ``s3`` extras installed.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import threading
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra (pip install 'auralgen[ray]')")
pytest.importorskip("s3fs", reason="the s3 extra (pip install 'auralgen[s3]')")
pytest.importorskip("moto.server", reason="the dev extra's moto[server]")

from auralgen import generation  # noqa: E402
from auralgen.config import ExportConfig, RunConfig  # noqa: E402
from auralgen.execution.ray import RayExecutor  # noqa: E402
from auralgen.tasks.base import AudioConfig  # noqa: E402
from tests.execution.cluster import local_cluster, processes, wait_for  # noqa: E402
from tests.support.builders import ROOT, small_run  # noqa: E402
from tests.support.s3_server import BUCKET, local_files, objects, s3_server  # noqa: E402

pytestmark = pytest.mark.slow
QUIET = {"log": lambda *_: None}
GEN = [
    "task=duration_relative",
    "task.items_per_level=6",
    "task.levels=[0,1]",
    "shard_size=2",
    "export.format=parquet+webdataset",
]  # 9 items in 5 shards, each with its tar


def node_env(s3: dict) -> dict[str, str]:
    """What the nodes' workers inherit: the S3 endpoint and credentials, and this tree's auralgen."""
    return {**s3["env"], "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def s3_cluster():
    with s3_server() as s3, local_cluster(nodes=2, cpus_per_node=1, env=node_env(s3)) as address:
        yield s3, address


def test_ray_workers_put_their_shards_in_the_bucket_with_the_local_bytes(s3_cluster, tmp_path, monkeypatch):
    s3, address = s3_cluster
    generation.run(small_run(*GEN, out=tmp_path / "local"), **QUIET)
    local = local_files(tmp_path / "local")
    assert sum(k.endswith(".parquet") for k in local) == 5 and sum(k.endswith(".tar") for k in local) == 5

    def driver_writes(*args, **kw):
        raise AssertionError("the driver wrote a shard: the Ray workers were to put it in the bucket")

    run_mod = importlib.import_module("auralgen.generation.run")
    monkeypatch.setattr(run_mod, "_write_shard", driver_writes)  # this process only: the workers are others
    url = f"s3://{BUCKET}/ray-run"
    manifest = generation.run(small_run(*GEN, out=url), executor=RayExecutor(address), **QUIET)
    assert objects(s3["client"], "ray-run") == local  # shards, tars, journal, card and manifest
    assert manifest["items"] == json.loads(local["manifest.json"])["items"]


# ---- a lost node -------------------------------------------------------------------------------------


@pytest.fixture
def failing_task():
    """The test-only failing_probe task, registered for this test alone: imported at collection it
    would join every parametrization over the registered tasks."""
    import importlib

    from auralgen.tasks.base import TASKS

    mod = importlib.import_module("tests.support.failing_task")
    if "failing_probe" not in TASKS:
        mod = importlib.reload(mod)
    yield mod
    TASKS.unregister("failing_probe")


def probe_run(failing_task, out: str) -> RunConfig:
    """failing_probe (no poison): 24 items of 0.4 s each in 6 shards of 4 (1.6 s of work per shard)."""
    task = failing_task.FailingConfig(sleep_s=0.4, items_per_level=8)
    return RunConfig(
        seed=0,
        splits=("test",),
        out=out,
        workers=1,
        shard_size=4,
        audio=AudioConfig(),
        tasks=(task,),
        export=ExportConfig(),
        suite="failing_probe",
        progress=False,
    )


def ppid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def worker_node_raylet() -> int:
    """The pid of the raylet of the node that is neither the head nor the driver's."""
    import ray

    me = ray.get_runtime_context().get_node_id()
    others = [
        n for n in ray.nodes() if n["Alive"] and n["NodeID"] != me and "node:__internal_head__" not in n["Resources"]
    ]
    assert len(others) == 1, ray.nodes()
    flag = f"--raylet_socket_name={others[0]['RayletSocketName']}"
    pids = [pid for pid, cmd in processes().items() if cmd[0].endswith("raylet") and flag in cmd]
    assert len(pids) == 1, f"raylets with {flag}: {pids}"
    return pids[0]


def test_a_node_whose_raylet_is_killed_mid_run_loses_no_shard(failing_task, tmp_path):
    """Head + one worker node (1 CPU each), started here and stopped in the end (the context manager's
    finally). Once the worker node renders a shard, its raylet is SIGKILLed: its workers die with it, Ray
    reruns the shard on the head, and the bucket ends with the local bytes."""
    generation.run(probe_run(failing_task, str(tmp_path / "local")), **QUIET)
    local = local_files(tmp_path / "local")
    with s3_server() as s3, local_cluster(nodes=2, cpus_per_node=1, env=node_env(s3)) as address:
        ex = RayExecutor(address)
        assert ex.workers == 2
        raylet, killed = worker_node_raylet(), []

        def kill_the_node():
            busy = [
                pid for pid, cmd in processes().items() if cmd[0].startswith("ray::_run_unit") and ppid(pid) == raylet
            ]
            if busy:
                os.kill(raylet, signal.SIGKILL)
                killed.append(busy[0])
            return busy

        killer = threading.Thread(target=wait_for, args=(kill_the_node, 120, "a shard on the worker node"), daemon=True)
        killer.start()
        url = f"s3://{BUCKET}/lost-node"
        generation.run(probe_run(failing_task, url), executor=ex, **QUIET)
        killer.join(5)
        assert killed, "the worker node never rendered a shard"
        assert not Path(f"/proc/{raylet}").exists()
        remote = objects(s3["client"], "lost-node")
    assert remote == local  # every shard once, with the bytes of a local run
    assert len(json.loads(remote["manifest.json"])["shards"]) == 6
