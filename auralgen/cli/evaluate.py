"""``auralgen evaluate [overrides]``: evaluate a model on an exported dataset (Hydra; conf/evaluate.yaml)."""

from __future__ import annotations

import os
import sys

import hydra
from omegaconf import DictConfig

from auralgen.cli._hydra import EVALUATE_CONFIG, check_command_line, register_configs, tasks_deprecation
from auralgen.core.resources import conf_dir
from auralgen.evaluation.config import validate_eval


def _evaluate(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from auralgen.core.errors import EXIT_ENVIRONMENT, AuralgenError, environment_error
    from auralgen.evaluation.runner import RunFailedError, run

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN and cfg.action == "evaluate":  # a sweep over models: one folder each, inside out
        out, label = str(cfg.out).rstrip("/"), str(cfg.model.label)
        base = os.path.dirname(out) if os.path.basename(out) == label else out
        cfg.out = os.path.join(base or ".", label)
        if cfg.leaderboard is None:  # the sweep's runs share one leaderboard in the sweep's folder
            cfg.leaderboard = os.path.join(base or ".", "leaderboard.md")
    try:
        run(validate_eval(cfg))
    except RunFailedError as exc:  # the model failed too often: nothing is scored
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(3)
    except AuralgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"interrupted: {_resume_hint(cfg)}", file=sys.stderr)
        sys.exit(130)
    except OSError as exc:  # disk full or quota exceeded: the machine failed, not the input
        line = environment_error(exc, str(cfg.out))
        if line is None:
            raise
        print(line, file=sys.stderr)
        sys.exit(EXIT_ENVIRONMENT)


def _resume_hint(cfg: DictConfig) -> str:
    if cfg.get("mode") == "adaptive":
        return (
            f"the questions so far are stored in {os.path.join(str(cfg.out), 'trials.jsonl')}; run the same command "
            "again to continue the tracks from them (overwrite=true starts afresh)"
        )
    return "the replies so far are cached; run the same command again to resume"


def main(argv: list[str]) -> int:
    """Check every job of the command line (one ``error:`` line, exit 2), then let Hydra run it.

    Parameters
    ----------
    argv : list of str
        Hydra overrides (``key=value``) and flags, after ``auralgen evaluate``.

    Returns
    -------
    int
        0 when every job ran; a failed job exits the process itself (2 bad input, 3 the model failed too
        often, 130 interrupted, 75 for a full disk or quota).
    """
    conf = str(conf_dir())
    check_command_line(argv, config_dir=conf, config_name=EVALUATE_CONFIG, validate_fn=validate_eval)
    note = tasks_deprecation(argv)
    if note:  # after the checks: a bad command line still ends in its one error line
        print(note, file=sys.stderr)
    register_configs(task_group=False)  # task= is a plain key here (also for --cfg / --help, which are not checked)
    sys.argv = ["auralgen evaluate", *argv]  # Hydra parses sys.argv
    hydra.main(config_path=conf, config_name=EVALUATE_CONFIG, version_base="1.3")(_evaluate)()
    return 0
