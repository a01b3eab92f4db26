"""Decompose a mixture into known references: onset and gain of each component."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_mono, check_rate

_REFINE_PASSES = 2


@dataclass(frozen=True)
class MixtureComponent:
    """One reference found in a mixture: where it starts (s) and its gain (dB, 20 log10 |g|)."""

    onset_s: float
    gain_db: float


def _placed(ref: np.ndarray, lag: int, n: int) -> np.ndarray:
    """``ref`` starting at sample ``lag`` of an ``n``-sample timeline (clipped at both ends)."""
    out = np.zeros(n)
    a, b = max(lag, 0), min(lag + len(ref), n)
    if b > a:
        out[a:b] = ref[a - lag : b - lag]
    return out


def _best_lag(target: np.ndarray, ref: np.ndarray) -> int:
    cc = signal.correlate(target, ref, mode="full", method="fft")
    return int(np.argmax(np.abs(cc))) - (len(ref) - 1)


def _fit_gains(x: np.ndarray, refs: list[np.ndarray], lags: list[int]) -> np.ndarray:
    design = np.stack([_placed(r, lag, len(x)) for r, lag in zip(refs, lags, strict=True)], axis=1)
    return np.linalg.lstsq(design, x, rcond=None)[0]


def mixture_components(x, references, sample_rate) -> list[MixtureComponent]:
    """Onset and gain of each reference signal within a mixture.

    Onsets come from the peak of the cross-correlation of the mix with each reference
    (lags may be negative when a component starts before the mix); gains from a joint
    least-squares fit of all placed references to the mix. Two refinement passes
    re-estimate each onset against the mix minus the other fitted components, which
    removes cross-talk between overlapping references. References should have temporal
    structure (noise, speech, ramps); a stationary pure tone has no unique onset.

    Parameters
    ----------
    x : np.ndarray [shape=(n,) or (channels, n)]
        The mix; channels are averaged.
    references : list of np.ndarray [shape=(m_i,)]
        The unscaled component signals.
    sample_rate : float > 0
        Sample rate of the mix and the references in Hz.

    Returns
    -------
    list of MixtureComponent
        Onset (seconds) and gain (dB) of each reference, in the order of ``references``.

    Examples
    --------
    >>> rng = np.random.default_rng(0); a, b = rng.standard_normal((2, 800))
    >>> mix = np.zeros(2000); mix[100:900] += 0.5 * a; mix[1000:1800] += 2.0 * b
    >>> [(c.onset_s, round(c.gain_db, 2)) for c in mixture_components(mix, [a, b], 1000)]
    [(0.1, -6.02), (1.0, 6.02)]
    """
    sr = check_rate(sample_rate)
    xm = as_mono(x)
    if isinstance(references, np.ndarray) and references.ndim == 1:
        raise ParameterError("references must be a list of 1-D arrays, not a single array")
    refs = [as_mono(r, f"references[{i}]") for i, r in enumerate(references)]
    if not refs:
        raise ParameterError("references must hold at least one signal; got none")
    for i, r in enumerate(refs):
        if not np.any(r):
            raise ParameterError(f"references[{i}] is all zeros")
    lags = [_best_lag(xm, r) for r in refs]
    gains = _fit_gains(xm, refs, lags)
    if len(refs) > 1:
        for _ in range(_REFINE_PASSES):
            for i, r in enumerate(refs):
                others = sum(
                    (
                        g * _placed(rj, lj, len(xm))
                        for j, (rj, lj, g) in enumerate(zip(refs, lags, gains, strict=True))
                        if j != i
                    ),
                    np.zeros(len(xm)),
                )
                lags[i] = _best_lag(xm - others, r)
            gains = _fit_gains(xm, refs, lags)
    return [
        MixtureComponent(lag / sr, 20.0 * math.log10(abs(g)) if g != 0 else -math.inf)
        for lag, g in zip(lags, gains, strict=True)
    ]
