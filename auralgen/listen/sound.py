"""The one sound file of a trial: equal size for every trial of a study, whatever the answer.

A trial's clips are played one after the other, ``gap_s`` apart, on two channels (a mono clip on
both ears, a stereo or binaural clip as it is), resampled to the study's rate and followed by
silence up to the study's fixed length. The file is a 32-bit float WAV (no quantisation, so the
quiet tones of an audiogram keep their level), so every file of a study has the same byte size,
duration and header: nothing the browser can read without listening differs by answer.
"""

from __future__ import annotations

import io
from math import gcd

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from auralgen.core.errors import ParameterError
from auralgen.synth.levels import peak_for_db_spl_sine

from .study import CALIBRATION_S, AudioFormat

__all__ = ["calibration_tone", "read_wav_bytes", "trial_wav"]


def _two_channels(clip: np.ndarray, where: str) -> np.ndarray:
    clip = np.asarray(clip, dtype=np.float32)
    if clip.ndim == 1:
        clip = clip[None, :]
    if clip.shape[0] == 1:
        return np.repeat(clip, 2, axis=0)
    if clip.shape[0] != 2:
        raise ParameterError(
            f"{where} has {clip.shape[0]} channels; allowed in a listening test: 1 or 2 (mono, stereo, binaural)"
        )
    return clip


def _resample(clip: np.ndarray, rate: int, target: int) -> np.ndarray:
    if rate == target:
        return clip
    g = gcd(int(rate), int(target))
    return resample_poly(clip, target // g, rate // g, axis=1).astype(np.float32)


def trial_wav(clips, sample_rate: int, fmt: AudioFormat, *, where: str = "trial") -> bytes:
    """The WAV bytes of a trial holding ``clips`` (float32 ``[channels, samples]`` at ``sample_rate``).

    Parameters
    ----------
    clips : list of ndarray, shape (channels, samples) or (samples,)
        The trial's clips in full-scale units, one or two channels each (mono plays on both ears).
    sample_rate : int
        The clips' sampling rate in Hz; they are resampled to ``fmt.sample_rate``.
    fmt : AudioFormat
        The study's audio format: rate, fixed length and gap between clips.
    where : str, optional
        Names the trial in error messages.

    Returns
    -------
    bytes
        A two-channel 32-bit float WAV of exactly ``fmt.length_s`` seconds at ``fmt.sample_rate``.

    Raises
    ------
    ParameterError
        When a clip has more than two channels, or the clips do not fit in ``fmt.length_s``.
    """
    parts, gap = [], np.zeros((2, int(round(fmt.gap_s * fmt.sample_rate))), dtype=np.float32)
    for k, clip in enumerate(clips):
        if k:
            parts.append(gap)
        parts.append(_resample(_two_channels(clip, where), int(sample_rate), fmt.sample_rate))
    body = np.concatenate(parts, axis=1)
    if body.shape[1] > fmt.n_samples:
        raise ParameterError(
            f"{where} lasts {body.shape[1] / fmt.sample_rate:.2f} s; allowed: at most audio.length_s={fmt.length_s:g} "
            "(raise audio.length_s in the study file)"
        )
    out = np.zeros((2, fmt.n_samples), dtype=np.float32)
    out[:, : body.shape[1]] = body
    buf = io.BytesIO()
    sf.write(buf, out.T, fmt.sample_rate, format="WAV", subtype="FLOAT")
    return buf.getvalue()


def read_wav_bytes(data: bytes) -> tuple[np.ndarray, int]:
    """``(float32 [channels, samples], rate)`` of WAV bytes (what the browser was served).

    Parameters
    ----------
    data : bytes
        A WAV file.

    Returns
    -------
    clip : ndarray, shape (channels, samples), float32
        The audio in full-scale units.
    rate : int
        Sampling rate in Hz.
    """
    x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return np.ascontiguousarray(x.T), int(sr)


def calibration_tone(fmt: AudioFormat, *, freq_hz: float = 1000.0, duration_s: float = CALIBRATION_S) -> bytes:
    """The volume step's sound: a ``freq_hz`` tone at ``fmt.calibration_db_spl`` (dB SPL when digital full
    scale is the project's ``full_scale_db_spl``), 20 ms raised-cosine ramps, in the study's file format.

    Parameters
    ----------
    fmt : AudioFormat
        The study's audio format (rate, length, ``calibration_db_spl``).
    freq_hz : float, optional
        Tone frequency in Hz (default 1000).
    duration_s : float, optional
        Tone duration in seconds (default 2); must fit in ``fmt.length_s``.

    Returns
    -------
    bytes
        The tone as a trial WAV (see :func:`trial_wav`).

    Raises
    ------
    ParameterError
        If ``duration_s`` exceeds ``fmt.length_s``.
    """
    t = np.arange(int(duration_s * fmt.sample_rate)) / fmt.sample_rate
    x = peak_for_db_spl_sine(fmt.calibration_db_spl) * np.sin(2 * np.pi * freq_hz * t)
    ramp = int(0.02 * fmt.sample_rate)
    env = np.ones_like(x)
    env[:ramp] = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
    env[-ramp:] = env[:ramp][::-1]
    return trial_wav([(x * env)[None, :].astype(np.float32)], fmt.sample_rate, fmt, where="calibration tone")
