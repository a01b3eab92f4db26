"""Decompose a mixture into known references: onset and gain of each component."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal
from scipy.fft import next_fast_len

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_mono, check_rate

_REFINE_PASSES = 2
_MAX_GRAM_COND = 1e10  # above this the normal equations lose digits: least squares by SVD instead


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
    """The lag of ``ref`` in ``target`` by a direct FFT cross-correlation (the reference path of the tests)."""
    cc = signal.correlate(target, ref, mode="full", method="fft")
    return int(np.argmax(np.abs(cc))) - (len(ref) - 1)


def _fit_gains(x: np.ndarray, refs: list[np.ndarray], lags: list[int]) -> np.ndarray:
    """Least-squares gains of the placed ``refs`` in ``x`` (the reference path of the tests)."""
    design = np.stack([_placed(r, lag, len(x)) for r, lag in zip(refs, lags, strict=True)], axis=1)
    return np.linalg.lstsq(design, x, rcond=None)[0]


class _Correlator:
    """Cross-correlations of one mix with its references, from one FFT of each signal.

    ``full(i)`` is ``scipy.signal.correlate(x, refs[i], mode="full")``: index ``lag + m_i - 1`` holds
    ``sum_t x[t + lag] refs[i][t]``. The correlation of a placed reference ``j`` (at ``lag_j``, wholly
    inside the mix) with reference ``i`` is the reference pair's own correlation shifted by ``lag_j``,
    so the correlation of the mix minus the other fitted components needs no new transform
    (:meth:`residual`); a component clipped at an end of the mix is transformed as placed.
    """

    def __init__(self, x: np.ndarray, refs: list[np.ndarray]):
        self.x, self.refs, self.n = x, refs, len(x)
        longest = max(len(r) for r in refs)
        self.size = next_fast_len(max(self.n, longest) + longest - 1, real=True)
        self.spectra = [np.fft.rfft(r, self.size) for r in refs]
        self.conj = [np.conj(s) for s in self.spectra]
        self.x_spectrum = np.fft.rfft(x, self.size)
        self.mix_cc = [self._unwrap(self.x_spectrum * c, len(r), self.n) for c, r in zip(self.conj, refs)]
        self.pairs: dict[tuple[int, int], np.ndarray] = {}

    def _unwrap(self, product: np.ndarray, m_i: int, m_j: int) -> np.ndarray:
        """Lags ``-(m_i - 1) .. m_j - 1`` of a circular correlation given by its spectrum ``product``."""
        circ = np.fft.irfft(product, self.size)
        return np.concatenate((circ[self.size - (m_i - 1) :], circ[:m_j]))

    def _pair(self, j: int, i: int) -> np.ndarray:
        """``correlate(refs[j], refs[i], mode="full")``, computed once per unordered pair (the pair the
        other way round is the same correlation reversed)."""
        if (j, i) not in self.pairs:
            if (i, j) in self.pairs:
                self.pairs[(j, i)] = self.pairs[(i, j)][::-1]
            else:
                self.pairs[(j, i)] = self._unwrap(self.spectra[j] * self.conj[i], len(self.refs[i]), len(self.refs[j]))
        return self.pairs[(j, i)]

    def residual(self, i: int, lags: list[int], gains: np.ndarray) -> np.ndarray:
        """``correlate(x - sum_{j != i} gains[j] * placed(refs[j], lags[j]), refs[i], mode="full")``."""
        m_i, cc = len(self.refs[i]), self.mix_cc[i].copy()
        for j, (r, lag, g) in enumerate(zip(self.refs, lags, gains, strict=True)):
            if j == i:
                continue
            if 0 <= lag and lag + len(r) <= self.n:
                cc[lag : lag + m_i + len(r) - 1] -= g * self._pair(j, i)
            else:
                placed = np.fft.rfft(_placed(r, lag, self.n), self.size)
                cc -= g * self._unwrap(placed * self.conj[i], m_i, self.n)
        return cc


def _lag_of(cc: np.ndarray, m: int) -> int:
    return int(np.argmax(np.abs(cc))) - (m - 1)


def _gains(x: np.ndarray, refs: list[np.ndarray], lags: list[int]) -> np.ndarray:
    """Least-squares gains of the placed ``refs`` in ``x``, from the normal equations (the design's
    columns overlap only where the references do); :func:`numpy.linalg.lstsq` when they are ill-posed."""
    design = np.stack([_placed(r, lag, len(x)) for r, lag in zip(refs, lags, strict=True)])
    gram = design @ design.T
    if np.linalg.cond(gram) > _MAX_GRAM_COND:
        return np.linalg.lstsq(design.T, x, rcond=None)[0]
    return np.linalg.solve(gram, design @ x)


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
    corr = _Correlator(xm, refs)
    lags = [_lag_of(cc, len(r)) for cc, r in zip(corr.mix_cc, refs, strict=True)]
    gains = _gains(xm, refs, lags)
    if len(refs) > 1:
        for _ in range(_REFINE_PASSES):
            before = list(lags)
            for i, r in enumerate(refs):
                lags[i] = _lag_of(corr.residual(i, lags, gains), len(r))
            if lags == before:  # same lags give the same gains: a further pass changes nothing
                break
            gains = _gains(xm, refs, lags)
    return [
        MixtureComponent(lag / sr, 20.0 * math.log10(abs(g)) if g != 0 else -math.inf)
        for lag, g in zip(lags, gains, strict=True)
    ]
