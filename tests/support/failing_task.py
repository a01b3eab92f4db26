"""A test-only task that fails while rendering when its poison file exists.

Registered in the task registry on import (never shipped): ``run_failing.py`` imports it and
calls the pipeline directly, so the failure happens inside a worker process, as a sampler or
renderer error would. The poison file is the "bad input": its content chooses the kind of
error (``input``: a ParameterError, exit code 2; ``bug``: a ZeroDivisionError, exit code 1);
deleting it is the fix. While it exists, items after the failing one take ``slow_s`` each, so
a run that waited for them instead of stopping would overrun the test's timeout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.tasks.base import AuditSpec, Task, TaskConfig, register


@dataclass(frozen=True)
class FailingConfig(TaskConfig):
    name: str = "failing_probe"
    levels: tuple = (0, 1, 2)
    items_per_level: int = 8
    poison: str = ""
    fail_level: int = 1
    fail_k: int = 5
    sleep_s: float = 0.0  # every item
    slow_s: float = 600.0  # items after the failing one, while poisoned (a run that waited for them would hang)
    noise_s: float = 0.0  # > 0: the clip is this long and white noise (large results, which fill a pipe)


@register
class FailingProbe(Task):
    name = "failing_probe"
    sub_category = "test"
    attribute = "pitch"
    regime = "absolute"
    level_unit = "index"
    n_choices = 2
    Config = FailingConfig
    questions = ("Is this tone high or low?",)
    audit = AuditSpec(("freq_hz",), listener_easiest=None, reason="a test-only probe of failures, never audited")
    listener = None

    def sample(self, rng, level):
        level = self.as_level(level)
        return {"level": level.index, "k": level.k, "freq_hz": float(rng.uniform(300.0, 600.0))}

    def render(self, params):
        cfg = self.cfg
        time.sleep(cfg.sleep_s)
        poison = Path(cfg.poison) if cfg.poison else None
        if poison is not None and poison.exists():
            at = (params["level"], params["k"])
            if at == (cfg.fail_level, cfg.fail_k):
                if poison.read_text().strip() == "bug":
                    return [np.zeros((1, 10), np.float32)] * (1 // 0)  # an internal error: ZeroDivisionError
                raise ParameterError(f"sources_dir file {poison.name!r} is corrupt; allowed: a readable WAV file")
            if at > (cfg.fail_level, cfg.fail_k):
                time.sleep(cfg.slow_s)
        if cfg.noise_s > 0:  # incompressible: a few 100 kB per item
            noise = np.random.default_rng(params["k"]).uniform(-0.5, 0.5, int(cfg.noise_s * self.sample_rate))
            return [noise.astype(np.float32)[None, :]]
        t = np.arange(int(0.05 * self.sample_rate)) / self.sample_rate
        return [(0.1 * np.sin(2 * np.pi * params["freq_hz"] * t)).astype(np.float32)[None, :]]

    def qa(self, params, rng, *, slot):
        answer = "High" if params["freq_hz"] > 450 else "Low"
        return self.make_qa(answer, ["High", "Low"], rng, slot=slot)

    def check(self, params, clips):
        return {"valid": True}
