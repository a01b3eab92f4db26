"""Spatial items in a receiver layout that cannot carry their cue are refused at config time.

A mono clip holds no direction; an omni pair on the left-right axis cannot tell front from back
(nor above from below); a horizontal ring cannot tell above from below. Each refusal is one
line naming the key, the value and the layouts that are allowed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from auralgen.core.errors import ParameterError
from auralgen.tasks._spatial import LAYOUT_CUES
from tests.support.builders import ROOT, small_run

MONO = ("task.receiver.type=mono",)
STEREO = ("task.receiver.type=stereo",)
RING = ("task.receiver.type=circular", "+task.receiver.n=6")
PAIR = ("task.receiver.type=circular", "+task.receiver.n=2")

REFUSED = [
    ("azimuth_absolute", MONO, "left/right", "circular (n>=3), tetra, foa, binaural"),
    ("azimuth_absolute", STEREO, "front/back", "circular (n>=3), tetra, foa, binaural"),
    ("azimuth_absolute", PAIR, "left/right", "circular (n>=3), tetra, foa, binaural"),
    ("azimuth_relative", MONO, "left/right", "circular (n>=3), tetra, foa, binaural"),
    ("azimuth_relative", STEREO, "front/back", "circular (n>=3), tetra, foa, binaural"),
    ("elevation_absolute", MONO, "above/below", "tetra, foa, binaural"),
    ("elevation_absolute", STEREO, "above/below", "tetra, foa, binaural"),
    ("elevation_absolute", RING, "above/below", "tetra, foa, binaural"),
    ("elevation_relative", STEREO, "front/back", "tetra, foa, binaural"),
    ("elevation_relative", RING, "above/below", "tetra, foa, binaural"),
    ("trajectory", MONO, "left/right", "stereo, circular (n>=3), tetra, foa, binaural"),
    ("trajectory", PAIR, "left/right", "stereo, circular (n>=3), tetra, foa, binaural"),
    ("multi_source_relation", MONO, "left/right", "tetra, foa, binaural"),
    ("multi_source_relation", STEREO, "above/below", "tetra, foa, binaural"),
]


@pytest.mark.parametrize("task,receiver,cue,allowed", REFUSED)
def test_layout_without_the_cue_is_refused_in_one_line(task, receiver, cue, allowed):
    with pytest.raises(ParameterError) as err:
        small_run(f"task={task}", *receiver)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("task.receiver.type=")
    assert f"carries no {cue} cue" in msg and msg.endswith(f"allowed: receiver types {allowed}")


ACCEPTED = [
    ("azimuth_absolute", RING, ()),
    ("azimuth_absolute", ("task.receiver.type=foa",), ()),
    ("elevation_absolute", ("task.receiver.type=tetra",), ()),
    ("trajectory", STEREO, ()),
    ("distance_absolute", MONO, ()),
    ("distance_relative", STEREO, ()),
    ("multi_source_relation", STEREO, ("task.relations=[left,left_of]",)),
    ("multi_source_relation", ("task.receiver.type=binaural",), ("task.relations=[closer]",)),
]


@pytest.mark.parametrize("task,receiver,extra", ACCEPTED)
def test_layout_that_carries_the_cue_is_accepted(task, receiver, extra):
    run = small_run(f"task={task}", *receiver, *extra)
    assert run.tasks[0].name == task


@pytest.mark.parametrize(
    "receiver", [MONO, STEREO, RING, ("task.receiver.type=tetra",), ("task.receiver.type=foa",)], ids=lambda r: r[0]
)
def test_multi_source_closer_is_refused_where_its_onsets_cannot_be_measured(receiver):
    # omni and FOA RIRs carry the zero-phase high-pass's energy before the direct sound: every 'closer'
    # item failed its onset check there (all 9 of 9 dropped on foa and on tetra), and mono crashed
    with pytest.raises(ParameterError) as err:
        small_run("task=multi_source_relation", *receiver, "task.relations=[closer]")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("task.relations has 'closer' with task.receiver.type=")
    assert msg.endswith("allowed: receiver type binaural, or task.relations without 'closer'")


def test_multi_source_names_the_relation_that_needs_the_cue():
    with pytest.raises(ParameterError, match=r"relation 'higher' \(drop it from relations\)"):
        small_run("task=multi_source_relation", *STEREO)


def test_every_layout_is_listed():
    assert set(LAYOUT_CUES) == {"mono", "stereo", "circular (n=2)", "circular (n>=3)", "tetra", "foa", "binaural"}


def test_cli_refuses_a_mono_azimuth_task_with_exit_2(tmp_path):
    res = subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), "task=azimuth_absolute", *MONO, "out=ds"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "receiver.type='mono'" in lines[0], res.stderr
    assert not (tmp_path / "ds").exists()
