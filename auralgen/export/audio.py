"""Lossless FLAC encoding of float clips on an integer grid.

Clips are float32 ``[channels, samples]`` in [-1, 1). They are rounded to the
``bits``-bit grid (``round(x * 2**(bits-1))``) and written as FLAC; decoding gives
back exactly those integers, so a decoded clip equals the rendered one within half an
LSB. A sample at or beyond full scale is an :class:`~auralgen.core.errors.ExportError`:
clipping is never done silently.

**File size carries nothing but the clip's shape**: a lossless
coder's output size is a function of the content (digital silence costs almost nothing, a loud noise
burst almost full rate), so FLAC byte size told a sound's duration, a tone's presence or a count.
:func:`encode_flac` therefore pads every file with PADDING metadata blocks to :func:`flac_size_bound`,
the size of the stream with every subframe stored verbatim -- which the FLAC encoder never exceeds,
as it keeps a verbatim subframe whenever its prediction would be larger (FLAC format, "SUBFRAME_VERBATIM";
libFLAC ``stream_encoder.c``). The size then depends only on (samples, channels, bits, block size),
not on the audio. STREAMINFO's content-dependent fields (minimum/maximum frame size and the MD5 of
the audio, both "unknown" when zero per the format) are zeroed. The price: files are as large as
uncompressed PCM (plus < 0.1 %).
"""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf
from numba import njit

from auralgen.core.errors import ExportError

SUBTYPES = {16: "PCM_16", 24: "PCM_24"}
FRAME_OVERHEAD = 16 + 2  # bytes: the longest frame header (sync .. CRC-8) and the CRC-16 footer
MAX_BLOCK = 2**24 - 1  # longest metadata block body (a 24-bit length)
_STREAMINFO = 8  # offset of the STREAMINFO body ("fLaC" + a 4-byte block header)


def quantise(clip: np.ndarray, bits: int = 24) -> np.ndarray:
    """Integers ``[channels, samples]`` (int32) of ``clip`` on the ``bits``-bit grid.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples), float
        Audio in full-scale units, in [-1, 1).
    bits : int, optional
        Bit depth of the grid (default 24): a sample becomes ``round(x * 2**(bits - 1))``.

    Returns
    -------
    ndarray, shape (channels, samples), int32
        The grid values, in ``[-2**(bits - 1), 2**(bits - 1) - 1]``.

    Raises
    ------
    ExportError
        If ``clip`` is not 2-D or a sample rounds outside ``[-2**(bits - 1), 2**(bits - 1) - 1]``.
    """
    return np.ascontiguousarray(_grid_samples(clip, bits, shift=0).T)


def _grid_samples(clip: np.ndarray, bits: int, *, shift: int) -> np.ndarray:
    """``round(clip * 2**(bits-1)) << shift`` as int32 ``[samples, channels]`` (the layout soundfile
    writes), in one pass (:func:`_quantise_kernel`); ExportError at or beyond full scale."""
    x = np.asarray(clip)
    if x.ndim != 2:
        raise ExportError(f"clip shape {x.shape} is not [channels, samples]; allowed: a 2-D array")
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    out, ok = _quantise_kernel(x, float(2.0 ** (bits - 1)), int(shift))
    if not ok:
        raise ExportError(f"clip peak {np.abs(x).max():.4f} reaches full scale; allowed: |x| < 1 (lower the level)")
    return out


@njit(cache=True)
def _quantise_kernel(x, scale, shift):  # pragma: no cover - compiled
    """``np.round(float64(x) * scale)`` (half to even, as numpy) shifted left, transposed; ``ok`` is
    False if a value leaves ``[-scale, scale - 1]``."""
    n_ch, n = x.shape
    out = np.empty((n, n_ch), dtype=np.int32)
    ok = True
    for i in range(n):
        for c in range(n_ch):
            v = np.rint(np.float64(x[c, i]) * scale)
            if v > scale - 1 or v < -scale:
                ok = False
                v = 0.0
            out[i, c] = np.int32(v) << shift
    return out, ok


