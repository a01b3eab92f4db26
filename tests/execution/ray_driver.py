"""Driver: ``python ray_driver.py OUT POISON EXECUTOR SLEEP_S [ITEMS_PER_LEVEL]`` runs the failing_probe task
(``tests/support/failing_task.py``) through ``generation.run.run_reported`` (the path generate.py takes) and exits
with its code. ``EXECUTOR`` is ``local`` (a pool of 2 workers) or the ``host:port`` of a Ray cluster to join."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auralgen.config import ExportConfig, RunConfig  # noqa: E402
from auralgen.generation.run import run_reported  # noqa: E402
from auralgen.tasks.base import AudioConfig  # noqa: E402
from tests.support import failing_task  # noqa: E402  (registers failing_probe)


def main(out: str, poison: str, executor: str, sleep_s: str, items_per_level: str = "8") -> int:
    task = failing_task.FailingConfig(poison=poison, sleep_s=float(sleep_s), items_per_level=int(items_per_level))
    run = RunConfig(
        seed=0,
        splits=("test",),
        out=out,
        workers=2,
        shard_size=4,
        audio=AudioConfig(),
        tasks=(task,),
        export=ExportConfig(),
        suite="failing_probe",
        progress=False,
    )
    ex = None
    if executor != "local":
        from auralgen.execution.ray import RayExecutor

        # the workers import the test task (tests.support.failing_task) when they unpickle its config
        ex = RayExecutor(executor, runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    return run_reported(run, executor=ex, log=lambda *a: None)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
