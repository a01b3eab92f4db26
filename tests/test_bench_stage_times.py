"""bench/stage_times.py: the named functions' time per item, and one line for a name that is not a function."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 300


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "stage_times.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def test_each_named_function_is_timed_once_per_item_and_inside_the_total():
    out = run("pitch_relative", "4", "auralgen.export.audio:encode_flac", "auralgen.generation.item:make_row")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    total = float(lines[0].split()[1])
    rows = {line.split()[-1]: (float(line.split()[0]), float(line.split()[2])) for line in lines[1:]}
    assert set(rows) == {"auralgen.export.audio:encode_flac", "auralgen.generation.item:make_row"}
    flac, row = rows["auralgen.export.audio:encode_flac"], rows["auralgen.generation.item:make_row"]
    assert flac[1] == 1.0 and row[1] == 1.0  # one clip per item, one row per item
    assert 0 < flac[0] < row[0] <= total  # nested: the clip's encoding is part of the row, the row of the total


def test_a_name_that_is_not_a_function_is_one_line_and_exit_2():
    out = run("pitch_relative", "2", "auralgen.export.audio:no_such_function")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "'auralgen.export.audio:no_such_function': not a function "
        "(module 'auralgen.export.audio' has no attribute 'no_such_function'); "
        "allowed: module:function or module:Class.method"
    ]
