"""Driver: ``python run_failing.py OUT WORKERS POISON SHARD_SIZE SLEEP_S [ITEMS_PER_LEVEL [NOISE_S]]`` runs the
failing_probe
task through ``generation.run.run_reported`` (the path generate.py takes) and exits with its code."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # this tree's auralgen, not an installed one

import failing_task  # noqa: E402  (registers failing_probe)

from auralgen.config import ExportConfig, RunConfig  # noqa: E402
from auralgen.generation.run import run_reported  # noqa: E402
from auralgen.tasks.base import AudioConfig  # noqa: E402


def main(
    out: str, workers: str, poison: str, shard_size: str, sleep_s: str, items_per_level: str = "8", noise_s: str = "0"
) -> int:
    task = failing_task.FailingConfig(
        poison=poison, sleep_s=float(sleep_s), items_per_level=int(items_per_level), noise_s=float(noise_s)
    )
    run = RunConfig(
        seed=0,
        splits=("test",),
        out=out,
        workers=int(workers),
        shard_size=int(shard_size),
        audio=AudioConfig(),
        tasks=(task,),
        export=ExportConfig(),
        suite="failing_probe",
        progress=False,
    )
    return run_reported(run, log=lambda *a: None)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
