"""Task config values that would crash or hang are refused in one line before any work.

``clip_s=1e9`` (a 116 TiB allocation) and every other duration beyond the bound,
``distance_m=[0,0]`` (a source at the listener), and a named pipe (FIFO) in ``sources_dir``
(opening it waits forever for a writer): each ends in a ParameterError, exit 2 from the CLI.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from auralgen.core.errors import ParameterError
from auralgen.tasks._spatial import MIN_DISTANCE_M, SpatialConfig
from auralgen.tasks.base import MAX_DURATION_S, AudioConfig, load_tasks
from tests.support.builders import ROOT, small_run

TASKS = load_tasks()
DURATIONS = [
    (n, f.name) for n, cls in sorted(TASKS.items()) for f in dataclasses.fields(cls.Config) if f.name.endswith("_s")
]
SPATIAL = sorted(n for n, cls in TASKS.items() if issubclass(cls.Config, SpatialConfig))


def run_cli(*args, cwd, timeout=60):
    return subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), *args, "out=ds"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_error_line(res) -> str:
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def test_every_task_has_duration_fields_to_bound():
    assert len(DURATIONS) >= 20 and ("audiogram", "clip_s") in DURATIONS and ("trajectory", "source_s") in DURATIONS


@pytest.mark.parametrize("task,field", DURATIONS)
@pytest.mark.parametrize("value", [1e9, float("inf"), MAX_DURATION_S + 1])
def test_a_huge_duration_is_refused_by_check(task, field, value):
    cfg = TASKS[task].Config()
    current = getattr(cfg, field)
    bad = [value, value] if isinstance(current, (list, tuple)) and len(current) == 2 else value
    with pytest.raises(ParameterError, match=rf"^tasks\.{task}\.{field}=.*allowed: finite values <= 60 s$"):
        dataclasses.replace(cfg, **{field: bad}).check(AudioConfig(), f"tasks.{task}")


def test_default_durations_stay_within_the_bound():
    for name, cls in TASKS.items():
        cls.Config().check(AudioConfig(sample_rate=48000 if name == "audiogram" else 16000), f"tasks.{name}")


@pytest.mark.parametrize("args", [["task=audiogram", "task.clip_s=1e9"], ["task=azimuth_absolute", "task.clip_s=1e9"]])
def test_cli_refuses_clip_s_1e9_fast_with_exit_2(tmp_path, args):
    line = one_error_line(run_cli(*args, cwd=tmp_path))
    assert "task.clip_s=1000000000.0" in line and "<= 60 s" in line
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("task", SPATIAL)
@pytest.mark.parametrize("value", ["[0,0]", "[0.0,1.0]", "0", "0.2"])
def test_zero_or_too_near_distances_are_refused(task, value):
    """Tasks that read distance_m refuse a distance below the minimum; the distance tasks, whose
    distances come from their levels, refuse any change of distance_m (it would be ignored)."""
    if "distance_m" in load_tasks()[task].Config.unused_fields:
        allowed = r"is not used by .*; allowed: leave it out"
    else:
        allowed = rf"allowed: values within \[{MIN_DISTANCE_M}, inf\]"
    with pytest.raises(ParameterError, match=rf"task\.distance_m=.*{allowed}"):
        small_run(f"task={task}", f"task.distance_m={value}")


def test_distance_absolute_refuses_a_too_near_nearest_distance():
    """The nearest distance drawn is the first bin edge less the largest margin; min_m is no longer read."""
    with pytest.raises(
        ParameterError,
        match=r"task\.bins_m=\[0\.8, 8\.0\]: the nearest distance 0\.4 m .* is too near; allowed: .*>= 0\.5 m",
    ):
        small_run("task=distance_absolute", "task.bins_m=[0.8,8.0]")
    with pytest.raises(ParameterError, match=r"task\.min_m=0\.0 is not used by distance_absolute"):
        small_run("task=distance_absolute", "task.min_m=0")


def test_cli_refuses_zero_distances_with_exit_2(tmp_path):
    line = one_error_line(run_cli("task=azimuth_absolute", "task.distance_m=[0,0]", cwd=tmp_path))
    assert "task.distance_m=[0, 0]" in line or "task.distance_m=[0.0, 0.0]" in line


@pytest.fixture()
def sources(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    t = np.arange(16000) / 16000
    sf.write(folder / "a.wav", 0.3 * np.sin(2 * np.pi * 500 * t), 16000)
    return folder


def test_cli_refuses_a_fifo_in_sources_dir_without_hanging(tmp_path, sources):
    os.mkfifo(sources / "b.wav")
    line = one_error_line(run_cli("task=azimuth_absolute", f"task.sources_dir={sources}", cwd=tmp_path, timeout=60))
    assert "'b.wav', a named pipe" in line and "allowed: regular WAV/FLAC files" in line


def test_a_symlink_to_a_fifo_is_refused_without_hanging(tmp_path, sources):
    os.mkfifo(tmp_path / "pipe")
    (sources / "c.flac").symlink_to(tmp_path / "pipe")
    line = one_error_line(run_cli("task=azimuth_absolute", f"task.sources_dir={sources}", cwd=tmp_path, timeout=60))
    assert "'c.flac', a named pipe" in line


def test_a_directory_or_broken_symlink_named_like_audio_is_refused(sources):
    (sources / "d.wav").mkdir()
    with pytest.raises(ParameterError, match=r"task\.sources_dir=.*holds 'd\.wav', a directory"):
        small_run("task=azimuth_absolute", f"task.sources_dir={sources}")
    (sources / "d.wav").rmdir()
    (sources / "e.wav").symlink_to(sources / "missing.wav")
    with pytest.raises(ParameterError, match=r"holds 'e\.wav', a symlink to nothing; allowed: regular WAV/FLAC"):
        small_run("task=azimuth_absolute", f"task.sources_dir={sources}")


def test_a_symlink_loop_is_named_a_loop(sources):
    (sources / "g.wav").symlink_to("h.wav")
    (sources / "h.wav").symlink_to("g.wav")
    with pytest.raises(ParameterError, match=r"holds 'g\.wav', a symlink loop; allowed: regular WAV/FLAC files"):
        small_run("task=azimuth_absolute", f"task.sources_dir={sources}")


def test_a_wav_header_claiming_2147483647_hz_is_refused_before_reading(tmp_path, sources):
    """A 44-byte header edit: resampling it would have allocated 320 GiB (a MemoryError mid-run)."""
    import struct

    data = bytearray((sources / "a.wav").read_bytes())
    data[24:28] = struct.pack("<I", 2**31 - 1)  # the fmt chunk's sample rate
    (sources / "a.wav").write_bytes(bytes(data))
    line = one_error_line(run_cli("task=azimuth_absolute", f"task.sources_dir={sources}", cwd=tmp_path))
    assert "task.sources_dir file 'a.wav' declares samplerate=2147483647 Hz; allowed: 1000 .. 768000 Hz" in line
    assert not (tmp_path / "ds").exists()


def test_a_symlink_to_a_regular_file_is_accepted(sources):
    (sources / "f.wav").symlink_to(sources / "a.wav")
    run = small_run("task=azimuth_absolute", f"task.sources_dir={sources}")
    assert run.tasks[0].sources_dir == str(sources)


UNUSED = [(name, field) for name, cls in sorted(load_tasks().items()) for field in cls.Config.unused_fields]


def test_unused_fields_are_declared_where_a_task_ignores_them():
    assert ("azimuth_absolute", "gap_s") in UNUSED and ("distance_relative", "distance_m") in UNUSED
    assert ("multi_source_relation", "phrasings") in UNUSED and ("azimuth_relative", "gap_s") not in UNUSED


@pytest.mark.parametrize("name, field", UNUSED)
def test_a_changed_unused_field_is_refused_in_one_line(name, field):
    cls = load_tasks()[name].Config
    cls(name=name).check(AudioConfig(), f"tasks.{name}")  # the default passes
    value = (0,) if field == "phrasings" else (2.5, 3.0)
    cfg = dataclasses.replace(cls(name=name), **{field: value})
    with pytest.raises(
        ParameterError, match=rf"^tasks\.{name}\.{field}=\(.*\) is not used by {name} \(.+\); allowed: leave it out"
    ):
        cfg.check(AudioConfig(), f"tasks.{name}")


def test_mixing_overlap_s_is_refused_unless_timing_is_overlap():
    from auralgen.mixing import DEFAULT_MIXING, MixSpec

    MixSpec.from_config("m", {**DEFAULT_MIXING, "timing": "overlap", "overlap_s": [0.1, 0.2]})  # read: accepted
    with pytest.raises(ParameterError, match=r"^m\.overlap_s=\[0\.1, 0\.2\] is read only with timing=overlap"):
        MixSpec.from_config("m", {**DEFAULT_MIXING, "overlap_s": [0.1, 0.2]})
