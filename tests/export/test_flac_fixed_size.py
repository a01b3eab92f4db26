"""FLAC byte size carries nothing but the clip's shape (no content proxy): every file is
padded to the verbatim bound, STREAMINFO's content fields are zeroed, decoding is unchanged."""

import io

import numpy as np
import pytest
import soundfile as sf

from auralgen.core.errors import ExportError
from auralgen.export.audio import decode_flac, encode_flac, flac_size_bound, pad_flac, quantise
from tests.support.builders import read_rows, small_run

QUIET = lambda *_: None  # noqa: E731


def _contents(shape, rng):
    """Silence, a quiet tone, loud white noise: compressed sizes that differ by orders of magnitude."""
    t = np.arange(shape[1]) / 16000
    return {
        "silence": np.zeros(shape),
        "tone": np.broadcast_to(1e-4 * np.sin(2 * np.pi * 440 * t), shape),
        "noise": rng.uniform(-0.99, 0.99, shape),
    }


@pytest.mark.parametrize("shape", [(1, 64000), (2, 48001), (3, 5000), (1, 10)])
def test_every_content_gives_the_same_size_and_decodes_exactly(shape):
    rng = np.random.default_rng(0)
    sizes, raw = {}, {}
    for name, x in _contents(shape, rng).items():
        data = encode_flac(x, 16000)
        sizes[name], raw[name] = len(data), len(encode_flac(x, 16000, fixed_size=False))
        y, sr = decode_flac(data)
        assert sr == 16000 and y.shape == shape
        np.testing.assert_array_equal(np.round(y.astype(np.float64) * 2**23), quantise(x).astype(np.float64))
    assert len(set(sizes.values())) == 1, sizes
    if shape[1] > 1000:  # unpadded, the sizes told silence from noise
        assert raw["noise"] > 50 * raw["silence"]
    assert sizes["noise"] >= raw["noise"]
    audio, _ = flac_size_bound(shape[1], shape[0], 24, 4096)
    assert sizes["noise"] - audio < 200  # the rest is the fixed metadata (STREAMINFO, comment, padding headers)


def test_streaminfo_frame_sizes_and_md5_are_zeroed_and_the_stream_stays_valid():
    x = np.random.default_rng(1).uniform(-0.5, 0.5, (2, 9000))
    data = encode_flac(x, 16000)
    info = data[8:42]
    assert info[4:10] == bytes(6) and info[18:34] == bytes(16)
    assert encode_flac(x, 16000, fixed_size=False)[8:42][18:34] != bytes(16)  # libFLAC wrote an MD5 there
    meta = sf.info(io.BytesIO(data))
    assert (meta.channels, meta.frames, meta.samplerate) == (2, 9000, 16000)


def test_a_stream_beyond_the_bound_is_an_export_error():
    data = encode_flac(np.zeros((1, 100)), 16000, fixed_size=False)
    with pytest.raises(ExportError, match="exceed the verbatim bound"):
        pad_flac(data + bytes(10_000), 100, 1, 24)


def test_the_bound_counts_frames_and_padding_blocks():
    audio, blocks = flac_size_bound(4096 * 3 + 1, 2, 24, 4096)
    assert audio == 4 * (18 + 3) + (2 * 24 * (4096 * 3 + 1) + 7) // 8 and blocks == 1
    assert flac_size_bound(48000 * 60, 2, 24, 4096)[1] == 2  # 60 s of 48 kHz stereo: over 16 MiB, two PADDING blocks


@pytest.mark.parametrize(
    ("task", "per_level"),
    [
        ("duration_absolute", 3),
        ("audiogram", 1),
        ("temporal_reorder", 3),
        ("mixture", 1),
        ("tempo_absolute", 3),
        ("counting_absolute", 2),
        ("pitch_relative", 2),
    ],
)
def test_generated_clips_of_a_task_have_one_length_and_one_byte_size(task, per_level, tmp_path):
    """Clip length is the task's (``clip_s``, ``segment_s``), never the answer's; so is the byte size."""
    from auralgen.generation.run import run

    run(small_run(f"task={task}", f"task.items_per_level={per_level}", out=tmp_path / task), log=QUIET)
    rows = read_rows(tmp_path / task, task)
    sizes = {len(a["bytes"]) for r in rows for a in r["audio"]}
    lengths = {sf.info(io.BytesIO(a["bytes"])).frames for r in rows for a in r["audio"]}
    assert len(rows) >= 9 and len({r["answer"] for r in rows}) >= 3
    assert len(sizes) == 1 and len(lengths) == 1


def test_export_fixed_size_is_a_run_option_that_only_changes_the_file_sizes(tmp_path):
    from auralgen.generation.run import run

    sizes = {}
    for fixed in (True, False):
        out = tmp_path / str(fixed)
        run(
            small_run(
                "task=duration_absolute", "task.items_per_level=3", f"export.fixed_size={str(fixed).lower()}", out=out
            ),
            log=QUIET,
        )
        rows = read_rows(out)
        sizes[fixed] = [len(r["audio"][0]["bytes"]) for r in rows]
        sizes[f"ids{fixed}"] = [r["id"] for r in rows]
    assert len(set(sizes[True])) == 1  # one size for every clip of the task: the size tells nothing
    assert len(set(sizes[False])) > 1 and max(sizes[False]) < min(sizes[True])  # compressed, and content-dependent
    assert sizes["idsTrue"] == sizes["idsFalse"]  # the same items
