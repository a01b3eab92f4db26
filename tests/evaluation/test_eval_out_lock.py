"""Two evaluate.py runs into one out: the second is refused at once in one line (exit 2), before it writes
or removes anything, and the first completes with its own WAVs (without the lock the loser died with a
FileNotFoundError and the winner's cleanup removed the other's audio)."""

import json
import subprocess
import sys
import time

from auralgen.export.manifest import out_lock
from tests.support.builders import ROOT

REFUSED = "is being written by another auralgen run; allowed: one run per out directory"
# a model answering "A" after 1 s per question: the first run is still asking when the second starts
SLOW_MODEL = (
    "import json,sys,time\n"
    "for line in sys.stdin:\n"
    "    time.sleep(1.0); print(json.dumps({'id': json.loads(line)['id'], 'reply': 'A'}), flush=True)\n"
)


def evaluate(*args, cwd, wait=True):
    cmd = [sys.executable, str(ROOT / "evaluate.py"), *args, "eval.n_boot=0", "progress=false"]
    if not wait:
        return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


def test_a_second_evaluate_into_an_out_being_written_is_refused_in_one_line(tiny_dataset, tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    (out / "keep.txt").write_text("another run's file")
    with out_lock(str(out)):  # what a running generate.py or evaluate.py holds
        res = evaluate("model=random", f"data={tiny_dataset}", f"out={out}", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and REFUSED in lines[0], res.stderr
    assert files(out) == ["keep.txt"]
    for action in ("action=rescore", "action=leaderboard"):  # the actions that read an earlier out lock it too
        with out_lock(str(out)):
            res = evaluate(action, f"data={tiny_dataset}", f"out={out}", cwd=tmp_path)
        assert res.returncode == 2 and REFUSED in res.stderr, res.stderr


def test_two_concurrent_evaluate_runs_the_first_completes_the_second_is_refused(tiny_dataset, tmp_path):
    script = tmp_path / "slow_model.py"
    script.write_text(SLOW_MODEL)
    out = tmp_path / "res"
    common = [
        f"data={tiny_dataset}",
        f"out={out}",
        "task=[pitch_relative]",
        "eval.keep_audio=true",
        "model=command",
        f"model.cmd='{sys.executable} {script}'",
    ]
    first = evaluate(*common, cwd=tmp_path, wait=False)
    try:
        t0 = time.monotonic()
        while not (out / "replies.jsonl").exists():  # the first run is asking
            assert first.poll() is None, first.communicate()[1]
            assert time.monotonic() - t0 < 60, "the first run never asked"
            time.sleep(0.05)
        before = files(out / "audio")
        second = evaluate(*common, cwd=tmp_path)  # the same command: only the lock can refuse it
        assert first.poll() is None, "the first run ended before the second started: nothing was concurrent"
        assert second.returncode == 2, second.stderr
        assert [ln for ln in second.stderr.splitlines() if ln.strip()] == [second.stderr.strip()]
        assert REFUSED in second.stderr and "Traceback" not in second.stderr
        assert before and set(before) <= set(files(out / "audio"))  # nothing of the first run's removed
        _, stderr = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, stderr
    run = json.loads((out / "run.json").read_text())
    assert run["model"]["kind"] == "command"  # the out holds the first run, not a mix
    assert set(before) <= set(files(out / "audio"))
