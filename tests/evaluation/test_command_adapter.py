"""The command adapter's framed protocol: a reply is tied to its request by id; nothing shifts."""

import json
import sys
import textwrap
import threading

import pytest

from auralgen.evaluation.adapters import FatalModelError, ModelError, build_adapter
from auralgen.evaluation.adapters.command import Reply, frame_reply
from auralgen.evaluation.items import load_items

from .test_adapters import _msg
from .test_harness import evaluate


@pytest.mark.parametrize(
    "line,framed",
    [
        ('{"id": 3, "reply": "B"}\n', Reply("3", "B", None)),
        ('{"id": "r7", "reply": "The answer is (C)"}', Reply("r7", "The answer is (C)", None)),
        ('{"id": 2, "error": "out of memory"}', Reply("2", None, "the model declined: out of memory")),
        ("loading weights...\n", None),
        ('"B"\n', None),  # a bare JSON string carries no id
        ('{"reply": "A"}\n', None),  # nor does an object without "id"
        ('{"id": 4,\n', None),  # the first line of a reply split over two lines
        ("42\n", None),
        ('{"id": null, "reply": "A"}', None),
    ],
)
def test_frame_reply(line, framed):
    assert frame_reply(line) == framed


def test_reply_with_id_but_no_text_is_an_item_error():
    framed = frame_reply('{"id": 5, "answer": "A"}')
    assert framed.id == "5" and framed.text is None and 'has no string "reply"' in framed.error


ECHO = """import sys, json
print("loading weights...", flush=True)
for line in sys.stdin:
    m = json.loads(line)
    print(json.dumps({"id": m["id"], "reply": m["meta"]["unique_id"]}), flush=True)
"""
SLEEPY = "import sys, time\nfor line in sys.stdin:\n    time.sleep(5)\n"


def _script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return f"{sys.executable} {path}"


def test_round_trip_ignores_a_log_line(tmp_path):
    adapter = build_adapter({"kind": "command", "cmd": _script(tmp_path, "echo.py", ECHO)}, logdir=tmp_path)
    assert [adapter(_msg([], uid=f"i{n}@1")) for n in range(3)] == ["i0@1", "i1@1", "i2@1"]
    adapter.close()
    assert adapter.protocol_report()["ignored_stdout_lines"] == 1
    assert "loading weights..." in (tmp_path / "command_stdout.log").read_text()


def test_a_silent_program_is_restarted_at_the_deadline(tmp_path):
    slow = build_adapter({"kind": "command", "cmd": _script(tmp_path, "s.py", SLEEPY), "timeout_s": 0.3})
    with pytest.raises(ModelError, match=r"no reply within timeout_s=0.3 and no output; restarted"):
        slow(_msg([]))
    assert slow.proc is None
    slow.close()


def test_the_programs_stderr_is_kept_in_command_stderr_log(tmp_path):
    chatty = "import sys, json\nprint('loading weights on stderr', file=sys.stderr, flush=True)\n" + ECHO
    adapter = build_adapter({"kind": "command", "cmd": _script(tmp_path, "chatty.py", chatty)}, logdir=tmp_path)
    assert adapter(_msg([], uid="i0@1")) == "i0@1"
    adapter.close()
    assert (tmp_path / "command_stderr.log").read_text() == "[process 1] loading weights on stderr\n"
    assert adapter.protocol_report()["ignored_stdout_lines"] == 1  # stdout's log line, not stderr's


def test_a_dead_program_is_fatal(tmp_path):
    dead = build_adapter({"kind": "command", "cmd": f"{sys.executable} -c 'import sys; sys.exit(4)'"})
    with pytest.raises(FatalModelError, match=r"exited \(code 4\)"):
        dead(_msg([]))
    with pytest.raises(FatalModelError, match="cannot start"):
        build_adapter({"kind": "command", "cmd": "/nonexistent/binary"})(_msg([]))


