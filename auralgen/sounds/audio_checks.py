"""Checks a source file's audio must pass before it becomes a sound: a sane header (read before any
sample) and audio that can make a sound (finite, long enough, audible, channels that do not cancel)."""

from __future__ import annotations

import numpy as np

from auralgen.core.errors import ParameterError

MIN_RATE_HZ, MAX_RATE_HZ = 1000, 768000  # sample rates a source file may declare
MAX_FILE_S = 3600.0  # longest source file read (an hour; a header claiming more is refused before reading)
SILENT_DBFS = -80.0  # a mono mix whose peak is below this is silence (16-bit rounding noise is -96 dBFS)
CANCEL_DB = 40.0  # a mono mix this far below the level of its channels: the channels cancel
MIN_SOURCE_S = 0.01  # shorter than this, a file holds no sound to speak of


def check_audio_info(info, name: str, where: str) -> None:
    """Refuse, before reading any sample, a file whose header is out of bounds.

    Out of bounds: a sample rate outside [:data:`MIN_RATE_HZ`, :data:`MAX_RATE_HZ`], more than
    :data:`MAX_FILE_S` of audio or more than 64 channels (a header claiming 2,147,483,647 Hz would make
    resampling allocate hundreds of GiB).

    Parameters
    ----------
    info : soundfile info
        The header, as ``soundfile.info(path)`` returns it (``samplerate`` in Hz, ``frames``, ``channels``).
    name : str
        The file's name, quoted in the error.
    where : str
        What the file belongs to (a config key such as ``sources_dir``), quoted in the error.

    Raises
    ------
    ParameterError
        If the header declares a rate, length or channel count outside the bounds.
    """
    rate, frames = int(info.samplerate), int(info.frames)
    if not MIN_RATE_HZ <= rate <= MAX_RATE_HZ:
        raise ParameterError(
            f"{where} file {name!r} declares samplerate={rate} Hz; allowed: {MIN_RATE_HZ} .. {MAX_RATE_HZ} Hz"
        )
    if frames > MAX_FILE_S * rate or not 1 <= info.channels <= 64:
        raise ParameterError(
            f"{where} file {name!r} declares {frames} frames x {info.channels} channels at {rate} Hz; "
            f"allowed: at most {MAX_FILE_S:g} s and 1 .. 64 channels"
        )


class BadSourceFile(ParameterError):
    """A source file whose audio cannot make a sound (:func:`bad_audio`): names the file and why."""

    def __init__(self, name: str, reason: str):
        super().__init__(
            f"source file {name!r} {reason}; allowed: audio whose mono mix is finite, audible and at least "
            f"{MIN_SOURCE_S} s long (or source.on_bad=skip to leave such files out)"
        )
        self.name, self.reason = name, reason


def _dbfs(x: float) -> str:
    return f"{20 * np.log10(x):.1f} dBFS" if x > 0 else "-inf dBFS"


def bad_audio(x: np.ndarray, sample_rate: int) -> str | None:
    """Why the audio ``x`` cannot be a source, or ``None``.

    Refused: NaN or infinite samples, shorter than :data:`MIN_SOURCE_S`, a mono mix below
    :data:`SILENT_DBFS` (silent), or channels that cancel in the mix (the mix :data:`CANCEL_DB`
    below the channels' level).

    Parameters
    ----------
    x : ndarray, shape (frames, channels), float
        The decoded audio, digital full scale.
    sample_rate : int
        Its sampling rate, in Hz.

    Returns
    -------
    str or None
        The reason, worded to follow the file's name ("is silent (peak -96.3 dBFS)"), or None when
        the audio can be a source.
    """
    if x.shape[0] < max(1, round(MIN_SOURCE_S * sample_rate)):
        return f"is too short ({x.shape[0]} samples at {sample_rate} Hz)"
    if not np.isfinite(x).all():
        return "holds NaN or infinite samples"
    mix = x.mean(axis=1)
    mix_peak, peak = float(np.abs(mix).max()), float(np.abs(x).max())
    floor = 10.0 ** (SILENT_DBFS / 20.0)
    if peak < floor:
        return f"is silent (peak {_dbfs(peak)})"
    mix_rms = float(np.sqrt(np.mean(mix**2)))
    channel_rms = float(np.sqrt(np.mean(x**2)))
    if mix_peak < floor or mix_rms < channel_rms * 10.0 ** (-CANCEL_DB / 20.0):
        return (
            f"has {x.shape[1]} channels that cancel in the mono mix (mix peak {_dbfs(mix_peak)}, "
            f"channels' peak {_dbfs(peak)})"
        )
    return None
