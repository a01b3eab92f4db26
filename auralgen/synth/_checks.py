"""Argument checks shared by the synth modules; each raises ParameterError naming the value."""

from __future__ import annotations

import math
import numbers

import numpy as np

from auralgen.core.errors import ParameterError, check_range


def check_sample_rate(sample_rate) -> int:
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, numbers.Integral) or sample_rate <= 0:
        raise ParameterError(f"sample_rate={sample_rate!r} is not a positive integer; allowed: int > 0")
    return int(sample_rate)


def check_finite(key: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ParameterError(f"{key}={value!r} is not a finite number; allowed: a finite real number")
    return float(value)


def check_frequency(key: str, value, sample_rate: int, *, allow_zero: bool = False) -> float:
    value = check_finite(key, value)
    nyquist = sample_rate / 2
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value < nyquist):
        low = "0 <=" if allow_zero else "0 <"
        raise ParameterError(f"{key}={value!r} is out of range; allowed: {low} {key} < Nyquist ({nyquist:g} Hz)")
    return value


def check_int(key: str, value, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{key}={value!r} is not an integer; allowed: int >= {low}")
    return int(check_range(key, int(value), low=low))


def as_signal(key: str, x) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ParameterError(f"{key} has shape {arr.shape}; allowed: a 1-D array [n]")
    return arr
