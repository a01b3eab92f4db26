"""One way to name tasks in every mode: ``task=`` (one name, or in evaluation a list), in generation as in
grid and adaptive evaluation; evaluation's former ``tasks=`` still works with a one-line note, and
generation answers it with one error line naming ``task=``."""

from __future__ import annotations

import pytest

from auralgen.cli._hydra import check_command_line, compose, tasks_deprecation
from auralgen.core.resources import conf_dir
from auralgen.evaluation.config import validate_eval


def _eval(*overrides):
    return validate_eval(compose(list(overrides), config_name="evaluate"))


@pytest.mark.parametrize(
    ("overrides", "tasks"),
    [
        (["task=pitch_relative"], ("pitch_relative",)),
        (["task=[pitch_relative,audiogram]"], ("pitch_relative", "audiogram")),
        (["mode=adaptive", "task=pitch_relative"], ("pitch_relative",)),
        (["mode=adaptive", "task=[pitch_relative,loudness_relative]"], ("pitch_relative", "loudness_relative")),
        (["tasks=[pitch_relative]"], ("pitch_relative",)),  # the former spelling
        ([], None),  # every task of the dataset
    ],
)
def test_evaluation_selects_tasks_with_task(overrides, tasks):
    assert _eval(*overrides).tasks == tasks


def test_generation_keeps_its_task_group_after_an_evaluation_compose():
    """Evaluation composes without the ``task`` config group (there ``task=`` is a plain key); the
    generation config composed next in the same process still selects a task's Config node."""
    assert _eval("task=pitch_relative").tasks == ("pitch_relative",)
    cfg = compose(["task=pitch_relative", "task.items_per_level=3"])
    assert cfg.task.name == "pitch_relative" and cfg.task.items_per_level == 3


@pytest.mark.parametrize(
    ("config", "argv", "line"),
    [
        (
            "evaluate",
            ["task=pitch_relative", "tasks=[audiogram]"],
            "error: task=pitch_relative and tasks=[audiogram] both select tasks; allowed: task= alone "
            "(tasks= is its former spelling)",
        ),
        (
            "evaluate",
            ["task=[]"],
            "error: task=[] is invalid; allowed: null (every task), a task name (task=pitch_relative) "
            "or a list of names (task=[pitch_relative,audiogram])",
        ),
        (
            "evaluate",
            ["mode=adaptive"],
            "error: mode=adaptive needs tasks; allowed: task=<relative task> or task=[<relative task>, ...], "
            "e.g. task=pitch_relative",
        ),
        (
            "config",
            ["tasks=[pitch_relative]"],
            "error: tasks=[pitch_relative] names tasks as a list, but a suite's tasks are a mapping of task configs; "
            "allowed: task=<name> (one task), "
            "-m task=a,b (one dataset each), suite=<name>, or a suite grown with +task@tasks.<name>=<name>",
        ),
    ],
)
def test_a_wrong_task_selection_is_one_line_exit_2(config, argv, line, capsys):
    from auralgen.cli._hydra import refuse_ignored_task_overrides
    from auralgen.evaluation.config import validate_eval as check_eval

    extra = {"validate_fn": check_eval} if config == "evaluate" else {"rules": refuse_ignored_task_overrides}
    with pytest.raises(SystemExit) as stop:
        check_command_line([*argv, "out=res/x"], config_dir=str(conf_dir()), config_name=config, **extra)
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [line]


def test_the_former_spelling_gets_one_note_naming_the_new_one():
    assert tasks_deprecation(["model=dsp", "tasks=[pitch_relative]"]) == (
        "note: tasks= is deprecated; write task=[pitch_relative] (one name or a list, the key auralgen generate "
        "takes too)"
    )
    assert tasks_deprecation(["model=dsp", "task=pitch_relative", "data=tasks=x"]) is None