def test_replies_out_of_order_reach_their_requests(tmp_path):
    """Two requests in flight; the program answers the second first."""
    swap = """
    import sys, json
    first = json.loads(sys.stdin.readline()); second = json.loads(sys.stdin.readline())
    for m in (second, first):
        print(json.dumps({"id": m["id"], "reply": m["meta"]["unique_id"]}), flush=True)
    sys.stdin.read()
    """
    adapter = build_adapter({"kind": "command", "cmd": _script(tmp_path, "swap.py", swap), "concurrency": 2})
    got = {}
    threads = [threading.Thread(target=lambda u=u: got.update({u: adapter(_msg([], uid=u))})) for u in ("a@0", "b@0")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    adapter.close()
    assert got == {"a@0": "a@0", "b@0": "b@0"}


NOISY = """
import json, pathlib, queue, sys, threading
side = pathlib.Path(sys.argv[1])
print("loading weights...", flush=True)
print("config:\\n  layers: 32\\n  heads: 8", flush=True)           # multi-line junk
lines = queue.Queue()
threading.Thread(target=lambda: [lines.put(l) for l in sys.stdin] and lines.put(None), daemon=True).start()
n = 0
def answer(m):
    global n
    n += 1
    uid = m["meta"]["unique_id"]
    print(f"thinking about {uid}...", flush=True)
    if n == 3:                                                    # omits this id
        side.open("a").write(f"skip {uid}\\n"); return
    if n == 5:                                                    # a reply printed on two lines
        side.open("a").write(f"split {uid}\\n")
        print('{"id": %d,\\n "reply": "%s"}' % (m["id"], uid), flush=True); return
    reply = json.dumps({"id": m["id"], "reply": uid})
    print(reply, flush=True)
    if n == 8:                                                    # duplicates this id
        side.open("a").write(f"dup {uid}\\n"); print(reply, flush=True)
while True:
    first = lines.get()
    if first is None:
        break
    try:
        second = lines.get(timeout=0.3)
    except queue.Empty:
        second = None
    batch = [json.loads(x) for x in (first, second) if x]
    for m in reversed(batch):                                     # answers out of order
        answer(m)
"""


def test_noisy_model_script_never_shifts_a_reply(tiny_dataset, tmp_path):
    side = tmp_path / "side.txt"
    out = tmp_path / "noisy"
    res = evaluate(
        tiny_dataset,
        out,
        "model=command",
        "task=[pitch_relative]",
        "model.label=noisy",
        "model.concurrency=2",
        "model.timeout_s=2",
        f"model.cmd='{sys.executable} {_script(tmp_path, 'noisy.py', NOISY).split()[-1]} {side}'",
    )
    marked = dict(reversed(line.split()) for line in side.read_text().splitlines())
    assert sorted(marked.values()) == ["dup", "skip", "split"]
    entries = {}
    for line in (out / "replies.jsonl").read_text().splitlines():
        entry = json.loads(line)
        entries[entry["key"]] = entry  # the last line of a key wins
    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["pitch_relative"]))  # every rotation
    assert len(entries) == n
    for key, entry in entries.items():
        if key in marked:
            assert entry["reply"] is None, (key, entry)
        else:
            assert entry["reply"] == key and entry["error"] is None  # every reply reached its own request
    errors = {marked[k]: entries[k]["error"] for k in marked}
    assert "no reply with this id within timeout_s=2" in errors["skip"]
    assert "no reply with this id within timeout_s=2" in errors["split"]
    assert "twice" in errors["dup"] or "two replies carry this id" in errors["dup"]
    acc = res["accounting"]["overall"]
    assert acc["asked"] == n and acc["error"] == 3 and acc["answered"] == n - 3
    # 4 junk lines, one "thinking" per question, 2 lines of the split reply, 1 duplicate
    assert res["protocol"]["ignored_stdout_lines"] == 4 + n + 2 + 1
    log = (out / "command_stdout.log").read_text()
    assert "loading weights..." in log and "heads: 8" in log and log.count("\n") == 4 + n + 2 + 1


HUNG = """
import pathlib, sys, os, time
pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))
for line in sys.stdin:
    time.sleep(600)
"""


def test_ctrl_c_during_a_hung_request_exits_fast_and_ends_the_program(tiny_dataset, tmp_path):
    import os
    import signal
    import subprocess
    import time

    from tests.support.builders import ROOT

    pidfile = tmp_path / "pid"
    cmd = [
        sys.executable,
        str(ROOT / "evaluate.py"),
        "model=command",
        f"data={tiny_dataset}",
        "out=o",
        f"model.cmd='{sys.executable} {_script(tmp_path, 'hung.py', HUNG).split()[-1]} {pidfile}'",
        "model.timeout_s=300",
        "task=[pitch_relative]",
        "progress=false",
    ]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t_end = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < t_end:
            time.sleep(0.1)
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert time.monotonic() - t0 < 60 and proc.returncode == 130, err  # a hang guard: the model may take 300 s
    assert "interrupted" in err
    child = int(pidfile.read_text())
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the model program was ended, not left behind


def test_ray_pool_settings_need_a_ray_address():
    from auralgen.core.errors import ParameterError

    with pytest.raises(
        ParameterError,
        match=r"model.replicas=2 has no effect without model.ray_address; "
        r"allowed: model.ray_address=local\|auto\|host:port",
    ):
        build_adapter({"kind": "command", "cmd": "python m.py", "replicas": 2})
    with pytest.raises(ParameterError, match=r"model.num_gpus=1.0 has no effect without model.ray_address"):
        build_adapter({"kind": "command", "cmd": "python m.py", "num_gpus": 1.0})
    with pytest.raises(ParameterError, match=r"model.ray_address='' is invalid; allowed: local, auto or host:port"):
        build_adapter({"kind": "command", "cmd": "python m.py", "ray_address": ""})
    with pytest.raises(ParameterError, match=r"model.replicas=0 is out of range; allowed: 1..256"):
        build_adapter({"kind": "command", "cmd": "python m.py", "ray_address": "auto", "replicas": 0})


def test_a_pool_run_reuses_the_local_runs_replies():
    """Where the replicas run is not what they answer: the run's fingerprint leaves the pool settings out,
    so a run moved onto a Ray pool (or back) continues from the same cached replies."""
    from auralgen.evaluation.session import _fingerprint, _model_desc
    from tests.evaluation.test_harness import cfg_of

    base = ["data=d", "out=o", "model=command", "model.cmd='python m.py'"]
    local = cfg_of(*base)
    pool = cfg_of(*base, "model.ray_address=auto", "model.replicas=4", "model.num_gpus=1")

    def fingerprint(cfg):
        return _fingerprint(_model_desc(cfg.model), data=cfg.data, split=cfg.split, settings=cfg.eval)

    assert fingerprint(pool) == fingerprint(local)
    assert _model_desc(pool.model)["replicas"] == 4 and _model_desc(local.model)["replicas"] == 1
