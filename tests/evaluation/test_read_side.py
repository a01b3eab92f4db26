"""One read side: the evaluator's item and the audit's rows take their columns from the item schema
(auralgen/core/schema.py), and every reader of shard rows goes through its one ``iter_items``."""

import ast
import dataclasses
import inspect
from pathlib import Path

import auralgen
from auralgen.core.schema import ShardRow, columns, eval_columns, iter_items
from auralgen.evaluation.items import Item, iter_checked, load_items, verify_shards
from auralgen.validation.read import iter_decoded

PACKAGE = Path(auralgen.__file__).parent
# readers of parquet that are not rows of the item schema being read for use
OTHER_PARQUET = {
    "core/schema.py": "the one reader",
    "export/public.py": "the write side: re-sorts a shard's public columns into the public export",
    "export/card.py": "reads shard metadata (row counts), not rows",
    "sounds/corpus_files.py": "reads a user's Hugging Face sound corpus, not an item shard",
}


def test_the_evaluators_item_is_the_schemas_eval_columns():
    assert tuple(f.name for f in dataclasses.fields(Item)) == eval_columns()


def _literal_column_lists(source: str) -> list[int]:
    names = {c.name for c in columns()}
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            strings = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(set(strings) & names) >= 4:
                out.append(node.lineno)
    return out


def test_no_hand_copied_column_list_and_one_reader_of_shard_rows():
    assert _literal_column_lists('COLS = ("id", "task", "question", "options")') == [1]
    copies, readers = {}, []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        if rel != "core/schema.py" and rel.startswith(("evaluation/", "validation/")) and _literal_column_lists(source):
            copies[rel] = _literal_column_lists(source)
        if any(call in source for call in ("ParquetFile(", "iter_batches(", "read_table(")):
            readers.append(rel)
    assert copies == {}
    assert sorted(readers) == sorted(OTHER_PARQUET)


def test_evaluation_audit_and_export_read_the_same_rows(tiny_dataset):
    shards = verify_shards(tiny_dataset, "test", sorted({p.parent.name for p in Path(tiny_dataset).glob("data/*/*")}))
    rows = iter_items(tiny_dataset, shards, batch_rows=3)
    assert inspect.isgenerator(rows)  # streamed, batch by batch
    first = next(rows)
    assert isinstance(first, ShardRow) and first.index == 0 and list(first.record) == [c.name for c in columns()]
    items = load_items(tiny_dataset)
    streamed = iter_checked(tiny_dataset, shards)
    assert inspect.isgenerator(streamed) and [it.id for it in streamed] == [it.id for it in items]
    audit = list(iter_decoded(tiny_dataset))
    assert [d.row["id"] for d in audit] == [it.id for it in items]
    assert set(audit[0].row) == {c.name for c in columns()} - {"audio"}
    for d, it in zip(audit, items, strict=True):
        assert d.row["options"] == list(it.options) and d.row["sampling_rate"] == it.sampling_rate
        assert d.flac_bytes == sum(len(c) for c in it.clips)
