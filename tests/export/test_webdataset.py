"""``export.format=parquet+webdataset``: a WebDataset tar beside each parquet shard, read back with
the ``webdataset`` package: the same ids in the same order, the same column values, the same FLAC
bytes; deterministic tar bytes, listed in the manifest with their SHA-256."""

import hashlib
import json
import tarfile

import pytest

from auralgen import generation
from auralgen.core.errors import ParameterError
from tests.support.builders import read_rows, small_run

wds = pytest.importorskip("webdataset", reason="the webdataset extra")
QUIET = lambda *_: None
RUN = (
    "task=duration_relative",
    "task.items_per_level=2",
    "task.levels=[0,1]",
    "shard_size=1",
    "export.format=parquet+webdataset",
)


def test_tar_shards_hold_the_parquet_rows_and_the_webdataset_package_reads_them(tmp_path):
    manifest = generation.run(small_run(*RUN, out=tmp_path / "a"), log=QUIET)
    tars = manifest["webdataset"]
    assert [t["path"] for t in tars] == [
        "webdataset/duration_relative/test-00000-of-00003.tar",
        "webdataset/duration_relative/test-00001-of-00003.tar",
        "webdataset/duration_relative/test-00002-of-00003.tar",
    ]
    for t in tars:
        assert hashlib.sha256((tmp_path / "a" / t["path"]).read_bytes()).hexdigest() == t["sha256"]
    rows = read_rows(tmp_path / "a")
    urls = [str(tmp_path / "a" / t["path"]) for t in tars]
    samples = list(wds.WebDataset(urls, shardshuffle=False, empty_check=False))
    assert [s["__key__"] for s in samples] == [r["id"] for r in rows] and len(rows) == 3
    for s, r in zip(samples, rows):
        meta = json.loads(s["json"])
        assert meta == {k: v for k, v in r.items() if k != "audio"}
        clips = sorted(k for k in s if k.endswith(".flac"))
        assert [s[k] for k in clips] == [a["bytes"] for a in r["audio"]]
    with tarfile.open(urls[0]) as tar:
        assert {(m.mtime, m.uid, m.gid, m.uname, m.mode) for m in tar.getmembers()} == {(0, 0, 0, "", 0o644)}
    generation.run(small_run(*RUN, out=tmp_path / "b"), log=QUIET)
    for t in tars:  # a rerun writes the same bytes
        assert (tmp_path / "b" / t["path"]).read_bytes() == (tmp_path / "a" / t["path"]).read_bytes()
    assert rows == read_rows(tmp_path / "b")


def test_an_unknown_export_format_is_refused_naming_the_allowed_ones():
    with pytest.raises(
        ParameterError, match=r"export.format='tfrecord' is unsupported; allowed: parquet, parquet\+webdataset"
    ):
        small_run("task=duration_relative", "export.format=tfrecord")
