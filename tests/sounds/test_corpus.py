"""Recorded sources: the audiofolder / HF readers, the license rule, and the two-interval
tasks built from a user's clips with every label measured after the transform.

The recordings are ``tests/data/real_sounds`` (24 samples of the MIT-licensed Fluid R3 SoundFont,
8 classes; see its LICENSE.txt and make_fixture.py)."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run as generate
from auralgen.measure import cents, f0_hz
from auralgen.sounds.corpus import SourceConfig, check_source, load_corpus, read_entry, sound_name
from tests.support.builders import ROOT, params_of, read_rows, small_run

REAL = ROOT / "tests" / "data" / "real_sounds"
CLASSES = ("flute", "guitar", "hi_hat", "kick_drum", "piano", "snare_drum", "violin", "xylophone")


def _metadata():
    with open(REAL / "metadata.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_folder_corpus_reads_every_file_with_label_and_license():
    corpus = load_corpus(SourceConfig(kind="folder", dir=str(REAL)))
    assert corpus.labels == CLASSES
    assert len(corpus.entries) == 24 and corpus.skipped == ()
    assert {e.license for e in corpus.entries} == {"MIT"}
    assert all("Fluid (R3)" in e.attribution for e in corpus.entries)
    assert [(e.file, e.label) for e in corpus.entries] == sorted((r["file_name"], r["label"]) for r in _metadata())


def test_hf_audiofolder_reads_the_same_folder():
    """datasets' own audiofolder builder finds the same rows, labels and licenses. (Encoding the
    audio column in datasets 5 needs torch + torchcodec, so the audio is read here as a string
    feature; the rows, labels and metadata are what is compared.)"""
    datasets = pytest.importorskip("datasets")
    f = datasets.Features(
        {k: datasets.Value("string") for k in ("audio", "label", "license", "attribution", "source_sample")}
    )
    ds = datasets.load_dataset("audiofolder", data_dir=str(REAL), split="train", features=f)
    ours = load_corpus(SourceConfig(kind="folder", dir=str(REAL)))
    theirs = sorted((r["label"], r["license"], r["attribution"]) for r in ds)
    assert theirs == sorted((e.label, e.license, e.attribution) for e in ours.entries)


def test_label_from_folder_names_and_the_license_rule(tmp_path):
    for label in CLASSES[:5]:
        shutil.copytree(REAL / label, tmp_path / "c" / label)
    with pytest.raises(ParameterError, match="has no license; allowed: a 'license' column .* or source.license=<name>"):
        check_source({"kind": "folder", "dir": str(tmp_path / "c")})
    corpus = load_corpus(SourceConfig(kind="folder", dir=str(tmp_path / "c"), license="CC0-1.0"))
    assert corpus.labels == CLASSES[:5] and {e.license for e in corpus.entries} == {"CC0-1.0"}
    (tmp_path / "flat").mkdir()
    shutil.copy(REAL / "flute" / "flute_1.flac", tmp_path / "flat" / "a.flac")
    with pytest.raises(ParameterError, match="has no label"):
        check_source({"kind": "folder", "dir": str(tmp_path / "flat"), "license": "MIT"})
    clips = load_corpus(SourceConfig(kind="clips", dir=str(tmp_path / "flat"), license="MIT"))
    assert [e.file for e in clips.entries] == ["a.flac"]  # a user's clips need no label


def _parquet(d, n: int, audio: str = "audio") -> list[dict]:
    """The first ``n`` fixture rows as ``d/train.parquet`` (audio bytes in column ``audio``); returns the rows."""
    rows = _metadata()[:n]
    table = pa.table(
        {
            audio: [{"bytes": (REAL / r["file_name"]).read_bytes(), "path": None} for r in rows],
            "label": [r["label"] for r in rows],
            "license": [r["license"] for r in rows],
        }
    )
    pq.write_table(table, d / "train.parquet")
    return rows


def test_hf_parquet_source_and_a_changed_file_is_caught(tmp_path):
    rows = _parquet(tmp_path, 6)
    corpus = load_corpus(SourceConfig(kind="hf", path=str(tmp_path)))
    assert [e.file for e in corpus.entries] == [f"#{i}" for i in range(6)]
    assert [e.label for e in corpus.entries] == [r["label"] for r in rows]
    spec = corpus.pick(np.random.default_rng(0), duration_s=0.5)
    x = read_entry(spec, 16000, 0.5)
    assert x.shape == (8000,) and np.max(np.abs(x)) > 0.01
    with pytest.raises(ParameterError, match="changed since the item was drawn"):
        read_entry({**spec, "sha256": "0" * 16}, 16000, 0.5)


def test_hf_audio_column_of_another_name_is_in_the_recipe(tmp_path):
    """The recipe names the audio column, so a row re-decodes from a dataset whose audio column is
    not called ``audio``; a row the dataset no longer has is named."""
    _parquet(tmp_path, 3, audio="sound")
    corpus = load_corpus(SourceConfig(kind="hf", path=str(tmp_path), audio_column="sound"))
    spec = corpus.pick(np.random.default_rng(1), duration_s=0.4)
    assert spec["audio_column"] == "sound"
    x = read_entry(spec, 16000, 0.4)
    assert x.shape == (6400,) and np.max(np.abs(x)) > 0.01
    with pytest.raises(ParameterError, match="source file '#7' is not a row of"):
        read_entry({**spec, "file": "#7"}, 16000, 0.4)


CLIP_TASKS = ("pitch_relative", "loudness_relative", "duration_relative", "brightness_relative")


@pytest.fixture(scope="module")
def clip_sets(tmp_path_factory):
    """The three two-interval tasks from the clips, 2 and 1 workers (byte identity)."""
    out = {}
    for workers in (2, 1):
        d = tmp_path_factory.mktemp(f"clips{workers}")
        for task in CLIP_TASKS:
            cfg = small_run(
                f"task={task}",
                "task.items_per_level=4",
                "source=clips",
                f"source.dir={REAL}",
                out=d / task,
                workers=workers,
            )
            generate(cfg, log=lambda *_: None)
        out[workers] = d
    return out


@pytest.mark.parametrize("task", CLIP_TASKS)
def test_clip_items_are_measured_and_byte_identical(clip_sets, task):
    rows = read_rows(clip_sets[2] / task)
    assert rows and all(r["valid"] for r in rows)
    files = {p["file"] for r in rows for p in params_of(r)["sounds"]}
    assert len(files) >= 4 and all(f.split("/")[0] in CLASSES for f in files)
    for r in rows:
        p = params_of(r)
        a, b = p["sounds"]
        assert a["kind"] == b["kind"] == "clip" and a["file"] == b["file"] and a["license"] == "MIT"
        m = json.loads(r["measured"])
        if task == "loudness_relative":  # RMS and BS.1770 loudness (pyloudnorm) both confirm the level
            assert m["loudness_difference_lu"]["ok"] and m["level_difference_db"]["ok"]
        if task == "pitch_relative":  # the measured cents are the level, signed by the answer
            assert b["shift_cents"] - a["shift_cents"] == pytest.approx(
                {"up": 1, "down": -1, "same": 0}[p["direction"]] * p["difference"]
            )
            assert m["cents"]["ok"] and abs(m["cents"]["measured"] - m["cents"]["expected"]) <= m["cents"]["tolerance"]
        if task == "brightness_relative":  # one piece, two shelves: the brighter has the higher shelf gain
            assert m["centroid_difference_percent"]["ok"] and m["loudness_difference_lu"]["ok"]
            sign = {"up": 1, "down": -1, "same": 0}[p["direction"]]
            assert np.sign(round(b["shelf_db"] - a["shelf_db"], 6)) == sign and a["shelf_hz"] == b["shelf_hz"]
    one = sorted(pq.read_table(p).to_pylist()[0]["id"] for p in (clip_sets[1] / task).rglob("*.parquet"))
    assert one == sorted(pq.read_table(p).to_pylist()[0]["id"] for p in (clip_sets[2] / task).rglob("*.parquet"))
    bytes1 = sorted(p.read_bytes() for p in (clip_sets[1] / task).rglob("*.parquet"))
    assert bytes1 == sorted(p.read_bytes() for p in (clip_sets[2] / task).rglob("*.parquet"))
    card = (clip_sets[2] / task / "README.md").read_text()
    assert "## Source recordings" in card and card.count("| MIT |") == 24


def test_a_shift_is_what_the_f0_says():
    """The transform itself, as pitch_relative uses it: a note shifted by -/+ half a difference, the
    two f0s (0.25 s at the middle) apart by the difference within the task's tolerance -- for most
    notes (the rest is what the measurement gate redraws), and never far off in the wrong direction."""
    from auralgen.sounds.tones import TONES

    corpus = load_corpus(SourceConfig(kind="clips", dir=str(REAL)))
    errors = []
    for k, label in enumerate(("flute", "violin", "piano", "guitar") * 3):
        spec = {"kind": "clip", **corpus.pick(np.random.default_rng(k), duration_s=0.8, label=label)}
        diff = (50.0, 200.0, 1200.0)[k % 3]
        f = []
        for shift in (-diff / 2, diff / 2):
            x = TONES.render({**spec, "duration_s": 0.8, "shift_cents": shift}, 16000)
            mid = len(x) // 2
            f.append(f0_hz(x[mid - 2000 : mid + 2000], 16000))
        errors.append(abs(cents(f[0], f[1]) - diff) / max(3.0, 0.02 * diff))
    assert np.mean(np.array(errors) <= 1.0) >= 0.75 and np.median(errors) < 0.5


def test_sound_names():
    assert sound_name("snare_drum") == "the snare drum"


NAMED = {"the " + c.replace("_", " ") for c in CLASSES}


@pytest.fixture(scope="module")
def folder_sets(tmp_path_factory):
    d = tmp_path_factory.mktemp("folder")
    for task, n in (("mixture", 2), ("multi_source_relation", 2), ("azimuth_absolute", 3)):
        cfg = small_run(
            f"task={task}", f"task.items_per_level={n}", "source=folder", f"source.dir={REAL}", out=d / task
        )
        generate(cfg, log=lambda *_: None)
    return d


def _sounds(task: str, p: dict) -> list[dict]:
    if task == "mixture":
        return p["sounds"]
    return [s["source"] for s in p["sounds"]] if "sounds" in p else [p["source"]]


@pytest.mark.parametrize("task", ["mixture", "multi_source_relation", "azimuth_absolute"])
def test_labelled_corpus_items_name_their_classes_and_are_measured(folder_sets, task):
    rows = read_rows(folder_sets / task)
    assert rows and all(r["valid"] for r in rows)
    for r in rows:
        sounds = _sounds(task, params_of(r))
        assert all(s["kind"] == "recording" and s["license"] == "MIT" and s["label"] in CLASSES for s in sounds)
        if task == "azimuth_absolute":
            continue
        names = {sound_name(s["label"]) for s in sounds}
        assert len(names) == len(sounds)  # distinct classes in one item
        if task == "mixture" and params_of(r)["sub_question"] in ("louder", "first"):
            assert {o.lower() for o in r["options"]} == names and r["answer"].lower() in NAMED
        if task == "multi_source_relation" and params_of(r)["relation"] != "left_of":
            assert set(r["options"]) == names
        if task == "multi_source_relation" and params_of(r)["relation"] == "left_of":
            assert sound_name(sounds[0]["label"]) in r["question"] and sound_name(sounds[1]["label"]) in r["question"]


def test_tasks_that_cannot_take_a_source_are_refused_by_name():
    from auralgen.cli._hydra import compose
    from auralgen.config import validate

    with pytest.raises(ParameterError, match="source=clips is not taken by mixture"):
        validate(compose(["task=mixture", "source=clips", f"source.dir={REAL}"]))
    with pytest.raises(ParameterError, match=r"source.dir='x' has no effect with source=procedural"):
        validate(compose(["task=mixture", "source.dir=x"]))


@pytest.fixture(scope="module")
def event_sets(tmp_path_factory):
    d = tmp_path_factory.mktemp("events")
    for task in ("counting_absolute", "tempo_relative", "temporal_reorder"):
        cfg = small_run(f"task={task}", "task.items_per_level=3", "source=clips", f"source.dir={REAL}", out=d / task)
        generate(cfg, log=lambda *_: None)
    return d


@pytest.mark.parametrize("task", ["counting_absolute", "tempo_relative", "temporal_reorder"])
def test_event_and_order_tasks_from_clips_are_measured(event_sets, task):
    rows = read_rows(event_sets / task)
    assert len(rows) >= 9 and all(r["valid"] for r in rows)
    for r in rows:
        p, m = params_of(r), json.loads(r["measured"])
        if task == "temporal_reorder":
            assert p["process"] == "recording" and p["license"] == "MIT"
            assert m["measured_order"] == m["expected_order"] and r["answer"].startswith("Audio")
            continue
        seqs = p["sequences"]
        assert all(s["kind"] == "clip" and s["offset_s"] == 0.0 for s in seqs)  # events are the recording's attack
        if task == "counting_absolute":
            assert m["events"] == p["count"] == int(r["answer"])


@pytest.mark.parametrize("cents_", [-300.0, 150.0, 600.0])
@pytest.mark.parametrize("label", ["snare_drum", "violin"])
def test_spectral_shift_reads_a_shift_of_any_sound(cents_, label):
    from auralgen.measure.pitch import spectral_shift_cents
    from auralgen.sounds.transforms import stretch_shift

    corpus = load_corpus(SourceConfig(kind="clips", dir=str(REAL)))
    spec = corpus.pick(np.random.default_rng(0), duration_s=0.8, label=label)
    x = read_entry(spec, 16000, 0.8)
    y = stretch_shift(x, 16000, duration_s=0.8, shift_cents=cents_)
    assert spectral_shift_cents(x, y, 16000) == pytest.approx(cents_, abs=15.0)
    assert spectral_shift_cents(x, x, 16000) == 0.0


def test_a_source_given_by_absolute_path_is_written_relative(folder_sets):
    """source.dir given absolute: the manifest's config, every recipe's root and the card hold it
    relative to the working directory (no machine path), and that path still reaches the files."""
    import os
    from pathlib import Path

    out = folder_sets / "azimuth_absolute"
    manifest = json.loads((out / "manifest.json").read_text())
    given = manifest["config"]["audio"]["source"]["dir"]
    roots = {s["root"] for r in read_rows(out) for s in _sounds("azimuth_absolute", params_of(r))}
    assert roots == {given} and not Path(given).is_absolute()
    assert Path(given).resolve() == REAL.resolve() and given == os.path.relpath(REAL)
    card = (out / "README.md").read_text()
    assert f"root `{given}`" in card and str(REAL) not in card and str(REAL) not in json.dumps(manifest)


def _licensed(tmp_path, licenses: dict[str, str]):
    """A copy of the fixture corpus whose files of each label carry ``licenses[label]`` (else MIT)."""
    d = tmp_path / "lic"
    shutil.copytree(REAL, d)
    rows = _metadata()
    for r in rows:
        r["license"] = licenses.get(r["label"], "MIT")
    with open(d / "metadata.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return d


def test_the_cards_license_follows_the_sources(tmp_path, folder_sets):
    """One license: the card says it; procedural sounds: cc-by-4.0; CC0 files take the others' license;
    a mix with no common license is refused unless export.license is stated."""
    from auralgen.cli._hydra import compose
    from auralgen.config import validate

    def lic(*args):
        return validate(compose(["task=loudness_relative", *args])).export.license

    front = (folder_sets / "mixture" / "README.md").read_text().split("---")[1]
    assert "\nlicense: mit\n" in front
    assert lic() == "cc-by-4.0" and lic("export.license=apache-2.0") == "apache-2.0"
    cc0 = _licensed(tmp_path / "a", {"piano": "CC0-1.0", "flute": "CC0 1.0"})
    assert lic("source=folder", f"source.dir={cc0}") == "mit"
    mixed = _licensed(tmp_path / "b", {"piano": "CC-BY-NC-4.0", "guitar": "CC-BY-NC-4.0", "flute": "CC0-1.0"})
    with pytest.raises(
        ParameterError,
        match=r"^the source's files carry licenses with no common one: cc-by-nc-4.0 "
        r"\(6 files\), cc0-1.0 \(3 files\), mit \(15 files\); allowed: .* or "
        r"export.license=",
    ):
        lic("source=folder", f"source.dir={mixed}")
    assert lic("source=folder", f"source.dir={mixed}", "export.license=cc-by-nc-4.0") == "cc-by-nc-4.0"


def test_a_license_mix_is_one_line_exit_2(tmp_path):
    from tests.test_cli import run_cli

    mixed = _licensed(tmp_path, {"piano": "CC-BY-NC-4.0"})
    res = run_cli("task=loudness_relative", "source=folder", f"source.dir={mixed}", "out=ds", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "no common one: cc-by-nc-4.0 (3 files), mit (21 files)" in res.stderr and not (tmp_path / "ds").exists()


def test_a_recordings_two_pitch_copies_are_cut_to_lengths_drawn_apart(clip_sets):
    """A recording shifted down rings longer above the -60 dB floor than shifted up: with equal cuts the
    sounding lengths said the direction (70 % of 30 recorded items). Each copy's length is drawn on its own."""
    rows = read_rows(clip_sets[2] / "pitch_relative")
    lengths = [[s["duration_s"] for s in params_of(r)["sounds"]] for r in rows]
    assert len(lengths) >= 10 and all(len(pair) == 2 for pair in lengths)
    assert sum(abs(a - b) > 0.01 for a, b in lengths) >= 0.8 * len(lengths)
