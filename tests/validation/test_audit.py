"""Dataset audits: a clean suite audits clean; each deliberate corruption is caught with its reason."""

import ast
import dataclasses
import io
import json
import shutil
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from auralgen.cli.audit import main
from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.export.audio import encode_flac
from auralgen.generation.run import run
from auralgen.tasks.base import DatasetCheck, task_class, task_names
from auralgen.validation.audit import audit_dataset, tasks_for
from auralgen.validation.checks import leaks
from auralgen.validation.shortcuts import cv_accuracy, shortcut_audit
from tests.support.builders import ROOT, decode, small_run

QUIET = lambda *_: None  # noqa: E731
OVERRIDES = [
    "suite=tones",
    "tasks.pitch_relative.items_per_level=4",
    *[f"tasks.{t}.items_per_level=2" for t in ("loudness_relative", "duration_relative", "duration_absolute")],
    "tasks.audiogram.items_per_level=2",
    "tasks.audiogram.levels=[-10,110]",
    "tasks.audiogram.probe_items_per_level=0",
]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean")
    run(small_run(*OVERRIDES, out=out, workers=1, shard_size=8), log=QUIET)
    return out, audit_dataset(out)


def rewrite(out, task, edit, *, every_shard=False):
    """Apply ``edit(rows) -> rows`` to the first (or every) shard of ``task`` (schema and its metadata kept)."""
    paths = sorted((out / "data" / task).glob("*.parquet"))
    for path in paths if every_shard else paths[:1]:
        table = pq.read_table(path)
        rows = edit(table.to_pylist())
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def flac(x, sr):
    buf = io.BytesIO()
    sf.write(buf, np.asarray(x).T, sr, format="FLAC", subtype="PCM_24")  # float beyond +-1 is clipped by libsndfile
    return buf.getvalue()


@pytest.fixture(scope="module")
def corrupted(clean, tmp_path_factory):
    src, _ = clean
    out = tmp_path_factory.mktemp("corrupt") / "ds"
    shutil.copytree(src, out)
    tasks = build_tasks(small_run(*OVERRIDES))
    ids = {}

    def wrong_label(rows):
        r = next(r for r in rows if r["level"] > 0)
        r["answer_index"] = next(i for i, o in enumerate(r["options"][:-1]) if o != r["answer"])
        r["answer"] = r["options"][r["answer_index"]]
        ids["label"] = r["id"]
        r2 = next(r for r in rows if r["id"] != ids["label"])
        x, sr = decode(r2["audio"][0])
        r2["audio"] = [{**r2["audio"][0], "bytes": flac(np.clip(x * 1e4, -1.0, 1.0), sr)}]
        ids["clipped"] = r2["id"]
        return rows

    def silent_and_dup_params(rows):
        rows[0]["audio"] = [
            {**rows[0]["audio"][0], "bytes": flac(np.zeros_like(decode(rows[0]["audio"][0])[0]), 16000)}
        ]
        ids["silent"] = rows[0]["id"]
        return rows

    def leak_and_dup_audio(rows):
        rows[0]["id"] = f"{rows[0]['id']}-{rows[0]['answer'].replace(' ', '_')}"
        ids["leak"] = rows[0]["id"]
        rows[2]["audio"] = rows[1]["audio"]
        ids["duplicate_audio"] = rows[2]["id"]
        return rows

    def louder_is_higher(rows):  # the higher tone is always 10 dB louder: a loudness cue to the pitch answer
        for r in rows:
            p = json.loads(r["params"])
            a, b = p["sounds"]
            a["level_db_spl"] = b["level_db_spl"] = 62.0
            if p["direction"] != "same":
                (b if p["direction"] == "up" else a)["level_db_spl"] = 72.0
            r["params"] = json.dumps(p, sort_keys=True)
            r["audio"] = [{**r["audio"][0], "bytes": encode_flac(tasks["pitch_relative"].render(p)[0], 16000)}]
        return rows

    rewrite(out, "loudness_relative", wrong_label)
    rewrite(out, "duration_relative", silent_and_dup_params)
    rewrite(out, "duration_absolute", leak_and_dup_audio)
    rewrite(out, "pitch_relative", louder_is_higher, every_shard=True)
    # the same parameter tuple in a second split
    first = sorted((out / "data" / "duration_relative").glob("*.parquet"))[0]
    table = pq.read_table(first)
    row = {**table.to_pylist()[1], "split": "train", "id": "f" * 20}
    pq.write_table(pa.Table.from_pylist([row], schema=table.schema), first.with_name("train-00000-of-00001.parquet"))
    ids["duplicate_params"] = row["id"]
    return out, ids, audit_dataset(out)


