"""A misspelt config key is answered with the closest known key, on the one error line."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from auralgen.cli._hydra import check_command_line
from auralgen.core.errors import ParameterError
from auralgen.core.mapping import did_you_mean, from_mapping
from auralgen.core.resources import conf_dir


@pytest.mark.parametrize(
    "argv, line",
    [
        (["seeed=1"], "error: Could not override 'seeed' (did you mean 'seed'?)"),
        (
            ["task=pitch_relative", "task.itmes_per_level=1"],
            "error: Could not override 'task.itmes_per_level' (did you mean 'task.items_per_level'?)",
        ),
        (["task=pitch_relative", "task.zzz=1"], "error: Could not override 'task.zzz'."),
    ],
)
def test_generate_names_the_closest_key(argv, line, capsys):
    with pytest.raises(SystemExit) as stop:
        check_command_line([*argv, "out=data/x"], config_dir=str(conf_dir()), config_name="config")
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [line]


def test_from_mapping_names_the_closest_field():
    @dataclass(frozen=True)
    class Cfg:
        reply: str = "A"
        label: str = ""

    with pytest.raises(ParameterError, match=r"^model\.reeply: unknown key \(did you mean 'reply'\?\); allowed keys"):
        from_mapping(Cfg, {"reeply": "B"}, "model")
    assert did_you_mean("lable", ["reply", "label"], prefix="model.") == " (did you mean 'model.label'?)"
    assert did_you_mean("x", ["reply"]) == ""
