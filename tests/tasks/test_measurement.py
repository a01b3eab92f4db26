"""Task.measure returns a Measurement whose dict/JSON is the `measured` column as before (check =
measure().to_dict())."""

import json

import numpy as np
import pytest

from auralgen.generation.item import worst_error
from auralgen.tasks.base import AudioConfig, Measurement, load_tasks

TONES = [
    "pitch_relative",
    "loudness_relative",
    "duration_relative",
    "duration_absolute",
    "audiogram",
    "temporal_reorder",
]


@pytest.mark.parametrize("name", TONES)
def test_measure_round_trips_to_the_measured_column(name):
    cls = load_tasks()[name]
    task = cls(cls.Config(name=name), AudioConfig())
    for level in range(min(task.design.n_levels(), 4)):
        params = task.sample(np.random.default_rng(level), level)
        clips = task.render(params)
        m = task.measure(params, clips)
        d = task.check(params, clips)
        heard = d.pop("audible", None)  # check() adds every clip's audibility to what measure() found
        assert heard is None or heard["ok"] is True
        assert isinstance(m, Measurement) and d == m.to_dict() and list(d) == list(m.to_dict())
        assert m.to_json() == json.dumps(d, sort_keys=True)
        assert m.valid is d["valid"] is True
        assert m.worst_error() == pytest.approx(worst_error(d))
        assert Measurement.from_dict(d).to_dict() == d


def test_from_dict_splits_checks_from_extra_and_keeps_the_key_order():
    rec = {"measured": 1.5, "expected": 1.0, "tolerance": 0.1, "ok": False}
    d = {"n": 3, "gap_s": rec, "valid": False, "note": "x"}
    m = Measurement.from_dict(d)
    assert dict(m.checks) == {"gap_s": rec} and dict(m.extra) == {"n": 3, "note": "x"} and m.valid is False
    assert list(m.to_dict()) == ["n", "gap_s", "valid", "note"] and m.worst_error() == 0.5
