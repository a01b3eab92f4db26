"""Every fenced shell command of README.md and of the docs pages (docs/**/*.md) runs, at tiny sizes,
and exits as the page says.

Pages (:data:`PAGES`): README.md, then the docs pages in :data:`DOC_ORDER` (a later page may read what an
earlier one wrote), then any other page; a command written on several pages runs once, where it is first seen.

Extraction (:func:`readme_commands`): in a ```bash or ```sh block every line that is not blank
or a ``#`` comment is a command (a trailing ``# ...`` comment is cut off); in a ```console
block the lines starting with ``$ `` are commands and the other lines are their output. A
``$ echo $?`` followed by a number gives the exit code expected of the command before it
(otherwise 0), and every ``error: ...`` line shown under a command must be a line of what it
prints on stderr.

Tiny sizes (:func:`tiny`): only counts shrink, never what a command asks for. A
``generate.py`` command gets ``items_per_level=1`` for every task it generates (``task.``
with ``task=``, else ``tasks.<name>.`` for each task of its suite; the audiogram also
``probe_items_per_level=1``): the value is replaced where the command sets it and
appended where it does not. An ``evaluate.py`` command gets ``max_items=2`` (per task) and
``eval.n_boot=2`` (bootstrap refits per psychometric threshold).

Where: all commands run in order in one temporary directory holding links to the checkout's
``generate.py``, ``evaluate.py``, ``conf/``, ``.venv/`` and ``tests/`` (its real-sound fixture) (so
``.venv/bin/python`` is the
venv's python, as in ``make``). ``data/default`` there is built first by the Makefile's
``dataset`` recipe at tiny size; ``model.base_url`` of the ``openai`` example is pointed at
the test chat server on 127.0.0.1 (tests/support/chat_server.py); ``my_model.py``
(the ``command`` example's model) is a stdlib script answering "Answer: A" to each request;
``infer_results.jsonl`` (``action=score_predictions``) is what the STAR-Bench toolkit
writes, made from a STAR-Bench export of ``data/default`` with every response "Answer: A";
``action=rescore`` finds the replies of a ``model=random`` run of the Makefile's ``eval``
recipe.

Each command runs with a timeout (its process group is killed after it). The commands in
``NOT_RUN`` are not run, for the reason given there; those in ``SLOW`` (several generation
runs each) run with ``make test-slow``, to keep ``make test`` fast.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from auralgen.cli._hydra import _combinations, _overrides, compose
from auralgen.config import build_tasks, validate
from auralgen.core.errors import ParameterError
from auralgen.generation.plan import check_capacity, plan
from tests.support.builders import ROOT
from tests.support.chat_server import ChatServer

# the commands run in order in one directory (a later command reads what an earlier one wrote): under
# pytest-xdist the whole file goes to one worker (`make test` runs `pytest -n 2 --dist loadfile`)

NOT_RUN = {
    "make dataset": "builds the full default suite (covered by tests/test_default_suite.py, slow); its recipe "
    "`.venv/bin/python generate.py` builds data/default here at tiny size",
    "make test": "is the test suite itself (it would run this test recursively)",
    ".venv/bin/python -m auralgen.cli listen examples/listen_pitch.yaml": "serves until interrupted (a real server "
    "runs in tests/listen/test_server.py and test_browser.py)",
    ".venv/bin/python -m auralgen.cli listen examples/listen_pitch.yaml --host 0.0.0.0 --port 8000": "serves until "
    "interrupted, on every interface",
    ".venv/bin/python -m auralgen.cli listen report examples/listen_pitch.yaml --json studies/pitch/report.json "
    "--leaderboard results/leaderboard.md": "needs a study people took (tests/listen/test_report.py runs it on one)",
    "make eval": "scores 5 baselines on the full default suite; its `model=random` command runs here at tiny "
    "size as the setup of `action=rescore`",
}
SLOW = {  # command substring -> why it runs with `make test-slow` only
    "'split=[train,validation,test]'": "the default suite in three splits (~30 s at tiny size)",
    "suite=tones": "a suite in two splits",
    " -m ": "a multirun: three generation runs (~15 s); also `python -m auralgen.validation` audits",
    "out=data/seed1": "a second dataset for the learned controls, audited by the next (slow) command",
    "suite=recorded source=folder": "ten tasks on recorded sounds, rooms included (over 90 s at tiny size on a busy "
    "2-core machine); audited by the next (slow) command",
}
XFAIL: dict[str, str] = {}  # command substring -> reason (temporary: work in progress elsewhere)
TIMEOUT_S = {True: 240, False: 90}  # by slow


@dataclass
class Command:
    text: str
    line: int
    expect_rc: int = 0
    errors: list[str] = field(default_factory=list)
    page: str = "README.md"


def readme_commands(text: str) -> list[Command]:
    """The fenced shell commands of a README, with their expected exit code and error lines."""
    out: list[Command] = []
    lang = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            lang = line[3:].strip() if lang is None else None
            continue
        if lang in ("bash", "sh"):
            cmd = re.sub(r"\s+#\s.*$", "", line).strip()
            if cmd and not cmd.startswith("#"):
                out.append(Command(cmd, n))
        elif lang == "console" and line.startswith("$ "):
            if line.strip() == "$ echo $?":
                continue
            out.append(Command(line[2:].strip(), n))
        elif lang == "console" and out and out[-1].line < n:
            if line.strip().isdigit() and text.splitlines()[n - 2].strip() == "$ echo $?":
                out[-1].expect_rc = int(line)
            elif line.startswith("error: "):
                out[-1].errors.append(line)
    return out


def _task_prefixes(args: list[str]) -> list[tuple[str, str]]:
    """``(key prefix, task name)`` of every task a generate.py command generates."""
    opts = dict(a.split("=", 1) for a in args if "=" in a and not a.startswith(("+", "~", "-")))
    if opts.get("task", "null") != "null":
        return [("task", opts["task"])]
    defaults = yaml.safe_load((ROOT / "conf" / "config.yaml").read_text())["defaults"]
    suite = opts.get("suite") or next(d["suite"] for d in defaults if isinstance(d, dict) and "suite" in d)
    entries = yaml.safe_load((ROOT / "conf" / "suite" / f"{suite}.yaml").read_text())["defaults"]
    return [(f"tasks.{k.split('@tasks.')[1]}", v) for e in entries for k, v in e.items()]


def _set(args: list[str], key: str, value: str) -> list[str]:
    hits = [i for i, a in enumerate(args) if a.split("=", 1)[0].lstrip("+") == key]
    if not hits:
        return [*args, f"{key}={value}"]
    return [f"{a.split('=', 1)[0]}={value}" if i in hits else a for i, a in enumerate(args)]


def tiny(cmd: str) -> str:
    """``cmd`` with its counts shrunk (see the module docstring)."""
    argv = shlex.split(cmd)
    script = next((i for i, a in enumerate(argv) if a.endswith((".py", "generate.py", "evaluate.py"))), None)
    if script is None:
        return cmd
    head, args = argv[: script + 1], argv[script + 1 :]
    if argv[script].endswith("generate.py"):
        for prefix, task in _task_prefixes(args):
            args = _set(args, f"{prefix}.items_per_level", "1")
            if task == "audiogram":
                args = _set(args, f"{prefix}.probe_items_per_level", "1")
    elif argv[script].endswith("evaluate.py"):
        args = _set(_set(args, "max_items", "2"), "eval.n_boot", "2")
    return shlex.join(head + args)


DOC_ORDER = (  # the docs pages whose commands depend on an earlier page's output, in that order
    "getting-started.md",
    "tutorials/regenerate.md",
    "tutorials/own-recordings.md",
    "concepts/levels-and-units.md",
    "concepts/measured-labels.md",
    "howto/validity-report.md",
    "concepts/controls.md",
    "tutorials/score-model.md",
    "tutorials/adaptive.md",
    "tutorials/human-baselines.md",
    "howto/export.md",
    "tutorials/scale-out.md",
    "reference/output.md",
    "concepts/determinism.md",
)


def doc_pages() -> list[Path]:
    """README.md and every docs page, in the order their commands run."""
    docs = ROOT / "docs"
    ordered = [docs / name for name in DOC_ORDER]
    rest = sorted(p for p in docs.rglob("*.md") if p not in ordered)
    return [ROOT / "README.md", *(p for p in ordered if p.exists()), *rest]


PAGES = doc_pages()
PYTHON_BLOCKS = [code for page in PAGES for code in re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)]
# the command protocol's minimal model is README's `my_model.py`: it runs as the `model=command` example's model
MY_MODEL = next(code for code in PYTHON_BLOCKS if 'request["id"]' in code)
PYTHON_BLOCKS = [code for code in PYTHON_BLOCKS if code is not MY_MODEL]


def run(cmd: str, cwd: Path, timeout: float, env: dict) -> subprocess.CompletedProcess:
    """``cmd`` under bash in its own process group, killed (with every child) after ``timeout``."""
    proc = subprocess.Popen(
        ["bash", "-c", cmd],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"README command did not finish within {timeout} s: {cmd}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The directory the README's commands run in (see the module docstring), with data/default."""
    wd = tmp_path_factory.mktemp("readme")
    for name in ("generate.py", "evaluate.py", "conf", ".venv", "tests", "examples"):  # tests: the real-sound fixture
        (wd / name).symlink_to(ROOT / name)
    (wd / "my_model.py").write_text(MY_MODEL)
    bindir = wd / "_bin"  # `python` in model.cmd is the user's python: here the test's
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "PRA_NUM_THREADS": "1",
        "NUMBA_CACHE_DIR": str(ROOT / ".auralgen_cache" / "numba"),
        "HF_HOME": str(wd / "_hf"),
    }
    recipe = makefile_recipe("dataset")
    done = run(tiny(recipe), wd, TIMEOUT_S[False], env)
    assert done.returncode == 0, done.stderr[-3000:]
    return wd, env


