"""Re-draws are counted by the check that failed, in validation_report.json and in the card."""

from __future__ import annotations

import json

from auralgen import generation
from auralgen.export.card import validation_lines
from auralgen.generation.summary import summarise
from auralgen.tasks.base import Task
from tests.support.builders import small_run


def _stat(task, resampled, redraws, dropped=None):
    return {
        "task": task,
        "split": "test",
        "level": 0,
        "level_value": 1.0,
        "resampled": resampled,
        "redraws": redraws,
        "dropped": dropped,
        "worst_error": 0.0,
    }


def test_summary_and_card_count_redraws_by_failed_check():
    records = [
        {
            "items": [
                _stat("t", 2, {"level_db": 2}),
                _stat("t", 1, {"level_db": 1, "onset_s": 1}),
                _stat("t", 8, {"onset_s": 8}, dropped="label not supported by measurement: {...}"),
            ]
        }
    ]
    report = summarise(records, {})
    assert report["redraw_reasons"] == {"t": {"level_db": 3, "onset_s": 9}}
    assert report["totals"]["resampled"] == 11 and report["totals"]["dropped"] == 1
    row = [line for line in validation_lines(report) if line.startswith("| t |")]
    assert row == ["| t | 2 | 11 (level_db 3, onset_s 9) | 1 (label not supported by measurement 1) |"]


def test_a_run_records_the_failed_checks_of_its_redraws(tmp_path, monkeypatch):
    """Every third measurement is made to fail on its 'pitch' check: the report names it as often."""
    calls = {"n": 0}
    real = Task.check

    def failing(self, params, clips):
        out = real(self, params, clips)
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            return {**out, "pitch": {"ok": False}, "valid": False}
        return out

    monkeypatch.setattr(Task, "check", failing)
    generation.run(small_run("task=pitch_relative", "task.items_per_level=3", out=tmp_path / "d"), log=lambda *_: None)
    report = json.loads((tmp_path / "d" / "validation_report.json").read_text())
    redrawn = report["totals"]["resampled"]
    assert redrawn > 0 and report["redraw_reasons"] == {"pitch_relative": {"pitch": redrawn}}
    assert (
        f"| pitch_relative | {report['totals']['written']} | {redrawn} (pitch {redrawn}) | 0 |"
        in (tmp_path / "d" / "README.md").read_text()
    )


def test_a_draw_whose_room_gain_clips_is_drawn_again_not_a_failed_run():
    """Click trains (crest factor ~30 dB) at the loudest level a spatial task allows clip in most draws: each
    such draw is counted as a 'headroom' re-draw and the item is drawn again (or dropped with the reason),
    instead of the render error that ended the whole run."""
    from auralgen.config import build_tasks
    from auralgen.generation.item import make_row
    from auralgen.generation.plan import ItemSpec

    run = small_run("task=azimuth_absolute", "task.level_db_spl=87.9", "task.sources=[clicks]", "max_resample=3")
    task = build_tasks(run)["azimuth_absolute"]
    res = make_row(task, ItemSpec("azimuth_absolute", "test", 0, 0), seed=0, max_resample=3)
    assert res.stat["redraws"].get("headroom", 0) >= 1
    if res.row is None:
        assert res.stat["dropped"].startswith('label not supported by measurement: {"headroom": {"ok": false, "why": ')
        assert "clips (peak" in res.stat["dropped"] and res.stat["resampled"] == 3
    else:
        assert res.stat["resampled"] == res.stat["redraws"]["headroom"]
