"""A real S3 API server on 127.0.0.1 for the tests (moto in server mode) with one bucket; its endpoint and
throw-away credentials go to this process's environment only, the standard chain auralgen reads."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager

BUCKET = "auralgen-it"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def s3_server() -> Iterator[dict]:
    """Yields ``{"client", "env", "endpoint"}``: a boto3 client, the ``AWS_*`` variables set meanwhile
    in ``os.environ`` (restored after) and the endpoint URL. The server stops on exit."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()  # returns once the server listens (bounded: werkzeug binds or raises)
    env = {
        "AWS_ACCESS_KEY_ID": "auralgen-test",
        "AWS_SECRET_ACCESS_KEY": "sk-" + secrets.token_hex(16),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    _forget_filesystems()  # an S3 filesystem made for an earlier server would still call its endpoint
    try:
        client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"])
        client.create_bucket(Bucket=BUCKET)
        yield {"client": client, "env": env, "endpoint": env["AWS_ENDPOINT_URL"]}
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        _forget_filesystems()
        server.stop()


def _forget_filesystems() -> None:
    """Drop fsspec's cached S3 filesystems: each holds the endpoint and credentials of its creation."""
    from s3fs import S3FileSystem

    S3FileSystem.clear_instance_cache()


def objects(client, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix/`` of the test bucket: key relative to the prefix -> bytes."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/")
    keys = [o["Key"] for p in pages for o in p.get("Contents", [])]
    return {k[len(prefix) + 1 :]: client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in keys}


def local_files(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
