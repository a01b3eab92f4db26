"""Lossless FLAC encoding of float clips on an integer grid.

Clips are float32 ``[channels, samples]`` in [-1, 1). They are rounded to the
``bits``-bit grid (``round(x * 2**(bits-1))``) and written as FLAC; decoding gives
back exactly those integers, so a decoded clip equals the rendered one within half an
LSB. A sample at or beyond full scale is an :class:`~auralgen.core.errors.ExportError`:
clipping is never done silently.
"""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf

from auralgen.core.errors import ExportError

SUBTYPES = {16: "PCM_16", 24: "PCM_24"}


def quantise(clip: np.ndarray, bits: int = 24) -> np.ndarray:
    """Integers ``[channels, samples]`` (int32) of ``clip`` on the ``bits``-bit grid."""
    x = np.asarray(clip, dtype=np.float64)
    if x.ndim != 2:
        raise ExportError(f"clip shape {x.shape} is not [channels, samples]; allowed: a 2-D array")
    scale = 2.0 ** (bits - 1)
    q = np.round(x * scale)
    if q.size and (q.max() > scale - 1 or q.min() < -scale):
        raise ExportError(f"clip peak {np.abs(x).max():.4f} reaches full scale; allowed: |x| < 1 (lower the level)")
    return q.astype(np.int32)


def encode_flac(clip: np.ndarray, sample_rate: int, *, bits: int = 24) -> bytes:
    """FLAC bytes of ``clip`` (every channel kept)."""
    q = quantise(clip, bits)
    buf = io.BytesIO()
    sf.write(buf, (q.T << (32 - bits)), int(sample_rate), format="FLAC", subtype=SUBTYPES[bits])
    return buf.getvalue()


def decode_flac(data: bytes) -> tuple[np.ndarray, int]:
    """``(float32 [channels, samples], sample_rate)`` from FLAC bytes, channels preserved."""
    x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return np.ascontiguousarray(x.T), int(sr)
