"""The public export: shards with only what a model may see, and a card naming the rest."""

import glob

import pyarrow.parquet as pq

from auralgen import generation
from auralgen.core.schema import public_columns
from tests.support.builders import read_rows, small_run

ANSWER_BEARING = {"answer", "answer_index", "params", "measured", "level", "level_value", "level_unit", "valid", "seed"}


def test_public_shards_hold_no_answer_bearing_column_and_the_card_says_so(tmp_path):
    run = small_run(
        "task=pitch_relative", "task.levels=[0,100]", "task.items_per_level=3", "export.public=true", out=tmp_path / "d"
    )
    manifest = generation.run(run, log=lambda *_: None)
    shards = sorted(glob.glob(f"{tmp_path}/d/public/data/*/*.parquet"))
    assert len(shards) == 1 and [r["path"] for r in manifest["public"]] == [
        "public/data/pitch_relative/test-00000-of-00001.parquet"
    ]
    table = pq.read_table(shards[0])
    assert table.column_names == list(public_columns())
    assert not ANSWER_BEARING & set(table.column_names)
    full = {r["id"]: r for r in read_rows(tmp_path / "d")}
    public = table.to_pylist()
    assert [r["id"] for r in public] == sorted(full)  # id order, not plan (level) order
    assert all(r["audio"] == full[r["id"]]["audio"] and r["options"] == full[r["id"]]["options"] for r in public)
    card = (tmp_path / "d" / "public" / "README.md").read_text()
    never = card.split("## Columns that must never reach a model")[1]
    assert all(f"`{c}`" in never for c in ANSWER_BEARING)
    assert "`question`" not in never


def test_the_public_flag_changes_no_id_and_no_full_shard(tmp_path):
    args = ("task=pitch_relative", "task.levels=[0,100]", "task.items_per_level=2")
    a = generation.run(small_run(*args, out=tmp_path / "a"), log=lambda *_: None)
    b = generation.run(small_run(*args, "export.public=true", out=tmp_path / "b"), log=lambda *_: None)
    assert a["fingerprint"] == b["fingerprint"] and a["shards"] == b["shards"]
    assert "public" not in a and len(b["public"]) == 1
