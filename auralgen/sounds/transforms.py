"""Transforms of a recorded clip: pitch shift and time stretch (Rubber Band, via pedalboard).

Why pedalboard: it wraps Rubber Band (R3 engine), a maintained, formant-aware pitch/time library, as
a manylinux wheel with no system package, and it is deterministic (the same input gives the same
bytes, which the byte-identical-output rule needs). The transform is never trusted: the task that
asks for it measures the result (f0 in cents, duration by envelope, level) and keeps the item only
when the measurement confirms the intended difference.
"""

from __future__ import annotations

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.synth import n_samples


def stretch_shift(x: np.ndarray, sample_rate: int, *, duration_s: float, shift_cents: float = 0.0) -> np.ndarray:
    """``x`` stretched to ``duration_s`` and shifted by ``shift_cents`` (identity when neither applies)."""
    n = n_samples(duration_s, sample_rate)
    if shift_cents == 0.0 and len(x) == n:
        return x
    try:
        import pedalboard
    except ImportError:
        from auralgen.sounds.corpus import INSTALL_HINT

        raise ParameterError(INSTALL_HINT) from None
    y = pedalboard.time_stretch(
        x.astype(np.float32)[None, :],
        float(sample_rate),
        stretch_factor=len(x) / n,
        pitch_shift_in_semitones=shift_cents / 100.0,
    )[0].astype(np.float64)
    return np.pad(y[:n], (0, max(0, n - len(y))))
