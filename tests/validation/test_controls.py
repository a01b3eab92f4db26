"""Learned controls: each audio-free model finds the leak built into a dataset; a balanced one is not flagged."""

import json
import math
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run
from auralgen.validation.__main__ import controls as controls_cli
from auralgen.validation.controls import (
    MIN_ITEMS,
    ControlsReport,
    Metadata,
    OptionText,
    PositionPrior,
    Sample,
    TextPrior,
    audit_controls,
    content_features,
    holm,
    min_detectable_effect,
    p_above,
    task_controls,
    usable,
    wilson,
)
from tests.support.builders import decode, small_run
from tests.validation.test_audit import flac

QUIET = lambda *_: None  # noqa: E731
OPTIONS = ("Lower", "The same", "Higher", "Unable to determine")


# --- statistics ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("correct", "n", "lo", "hi"), [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (81, 263, 0.2553, 0.3662)]
)
def test_wilson_interval_matches_the_textbook_values(correct, n, lo, hi):
    got = wilson(correct, n)
    assert got == pytest.approx((lo, hi), abs=1e-4)


def test_min_detectable_effect_is_the_excess_found_with_80_percent_power():
    n, chance = 200, 0.25
    mde = min_detectable_effect(n, chance)
    critical = next(c for c in range(n + 1) if stats.binom.sf(c - 1, n, chance) <= 0.05)
    assert stats.binom.sf(critical - 1, n, chance + mde) == pytest.approx(0.8, abs=1e-6)
    assert 0.07 < mde < 0.11  # about 2.5 standard errors of a proportion at 25 % on 200 items
    assert min_detectable_effect(800, chance) < mde / 1.8  # halves (roughly) at four times the items


def test_p_above_is_the_one_sided_binomial_tail():
    assert p_above(60, 200, 0.25) == pytest.approx(stats.binomtest(60, 200, 0.25, alternative="greater").pvalue)
    assert p_above(0, 0, 0.25) == 1.0


# --- the models on hand-made samples ---------------------------------------------------------------


def _samples(n, rng, *, answer_text=None, meta_key=None, task="t"):
    """Pitch-like samples: options shuffled, the answer a random non-'Unable' text (or always
    ``answer_text``); ``meta_key`` set to the answer's text index leaks it through metadata."""
    out = []
    for _ in range(n):
        opts = [*rng.permutation(OPTIONS[:3]).tolist(), OPTIONS[3]]
        text = answer_text or OPTIONS[int(rng.integers(3))]
        meta = {"clip0.dur_s": float(rng.uniform(1, 2)), "bytes": float(rng.integers(1000, 2000))}
        if meta_key:
            meta[meta_key] = 1.0 + OPTIONS.index(text)
        out.append(Sample(task, f"Compare tone {int(rng.integers(100))} Hz", tuple(opts), opts.index(text), meta))
    return out


def _accuracy(model, train, test):
    m = model().fit(train)
    return np.mean([m.predict(s) == s.answer for s in test])


def test_text_prior_and_option_text_learn_an_always_right_text():
    rng = np.random.default_rng(0)
    train, test = _samples(60, rng, answer_text="Higher"), _samples(60, rng, answer_text="Higher")
    assert _accuracy(TextPrior, train, test) == 1.0
    assert _accuracy(OptionText, train, test) == 1.0
    assert _accuracy(PositionPrior, train, test) < 0.6  # positions are shuffled: no position is always right


def test_metadata_model_reads_an_answer_encoded_in_clip_length_and_nothing_else_does():
    rng = np.random.default_rng(1)
    train, test = _samples(90, rng, meta_key="clip1.dur_s"), _samples(90, rng, meta_key="clip1.dur_s")
    assert _accuracy(Metadata, train, test) == 1.0
    assert _accuracy(TextPrior, train, test) < 0.5
    clean_train, clean_test = _samples(90, rng), _samples(90, rng)
    assert _accuracy(Metadata, clean_train, clean_test) < 0.5  # three texts right equally often: chance 1/3


def test_metadata_model_reads_file_size_and_clip_length_for_every_task():
    rng = np.random.default_rng(2)
    for task in ("pitch_relative", "loudness_relative", "audiogram", "t"):
        for key in ("clip0.bytes", "bytes", "clip2.dur_s"):
            train, test = _samples(90, rng, meta_key=key, task=task), _samples(90, rng, meta_key=key, task=task)
            assert _accuracy(Metadata, train, test) > 0.95, (task, key)  # chance: 1/3