def encode_flac(clip: np.ndarray, sample_rate: int, *, bits: int = 24, fixed_size: bool = True) -> bytes:
    """FLAC bytes of ``clip`` (every channel kept); with ``fixed_size`` (the default) padded to
    :func:`flac_size_bound` and with STREAMINFO's content-dependent fields zeroed, so the size says
    nothing about the audio (module docstring).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples), float
        Audio in full-scale units, in [-1, 1).
    sample_rate : int
        Sampling rate written to STREAMINFO, in Hz.
    bits : int, optional
        Bit depth, 16 or 24 (default 24).
    fixed_size : bool, optional
        Pad to the verbatim size bound and zero the content-dependent fields (default True).

    Returns
    -------
    bytes
        A complete FLAC stream.

    Raises
    ------
    ExportError
        If ``clip`` is not 2-D or a sample rounds outside ``[-2**(bits - 1), 2**(bits - 1) - 1]``.
    """
    if bits not in SUBTYPES:
        raise ExportError(f"bits={bits!r} is not a FLAC bit depth here; allowed: {sorted(SUBTYPES)}")
    frames = _grid_samples(clip, bits, shift=32 - bits)  # [samples, channels], as soundfile takes them
    buf = io.BytesIO()
    sf.write(buf, frames, int(sample_rate), format="FLAC", subtype=SUBTYPES[bits])
    data = buf.getvalue()
    return pad_flac(data, frames.shape[0], frames.shape[1], bits) if fixed_size else data


def _blocks(data: bytes) -> tuple[int, int]:
    """``(offset of the last metadata block's header, offset of the first frame)`` of a FLAC stream."""
    if data[:4] != b"fLaC":
        raise ExportError("FLAC stream does not start with 'fLaC'; allowed: the output of the FLAC encoder")
    at = 4
    while True:
        last, length = data[at] >> 7, int.from_bytes(data[at + 1 : at + 4], "big")
        if last:
            return at, at + 4 + length
        at += 4 + length


def flac_size_bound(n_samples: int, channels: int, bits: int, block: int) -> tuple[int, int]:
    """``(audio bytes, padding blocks)``: the size of the frames of a stream of ``n_samples`` per
    channel with every subframe verbatim (``channels * bits`` bits per sample, a one-byte subframe
    header per channel and :data:`FRAME_OVERHEAD` per frame of ``block`` samples), and the number of
    PADDING blocks that holds the slack (each at most :data:`MAX_BLOCK` bytes).

    Parameters
    ----------
    n_samples : int
        Samples per channel.
    channels : int
        Number of channels.
    bits : int
        Bits per sample.
    block : int
        Block size of the stream's frames, in samples per channel.

    Returns
    -------
    tuple of (int, int)
        The verbatim size of the audio frames in bytes, and the number of PADDING blocks needed
        to hold up to that many bytes of slack.
    """
    frames = max(1, -(-n_samples // block))
    audio = frames * (FRAME_OVERHEAD + channels + 1) + -(-(channels * bits * n_samples) // 8)
    return audio, -(-audio // MAX_BLOCK)


def pad_flac(data: bytes, n_samples: int, channels: int, bits: int) -> bytes:
    """``data`` (a FLAC stream) padded to its :func:`flac_size_bound` with PADDING blocks after its
    metadata, STREAMINFO's frame sizes and MD5 zeroed.

    Parameters
    ----------
    data : bytes
        A FLAC stream of fixed-size blocks, as the FLAC reference encoder writes.
    n_samples : int
        Samples per channel in the stream.
    channels : int
        Number of channels.
    bits : int
        Bits per sample.

    Returns
    -------
    bytes
        The padded stream; its length depends only on the four size arguments and the block size.

    Raises
    ------
    ExportError
        If ``data`` does not start with ``fLaC`` or its frames exceed the verbatim bound.
    """
    last, first_frame = _blocks(data)
    block = int.from_bytes(data[_STREAMINFO + 2 : _STREAMINFO + 4], "big")
    bound, n_pad = flac_size_bound(n_samples, channels, bits, block)
    slack = bound - (len(data) - first_frame)
    if slack < 0:
        raise ExportError(
            f"FLAC frames of {len(data) - first_frame} bytes exceed the verbatim bound {bound}; "
            "allowed: a stream of fixed-size blocks (the FLAC reference encoder)"
        )
    head = bytearray(data[:first_frame])
    head[last] &= 0x7F  # the stream's last metadata block is no longer the last
    head[_STREAMINFO + 4 : _STREAMINFO + 10] = bytes(6)  # minimum and maximum frame size: unknown
    head[_STREAMINFO + 18 : _STREAMINFO + 34] = bytes(16)  # MD5 of the audio: unknown
    for i in range(n_pad):
        size = min(slack, MAX_BLOCK)
        slack -= size
        head += bytes([(0x80 if i == n_pad - 1 else 0) | 1]) + size.to_bytes(3, "big") + bytes(size)
    return bytes(head) + data[first_frame:]


def decode_flac(data: bytes) -> tuple[np.ndarray, int]:
    """``(float32 [channels, samples], sample_rate)`` from FLAC bytes, channels preserved.

    Parameters
    ----------
    data : bytes
        A FLAC stream.

    Returns
    -------
    clip : ndarray, shape (channels, samples), float32
        The audio in full-scale units, in [-1, 1).
    sample_rate : int
        Sampling rate in Hz.
    """
    x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return np.ascontiguousarray(x.T), int(sr)
