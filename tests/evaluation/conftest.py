"""A small exported dataset shared by the harness tests (generated once per session)."""

import pytest

from auralgen.generation.run import run
from tests.support.builders import small_run

QUIET = lambda *_: None  # noqa: E731


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory):
    """Default suite, 1 item per level (audiogram: 3 levels, no probes): 26 items."""
    out = tmp_path_factory.mktemp("eval_ds")
    overrides = ["suite=tones"] + [
        f"tasks.{t}.items_per_level=1"
        for t in ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute")
    ]
    overrides += [
        "tasks.audiogram.items_per_level=1",
        "tasks.audiogram.levels=[-10,40,110]",
        "tasks.audiogram.probe_freqs_hz=[]",
    ]
    run(small_run(*overrides, out=out, workers=1), log=QUIET)
    return out
