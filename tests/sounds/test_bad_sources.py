"""A damaged recorded source (``source=folder|clips|hf``) ends in one line naming the file and what is
allowed, before any work: never a traceback, never an object repr, never a misleading reason."""

from __future__ import annotations

import shutil
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auralgen.core.errors import ParameterError
from auralgen.sounds.corpus import check_source
from tests.support.builders import ROOT

from ..tasks.test_config_bounds import one_error_line, run_cli

FLUTE = ROOT / "tests" / "data" / "real_sounds" / "flute" / "flute_1.flac"


def _folder(d, metadata_name=None, metadata=b""):
    d.mkdir()
    shutil.copy(FLUTE, d / "a.flac")
    if metadata_name:
        (d / metadata_name).write_bytes(metadata)
    return {"kind": "folder", "dir": str(d)}


def _clips(d, files: dict):
    d.mkdir()
    for name, make in files.items():
        make(d / name)
    return {"kind": "clips", "dir": str(d), "license": "MIT"}


def _huge_rate(p):
    """A valid WAV whose header claims 2,147,483,647 Hz."""
    import numpy as np
    import soundfile as sf

    sf.write(p, 0.1 * np.sin(np.arange(16000) / 3.0), 16000, subtype="PCM_16")
    data = bytearray(p.read_bytes())
    data[24:28] = struct.pack("<I", 2**31 - 1)
    p.write_bytes(bytes(data))


def _hf_truncated(d):
    d.mkdir()
    table = pa.table({"audio": [{"bytes": FLUTE.read_bytes(), "path": None}], "label": ["flute"], "license": ["MIT"]})
    pq.write_table(table, d / "train.parquet")
    data = (d / "train.parquet").read_bytes()
    (d / "train.parquet").write_bytes(data[: len(data) // 2])
    return {"kind": "hf", "path": str(d)}


def _loop(d):
    (d / "a.wav").symlink_to("b.wav")
    (d / "b.wav").symlink_to("a.wav")


LINE_1 = b'{"file_name": "a.flac", "label": "flute", "license": "MIT"}\n'
CASES = {
    "malformed metadata.jsonl": (
        lambda d: _folder(d, "metadata.jsonl", LINE_1 + b"{bad\n"),
        "metadata.jsonl line 2 is not JSON (Expecting property name",
    ),
    "metadata.jsonl line not an object": (
        lambda d: _folder(d, "metadata.jsonl", LINE_1 + b"5\n"),
        "metadata.jsonl row 2 is '5'; allowed: an object with a file_name string",
    ),
    "non-UTF-8 metadata.csv": (
        lambda d: _folder(d, "metadata.csv", b"file_name,label,license\na.flac,fl\xfcte,MIT\n"),
        "metadata.csv line 2 is not UTF-8 (invalid start byte); allowed: a UTF-8 text file",
    ),
    "truncated HF parquet": (_hf_truncated, "'train.parquet' is not a readable parquet file (ArrowInvalid: "),
    "WAV header claiming 2147483647 Hz": (
        lambda d: _clips(d, {"a.wav": _huge_rate}),
        "source file 'a.wav' declares samplerate=2147483647 Hz; allowed: 1000 .. 768000 Hz",
    ),
    "not audio (no object repr)": (
        lambda d: _clips(d, {"a.wav": lambda p: p.write_bytes(b"RIFF0000WAVEjunk")}),
        "source file 'a.wav' is unreadable (Error opening 'a.wav': ",
    ),
    "symlink loop without metadata": (
        lambda d: (d.mkdir(), _loop(d), {"kind": "clips", "dir": str(d), "license": "MIT"})[2],
        "holds 'a.wav', a symlink loop; allowed: regular audio files",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_source_is_one_line_naming_the_file(tmp_path, case):
    make, needle = CASES[case]
    with pytest.raises(ParameterError) as err:
        check_source(make(tmp_path / "src"))
    text = str(err.value)
    assert needle in text, text
    assert "\n" not in text and " object at 0x" not in text and "which does not exist" not in text


@pytest.mark.parametrize(
    "case", ["malformed metadata.jsonl", "truncated HF parquet", "WAV header claiming 2147483647 Hz"]
)
def test_a_damaged_source_cli_exit_2(tmp_path, case):
    make, needle = CASES[case]
    source = make(tmp_path / "src")
    root = {"kind": source["kind"], **({"path": source["path"]} if "path" in source else {"dir": source["dir"]})}
    args = [f"source={root['kind']}", *(f"source.{k}={v}" for k, v in root.items() if k != "kind")]
    args += ["source.license=MIT"] if source["kind"] == "clips" else []
    line = one_error_line(run_cli("task=pitch_relative", *args, cwd=tmp_path))
    assert needle in line
    assert not (tmp_path / "ds").exists()
