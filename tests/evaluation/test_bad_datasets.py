"""A damaged dataset ends in one line naming the shard or the item (exit 2), before any model is asked."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auralgen.core.errors import ParameterError
from auralgen.evaluation.items import load_items
from auralgen.export.parquet import sha256_file

from .test_eval_cli import run_cli

SHARD = "data/pitch_relative/test-00000-of-00001.parquet"


@pytest.fixture
def dataset(tiny_dataset, tmp_path):
    """A private copy of the tiny dataset, to damage."""
    return shutil.copytree(tiny_dataset, tmp_path / "ds")


def rewrite(ds, change, *, fix_manifest=True):
    """Rewrite the pitch_relative shard's rows through ``change(rows, schema)``; re-hash it in the manifest."""
    table = pq.read_table(ds / SHARD)
    table = change(table.to_pylist(), table.schema)
    pq.write_table(table, ds / SHARD)
    if fix_manifest:
        manifest = json.loads((ds / "manifest.json").read_text())
        for rec in manifest["shards"]:
            if rec["path"] == SHARD:
                rec["sha256"] = sha256_file(ds / SHARD)
        (ds / "manifest.json").write_text(json.dumps(manifest))


def edit_row(**fields):
    def change(rows, schema):
        rows[1].update({k: (v(rows[1]) if callable(v) else v) for k, v in fields.items()})
        return pa.Table.from_pylist(rows, schema=schema)

    return change


def drop_column(name):
    def change(rows, schema):
        return pa.Table.from_pylist(rows, schema=schema).drop_columns([name])

    return change


def corrupt_flac(row):
    data = bytearray(row["audio"][0]["bytes"])
    data[len(data) // 2 : len(data) // 2 + 400] = bytes(400)  # zeroed frames in the middle
    return [{**row["audio"][0], "bytes": bytes(data[: len(data) * 3 // 4])}]


def truncate(ds):
    data = (ds / SHARD).read_bytes()
    (ds / SHARD).write_bytes(data[: len(data) // 2])


CASES = {
    "truncated shard": (truncate, f"shard '{SHARD}' in data="),
    "missing column": (lambda ds: rewrite(ds, drop_column("answer_index")), "lacks column(s) answer_index"),
    "corrupt flac": (lambda ds: rewrite(ds, edit_row(audio=corrupt_flac)), "audio[0] does not decode as FLAC"),
    "not flac": (
        lambda ds: rewrite(ds, edit_row(audio=lambda r: [{**r["audio"][0], "bytes": b"RIFF0000"}])),
        "audio[0] does not decode as FLAC",
    ),
    "answer_index out of range": (lambda ds: rewrite(ds, edit_row(answer_index=7)), "answer_index=7, out of range"),
    "answer not the indexed option": (lambda ds: rewrite(ds, edit_row(answer="Louder")), "answer='Louder' but options"),
    "duplicate options": (
        lambda ds: rewrite(ds, edit_row(options=["Higher", "Higher", "Lower", "Same"])),
        "allowed: 2 to 26 distinct options",
    ),
    "more options than letters": (
        lambda ds: rewrite(ds, edit_row(options=[f"Option {k}" for k in range(27)], answer="Option 0", answer_index=0)),
        "allowed: 2 to 26 distinct options (one letter each)",
    ),
    "unlisted shard": (
        lambda ds: shutil.copy(ds / SHARD, ds / SHARD.replace("00000-of", "00009-of")),
        "is not listed in manifest.json",
    ),
    "edited without re-hashing": (
        lambda ds: rewrite(ds, edit_row(answer_index=0), fix_manifest=False),
        "(truncated or modified)",
    ),
    "no manifest": (lambda ds: (ds / "manifest.json").unlink(), "holds no manifest.json"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_damaged_dataset_is_one_error_naming_shard_or_item(dataset, case):
    damage, needle = CASES[case]
    damage(dataset)
    with pytest.raises(ParameterError) as err:
        load_items(dataset)
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("case", ["truncated shard", "corrupt flac", "answer_index out of range", "missing column"])
def test_damaged_dataset_cli_exit_2_even_for_the_random_model(dataset, tmp_path, case):
    damage, needle = CASES[case]
    damage(dataset)
    res = run_cli("model=random", f"data={dataset}", "out=res", "progress=false", cwd=tmp_path)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert needle in lines[0] and SHARD in lines[0]
    assert not (tmp_path / "res" / "results.json").exists()


def test_item_errors_name_the_item_id(dataset):
    rows = pq.read_table(dataset / SHARD).to_pylist()
    rewrite(dataset, edit_row(answer_index=-1))
    with pytest.raises(ParameterError, match=rf"item id='{rows[1]['id']}' \(shard '{SHARD}' row 1\)"):
        load_items(dataset)
