"""generate.py: bad input ends in one line naming key, value and what is allowed, exit 2, nothing written."""

import subprocess
import sys

import pytest

from tests.support.builders import ROOT


def run_cli(*args, cwd):
    return subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


BAD = [
    (["task=pitch_relativ"], "pitch_relativ"),
    (["task=pitch_relative", "task.tone_s=-0.5"], "tone_s"),
    (["task=pitch_relative", "task.freq_hz.high=9000"], "Nyquist"),
    (["task=pitch_relative", "task.freq_hz=[6000,9000]"], "freq_hz"),
    (["task=pitch_relative", "task.levels=[0,100,50]"], "not monotonic"),
    (["task=pitch_relative", "task.items_per_level=0"], "items_per_level=0"),
    (["sample_rate=12345"], "sample_rate=12345"),
    (["task=pitch_relative", "task.levlz=[1]"], "levlz"),
    (["seeed=3"], "seeed"),
    (["task=audiogram", "task.sample_rate=16000"], "Nyquist"),
    (["task=loudness_relative", "task.level_db_spl=[120,130]"], "clips"),
    (["workers=0"], "workers=0"),
    (["task=[pitch_relative,loudness_relative]"], "names several tasks, but task= selects one"),
    (["task=pitch_relative", "tasks.pitch_relative.items_per_level=3"], "has no effect with task=pitch_relative"),
    (["task=pitch_relative", "suite=spatial"], "suite=spatial has no effect with task=pitch_relative"),
    (["task=pitch_relative", "~tasks.audiogram"], "has no effect"),
    (["seed=9223372036854775808"], "seed=9223372036854775808 is out of range"),
    (["task=pitch_relative", "task.items_per_level=1e12"], "at most 10000000 items per run"),
    (["split=[train,my-test]"], "split='my-test' is not a split name Hugging Face datasets accepts"),
    (["-m", "seed=range(0,100000)"], "at most 1000 jobs per multirun"),
    (["-m", "seed=range(0,40)", "shard_size=range(1,40)"], "the sweep makes 1560 jobs"),
    (["task=pitch_relative", "source=folder"], "source.dir is missing"),
    (["task=pitch_relative", "source=clips", "source.dir=/nonexistent/clips"], "is not a directory"),
    (["task=pitch_relative", "source=nope"], "source"),
    (
        ["task=audiogram", "source=clips", f"source.dir={ROOT / 'tests/data/real_sounds'}"],
        "source=clips is not taken by audiogram",
    ),
    (
        ["task=pitch_relative", "source=clips", f"source.dir={ROOT / 'tests/data/real_sounds'}", "task.stimuli=[pure]"],
        "does not apply with source=clips",
    ),
    # wrongly accepted or a traceback before: each now one line naming key, value and what is allowed
    (["tasks={}"], "tasks={} selects no task (it would run the whole suite); allowed: task=<name>"),
    (["task=pitch_relative", "task.phrasings=[0,0]"], "task.phrasings=[0, 0] is invalid; allowed: distinct indices"),
    (["task=audiogram", "task.levels=[-200]"], "task.levels=[-200] reaches -200 dB HL, below the calibrated range"),
    (
        ["task=audiogram", "task.clip_s=-1"],
        "task.clip_s=-1.0 holds -1.0, a negative duration; allowed: finite values within [0, 60] s",
    ),
    (["task=pitch_relative", "~task.levels"], "~task.levels deletes task.levels, which the run needs; allowed: set it"),
    (["-cd", "/etc", "task=pitch_relative"], "-cd /etc loads a configuration other than the shipped one"),
    (
        ["--config-dir=/etc", "task=pitch_relative"],
        "--config-dir /etc loads a configuration other than the shipped one",
    ),
    (["task=pitch_relative", "task.levels=[0,1e9]"], "allowed: 0 <= levels <= 4800 cents"),
    (["task=pitch_relative", "task.levels=[0,inf]"], "holds inf; allowed: finite numbers only"),
]


# these go through a real process (the exit status and stderr a shell sees); the others call the
# same entry point, auralgen.cli.main, in this process (a new interpreter costs seconds per case)
THROUGH_A_PROCESS = {0, 8, 24, 31}


