"""Adding a task is its module, its test and one line in the suite file: the golden check of a copy
of the default suite with a throw-away task added finds every pinned shard unchanged and only the
new task's shards added (so nothing is re-pinned and no version bumped for the other tasks).

The task module is written into a temporary folder and imported by the generating process before
its command line starts (``bench/golden.py``'s ``preload``); the suite copy is that folder's
``suite/<name>.yaml`` (``suite_file``), the shipped ``conf/suite/default.yaml`` plus one line.
"""

from __future__ import annotations

import re

import pytest

from tests.golden.test_golden import ROOT, golden

NAME = "toy_softer"
SUITE_LINE = f"  - /task@tasks.{NAME}: {NAME}\n"

MODULE = '''"""A throw-away task: which half of a tone is softer."""

from dataclasses import dataclass

import numpy as np

from auralgen.tasks.base import AuditSpec, Measurement, Task, TaskConfig, register


def halves_db(clip):
    mono = clip.mean(axis=0)
    half = mono.size // 2
    return [float(10 * np.log10(np.mean(np.square(x, dtype=np.float64)) + 1e-20)) for x in (mono[:half], mono[half:])]


def listen(question, options, clips, sample_rate):
    first, second = halves_db(clips[0])
    return options.index("The first" if first < second else "The second")


@dataclass(frozen=True)
class ToySofterConfig(TaskConfig):
    name: str = "toy_softer"
    levels: tuple = (3.0, 12.0)  # level difference, dB


@register
class ToySofter(Task):
    name = "toy_softer"
    sub_category = "loudness"
    attribute = "loudness"
    regime = "relative"
    level_unit = "dB"
    n_choices = 2
    Config = ToySofterConfig
    questions = ("Which half of the tone is softer?",)
    audit = AuditSpec(("first", "difference", "row.level", "audio.*", "row.flac_bytes"), listener_easiest="max")
    listener = staticmethod(listen)

    def sample(self, rng, level):
        value = float(self.cfg.levels[level] if isinstance(level, int) else level.value)
        return {"first": bool(rng.integers(2)), "difference": value, "sample_rate_hz": self.sample_rate}

    def render(self, params):
        tone = 0.05 * np.sin(2 * np.pi * 500.0 * np.arange(int(0.3 * self.sample_rate)) / self.sample_rate)
        soft = tone * 10 ** (-params["difference"] / 20)
        halves = (soft, tone) if params["first"] else (tone, soft)
        return [np.concatenate(halves)[None, :].astype(np.float32)]

    def qa(self, params, rng, *, slot):
        answer = "The first" if params["first"] else "The second"
        return self.make_qa(answer, ["The first", "The second"], rng, slot=slot)

    def measure(self, params, clips):
        first, second = halves_db(clips[0])
        measured = second - first if params["first"] else first - second
        ok = abs(measured - params["difference"]) < 0.1
        record = {"measured": round(measured, 3), "expected": params["difference"], "tolerance": 0.1, "ok": ok}
        return Measurement({"difference_db": record}, valid=ok)
'''


@pytest.fixture()
def added_task(tmp_path):
    """``(suite file, task module)``: the default suite with one line added, and the task's module."""
    module = tmp_path / f"{NAME}.py"
    module.write_text(MODULE)
    shipped = (ROOT / "conf" / "suite" / "default.yaml").read_text()
    lines = shipped.splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith("  - /task@tasks."))
    suite = tmp_path / "conf" / "suite" / "default_and_toy.yaml"
    suite.parent.mkdir(parents=True)
    suite.write_text("".join([*lines[: last + 1], SUITE_LINE, *lines[last + 1 :]]))
    assert golden.default_suite_tasks(suite) == (*golden.DEFAULT_TASKS, NAME)  # one line more, nothing else
    return suite, module


def _assert_only_added(ok: bool, message: str, tasks: tuple[str, ...] | None) -> None:
    """Every pinned shard of ``tasks`` (None: all) passed, and the new task's one shard was added."""
    assert ok, message
    pinned = [p for p in golden.load("fast")["shards"] if tasks is None or p.split("/")[1] in tasks]
    counts = re.search(r"(\d+) byte-identical, (\d+) fingerprint-identical, (\d+) audio within 1 LSB", message)
    assert counts is not None and sum(map(int, counts.groups())) == len(pinned) > 0, message
    assert message.endswith(f"1 shard(s) of new tasks added, not pinned: data/{NAME}/test-00000-of-00001.parquet")


TRIMMED = ("pitch_relative", "loudness_relative")  # two quick tasks: seconds, not the whole suite


def test_a_task_added_to_a_trimmed_suite_copy_adds_its_shards_and_changes_none(added_task):
    suite, module = added_task
    ok, message = golden.check("fast", tasks=(*TRIMMED, NAME), suite_file=suite, preload=module)
    _assert_only_added(ok, message, TRIMMED)


@pytest.mark.slow
def test_a_task_added_to_the_default_suite_copy_adds_its_shards_and_changes_none(added_task):
    suite, module = added_task
    ok, message = golden.check("fast", suite_file=suite, preload=module)
    _assert_only_added(ok, message, None)
