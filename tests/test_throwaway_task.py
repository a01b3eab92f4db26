"""A task is one class and one config.

The task below is defined entirely in this test -- nothing else in the repository names it --
and is registered for the test's duration. It is then generated, audited, exported and
evaluated through the library's own entry points, with no other edit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from auralgen.tasks.base import TASKS, AuditSpec, Measurement, Task, TaskConfig
from tests.support.builders import small_run

NAME = "toy_louder"
SR = 16000
TONE_S = 0.3


def _rms_db(x: np.ndarray) -> float:
    return float(10.0 * np.log10(np.mean(np.square(x, dtype=np.float64)) + 1e-20))


def _halves(clip: np.ndarray) -> tuple[float, float]:
    mono = clip.mean(axis=0)
    half = mono.size // 2
    return _rms_db(mono[:half]), _rms_db(mono[half:])


def listen(question, options, clips, sample_rate) -> int:
    """Which half of the clip is louder: the listener reads the audio, never params."""
    first, second = _halves(clips[0])
    return options.index("The first" if first > second else "The second")


@dataclass(frozen=True)
class ToyConfig(TaskConfig):
    name: str = NAME
    levels: tuple = (3.0, 6.0, 12.0)  # level difference, dB
    items_per_level: int = 8


class ToyLouder(Task):
    name = NAME
    sub_category = "loudness"
    attribute = "loudness"
    regime = "relative"
    level_unit = "dB"
    n_choices = 2
    Config = ToyConfig
    questions = ("Which of the two tones is louder?",)
    audit = AuditSpec(
        ("direction", "difference", "row.level", "delta.*", "audio.*", "row.flac_bytes", "sounds.*"),
        listener_easiest="max",
    )
    listener = staticmethod(listen)

    def sample(self, rng, level):
        value = float(self.cfg.levels[level] if isinstance(level, int) else level.value)
        return {
            "direction": ["first", "second"][int(rng.integers(2))],
            "difference": value,
            "freq_hz": float(rng.uniform(300.0, 900.0)),
            "sample_rate_hz": self.sample_rate,
        }

    def render(self, params):
        n = int(TONE_S * self.sample_rate)
        t = np.arange(n) / self.sample_rate
        tone = np.sin(2 * np.pi * params["freq_hz"] * t)
        soft, loud = 0.05, 0.05 * 10 ** (params["difference"] / 20)
        a, b = (loud, soft) if params["direction"] == "first" else (soft, loud)
        return [np.concatenate([a * tone, b * tone])[None, :].astype(np.float32)]

    def qa(self, params, rng, *, slot):
        answer = "The first" if params["direction"] == "first" else "The second"
        return self.make_qa(answer, ["The first", "The second"], rng, slot=slot)

    def measure(self, params, clips):
        first, second = _halves(clips[0])
        measured = first - second if params["direction"] == "first" else second - first
        ok = abs(measured - params["difference"]) < 0.1
        record = {"measured": round(measured, 3), "expected": params["difference"], "tolerance": 0.1, "ok": ok}
        return Measurement({"difference_db": record}, valid=ok)

    def eval_fields(self, params):
        return {"difference": params["difference"], "difference_unit": "dB"}


@pytest.fixture()
def toy_task():
    TASKS.register()(ToyLouder)
    yield ToyLouder
    TASKS.unregister(NAME)


def _generate(out) -> dict:
    from auralgen.generation.run import run

    # through the command line's own composition: the task's config node comes from ToyConfig
    return run(small_run(f"task={NAME}", "seed=3", out=out), log=lambda *a: None)


def _evaluate(data, out, **extra) -> dict:
    from auralgen.evaluation.config import validate_eval
    from auralgen.evaluation.runner import run

    cfg = {
        "data": str(data),
        "out": str(out),
        "model": {"kind": "dsp", "label": "dsp"},
        "progress": False,
        "eval": {"rotations": 1, "reorder_runs": 1, "n_boot": 0},
        **extra,
    }
    return run(validate_eval(cfg), log=lambda *a: None)


def test_a_task_defined_in_a_test_generates_audits_exports_and_evaluates(toy_task, tmp_path):
    import datasets

    from auralgen.validation.audit import audit_dataset

    data = tmp_path / "data"
    summary = _generate(data)
    n = len(ToyConfig.levels) * ToyConfig.items_per_level
    assert summary["items"] == {"items": n, "written": n, "resampled": 0, "dropped": 0}

    # every label confirmed by the task's own measurement, written to the dataset
    ds = datasets.load_dataset(str(data), split="test")
    assert len(ds) == n and set(ds["task"]) == {NAME}
    assert all(ds["valid"])
    measured = [json.loads(m)["difference_db"]["measured"] for m in ds["measured"]]
    assert np.allclose(measured, ds["level_value"], atol=0.1)

    # the audit knows the task from its class alone: no failure, its listener heard, its features expected
    report = audit_dataset(data)
    assert not report.failures
    heard = {r["level_value"]: r["accuracy"] for r in report.listener if r["task"] == NAME}
    assert heard[12.0] == 1.0
    assert NAME in report.shortcuts

    # interop export and evaluation through the DSP listener the task binds
    exported = _evaluate(data, tmp_path / "star", action="export", export_format="starbench")
    assert exported["items"] == n
    results = _evaluate(data, tmp_path / "eval")
    assert results["accounting"]["by_task"][NAME]["asked"] == n
    assert results["accounting"]["by_task"][NAME]["correct"] == n
    curve = results["psychometric"][NAME]
    assert curve["unit"] == "dB" and curve["x"] == list(ToyConfig.levels)
