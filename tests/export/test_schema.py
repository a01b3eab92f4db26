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


def test_bad_arguments_end_in_one_line_naming_what_is_allowed():
    """An unknown column, a FLAC bit depth soundfile does not write, a frame of no length."""
    import numpy as np

    from auralgen.core.errors import AuralgenError
    from auralgen.core.schema import python_type
    from auralgen.export.audio import encode_flac
    from auralgen.measure.level import loudest_frame_db

    assert python_type("answer_index") is int
    with pytest.raises(AuralgenError, match=r"column 'nope' is not in the item schema; allowed: \['id'"):
        python_type("nope")
    clip = np.zeros((1, 160), dtype=np.float32)
    with pytest.raises(AuralgenError, match=r"bits=20 is not a FLAC bit depth here; allowed: \[16, 24\]"):
        encode_flac(clip, 16000, bits=20)
    with pytest.raises(AuralgenError, match=r"frame_s=0 is invalid; allowed: a duration > 0 s"):
        loudest_frame_db(clip, 16000, frame_s=0)
