"""Sources read from a user's folder of WAV/FLAC files (palette ``spatial``, kind ``file``)."""

from __future__ import annotations

from math import gcd
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import Choice
from auralgen.sounds.audio_checks import MIN_SOURCE_S, bad_audio, check_audio_info
from auralgen.sounds.base import register_sound_kind
from auralgen.sounds.corpus import RecordingKind
from auralgen.sounds.spatial import SpatialKind
from auralgen.synth import n_samples


def _read_checked(path: str, key: str) -> tuple[np.ndarray, int]:
    """``(float64 [frames, channels], rate)`` of a ``sources_dir`` file, refused in one line naming it when
    it is unreadable or :func:`~auralgen.sounds.corpus.bad_audio` refuses it (silent, NaN, too short,
    channels that cancel)."""
    import soundfile as sf

    try:
        check_audio_info(sf.info(path), Path(path).name, key)
        data, sr = sf.read(path, dtype="float64", always_2d=True)
    except ParameterError:
        raise
    except Exception as exc:
        raise ParameterError(
            f"{key} file {Path(path).name!r} is unreadable ({exc}); allowed: WAV/FLAC files soundfile can read"
        ) from None
    reason = bad_audio(data, int(sr))
    if reason is not None:
        raise ParameterError(
            f"{key} file {Path(path).name!r} {reason}; allowed: audio whose mono mix is finite, audible and at "
            f"least {MIN_SOURCE_S} s long"
        )
    return data, int(sr)


def check_source_file(path: str, key: str = "sources_dir") -> None:
    """Read ``path`` and refuse it in one line if it cannot be a source (see :func:`_read_checked`).

    Parameters
    ----------
    path : str
        A WAV/FLAC file.
    key : str, optional
        Config key the file belongs to, quoted in the error (default ``"sources_dir"``).

    Raises
    ------
    ParameterError
        If the file is unreadable, its header is out of bounds or its audio is silent, non-finite,
        too short or cancels in the mono mix.
    """
    _read_checked(path, key)


def read_source_file(path: str, sample_rate: int, duration_s: float) -> np.ndarray:
    """Mono downmix of a WAV/FLAC file, resampled to ``sample_rate``, cut or zero-padded to ``duration_s``.

    Parameters
    ----------
    path : str
        A WAV/FLAC file.
    sample_rate : int
        Output sampling rate, in Hz.
    duration_s : float
        Output duration, in seconds.

    Returns
    -------
    ndarray, shape (samples,), float64
        ``round(duration_s * sample_rate)`` samples, digital full scale.

    Raises
    ------
    ParameterError
        If the file cannot be a source (see :func:`check_source_file`).
    """
    from scipy.signal import resample_poly

    data, sr = _read_checked(path, "sources_dir")
    x = data.mean(axis=1)
    if sr != sample_rate:
        g = gcd(int(sr), int(sample_rate))
        x = resample_poly(x, sample_rate // g, sr // g)
    n = n_samples(duration_s, sample_rate)
    return np.pad(x[:n], (0, max(0, n - len(x))))


@register_sound_kind
class File(SpatialKind):
    """One of ``files`` (paths given to :meth:`draw`), chosen uniformly."""

    kind = "file"
    label = "the recording"
    tags = frozenset({"file"})

    def fields(self, rng, *, files=(), **_: Any) -> dict[str, Any]:
        if not files:
            raise ParameterError("source.kind='file' needs files; allowed: a sources_dir holding WAV/FLAC files")
        return {"path": Choice(tuple(files)).sample(rng)}

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return read_source_file(spec["path"], sample_rate, spec["duration_s"])


@register_sound_kind
class Recording(RecordingKind, SpatialKind):
    """A piece of a recording of the run's ``source`` (``source=folder|hf|clips``): the recipe names
    file, class, license, hash and offset (:meth:`auralgen.sounds.corpus.Corpus.pick`)."""

    def render(self, spec, sample_rate: int, **_: Any) -> np.ndarray:
        return self.piece(spec, sample_rate)
