"""Evaluation streams: the dataset is read a record batch at a time and the reply cache keeps an index, so
the peak memory of a run does not grow with the dataset (it grew by ~0.2 MB per item: 974 MB for 2.5k
items, 5.2 GB for 25k); a reply longer than ``eval.max_reply_chars`` is stored cut, and counted."""

import hashlib
import json
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auralgen.export.parquet import sha256_file
from tests.support.builders import ROOT

from .test_harness import evaluate

SHARD = "data/pitch_relative/test-00000-of-00001.parquet"
# evaluate.py in a fresh process that reports its children's peak RSS (this process's earlier children excluded)
MAXRSS = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)\n"
    "assert r.returncode == 0, r.stderr\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def grown(tiny_dataset, dest, n_items):
    """The tiny dataset with its pitch_relative shard grown to ``n_items`` rows (copies of its rows under
    new ids, in row groups of 64 as generate.py writes them), re-hashed in the manifest."""
    ds = shutil.copytree(tiny_dataset, dest)
    table = pq.read_table(ds / SHARD)
    rows = table.to_pylist()
    grown_rows = []
    for i in range(n_items):
        row = dict(rows[i % len(rows)])
        row["id"] = hashlib.sha256(f"{row['id']}-{i}".encode()).hexdigest()[: len(row["id"])]
        grown_rows.append(row)
    pq.write_table(pa.Table.from_pylist(grown_rows, schema=table.schema), ds / SHARD, row_group_size=64)
    manifest = json.loads((ds / "manifest.json").read_text())
    for rec in manifest["shards"]:
        if rec["path"] == SHARD:
            rec["sha256"] = sha256_file(ds / SHARD)
    (ds / "manifest.json").write_text(json.dumps(manifest))
    return ds


def peak_rss_kb(data, out) -> int:
    cmd = [
        sys.executable,
        str(ROOT / "evaluate.py"),
        "model=random",
        f"data={data}",
        f"out={out}",
        "task=[pitch_relative]",
        "eval=quick",
        "progress=false",
    ]
    res = subprocess.run([sys.executable, "-c", MAXRSS, *cmd], capture_output=True, text=True, timeout=400)
    assert res.returncode == 0, res.stderr
    return int(res.stdout.split()[-1])


@pytest.mark.slow  # two evaluate.py runs of 100 and 1,000 questions: ~80 s on a loaded 2-core machine
def test_ten_times_the_items_takes_less_than_1_3_times_the_peak_memory(tiny_dataset, tmp_path):
    small, big = grown(tiny_dataset, tmp_path / "small", 100), grown(tiny_dataset, tmp_path / "big", 1000)
    rss_small, rss_big = peak_rss_kb(small, tmp_path / "res_small"), peak_rss_kb(big, tmp_path / "res_big")
    asked = json.loads((tmp_path / "res_big" / "results.json").read_text())["accounting"]["overall"]["asked"]
    assert asked == 1000  # every item asked once (eval=quick)
    assert rss_big < 1.3 * rss_small, f"peak RSS {rss_small / 1024:.0f} MB -> {rss_big / 1024:.0f} MB"


def test_a_reply_longer_than_the_cap_is_stored_cut_and_counted(tiny_dataset, tmp_path):
    reply = "Let me think. " + "x" * 5000 + " The answer is B."  # the answer at the end survives the cut
    results = evaluate(
        tiny_dataset,
        tmp_path,
        "model=constant",
        f"model.reply='{reply}'",
        "eval.max_reply_chars=200",
        "task=[pitch_relative]",
    )
    n = results["accounting"]["overall"]["asked"]
    assert results["replies"] == {"truncated": n, "max_reply_chars": 200}
    lines = [json.loads(ln) for ln in (tmp_path / "replies.jsonl").read_text().splitlines()]
    assert len(lines) == n and all(len(e["reply"]) <= 200 + len("\n[...]\n") for e in lines)
    assert {e["reply_chars"] for e in lines} == {len(reply)}
    assert all(e["reply"].startswith("Let me think. xx") and e["reply"].endswith("The answer is B.") for e in lines)
    assert results["accounting"]["overall"]["unparseable"] == 0  # every stored reply still names an option
    uncapped = evaluate(
        tiny_dataset,
        tmp_path / "full",
        "model=constant",
        f"model.reply='{reply}'",
        "eval.max_reply_chars=null",
        "task=[pitch_relative]",
    )
    assert uncapped["replies"]["truncated"] == 0 and uncapped["scores"] == results["scores"]
