"""Sampled instruments (``source=soundfont``): notes of a General MIDI SoundFont rendered by
FluidSynth, labelled by instrument, played at the shifted pitch, and measured like any recording.

The tests that render need FluidSynth and Debian's Fluid R3 SoundFont, which ``make soundfont``
installs (``make test-slow`` runs it first): they are marked ``slow``. The rest run everywhere."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run as generate
from auralgen.measure import cents, f0_hz
from auralgen.sounds import soundfont as SF
from auralgen.sounds.corpus import RECIPE_KEYS, check_source, load_corpus, read_entry, sound_name
from tests.support.builders import params_of, read_rows, small_run

INSTRUMENTS = {
    "yamaha_grand_piano",
    "xylophone",
    "nylon_string_guitar",
    "violin",
    "cello",
    "trumpet",
    "clarinet",
    "flute",
}


def test_without_fluidsynth_one_line_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "fluidsynth", None)  # import fluidsynth -> ImportError
    with pytest.raises(ParameterError, match=r"needs FluidSynth .* install them with: make soundfont"):
        check_source({"kind": "soundfont"})


def test_fields_of_other_kinds_are_refused_both_ways():
    with pytest.raises(ParameterError, match=r"source.notes=\[60\] has no effect with source=folder"):
        check_source({"kind": "folder", "dir": "x", "notes": [60]})
    with pytest.raises(ParameterError, match=r"source.dir='x' has no effect with source=soundfont"):
        check_source({"kind": "soundfont", "dir": "x"})
    with pytest.raises(ParameterError, match=r"source.label_column='y' has no effect with source=soundfont"):
        check_source({"kind": "soundfont", "label_column": "y"})


def test_a_missing_user_soundfont_is_named(tmp_path):
    with pytest.raises(ParameterError, match=r"source.soundfont='.*nope.sf2' is not a file"):
        check_source({"kind": "soundfont", "soundfont": str(tmp_path / "nope.sf2")})


@pytest.mark.parametrize(
    ("note", "shift", "key", "bend"),
    [(60, 0.0, 60, 0), (60, 130.0, 61, 1229), (60, -149.0, 59, -2007), (72, 1200.0, 84, 0), (60, 50.0, 60, 2048)],
)
def test_key_and_bend_play_the_shift(note, shift, key, bend):
    assert SF.key_and_bend(note, shift) == (key, bend)
    k, b = SF.key_and_bend(note, shift)
    assert 100 * (k - note) + b * SF.BEND_RANGE_CENTS / 8192 == pytest.approx(shift, abs=0.02)


def test_key_out_of_midi_range_is_refused():
    with pytest.raises(ParameterError, match="leaves the MIDI range"):
        SF.key_and_bend(120, 1200.0)


def test_labels_of_preset_names():
    assert SF.label_of("Nylon String Guitar") == "nylon_string_guitar"
    assert sound_name(SF.label_of("Yamaha Grand Piano")) == "the yamaha grand piano"


# ---- the rest renders: FluidSynth and the Fluid R3 SoundFont (make soundfont) ----------------------


@pytest.mark.slow
def test_corpus_is_every_program_note_velocity_with_license(tmp_path):
    corpus = load_corpus(check_source({"kind": "soundfont"}))
    assert set(corpus.labels) == INSTRUMENTS and len(corpus.entries) == 8 * 5 * 2
    assert {e.license for e in corpus.entries} == {"MIT"}
    spec = corpus.pick(np.random.default_rng(3), duration_s=0.5, label="violin")
    assert spec["instrument"] == "Violin" and spec["program"] == 40 and spec["offset_s"] == 0.0
    assert spec["note"] in (48, 55, 60, 67, 72) and spec["velocity"] in (64, 100)
    assert spec["synth"].startswith("fluidsynth ") and set(spec) <= set(RECIPE_KEYS)
    with pytest.raises(
        ParameterError, match=r"source.programs=\[0, 128\] is invalid; allowed: a non-empty list of 0..127"
    ):
        check_source({"kind": "soundfont", "programs": [0, 128]})
    with pytest.raises(ParameterError, match=r"source.soundfont='.*' has no stated license; allowed: source.license="):
        (tmp_path / "mine.sf2").symlink_to(SF.DEFAULT_SF2)  # a user's SoundFont: no license known
        check_source({"kind": "soundfont", "soundfont": str(tmp_path / "mine.sf2")})
    mine = load_corpus(check_source({"kind": "soundfont", "soundfont": str(tmp_path / "mine.sf2"), "license": "MIT"}))
    assert {e.attribution for e in mine.entries} == {"SoundFont mine.sf2"}


@pytest.mark.slow
def test_render_is_deterministic_and_a_shift_is_played():
    """A fresh synth per note: the same note twice gives the same samples, whatever was rendered
    between; a note played 130 cents up measures 130 cents up (f0), within 3 cents for most sustained
    instruments of the default corpus -- not all: a shifted note may sound from another sample of the
    bank, tuned a few cents apart (the cello's, 11 cents), which is why pitch_relative measures both
    notes and redraws an item the f0s do not confirm."""
    corpus = load_corpus(check_source({"kind": "soundfont"}))
    spec = corpus.pick(np.random.default_rng(0), duration_s=0.8, label="flute")
    a = read_entry(spec, 16000, 0.8).copy()
    SF.render_note.cache_clear()
    read_entry({**spec, "note": 55}, 16000, 0.8)
    SF.render_note.cache_clear()
    assert np.array_equal(a, read_entry(spec, 16000, 0.8))
    errors = {}
    for label in ("flute", "violin", "clarinet", "trumpet", "cello"):
        spec = {**corpus.pick(np.random.default_rng(1), duration_s=0.8, label=label), "note": 60}
        f = [f0_hz(read_entry(spec, 16000, 0.8, shift_cents=c)[4000:10000], 16000) for c in (0.0, 130.0)]
        errors[label] = cents(f[0], f[1]) - 130.0
    assert sum(abs(e) <= 3.0 for e in errors.values()) >= 4 and all(abs(e) <= 15.0 for e in errors.values()), errors
    with pytest.raises(ParameterError, match="changed since the item was drawn"):
        read_entry({**spec, "sha256": "0" * 16}, 16000, 0.5)


@pytest.fixture(scope="module")
def sf_sets(tmp_path_factory):
    out = {}
    for task, n in (("pitch_relative", 3), ("loudness_relative", 2), ("mixture", 2)):
        d = {}
        for workers in (2, 1):
            d[workers] = tmp_path_factory.mktemp(f"{task}{workers}")
            cfg = small_run(
                f"task={task}", f"task.items_per_level={n}", "source=soundfont", out=d[workers], workers=workers
            )
            generate(cfg, log=lambda *_: None)
        out[task] = d
    return out


@pytest.mark.slow
@pytest.mark.parametrize("task", ["pitch_relative", "loudness_relative", "mixture"])
def test_soundfont_items_are_measured_named_and_byte_identical(sf_sets, task):
    rows = read_rows(sf_sets[task][2])
    assert rows and all(r["valid"] for r in rows)
    for r in rows:
        p = params_of(r)
        for s in p["sounds"]:
            assert s["source"] == "soundfont" and s["label"] in INSTRUMENTS and s["license"] == "MIT"
            assert {"instrument", "program", "note", "velocity", "synth"} <= set(s)
        if task == "pitch_relative":  # played, not processed: the measured cents confirm the level
            m = json.loads(r["measured"])
            assert m["cents"]["ok"] and abs(m["cents"]["measured"] - m["cents"]["expected"]) <= m["cents"]["tolerance"]
        if task == "mixture" and p["sub_question"] in ("louder", "first"):
            assert {o.lower() for o in r["options"]} == {sound_name(s["label"]) for s in p["sounds"]}
    one = sorted(p.read_bytes() for p in sf_sets[task][1].rglob("*.parquet"))
    assert one == sorted(p.read_bytes() for p in sf_sets[task][2].rglob("*.parquet"))
    card = (sf_sets[task][2] / "README.md").read_text()
    assert "`source=soundfont`" in card and "program 40 note 60 velocity 100" in card and "Fluid (R3)" in card