@pytest.mark.parametrize(
    ("task", "uses_level"),
    [
        ("pitch_relative", True),
        ("temporal_reorder", False),
        ("loudness_relative", False),
        ("audiogram", False),
        ("distance_absolute", False),
        ("unregistered_task", True),
    ],
)
def test_metadata_model_reads_rms_and_peak_only_where_level_is_not_the_probed_cue(task, uses_level):
    """A task declaring ``audio.rms_dbfs`` / ``audio.peak_dbfs`` (or ``audio.*``) a target feature: a model reading
    the clip's level is listening, so the control leaves it out; elsewhere the level is a shortcut it must find."""
    rng = np.random.default_rng(3)
    for key in ("clip0.rms_db", "clip1.peak_db_rank"):
        train, test = _samples(90, rng, meta_key=key, task=task), _samples(90, rng, meta_key=key, task=task)
        acc = _accuracy(Metadata, train, test)
        assert (acc == 1.0) if uses_level else (acc < 0.5), (task, key, acc)
    assert (content_features(task) == {"rms_db", "peak_db"}) == uses_level
    assert usable(task, "clip2.bytes_rank") and usable(task, "n_clips") and usable(task, "clip0.dur_s")


def test_the_level_rule_reads_each_feature_separately():
    assert content_features("duration_absolute") == {"peak_db"}  # declares audio.rms_dbfs only
    assert usable("duration_absolute", "clip0.peak_db_rank") and not usable("duration_absolute", "clip0.rms_db")


def test_position_prior_picks_the_most_frequent_position_within_the_items_options():
    train = [Sample("t", "q", ("a", "b", "c"), 2, {}) for _ in range(3)] + [Sample("t", "q", ("a", "b", "c"), 0, {})]
    prior = PositionPrior().fit(train)
    assert prior.predict(Sample("t", "q", ("x", "y", "z"), 0, {})) == 2
    assert prior.predict(Sample("t", "q", ("x", "y"), 0, {})) == 0  # position 2 does not exist here


# --- on generated datasets ----------------------------------------------------------------------------

