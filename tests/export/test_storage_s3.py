"""``out=s3://bucket/prefix`` against a real S3 API server on 127.0.0.1 (moto in server mode, started
by the fixture): a run killed with SIGKILL mid-run resumes from the journal in the bucket and ends
with the bytes of a local run; ``datasets`` streams every item back from the bucket; ``auralgen
evaluate data=s3://...`` scores it; the secret key is in no file, object or log line written."""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("s3fs", reason="the s3 extra (pip install 'auralgen[s3]')")
moto_server = pytest.importorskip("moto.server", reason="the dev extra's moto[server]")
boto3 = pytest.importorskip("boto3")

pytestmark = pytest.mark.slow
BUCKET = "auralgen-it"
REPO = str(Path(__file__).resolve().parents[2])  # the subprocesses import this tree's auralgen
GEN = [
    "task=duration_relative",
    "task.items_per_level=6",
    "task.levels=[0,1]",
    "shard_size=2",
    "workers=1",
    "progress=false",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3(monkeypatch, tmp_path):
    """A moto S3 server on 127.0.0.1 with one bucket; credentials and endpoint only in the environment."""
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()  # returns once the server listens (bounded: werkzeug binds or raises)
    secret = "sk-" + secrets.token_hex(16)
    env = {
        "AWS_ACCESS_KEY_ID": "auralgen-test",
        "AWS_SECRET_ACCESS_KEY": secret,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AURALGEN_CACHE": str(tmp_path / "cache"),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"])
    client.create_bucket(Bucket=BUCKET)
    yield {"client": client, "secret": secret, "endpoint": env["AWS_ENDPOINT_URL"]}
    server.stop()


def objects(client, prefix):
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/")
    keys = [o["Key"] for p in pages for o in p.get("Contents", [])]
    return {k[len(prefix) + 1 :]: client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in keys}


def cli(*args, cwd, timeout=600):
    cmd = [sys.executable, "-m", "auralgen.cli", *args]
    return subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout)


def env():
    return {**os.environ, "PYTHONPATH": REPO}


def local_files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def kill_after_first_shard(args, cwd, client, prefix, timeout_s=300.0):
    """Start a generate run, SIGKILL it once the bucket's journal records a shard; returns that count."""
    log = open(cwd.parent / "killed-run.log", "w")  # read by the failure message only
    proc = subprocess.Popen(
        [sys.executable, "-m", "auralgen.cli", "generate", *args],
        cwd=cwd,
        env=env(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline, done = time.monotonic() + timeout_s, 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                body = client.get_object(Bucket=BUCKET, Key=f"{prefix}/.auralgen-journal.json")["Body"].read()
                done = len(json.loads(body)["shards"])
            except client.exceptions.NoSuchKey:
                done = 0
            if done:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the run ended before it could be killed: " + open(log.name).read()[-2000:]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    assert done, "no shard finished within the deadline"
    return done


def test_kill_9_mid_run_resume_stream_and_evaluate_from_the_bucket(s3, tmp_path):
    client, prefix = s3["client"], "runs/run1"
    url = f"s3://{BUCKET}/{prefix}"
    (tmp_path / "cwd").mkdir()
    tmp_path = tmp_path / "cwd"
    done = kill_after_first_shard([*GEN, f"out={url}"], tmp_path, client, prefix)
    partial = objects(client, prefix)
    assert "manifest.json" not in partial and ".auralgen-lock.json" in partial  # killed: no manifest, lock left
    done = len(json.loads(partial[".auralgen-journal.json"])["shards"])  # a shard may finish before the kill lands
    assert 1 <= done < 5
    resumed = cli("generate", *GEN, f"out={url}", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {done} of 5 shards already complete" in resumed.stdout  # 9 items, 2 per shard
    local = cli("generate", *GEN, f"out={tmp_path / 'local'}", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    remote = objects(client, prefix)
    assert remote == local_files(tmp_path / "local")  # the same bytes, manifest and journal included
    assert sorted(p.name for p in tmp_path.iterdir()) == ["local"]  # no folder "s3:" in the cwd

    from datasets import load_dataset

    opts = {"client_kwargs": {"endpoint_url": s3["endpoint"]}}
    ds = load_dataset(
        "parquet", data_files={"test": f"{url}/data/*/*.parquet"}, split="test", streaming=True, storage_options=opts
    )
    ids = [row["id"] for row in ds]
    manifest = json.loads(remote["manifest.json"])
    assert len(ids) == len(set(ids)) == sum(s["rows"] for s in manifest["shards"]) == 9

    ev = cli("evaluate", f"data={url}", "model=random", f"out={tmp_path / 'eval'}", cwd=tmp_path)
    assert ev.returncode == 0, ev.stderr
    results = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert results["dataset"]["path"] == url and results["dataset"]["items"] == 9

    written = [*remote.values(), *(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())]
    logs = [resumed.stdout, resumed.stderr, ev.stdout, ev.stderr]
    assert not any(s3["secret"].encode() in b for b in written) and not any(s3["secret"] in t for t in logs)


def test_a_bucket_prefix_that_is_not_a_dataset_is_refused_in_one_line(s3, tmp_path):
    client = s3["client"]
    client.put_object(Bucket=BUCKET, Key="mine/notes.txt", Body=b"mine")
    res = cli("generate", *GEN, f"out=s3://{BUCKET}/mine", "overwrite=true", cwd=tmp_path)
    assert res.returncode == 2
    assert (
        res.stderr.strip()
        .splitlines()[-1]
        .startswith(f"error: out='s3://{BUCKET}/mine' exists and is not an auralgen dataset")
    )
    assert objects(client, "mine") == {"notes.txt": b"mine"}
