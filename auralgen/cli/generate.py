"""``auralgen generate [overrides]``: generate a dataset (Hydra; the shipped conf/config.yaml, README)."""

from __future__ import annotations

import os
import sys

import hydra
from omegaconf import DictConfig

from auralgen.cli._hydra import check_command_line, refuse_ignored_task_overrides, register_configs
from auralgen.config import validate
from auralgen.core.resources import conf_dir


def _generate(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from auralgen.generation.run import run_reported

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN:  # each job of a sweep writes to its own folder
        cfg.out = os.path.join(cfg.out, hc.job.override_dirname or f"job{hc.job.num}")
    code = run_reported(validate(cfg))
    if code:
        sys.exit(code)


HELP = """usage: auralgen generate [key=value ...] [-m key=a,b,c ...]

Generate a dataset (parquet shards, a dataset card and manifest.json) into `out`.

common keys:
  task=NAME                  generate one task instead of the suite (task.levels=[...], task.items_per_level=N)
  suite=NAME                 default, tones, spatial, recorded, clips, instruments, validity (conf/suite/)
  seed=N  split=test|[train,test]  out=DIR  workers=auto|N  overwrite=true
  source=folder source.dir=DIR   draw sounds from recordings (also hf, clips, soundfont)
  executor=ray                   render on a Ray cluster (same bytes)

examples:
  auralgen generate task=pitch_relative 'task.levels=[0,25,50]' task.items_per_level=40 out=data/pitch_fine
  auralgen generate -m task=duration_relative seed=1,2,3 out=data/seeds

every key with its default: docs/reference/config.md, tasks: docs/reference/tasks.md;
the composed config of a command line: auralgen generate [overrides] --cfg job;
Hydra's own help (every config group and its options): auralgen generate --hydra-help"""


def main(argv: list[str]) -> int:
    """Check every job of the command line (one ``error:`` line, exit 2), then let Hydra run it.

    Parameters
    ----------
    argv : list of str
        Hydra overrides (``key=value``) and flags, after ``auralgen generate``.

    Returns
    -------
    int
        0 when every job ran (or for ``--help``); a failed job exits the process itself with its non-zero code.
    """
    if any(a in ("-h", "--help") for a in argv):
        print(HELP)
        return 0
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    from auralgen.generation.run import preflight

    conf = str(conf_dir())
    register_configs()  # the task group (also for --cfg / --help, which are not checked)
    check_command_line(
        argv, config_dir=conf, config_name="config", validate_fn=preflight, rules=refuse_ignored_task_overrides
    )
    sys.argv = ["auralgen generate", *argv]  # Hydra parses sys.argv
    hydra.main(config_path=conf, config_name="config", version_base="1.3")(_generate)()
    return 0