PITCH = ["task=pitch_relative", "task.levels=[50,100]", "task.items_per_level=24", "task.tone_s=0.2", "task.gap_s=0.1"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two seeds of a pitch task whose answers are only 'Lower' or 'Higher' (no zero level)."""
    root = tmp_path_factory.mktemp("controls")
    for seed in (1, 2):
        run(small_run(*PITCH, out=root / f"s{seed}", seed=seed, shard_size=64), log=QUIET)
    return root / "s1", root / "s2"


def _rewrite(src, dst, edit):
    """Copy dataset ``src`` to ``dst`` and apply ``edit(row)`` to every row."""
    shutil.copytree(src, dst)
    for path in sorted(dst.glob("data/*/*.parquet")):
        table = pq.read_table(path)
        rows = [edit(r) for r in table.to_pylist()]
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return dst


def _always_higher(row):
    row["answer_index"] = row["options"].index("Higher")
    row["answer"] = "Higher"
    return row


def _length_leak(row):
    """Pad the clip with silence: 0.1 s more when the answer is 'Higher' (the label is unchanged)."""
    x, sr = decode(row["audio"][0])
    pad = int(0.1 * sr) if row["answer"] == "Higher" else 0
    row["audio"] = [{**row["audio"][0], "bytes": flac(np.pad(x, ((0, 0), (0, pad))), sr)}]
    return row


def _two_choices(row):
    """Keep only the options that can be right at these levels: a balanced two-choice item."""
    row["options"] = [o for o in row["options"] if o in ("Lower", "Higher")]
    row["answer_index"] = row["options"].index(row["answer"])
    return row


def test_options_that_are_never_right_raise_the_prior_flag_and_too_few_items_are_never_clean(pair):
    report = audit_controls(*pair)
    [row] = report.tasks
    assert row["n"] == 48 < MIN_ITEMS and row["status"] == "too few items"
    assert report.verdict == "too few items" and not report.ok and not report.flags
    assert row["stated_chance"] == 1 / 3 and row["balanced_chance"] == 0.5  # 'The same' never right at these levels
    assert row["honest_chance"] == max(
        row["controls"]["text_prior"]["accuracy"], row["controls"]["position_prior"]["accuracy"]
    )
    small = audit_controls(*pair, min_items=40)
    prior = small.tasks[0]["controls"]["text_prior"]
    assert prior["accuracy"] > 0.4 and prior["p"] == p_above(prior["correct"], 48, 1 / 3 + 0.02)


def test_the_verdict_flags_an_excess_beyond_two_points_and_not_a_chance_excess():
    """A never-right option (stated chance 1/4, a text prior reaches 1/3) is flagged at n = 600; a
    metadata control 5 pp above chance at n = 255 (the validity suite's pitch_relative, 38.8 %) is not:
    the null hypothesis is chance + 2 pp, Holm-corrected over the task's four controls."""
    rng = np.random.default_rng(3)
    report = ControlsReport("train", "test")
    row = task_controls("t", _samples(600, rng), _samples(600, rng), report)
    assert row["controls"]["text_prior"]["accuracy"] > 0.3 and row["stated_chance"] == 0.25
    assert row["status"] == "fail" and ("prior", "t") in [(f["audit"], f["task"]) for f in report.flags]
    assert holm({"a": p_above(99, 255, 1 / 3 + 0.02)} | {c: 0.5 for c in "bcd"}) == set()  # 38.8 % of 255
    assert holm({"a": p_above(120, 255, 1 / 3 + 0.02)} | {c: 0.5 for c in "bcd"}) == {"a"}  # 47 % of 255
    clean = ControlsReport("train", "test")
    two = [Sample(s.task, s.template, s.options[:3], s.answer, s.meta) for s in _samples(600, rng)]
    assert task_controls("t", two[:300], two[300:], clean)["status"] == "clean" and not clean.flags


def test_a_balanced_two_choice_pair_is_clean(pair, tmp_path):
    train = _rewrite(pair[0], tmp_path / "train", _two_choices)
    test = _rewrite(pair[1], tmp_path / "test", _two_choices)
    report = audit_controls(train, test, min_items=40)
    row = report.tasks[0]
    assert not report.flags and report.verdict == "clean" and row["stated_chance"] == 0.5
    assert all(c["accuracy"] < 0.65 for c in row["controls"].values())


def test_an_always_right_text_raises_the_prior_flag(pair, tmp_path):
    train = _rewrite(pair[0], tmp_path / "train", _always_higher)
    test = _rewrite(pair[1], tmp_path / "test", _always_higher)
    report = audit_controls(train, test, min_items=40)
    row = report.tasks[0]
    assert row["controls"]["text_prior"]["accuracy"] == 1.0 and row["honest_chance"] == 1.0
    assert [(f["audit"], f["task"]) for f in report.flags] == [("prior", "pitch_relative")]
    assert report.verdict == "fail"


def test_an_answer_encoded_in_clip_length_raises_the_control_flag(pair, tmp_path, capsys):
    train = _rewrite(pair[0], tmp_path / "train", _length_leak)
    test = _rewrite(pair[1], tmp_path / "test", _length_leak)
    report = audit_controls(train, test, min_items=40)
    meta = report.tasks[0]["controls"]["metadata"]
    assert meta["accuracy"] == 1.0 and meta["excess"] > 0.3
    assert ("control", "pitch_relative") in [(f["audit"], f["task"]) for f in report.flags]
    assert controls_cli([str(train), str(test), "--json", str(tmp_path / "r.json")]) == 1  # n < 200: never clean
    out = capsys.readouterr().out
    assert "pitch_relative" in out and "too few items" in out
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["verdict"] == "too few items" and math.isclose(
        saved["tasks"][0]["controls"]["metadata"]["accuracy"], 1
    )


def test_controls_refuse_a_directory_that_is_no_dataset(tmp_path, capsys):
    with pytest.raises(ParameterError, match="is not a directory"):
        audit_controls(tmp_path / "missing", tmp_path)
    assert controls_cli([str(tmp_path / "missing"), str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: dataset=")


def test_auralgen_audit_runs_the_controls_beside_the_audit(pair, tmp_path, capsys):
    from auralgen.cli.audit import main

    train = _rewrite(pair[0], tmp_path / "train", _length_leak)
    test = _rewrite(pair[1], tmp_path / "test", _length_leak)
    assert main([str(test), "--controls", str(train), "--no-listener", "--json", str(tmp_path / "a.json")]) == 1
    saved = json.loads((tmp_path / "a.json").read_text())
    assert saved["controls"]["tasks"][0]["controls"]["metadata"]["accuracy"] == 1.0
    assert "too few items" in capsys.readouterr().out
    assert main([str(test), "--controls", str(tmp_path / "missing")]) == 2


def test_metadata_model_drops_a_constant_whose_spread_is_rounding_error():
    """2.2 s summed in different orders differs in the last bits: a spread of ~1e-16 that standardising divided by,
    which became 0 / 0 (NaN distances: the k "nearest" were then the first k training items) where the copied
    column's spread came out exactly 0."""
    import warnings

    rng = np.random.default_rng(3)
    train, test = _samples(90, rng, meta_key="clip1.dur_s"), _samples(90, rng, meta_key="clip1.dur_s")
    for s in (*train, *test):
        s.meta["clip0.dur_s"] = float(sum(rng.permutation([0.1, 0.2, 0.3, 1.6])))  # 2.2 s, rounded by the order
    spread = np.std([s.meta["clip0.dur_s"] for s in train])
    assert 0.0 < spread < 1e-12  # the case: constant, but not to the last bit
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        m = Metadata().fit(train)
        acc = np.mean([m.predict(s) == s.answer for s in test])
    assert "clip0.dur_s" not in m.names and "clip1.dur_s" in m.names and np.all(np.isfinite(m.x)) and acc == 1.0
