"""The audio-nuisance control: level, loudness and timing facts of the audio, per clip and part,
learned on one seed and tested on another; declared cues left out."""

import numpy as np
import pytest

from auralgen.generation.run import run as generate
from auralgen.validation.controls import CONTROLS, Nuisance, Sample, audit_controls
from auralgen.validation.nuisance import declared, declared_for, nuisance_features, usable
from tests.support.builders import params_of, read_rows, small_run

SR = 16000
TEXTS = ("Higher", "Lower", "The same")


def _clip(rng, lead_s: float) -> np.ndarray:
    """A 2 s clip: a 0.5 s tone at ``lead_s``, its level roved."""
    x = np.zeros((1, 2 * SR), dtype=np.float32)
    a = int(lead_s * SR)
    x[0, a : a + SR // 2] = 10 ** (rng.uniform(-30, -20) / 20) * np.sin(2 * np.pi * 440 * np.arange(SR // 2) / SR)
    return x


def _samples(n, rng, *, task, leak: bool):
    """Items whose answer is (leak) or is not set by the tone's lead silence."""
    out = []
    for _ in range(n):
        k = int(rng.integers(3))
        lead = 0.2 + 0.4 * k + rng.uniform(0, 0.1) if leak else rng.uniform(0.1, 1.3)
        opts = tuple(rng.permutation(TEXTS).tolist())
        audio = nuisance_features([_clip(rng, lead)], SR)
        out.append(Sample(task, "Q", opts, opts.index(TEXTS[k]), {}, audio))
    return out


def _accuracy(train, test):
    m = Nuisance().fit(train)
    return float(np.mean([m.predict(s) == s.answer for s in test]))


def test_features_measure_level_span_and_silences():
    rng = np.random.default_rng(0)
    f = nuisance_features([_clip(rng, 0.5), np.zeros((1, SR), np.float32)], SR)
    assert f["clip0.lead_s"] == pytest.approx(0.5, abs=0.01) and f["clip0.span_s"] == pytest.approx(0.5, abs=0.02)
    assert f["clip0.trail_s"] == pytest.approx(1.0, abs=0.02) and f["clip0.n_segments"] == 1.0
    assert f["clip0.crest_db"] == pytest.approx(3.01 + 6.02, abs=0.05)  # a sine over a quarter of the clip
    assert f["clip1.n_segments"] == 0.0 and f["clip1.rms_dbfs"] == -300.0


@pytest.mark.parametrize(
    ("task", "reads"), [("pitch_relative", True), ("tempo_absolute", True), ("t", True), ("audiogram", False)]
)
def test_the_control_finds_an_answer_in_the_lead_silence_unless_declared(task, reads):
    """The audiogram declares ``audio.*`` (level is its attribute, and a tone's presence sets every timing
    fact): the control leaves every feature out there and is at chance; elsewhere it finds the silence."""
    rng = np.random.default_rng(1)
    acc = _accuracy(_samples(150, rng, task=task, leak=True), _samples(150, rng, task=task, leak=True))
    assert (acc > 0.95) if reads else (acc < 0.45), (task, acc)
    assert usable(task, "clip0.lead_s") is reads
    chance = _accuracy(_samples(150, rng, task=task, leak=False), _samples(150, rng, task=task, leak=False))
    assert chance < 0.45  # 1/3 +- 0.08 at n = 150


def test_declared_cues_follow_the_audit_spec():
    assert declared("pitch_relative") == frozenset()
    assert {"rms_dbfs", "peak_dbfs", "part0_rms_dbfs", "delta_rms_db"} <= declared("loudness_relative")
    assert {"lufs", "crest_db"} <= declared("loudness_relative")  # level measures of a loudness task: its own cue
    assert "lufs" in declared("duration_relative")  # a clip's energy grows with its sounds' lengths
    assert usable("loudness_relative", "clip0.lufs") is False and usable("pitch_relative", "clip0.lufs") is True
    assert {"n_segments", "crest_db", "span_s"} <= declared("texture_absolute")  # the density's own silences
    assert not {"lead_s", "trail_s"} & declared("texture_absolute")  # placed at random: they must carry nothing
    assert "delta_rms_db" not in declared("brightness_relative")  # level is roved there, not the cue
    # the number of harmonics carrying the energy sets it (bench/brightness_crest.py); onsets are roved
    assert {"crest_db", "rms_dbfs", "peak_dbfs", "part0_rms_dbfs", "part0_peak_dbfs"} <= declared("brightness_absolute")
    assert not {"lead_s", "trail_s", "span_s", "n_segments"} & declared("brightness_absolute")


def test_the_audit_runs_the_nuisance_control_train_seed_to_test_seed(tmp_path):
    """At small n on a real task (pitch_relative, seeds 0 -> 1): the control is reported beside the others
    and sits near chance (the default-suite run at n >= 1,000 is a separate, long job)."""
    for seed in (0, 1):
        args = ("task=pitch_relative", "task.items_per_level=12")
        generate(small_run(*args, out=tmp_path / f"s{seed}", seed=seed), log=lambda *_: None)
    report = audit_controls(tmp_path / "s0", tmp_path / "s1", min_items=10)
    assert "nuisance" in CONTROLS
    row = report.tasks[0]
    r = row["controls"]["nuisance"]
    assert row["n"] >= 60 and r["ci"][0] <= row["honest_chance"] + 0.05, r
    assert "audio=(e)" in report.table()


def test_cues_of_some_items_are_left_out_of_those_items_only(tmp_path):
    """temporal_reorder: level is the order's cue of an approaching source, level and timing of bouncing
    impacts; the control reads neither there, but reads both on a sweep (where they must carry nothing)."""
    from auralgen.validation.controls import samples

    args = ("task=temporal_reorder", "task.items_per_level=4", "task.processes=[approaching,bouncing,sweep]")
    generate(small_run(*args, out=tmp_path / "d"), log=lambda *_: None)
    rows = {}
    for s, row in zip(samples(tmp_path / "d"), read_rows(tmp_path / "d"), strict=True):
        assert s.question == row["question"] and s.options == tuple(row["options"])  # the same row
        rows.setdefault(params_of(row)["process"], []).append(set(s.audio))
    assert set(rows) == {"approaching", "bouncing", "sweep"}
    for process, keys in rows.items():
        for k in keys:
            assert ("clip1.lufs" in k) is (process == "sweep"), (process, sorted(k))
            assert ("clip0.lead_s" in k) is (process != "bouncing"), (process, sorted(k))
    assert not usable("temporal_reorder", "clip0.rms_dbfs")  # declared for the whole task: left out when fitting
    assert declared_for("temporal_reorder", None) == declared_for("temporal_reorder", {"process": "bouncing"})
    assert declared_for("pitch_relative", {"process": "bouncing"}) == frozenset()


def test_a_malformed_per_item_cue_declaration_is_refused():
    from auralgen.tasks.base import AuditSpec

    with pytest.raises(TypeError, match=r"cues_when entry .* allowed: \(params key, values, feature patterns\)"):
        AuditSpec(("difference",), cues_when=(("process", (), ("audio.*",)),))