def makefile_recipe(target: str) -> str:
    """The first command of a Makefile target, with ``$(BIN)`` as the venv's bin directory."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    return lines[start + 1].strip().lstrip("@").replace("$(BIN)", ".venv/bin")


def prepare(cmd: str, wd: Path, env: dict) -> str:
    """Set up what ``cmd`` relies on; returns ``cmd`` as it runs here."""
    if "action=rescore" in cmd and not (wd / "results" / "random" / "replies.jsonl").exists():
        base = ".venv/bin/python evaluate.py model=random data=data/default out=results/random progress=false"
        assert run(tiny(base), wd, TIMEOUT_S[False], env).returncode == 0
    if "predictions=infer_results.jsonl" in cmd:
        export = ".venv/bin/python evaluate.py action=export data=data/default out=_setup/starbench"
        assert run(tiny(export), wd, TIMEOUT_S[False], env).returncode == 0
        rows = json.loads((wd / "_setup/starbench/meta_info/foundation_perception.json").read_text())
        lines = [json.dumps({**r, "rotate_id": 0, "model_response": "Answer: A"}) for r in rows]
        (wd / "infer_results.jsonl").write_text("\n".join(lines) + "\n")
    return cmd


def all_commands() -> list[Command]:
    """The commands of every page (see :data:`PAGES`), each text once, named by its page and line."""
    seen: set[str] = set()
    out = []
    for page in PAGES:
        for c in readme_commands(page.read_text()):
            if c.text not in seen:
                seen.add(c.text)
                c.page = page.relative_to(ROOT).as_posix()
                out.append(c)
    return out


COMMANDS = all_commands()


def _param(c: Command):
    marks = []
    if any(s in c.text for s in SLOW):
        marks.append(pytest.mark.slow)
    reason = next((r for s, r in XFAIL.items() if s in c.text), None)
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(c, marks=marks, id=f"{c.page}:L{c.line}:{c.text[:60]}")


@pytest.mark.parametrize("command", [_param(c) for c in COMMANDS if c.text not in NOT_RUN])
def test_readme_command(command: Command, workdir):
    wd, env = workdir
    cmd = tiny(prepare(command.text, wd, env))
    if "model=openai" in cmd:
        with ChatServer(expect_model="Qwen/Qwen2-Audio-7B-Instruct") as srv:
            done = run(cmd.replace("http://127.0.0.1:8000/v1", srv.base_url), wd, TIMEOUT_S[False], env)
        assert srv.n_requests > 0
    else:
        done = run(cmd, wd, TIMEOUT_S[any(s in cmd for s in SLOW)], env)
    assert done.returncode == command.expect_rc, f"{cmd}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    for line in command.errors:
        assert line in done.stderr.splitlines(), f"README shows {line!r}; stderr was {done.stderr!r}"


@pytest.mark.parametrize("code", PYTHON_BLOCKS, ids=[f"python{i}" for i in range(len(PYTHON_BLOCKS))])
def test_readme_python_snippets_run(code: str, workdir):
    """The README's Python snippets run with the venv's python against the tiny data/default."""
    wd, env = workdir
    (wd / "snippet.py").write_text(code)
    done = run(".venv/bin/python snippet.py", wd, TIMEOUT_S[False], env)
    assert done.returncode == 0, done.stderr[-3000:]


GENERATE = [c for c in COMMANDS if "generate.py" in c.text]


@pytest.mark.parametrize("command", GENERATE, ids=[f"{c.page}:L{c.line}" for c in GENERATE])
def test_readme_generate_commands_plan_at_their_written_sizes(command: Command):
    """The commands run shrunk above; here each job of the command *as written* is validated,
    capacity-checked and planned (no rendering): full sizes must pass, or fail as the README shows."""
    argv = shlex.split(command.text)
    jobs = _combinations(_overrides(argv[argv.index("generate.py") + 1 :]))
    t0 = time.perf_counter()
    for job in jobs:
        try:
            run_cfg = validate(compose([*job, "workers=1", "progress=false"]))
            tasks = build_tasks(run_cfg)
            check_capacity(run_cfg, tasks)
            assert plan(run_cfg, tasks)
        except ParameterError as exc:
            assert command.expect_rc == 2 and f"error: {exc}" in command.errors, f"{command.text}: {exc}"
        else:
            assert command.expect_rc == 0, f"{command.text} plans, but the README shows it failing"
    # a hang guard: planning renders nothing but draws a few probe items per level to deal the answers
    # (rooms and mixtures included: about 2 min for a whole suite's three splits at load 7 on 2 cores);
    # rendering the items would take hours
    assert time.perf_counter() - t0 < 600 * len(jobs)


def test_every_readme_command_is_found_and_run_or_listed():
    texts = [c.text for c in COMMANDS]
    assert set(NOT_RUN) <= set(texts), "a NOT_RUN entry is no longer in the README"
    assert sum("generate.py" in t for t in texts) >= 6 and sum("evaluate.py" in t for t in texts) >= 5
    assert any(c.expect_rc == 2 and c.errors for c in COMMANDS)  # the bad-input example


def test_readme_commands_use_the_venv_python_and_name_their_output():
    for c in COMMANDS:
        if c.text in NOT_RUN:
            continue
        argv = shlex.split(c.text)
        assert argv[0] in (".venv/bin/python", "make"), (
            f"{c.page} line {c.line}: {c.text!r} does not use .venv/bin/python"
        )
        writes = any(a.endswith(("generate.py", "evaluate.py")) for a in argv) and "action=leaderboard" not in argv
        if writes:
            assert any(a.startswith("out=") for a in argv), f"{c.page} line {c.line}: {c.text!r} writes without out="


def test_tiny_shrinks_counts_only():
    cmd = ".venv/bin/python generate.py task=pitch_relative 'task.levels=[0,25]' task.items_per_level=40 out=d"
    assert (
        tiny(cmd)
        == ".venv/bin/python generate.py task=pitch_relative 'task.levels=[0,25]' task.items_per_level=1 out=d"
    )
    suite = shlex.split(tiny(".venv/bin/python generate.py suite=tones out=d"))
    assert "tasks.audiogram.probe_items_per_level=1" in suite and "tasks.pitch_relative.items_per_level=1" in suite
    assert tiny(".venv/bin/python evaluate.py model=random data=d").endswith("max_items=2 eval.n_boot=2")
