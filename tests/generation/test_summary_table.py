"""The console summary names its speed columns for what they measure: per task the wall time its items
took summed over the workers (``worker time``), and the run's own wall time on the last line."""

from __future__ import annotations

from auralgen.generation.summary import summary_table


def _report(items: dict[str, int]) -> dict:
    levels = [
        {
            "task": t,
            "split": "test",
            "level_value": 0.0,
            "level_unit": "cents",
            "items": n,
            "passed": n,
            "resampled": 0,
            "dropped": 0,
            "worst_error": 0.0,
        }
        for t, n in items.items()
    ]
    total = sum(items.values())
    return {"levels": levels, "totals": {"items": total, "written": total, "resampled": 0, "dropped": 0}}


def test_per_task_line_gives_worker_time_and_the_last_line_the_runs_wall_time():
    # two workers: 120 items took 8.4 s of worker time in a 4.5 s run
    text = summary_table(_report({"pitch_relative": 120, "audiogram": 30}), {"pitch_relative": 8.4}, 4.5, 150)
    lines = text.splitlines()
    assert lines[-3] == "pitch_relative          120 items   worker time    8.40 s       14.3 items/s per worker"
    assert lines[-2] == "audiogram                30 items   worker time    0.00 s   (resumed)"
    assert lines[-1] == "total: 150 items, 150 written, 0 re-sampled, 0 dropped; 150 rendered in 4.5 s (33.3 items/s)"
    assert "cpu" not in text
