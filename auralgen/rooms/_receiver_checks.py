"""Input checks of the receivers (:mod:`auralgen.rooms.receivers`): one-line errors under the ``receiver`` key."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from auralgen.core.errors import ParameterError, check_range

_KEY = "receiver"


def _finite(key: str, value) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{_KEY}.{key}={value!r} is not a number; allowed: a finite float") from None
    if not math.isfinite(out):
        raise ParameterError(f"{_KEY}.{key}={value!r} is not finite; allowed: a finite float")
    return out


def _store_length(receiver, key: str, *, high: float) -> None:
    """Check the receiver's length field ``key`` (m, in ``(0, high]``) and store it as a float."""
    check_range(f"{_KEY}.{key}", _finite(key, getattr(receiver, key)), low=0.0, high=high, low_open=True)
    object.__setattr__(receiver, key, float(getattr(receiver, key)))


def _vector3(key: str, value) -> tuple[float, float, float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) != 3:
        raise ParameterError(f"{_KEY}.{key}={value!r} is not a 3-vector; allowed: [x, y, z] in metres")
    return tuple(_finite(key, v) for v in value)


def _fit(x: np.ndarray, n_samples: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.shape[0] >= n_samples:
        return x[:n_samples]
    return np.pad(x, (0, n_samples - x.shape[0]))


def _check_render_args(sample_rate, c_m_s, n_samples) -> tuple[int, float, int]:
    if isinstance(sample_rate, bool) or int(sample_rate) != sample_rate or sample_rate <= 0:
        raise ParameterError(f"sample_rate={sample_rate!r}; allowed: an integer > 0")
    check_range("c_m_s", c_m_s, low=0, low_open=True)
    if isinstance(n_samples, bool) or int(n_samples) != n_samples or n_samples <= 0:
        raise ParameterError(f"n_samples={n_samples!r}; allowed: an integer > 0")
    return int(sample_rate), float(c_m_s), int(n_samples)
