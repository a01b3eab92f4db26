"""Constants are written once: every copy elsewhere in the package imports them."""

import ast
from pathlib import Path

import numpy as np
import pytest

import auralgen
from auralgen.core import constants as C
from auralgen.core.qa import arrange

PKG = Path(auralgen.__file__).resolve().parent
ROOT = PKG.parent


def _copies(value) -> list[str]:
    """``file:line`` of every literal equal to ``value`` in the package's code (docstrings and
    comments do not count: only constants the interpreter would use), constants.py aside."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        if path.name == "constants.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_speed_of_sound_written_once():
    assert C.SPEED_OF_SOUND_M_S == 343.0
    assert _copies(343.0) == [] and _copies(343) == []


def test_full_scale_calibration_written_once():
    assert C.DEFAULT_FULL_SCALE_DB_SPL == 136.0
    assert _copies(136.0) == [] and _copies(136) == []


def test_options_are_the_answer_and_its_distractors_only():
    options, index = arrange("a", ["b", "c"], slot=1, rng=np.random.default_rng(0))
    assert sorted(options) == ["a", "b", "c"] and options[index] == "a" and index == 1
    assert _copies("Unable to determine") == []  # no never-correct option is offered


def test_sample_rates_written_once():
    assert _copies(44100) == [] and _copies(22050) == []
    assert C.DEFAULT_SAMPLE_RATE in C.SAMPLE_RATES


def test_hydra_defaults_match_constants():
    """The composed command-line config (conf/config.yaml plus the RunSettings node) and RunSettings
    itself carry core/constants.py's calibration and sample rate."""
    from auralgen.cli._hydra import compose
    from auralgen.config import RunSettings

    top = compose()
    assert top.full_scale_db_spl == C.DEFAULT_FULL_SCALE_DB_SPL
    assert top.sample_rate == C.DEFAULT_SAMPLE_RATE
    assert (RunSettings().full_scale_db_spl, RunSettings().sample_rate) == (
        C.DEFAULT_FULL_SCALE_DB_SPL,
        C.DEFAULT_SAMPLE_RATE,
    )


def test_the_old_shim_paths_are_gone():
    """errors, random and qa live in auralgen.core only (the redesign's shims were removed with their users)."""
    import importlib

    for old in ("auralgen.errors", "auralgen.random", "auralgen.qa"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
