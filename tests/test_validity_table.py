"""bench/validity_table.py: the README's per-task validity table equals the reports it is read from."""

import importlib.util
import json

import pytest

from auralgen.tasks.base import task_class
from auralgen.validation.audit import audit_dataset
from auralgen.validation.controls import CONTROLS, audit_controls
from auralgen.validation.report import AuditReport
from tests.support.builders import ROOT

SPEC = importlib.util.spec_from_file_location("validity_table", ROOT / "bench" / "validity_table.py")
validity_table = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(validity_table)

TINY = [
    "suite=tones",
    "tasks.audiogram.items_per_level=1",
    "tasks.audiogram.levels=[-10,40,110]",
    "tasks.audiogram.probe_freqs_hz=[]",
] + [
    f"tasks.{t}.items_per_level=2"
    for t in ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute")
]


def cells(table: str) -> dict[str, dict[str, str]]:
    """The markdown table as ``{task: {column: cell}}``."""
    lines = [ln.strip().strip("|").split("|") for ln in table.splitlines()]
    head = [h.strip() for h in lines[0]]
    return {row[0].strip(): dict(zip(head, (c.strip() for c in row), strict=True)) for row in lines[2:]}


def pct(v: float) -> str:
    return f"{100 * v:.1f}"


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    base = tmp_path_factory.mktemp("validity")
    test, train = base / "v0", base / "v1"
    printed = []
    table = validity_table.main(
        ["--results", str(base / "table.md"), str(test), str(train), "--", *TINY], log=printed.append
    )
    return test, train, table, printed


def test_the_results_file_holds_the_command_verdict_and_table(measured):
    test, train, table, printed = measured
    text = (test.parent / "table.md").read_text()
    assert text.startswith(
        f"Measured by `python bench/validity_table.py {test} {train} --results {test.parent / 'table.md'}` on "
    )
    assert text.rstrip().endswith(table.rstrip()) and "verdict **" in text


def test_the_table_equals_the_reports(measured):
    test, train, table, printed = measured
    controls = audit_controls(train, test)
    audit = audit_dataset(test)
    generation = json.loads((test / "validation_report.json").read_text())
    rows = cells(table)
    assert set(rows) == {t["task"] for t in controls.tasks} == {r["task"] for r in generation["levels"]}
    for t in controls.tasks:
        row = rows[t["task"]]
        assert row["n"] == str(t["n"])
        assert (row["stated chance"], row["honest chance"], row["MDE"]) == tuple(
            pct(t[k]) for k in ("stated_chance", "honest_chance", "mde")
        )
        assert row["controls"] == t["status"]
        for c in CONTROLS:
            r = t["controls"][c]
            short = validity_table.SHORT[c]
            assert row[f"{short} [95 % CI]"] == f"{pct(r['accuracy'])} [{pct(r['ci'][0])}, {pct(r['ci'][1])}]"
        levels = [r for r in generation["levels"] if r["task"] == t["task"]]
        kept = sum(r["passed"] for r in levels)
        redrawn, dropped = sum(r["resampled"] for r in levels), sum(r["dropped"] for r in levels)
        assert row["kept / re-drawn / dropped"].startswith(f"{kept} / {redrawn} / {dropped}")
        assert kept == t["n"]  # every kept item is in the tested dataset
        heard = sorted((r for r in audit.listener if r["task"] == t["task"]), key=lambda r: r["level_value"])
        easy = heard[0] if task_class(t["task"]).audit.listener_easiest == "min" else heard[-1]
        assert row["listener easiest"].startswith(f"{pct(easy['accuracy'])} at {easy['level_value']:g} ")
        zero = [r for r in heard if r["level_value"] == 0]
        assert row["listener zero"] == (f"{pct(zero[0]['accuracy'])} (n={zero[0]['n']})" if zero else "–")
        assert row["label confirmed"] == pct(1.0)  # the audit finds no label or measurement failure here
    assert rows["pitch_relative"]["listener zero"] != "–" and rows["duration_absolute"]["listener zero"] == "–"
    assert printed[-1] == table and f"out={test}" in printed[1] and f"--controls {train}" in printed[1]


def test_existing_generations_are_skipped(measured):
    test, train, table, _ = measured
    stamps = [(d / "manifest.json").stat().st_mtime_ns for d in (test, train)]
    assert validity_table.main([str(test), str(train), "--", *TINY], log=lambda *_: None) == table
    assert [(d / "manifest.json").stat().st_mtime_ns for d in (test, train)] == stamps


def test_confirmed_share_counts_label_and_measurement_failures_once_per_item():
    audit = AuditReport(
        "x",
        failures=[
            {"id": "a", "task": "t", "reasons": ["label", "measurement"]},
            {"id": "b", "task": "t", "reasons": ["measurement"]},
            {"id": "c", "task": "t", "reasons": ["clipped"]},
            {"id": "d", "task": "u", "reasons": ["label"]},
        ],
    )
    assert validity_table.confirmed_share("t", 10, audit) == pytest.approx(0.8)
    assert validity_table.confirmed_share("t", 0, audit) is None


def test_generation_counts_sum_levels_and_split_drop_reasons():
    report = {
        "levels": [
            {"task": "t", "passed": 5, "resampled": 2, "dropped": 1},
            {"task": "t", "passed": 4, "resampled": 0, "dropped": 0},
            {"task": "u", "passed": 3, "resampled": 1, "dropped": 0},
        ],
        "drop_reasons": {"t: measured 3 dB, label says 6 dB": 1},
        "redraw_reasons": {"t": {"level_db": 2}, "u": {"margin_percent": 1}},
    }
    counts = validity_table.generation_counts(report)
    assert counts["t"] == {
        "kept": 9,
        "redrawn": 2,
        "dropped": 1,
        "reasons": {"measured 3 dB, label says 6 dB": 1},
        "checks": {"level_db": 2},
    }
    assert counts["u"] == {"kept": 3, "redrawn": 1, "dropped": 0, "reasons": {}, "checks": {"margin_percent": 1}}
