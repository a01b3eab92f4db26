"""Degenerate source audio is refused when the source is read, naming the file (or left out and counted with
``source.on_bad=skip``); a render-time failure names the source file; a config whose items are all dropped
is refused (exit 2) instead of writing a 0-row dataset.

Before: an 8-channel clip whose channels cancel became items of -96 dBFS rounding noise, a 60-byte truncated
WAV and cancelling channels in ``sources_dir`` were accepted, a silent or NaN clip failed the run at render
time naming the item only, and ``level_db_spl=[-1e9,0]`` wrote a 0-row dataset with exit 0."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import soundfile as sf

from auralgen.core.errors import ParameterError
from auralgen.generation.item import ItemError, make_row
from auralgen.generation.plan import ItemSpec
from auralgen.generation.run import run, run_reported
from auralgen.sounds.corpus import SourceConfig, check_source, load_corpus
from auralgen.tasks.base import load_tasks
from tests.support.builders import ROOT, small_run

REAL = ROOT / "tests" / "data" / "real_sounds"
SR = 16000
TONE = 0.3 * np.sin(2 * np.pi * 440 * np.arange(SR) / SR)


def _write_bad(path, kind: str) -> None:
    """A one-second file of the bad ``kind``."""
    if kind == "silent":
        sf.write(path, np.zeros(SR), SR, subtype="PCM_16")
    elif kind == "nan":
        x = TONE.copy()
        x[100] = np.nan
        sf.write(path, x.astype(np.float32), SR, subtype="FLOAT")
    elif kind == "cancelling":  # 8 channels in opposite pairs: the mono mix is 0
        sf.write(path, np.stack([TONE, -TONE] * 4, axis=1), SR, subtype="PCM_16")
    elif kind == "truncated":  # a WAV cut at 60 bytes (8 samples of data)
        sf.write(path, TONE, SR, subtype="PCM_16")
        path.write_bytes(path.read_bytes()[:60])


BAD = {
    "silent": "is silent (peak -inf dBFS)",
    "nan": "holds NaN or infinite samples",
    "cancelling": "has 8 channels that cancel in the mono mix",
    "truncated": "is too short (8 samples at 16000 Hz)",
}


@pytest.fixture
def corpus_dir(tmp_path):
    """Two good classes of the real fixture, under a folder of clips."""
    root = tmp_path / "c"
    for label in ("flute", "piano"):
        shutil.copytree(REAL / label, root / label)
    return root


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_clip_in_a_corpus_is_refused_at_load_naming_the_file(corpus_dir, kind):
    _write_bad(corpus_dir / "piano" / "bad.wav", kind)
    with pytest.raises(ParameterError) as err:
        check_source({"kind": "folder", "dir": str(corpus_dir), "license": "MIT"})
    line = str(err.value)
    assert "\n" not in line and line.startswith("source file 'piano/bad.wav' " + BAD[kind]), line
    assert "source.on_bad=skip" in line


@pytest.mark.parametrize("kind", sorted(BAD))
def test_on_bad_skip_leaves_the_clip_out_and_counts_it(corpus_dir, kind):
    good = load_corpus(SourceConfig(kind="clips", dir=str(corpus_dir), license="MIT"))
    _write_bad(corpus_dir / "piano" / "bad.wav", kind)
    cfg = check_source({"kind": "clips", "dir": str(corpus_dir), "license": "MIT", "on_bad": "skip"})
    corpus = load_corpus(cfg)
    assert corpus.entries == good.entries
    assert len(corpus.skipped) == 1 and corpus.skipped[0][0] == "piano/bad.wav"
    assert corpus.skipped[0][1].startswith(BAD[kind].split(" (")[0])


def test_on_bad_takes_error_or_skip():
    with pytest.raises(ParameterError, match=r"source.on_bad='ignore' is unknown; allowed: error, skip"):
        check_source({"kind": "clips", "dir": str(REAL), "license": "MIT", "on_bad": "ignore"})


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_file_in_sources_dir_is_refused_in_one_line(tmp_path, kind):
    src = tmp_path / "src"
    src.mkdir()
    sf.write(src / "a.wav", TONE, SR)
    _write_bad(src / "b.wav", kind)
    with pytest.raises(ParameterError) as err:
        small_run("task=azimuth_absolute", f"task.sources_dir={src}")
    line = str(err.value)
    assert "\n" not in line and line.startswith("task.sources_dir file 'b.wav' " + BAD[kind]), line


def test_a_source_file_that_fails_at_render_time_is_named(tmp_path):
    """The file was fine when the config was checked and is silent when an item renders it."""
    src = tmp_path / "src"
    src.mkdir()
    sf.write(src / "a.wav", TONE, SR)
    run_cfg = small_run("task=azimuth_absolute", f"task.sources_dir={src}", "task.sources=[noise]")
    task = load_tasks()["azimuth_absolute"](run_cfg.tasks[0], run_cfg.audio)
    spec = next(
        ItemSpec("azimuth_absolute", "test", i, 0, 0)
        for i in range(50)
        if "a.wav" in str(task.design.draw(task.sample, _rng(i), 0, 0, "test", ("test",)))
    )
    _write_bad(src / "a.wav", "silent")
    with pytest.raises(ParameterError) as err:
        make_row(task, spec, seed=0)
    assert "sources_dir file 'a.wav' is silent" in str(err.value)
    with pytest.raises(ZeroDivisionError) as err:  # any other failure: ItemError names the file
        task.render = lambda params: 1 // 0
        make_row(task, spec, seed=0)
    assert "rendering source file 'a.wav'" in str(ItemError.of(spec, err.value))


def _rng(i):
    from auralgen.generation.answers import draw_rng

    return draw_rng(0, "test", "azimuth_absolute", i, 0)


def test_a_config_whose_items_are_all_dropped_is_refused(tmp_path, capsys):
    out = tmp_path / "ds"
    cfg = small_run("task=tempo_absolute", "task.level_db_spl=[-1e9,0]", "task.items_per_level=1", out=out)
    with pytest.raises(ParameterError, match=r"task=tempo_absolute yields 0 items: all 4 were dropped \(label not"):
        run(cfg, log=lambda *_: None)
    assert not (out / "manifest.json").exists()  # nothing marks the folder as a dataset
    assert run_reported(cfg, log=lambda *_: None) == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: task=tempo_absolute yields 0 items"), lines
