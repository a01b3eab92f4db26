"""Builders reused by the tests: small configs, quick runs and dataset readers."""

from __future__ import annotations

import copy
import functools
import glob
import io
import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import soundfile as sf

from auralgen.cli._hydra import compose
from auralgen.config import RunConfig, validate

ROOT = Path(__file__).resolve().parents[2]


def small_run(*overrides: str, out: str | Path = "out", workers: int = 1, **kw) -> RunConfig:
    """A validated RunConfig from ``conf/`` plus ``overrides`` (progress off)."""
    args = [f"{k}={v}" for k, v in kw.items()]
    if args or not re.fullmatch(r"[\w./-]+", str(out)):  # the value as Hydra parses it (quotes, spaces...)
        return validate(compose([*overrides, f"out={out}", f"workers={workers}", "progress=false", *args]))
    cfg = copy.deepcopy(_composed(tuple(overrides)))  # one Hydra compose per distinct overrides (seconds each)
    cfg.update(out=str(out), workers=workers, progress=False)
    return validate(cfg)


@functools.lru_cache(maxsize=256)
def _composed(overrides: tuple[str, ...]) -> dict:
    """``conf/`` composed with ``overrides``, as plain data (the caller copies it)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(compose(list(overrides)), resolve=True)


def read_rows(out: str | Path, task: str | None = None) -> list[dict]:
    """All rows of an exported dataset (plan order), optionally of one task."""
    pattern = f"{out}/data/{task or '*'}/*.parquet"
    rows = []
    for path in sorted(glob.glob(pattern)):
        rows += pq.read_table(path).to_pylist()
    return rows


def decode(audio_entry: dict) -> tuple[np.ndarray, int]:
    """float32 ``[channels, samples]`` and rate of one exported clip."""
    x, sr = sf.read(io.BytesIO(audio_entry["bytes"]), dtype="float32", always_2d=True)
    return np.ascontiguousarray(x.T), sr


def params_of(row: dict) -> dict:
    return json.loads(row["params"])
