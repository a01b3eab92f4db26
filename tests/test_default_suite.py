"""The default suite (what `make dataset` builds) generates, validates and audits clean."""

import json

import pytest

from auralgen.generation.run import run
from auralgen.validation.audit import audit_dataset
from tests.support.builders import small_run


@pytest.mark.slow
def test_default_suite_generates_and_audits_clean(tmp_path):
    manifest = run(small_run(out=tmp_path / "ds", workers=2), log=lambda *_: None)
    assert manifest["items"]["dropped"] == 0
    from auralgen.config import build_tasks

    assert {s["task"] for s in manifest["shards"]} == set(build_tasks(small_run(out=tmp_path / "ds")))  # all 29
    report = audit_dataset(tmp_path / "ds")
    assert report.ok, report.table()
    assert report.items == manifest["items"]["written"]
    assert json.loads((tmp_path / "ds" / "validation_report.json").read_text())["totals"]["dropped"] == 0
