"""The item schema (auralgen/core/schema.py) is the one source of the shard, card and evaluator columns."""

import dataclasses

import pytest

from auralgen.core.schema import Row, column, columns, eval_columns
from auralgen.evaluation import items
from auralgen.export.card import body
from auralgen.export.parquet import FEATURES, SCHEMA


def test_arrow_schema_and_features_follow_the_row_fields_in_order():
    names = [f.name for f in dataclasses.fields(Row)]
    assert SCHEMA.names == names == list(FEATURES)
    assert str(SCHEMA.field("level").type) == "int32" and str(SCHEMA.field("seed").type) == "int64"
    assert FEATURES["audio"] == {"feature": {"decode": False, "_type": "Audio"}, "_type": "List"}


def test_the_evaluator_reads_every_column_but_the_generation_record():
    assert items._COLUMNS == eval_columns()
    assert set(names := [c.name for c in columns()]) - set(eval_columns()) == {
        "measured",
        "valid",
        "seed",
        "generator_version",
    }
    assert len(names) == 23


def test_to_record_keeps_column_order_and_values():
    values = {c.name: i for i, c in enumerate(columns())}
    record = Row(**values).to_record()
    assert list(record) == SCHEMA.names and record["split"] == 21


def test_card_column_table_comes_from_the_schema():
    class Export:
        flac_bits, pretty_name = 16, "t"

    class Run:
        splits, seed, suite, export = ("test",), 0, "x", Export()

    text = body(Run(), {}, {})
    assert "| `sampling_rate` | Hz | sample rate of every clip of the row |" in text
    assert "FLAC bytes (16-bit)" in text
    assert text.count("\n| `") == len(columns())


def test_a_column_of_unknown_type_is_refused():
    with pytest.raises(ValueError, match="column type 'float32' is unknown; allowed: string"):
        column("float32", "x")
