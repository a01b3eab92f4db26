"""bench/audio_column.py: the validity table gains the audio-nuisance column from the large-n runs."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import audio_column  # noqa: E402

VALIDITY = """Recorded by `x`.

| task | n | pos [95 % CI] | audio [95 % CI] | MDE |
|---|---|---|---|---|
| a_task | 200 | 33.5 [27.3, 40.3] | 31.0 [25.0, 37.7] | 12.7 |
| b_task | 201 | 25.4 [19.9, 31.8] | 24.9 [19.4, 31.3] | 12.1 |
| c_task | 90 | 50.0 [40.0, 60.0] | 52.2 [42.0, 62.2] | 20.0 |
"""


def nuisance(rows: list[tuple[str, str, str, str, str]]) -> str:
    head = (
        "| task | n | honest chance | audio [95 % CI] | excess (pp) | MDE | verdict | declared cue |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    return (
        "Measured by `cmd`.\n\n"
        + head
        + "".join(f"| {t} | {n} | {h} | {a} | +0.0 | 6.9 | {v} | – |\n" for t, n, h, a, v in rows)
    )


def test_the_column_is_joined_per_task_and_a_later_run_given_first_wins(tmp_path):
    (tmp_path / "v.md").write_text(VALIDITY)
    (tmp_path / "new.md").write_text(nuisance([("a_task", "500", "33.4", "33.0 [29.0, 37.2]", "clean")]))
    (tmp_path / "old.md").write_text(
        nuisance(
            [
                ("a_task", "500", "33.4", "60.6 [56.3, 64.8]", "FLAG"),
                ("b_task", "1005", "25.0", "26.1 [23.5, 28.9]", "clean"),
            ]
        )
    )
    text = audio_column.main(
        [str(tmp_path / "v.md"), str(tmp_path / "new.md"), str(tmp_path / "old.md"), "--out", str(tmp_path / "o.md")]
    )
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    # the large-n cell goes after the position prior; the table's own audio cell follows it, renamed
    assert rows[0].split(" | ")[3:5] == [audio_column.AUDIO_HEADER, "audio at this n [95 % CI]"]
    assert rows[1] == (
        "| a_task | 200 | 33.5 [27.3, 40.3] | 33.0 [29.0, 37.2] / 33.4 (n=500, clean) | 31.0 [25.0, 37.7] | 12.7 |"
    )
    assert rows[2] == (
        "| b_task | 201 | 25.4 [19.9, 31.8] | 26.1 [23.5, 28.9] / 25.0 (n=1005, clean) | 24.9 [19.4, 31.3] | 12.1 |"
    )
    assert rows[3] == "| c_task | 90 | 50.0 [40.0, 60.0] | not run | 52.2 [42.0, 62.2] | 20.0 |"
    assert "Measured by `cmd`." in text and (tmp_path / "o.md").read_text() == text


def test_the_docs_table_equals_what_the_script_writes_from_the_results_files(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = ROOT / "bench/results/validity_table_audio.md"
    header = out.read_text(encoding="utf-8")
    sources = [line.split("`")[1] for line in header.splitlines() if line.startswith("- `bench/results/nuisance_table")]
    assert sources, "the joined table names its nuisance results files"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        again = audio_column.main(["bench/results/validity_table.md", *sources, "--out", f"{tmp}/o.md"])
    assert again == header