def test_clean_suite_audits_clean(clean):
    out, report = clean
    assert report.ok, report.table()
    assert report.items == sum(s["rows"] for s in json.loads((out / "manifest.json").read_text())["shards"])
    assert report.notes == []  # tasks rebuilt from the manifest, fingerprint matches
    assert set(report.balance) == {
        "audiogram",
        "pitch_relative",
        "loudness_relative",
        "duration_relative",
        "duration_absolute",
    }
    assert report.balance["pitch_relative"]["positions"] == [10, 10, 10]  # 30 items: 10 at level 0 ("The same"), 4 x 5
    assert "sounds.0.freq_hz" in report.shortcuts["pitch_relative"]["excluded"]
    features = {r["feature"] for r in report.shortcuts["pitch_relative"]["features"]}
    assert {"sounds.0.level_db_spl", "delta.level_db_spl", "audio.rms_dbfs"} <= features
    assert "row.flac_bytes" not in features  # every file of a task has one size: nothing to test


@pytest.mark.parametrize("what", ["label", "clipped", "silent", "leak", "duplicate_audio", "duplicate_params"])
def test_corruption_is_caught_with_its_reason(corrupted, what):
    _, ids, report = corrupted
    assert what in report.reasons_of(ids[what]), report.table()


def test_wrong_label_is_a_label_failure_not_a_measurement_failure(corrupted):
    _, ids, report = corrupted
    assert report.reasons_of(ids["label"]) == {"label"}


def test_only_corrupted_items_fail(corrupted):
    _, ids, report = corrupted
    assert {f["id"] for f in report.failures} == set(ids.values()), [
        f for f in report.failures if f["id"] not in ids.values()
    ]


def test_loudness_cue_to_the_pitch_answer_is_flagged(corrupted):
    _, _, report = corrupted
    flagged = {
        f["detail"].split()[0] for f in report.flags if f["audit"] == "shortcut" and f["task"] == "pitch_relative"
    }
    assert {"delta.level_db_spl", "audio.delta_level_db"} <= flagged
    assert not [f for f in report.flags if f["audit"] == "shortcut" and f["task"] != "pitch_relative"]


def test_report_is_json_able(corrupted):
    _, _, report = corrupted
    back = json.loads(json.dumps(report.to_dict()))
    assert back["ok"] is False and back["items"] == report.items


def test_canonical_names_leak_nothing_and_a_level_in_a_path_does():
    row = {
        "id": "0a2a1d6ecd06eab85978",
        "task": "audiogram",
        "split": "test",
        "answer": "In the first half",
        "level_value": 40.0,
    }
    params = {"freq_hz": 1000.0, "level_value": 40.0, "position": "first"}
    shard = "data/audiogram/test-00000-of-00003.parquet"
    assert leaks(row, [f"{row['id']}-0.flac"], shard, params) == []
    assert leaks(row, ["tone_1000hz.flac"], shard, params) == ["freq_hz=1000.0"]
    assert leaks(row, [f"{row['id']}-0.flac"], "data/audiogram/test-first-00000-of-00003.parquet", params) == [
        "position='first'"
    ]


