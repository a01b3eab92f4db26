"""Generate a dataset: ``python generate.py [overrides]`` (Hydra; see conf/ and README)."""

import os
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from auralgen.config import check_command_line, validate

CONF = str(Path(__file__).resolve().parent / "conf")


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from auralgen import pipeline

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN:  # each job of a sweep writes to its own folder
        cfg.out = os.path.join(cfg.out, hc.job.override_dirname or f"job{hc.job.num}")
    code = pipeline.run_reported(validate(cfg))
    if code:
        sys.exit(code)


if __name__ == "__main__":
    os.environ.setdefault("PRA_NUM_THREADS", "1")
    from auralgen.config import refuse_ignored_task_overrides
    from auralgen.pipeline import preflight

    check_command_line(
        sys.argv[1:], config_dir=CONF, config_name="config", validate_fn=preflight, rules=refuse_ignored_task_overrides
    )
    main()
