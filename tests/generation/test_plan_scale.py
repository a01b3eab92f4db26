"""A million-item run is cheap to plan and to keep track of: the plan is lazy, the journal keeps a
few records per shard (not one per item) and encodes each once (bench/bench_scale.py prints the
1,000,000-item figures)."""

import importlib.util
import json
from pathlib import Path

import pytest

from auralgen.export.manifest import JournalText

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "bench_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(journal):
    return json.dumps(journal, indent=2, sort_keys=True, default=list) + "\n"


def test_the_journal_text_is_write_jsons_and_a_changed_record_is_encoded_again():
    text = JournalText()
    journal = {"fingerprint": "f", "files": ["a", "b"], "seed_salt": "s", "shards": {}}
    assert text(journal) == reference(journal)
    journal["shards"]["data/t/test-00001.parquet"] = {
        "rows": 2,
        "levels": [{"drop_reasons": {"x\n'\"": 1}, "redraws": {}}],
    }
    journal["shards"]["data/t/test-00000.parquet"] = {"rows": 3, "levels": []}
    assert text(journal) == reference(journal)
    journal["shards"]["data/t/test-00000.parquet"] = {"rows": 4, "levels": []}  # a shard written again
    assert text(journal) == reference(journal) and '"rows": 4' in text(journal)


def test_the_journal_grows_with_shards_not_items(tmp_path):
    f = _bench().plan_figures(20_000, shard_size=1000, out=str(tmp_path / "a"))
    assert f["items"] == f["report_items"] == 20_003 and f["shards"] == 21  # the fewest items >= 20,000 the grid allows
    assert f["journal_mb"] < 0.03  # 21 records of one level each; per-item records were ~4 MB


@pytest.mark.slow
def test_a_200k_item_plan_its_journal_and_manifest_take_under_a_minute(tmp_path):
    f = _bench().plan_figures(200_000, out=str(tmp_path / "out"))
    assert f["items"] >= 200_000 and f["shards"] == -(-f["items"] // 1000)
    assert f["plan_s"] < 60 and f["journal_s"] + f["manifest_s"] < 60 and f["specs_s"] < 120