def test_cv_accuracy_separates_a_cue_from_noise():
    rng = np.random.default_rng(1)
    y = rng.integers(3, size=120)
    assert cv_accuracy([float(v) + rng.normal(0, 0.1) for v in y], y) == 1.0
    assert cv_accuracy([float(v) for v in rng.normal(size=120)], y) < 0.5
    assert cv_accuracy([["a", "b", "c"][v] for v in y], y) == 1.0


def test_shortcut_audit_skips_unknown_tasks_and_small_samples():
    assert "'room_size' is not a task" in shortcut_audit("room_size", [{}] * 50, ["a"] * 50)["error"]
    assert "items" in shortcut_audit("pitch_relative", [{}] * 5, ["a"] * 5)["skipped"]


def test_not_a_dataset_raises(tmp_path):
    with pytest.raises(ParameterError, match="no data/<task>/"):
        audit_dataset(tmp_path)


def test_cli_exit_codes(clean, corrupted, tmp_path, capsys):
    assert main([str(clean[0])]) == 0
    assert "reference listener" in capsys.readouterr().out
    assert main([str(corrupted[0]), "--json", str(tmp_path / "r.json"), "--no-listener"]) == 1
    assert json.loads((tmp_path / "r.json").read_text())["ok"] is False
    assert main([str(tmp_path)]) == 2
    res = subprocess.run(
        [sys.executable, "-m", "auralgen.validation", str(tmp_path / "nope")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().count("\n") == 0 and res.stderr.startswith("error: dataset=")


class _LowLevels(DatasetCheck):
    """A throw-away dataset check: counts items and flags every item whose first sound is below 60 dB SPL."""

    name = "low_levels"

    def __init__(self):
        self.n, self.low = 0, 0

    def observe(self, params):
        self.n += 1
        self.low += int(params["sounds"][0]["level_db_spl"] < 60.0)

    def finish(self):
        return {"n": self.n, "low": self.low}, [f"{self.low} of {self.n} items start below 60 dB"] if self.low else []


def test_a_tasks_dataset_checks_see_its_items_and_flag(clean, monkeypatch):
    out, before = clean
    cls = task_class("loudness_relative")
    monkeypatch.setattr(cls, "audit", dataclasses.replace(cls.audit, dataset_checks=(_LowLevels,)))
    report = audit_dataset(out, listen=False)
    n = before.balance["loudness_relative"]["positions"]
    entry = report.shortcuts["low_levels"]
    assert entry["n"] == sum(n) and 0 < entry["low"] < entry["n"]
    assert [f for f in report.flags if f["detail"].endswith("start below 60 dB")] == [
        {
            "audit": "shortcut",
            "task": "loudness_relative",
            "detail": f"{entry['low']} of {entry['n']} items start below 60 dB",
        }
    ]
    assert not report.ok and report.failures == [] and list(report.shortcuts)[0] == "low_levels"


def test_tasks_are_rebuilt_from_the_manifest_and_a_changed_record_is_noted(clean, tmp_path):
    out, _ = clean
    manifest = json.loads((out / "manifest.json").read_text())
    tasks, notes = tasks_for(out)
    assert notes == [] and tasks["audiogram"].cfg.levels == (-10, 110)
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "config": {**manifest["config"], "seed": 1}}))
    tasks, notes = tasks_for(tmp_path)
    assert notes == ["manifest fingerprint differs from the rebuilt config"] and tasks["audiogram"].cfg.levels == (
        -10,
        110,
    )
    (tmp_path / "manifest.json").write_text("{}")
    tasks, notes = tasks_for(tmp_path)
    assert notes == ["manifest config not usable ('config'): tasks built from their default configs"]
    assert sorted(tasks) == sorted(task_names())


def test_the_audit_names_no_task():
    """The audit modules read what they know of a task from the task (AuditSpec), never by its name."""
    names = set(task_names())
    found = {}
    for mod in ("audit", "checks", "read", "report", "balance", "shortcuts", "__main__"):
        path = ROOT / "auralgen" / "validation" / f"{mod}.py"
        hits = {n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)} & names
        if hits:
            found[mod] = sorted(hits)
    assert found == {}
