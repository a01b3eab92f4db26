"""Reading a dataset back from a bucket with ``datasets`` (moto S3 server on 127.0.0.1): the shards the
bucket's manifest lists (``auralgen.export.storage.data_files``) stream every item with the bytes of a local
run; a prefix whose run has not written its manifest is refused in one line. ``datasets`` opens a local
folder by its bare path (tests/export/test_card.py) but not a bucket URL, hence the helper. Slow: ``make
test-slow``, with the ``s3`` extra."""

from __future__ import annotations

import pytest

pytest.importorskip("s3fs", reason="the s3 extra (pip install 'auralgen[s3]')")
pytest.importorskip("moto.server", reason="the dev extra's moto[server]")

from auralgen import generation  # noqa: E402
from auralgen.core.errors import ParameterError  # noqa: E402
from auralgen.export.storage import data_files  # noqa: E402
from tests.support.builders import read_rows, small_run  # noqa: E402
from tests.support.s3_server import BUCKET, s3_server  # noqa: E402

pytestmark = pytest.mark.slow
GEN = ["task=duration_relative", "task.items_per_level=3", "task.levels=[0,1]", "split=[train,test]", "shard_size=2"]


def test_the_manifests_shards_stream_every_item_from_the_bucket(tmp_path):
    from datasets import load_dataset

    generation.run(small_run(*GEN, out=tmp_path / "local"), log=lambda *_: None)
    local = read_rows(tmp_path / "local")
    with s3_server() as s3:
        url = f"s3://{BUCKET}/run1"
        generation.run(small_run(*GEN, out=url), log=lambda *_: None)
        files = data_files(url)
        assert set(files) == {"train", "test"} and all(
            f.startswith(url + "/data/") for fs in files.values() for f in fs
        )
        opts = {"client_kwargs": {"endpoint_url": s3["endpoint"]}}
        for split in ("train", "test"):
            ds = load_dataset("parquet", data_files=files, split=split, streaming=True, storage_options=opts)
            got = [(r["id"], [a["bytes"] for a in r["audio"]]) for r in ds]
            want = [(r["id"], [a["bytes"] for a in r["audio"]]) for r in local if r["split"] == split]
            assert got == want and len(want) == 5  # every item once, in plan order, with the local audio bytes
        s3["client"].put_object(Bucket=BUCKET, Key="half/data/x/test-00000-of-00002.parquet", Body=b"PAR1")
        with pytest.raises(ParameterError, match=rf"^data='s3://{BUCKET}/half' holds no manifest.json"):
            data_files(f"s3://{BUCKET}/half")