def cli_in_process(args, cwd, capsys, monkeypatch) -> tuple[int, str]:
    from auralgen.cli import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    capsys.readouterr()
    try:
        code = main(["generate", *args])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case", range(len(BAD)), ids=[f"args{i}-{n}" for i, (_, n) in enumerate(BAD)])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, case, capsys, monkeypatch):
    args, needle = BAD[case]
    if case in THROUGH_A_PROCESS:
        res = run_cli(*args, "out=ds", cwd=tmp_path)
        code, err = res.returncode, res.stderr
    else:
        code, err = cli_in_process([*args, "out=ds"], tmp_path, capsys, monkeypatch)
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_override_generates_requested_levels(tmp_path):
    res = run_cli(
        "task=pitch_relative",
        "task.levels=[0,25,50]",
        "task.items_per_level=2",
        "seed=7",
        "out=fine",
        "progress=false",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "wrote 6 items in 1 shards" in res.stdout
    import json

    manifest = json.loads((tmp_path / "fine" / "manifest.json").read_text())
    assert manifest["seed"] == 7
    assert manifest["config"]["tasks"][0]["levels"] == [0, 25, 50]


def test_multirun_sweep_writes_one_dataset_per_job(tmp_path):
    res = run_cli(
        "-m",
        "task=duration_absolute",
        "task.items_per_level=1",
        "seed=1,2",
        "out=sweep",
        "progress=false",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    import json

    seeds = sorted(json.loads(p.read_text())["seed"] for p in (tmp_path / "sweep").glob("*/manifest.json"))
    assert seeds == [1, 2]


@pytest.mark.parametrize(
    "out,needle",
    [("", "out='' is empty"), ("/sys/auralgen-test/ds", "cannot be written"), ("x" * 300, "is too long")],
)
def test_bad_out_is_one_line_exit_2(tmp_path, out, needle):
    res = run_cli("task=duration_absolute", "task.items_per_level=1", f"out={out}", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert [ln for ln in res.stderr.splitlines() if ln.strip()] == [res.stderr.strip()]
    assert res.stderr.startswith("error: ") and needle in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_out_a_symlink_to_nothing_is_one_line_exit_2(tmp_path):
    (tmp_path / "ds").symlink_to("nowhere/x")
    res = run_cli("task=duration_absolute", "task.items_per_level=1", "out=ds", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr == (
        "error: out='ds' is a symlink to 'nowhere/x', which does not exist; "
        "allowed: a directory path, or a symlink to an existing directory\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["ds"] and not (tmp_path / "nowhere").exists()


def test_overwrite_in_a_user_folder_deletes_nothing(tmp_path):
    """out=. overwrite=true in a folder of the user's files."""
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "recordings.txt").write_text("mine")
    (tmp_path / "README.md").write_text("# mine")
    (tmp_path / "train.py").write_text("pass")
    res = run_cli(
        "task=duration_relative", "task.items_per_level=1", "task.levels=[0]", "out=.", "overwrite=true", cwd=tmp_path
    )
    assert res.returncode == 2 and res.stderr.startswith("error: out='.' exists and is not an auralgen dataset")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "README.md",
        "data",
        "data/raw",
        "data/raw/recordings.txt",
        "train.py",
    ]
    assert (tmp_path / "README.md").read_text() == "# mine"


def test_multirun_checks_every_job_before_running_any(tmp_path):
    """The bad job is the 71st: main checked only the first 64 and wrote 70 datasets first."""
    res = run_cli(
        "-m",
        "task=duration_absolute",
        "task.items_per_level=1",
        "seed=" + ",".join(map(str, range(70))) + ",9223372036854775808",
        "out=sweep",
        cwd=tmp_path,
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == (
        "error: job seed=9223372036854775808: seed=9223372036854775808 is out of range; "
        "allowed: an integer with 0 <= seed < 2**63"
    )
    assert list(tmp_path.iterdir()) == []


def test_fast_sweep_check_sees_the_configs_hydra_composes():
    """Jobs are composed once per config-group choice and plain values set on a copy: each must
    validate to exactly what composing that job's overrides gives."""
    from auralgen.cli._hydra import _combinations, _jobs, compose
    from auralgen.config import validate

    argv = ["seed=1,2", "task=pitch_relative,audiogram", "task.items_per_level=1,3", "task.levels=[0,10]", "out=o"]
    fast = [validate(cfg) for _, cfg in _jobs(argv, str(ROOT / "conf"), "config")]
    slow = [validate(compose(job)) for job in _combinations(argv)]
    assert len(fast) == 8 and sorted(map(repr, fast)) == sorted(map(repr, slow))
