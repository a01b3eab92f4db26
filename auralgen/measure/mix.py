"""Decompose a mixture into known references: onset and gain of each component."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import fft as sp_fft
from scipy import signal

from auralgen.core.errors import ParameterError
from auralgen.measure.common import as_mono, as_signal, check_rate

_REFINE_PASSES = 2
_MAX_GRAM_COND = 1e10  # above this the normal equations lose digits: least squares by SVD instead
_FFT_BATCH = 4  # float32 rows that scipy's pocketfft transforms together (its SIMD width in SSE builds)
_F32_ERROR = 1e-6  # bound on a float32 FFT correlation's error, re the product of the signals' norms (~1e-8 seen)


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
    """Cross-correlations of one mix with its references, from one float32 FFT of each signal.

    ``mix_cc[i]`` is ``scipy.signal.correlate(x, refs[i], mode="full")``: index ``lag + m_i - 1`` holds
    ``sum_t x[t + lag] refs[i][t]``. The correlation of a placed reference ``j`` (at ``lag_j``, wholly
    inside the mix) with reference ``i`` is the reference pair's own correlation shifted by ``lag_j``,
    so the correlation of the mix minus the other fitted components needs no new transform
    (:meth:`residual`); a component clipped at an end of the mix is transformed as placed. The mix
    is transformed over its nonzero span (lead and tail silence correlate to exactly 0).

    Single precision is used for the transforms only where it cannot change a decision: each
    correlation comes with a bound on its rounding error (:data:`_F32_ERROR` times the norms that
    enter it, ~100x the error measured), and :meth:`lag` recomputes in double precision, as a direct
    correlation, whenever the peak does not beat every other lag by twice that bound.
    """

    def __init__(self, x: np.ndarray, refs: list[np.ndarray]):
        self.x, self.refs, self.n = x, refs, len(x)
        # the mix is transformed over its nonzero span only: every lag whose window misses it correlates to 0
        a, b = _nonzero_span(x)
        longest = max(len(r) for r in refs)
        self.size = _even_fast_len(max(b - a, longest) + longest - 1)
        self.norms = [math.sqrt(_dot(r, r)) for r in refs]
        self.x_norm = math.sqrt(_dot(x, x))
        k = len(refs)
        rows = np.zeros((_batch_rows(k + 1), self.size), dtype=np.float32)  # the mix and every reference: one batch
        rows[0, : b - a] = x[a:b]
        for row, r in zip(rows[1:], refs, strict=False):
            row[: len(r)] = r
        spectra = sp_fft.rfft(rows, axis=1)
        self.spectra, self.conj = spectra[1 : k + 1], np.conj(spectra[1 : k + 1])
        products = np.zeros((_batch_rows(k), spectra.shape[1]), dtype=spectra.dtype)
        np.multiply(spectra[0], self.conj, out=products[:k])
        circ = sp_fft.irfft(products, self.size, axis=1)
        self.mix_cc = []
        for c, r in zip(circ, refs, strict=False):
            m = len(r)
            full = np.zeros(self.n + m - 1, dtype=np.float32)  # index lag + m - 1, lags -(m - 1) .. n - 1
            full[a : a + m - 1] = c[self.size - (m - 1) :]  # the lags -(m - 1) .. -1 of the span, wrapped
            full[a + m - 1 : b + m - 1] = c[: b - a]
            self.mix_cc.append(full)
        self.pairs: dict[tuple[int, int], np.ndarray] = {}

    @staticmethod
    def _unwrapped(circ: np.ndarray, m_i: int, m_j: int) -> np.ndarray:
        """Lags ``-(m_i - 1) .. m_j - 1`` of the circular correlation ``circ``."""
        return np.concatenate((circ[len(circ) - (m_i - 1) :], circ[:m_j]))

    def _pair(self, j: int, i: int) -> np.ndarray:
        """``correlate(refs[j], refs[i], mode="full")``; every pair's at the first call, in batched transforms
        (the pair the other way round is the same correlation reversed)."""
        if not self.pairs:
            self._all_pairs()
        return self.pairs[(j, i)]

    def _all_pairs(self) -> None:
        """The correlations of every reference pair in one batched inverse transform: from every 2nd bin
        (the transform of the correlation wrapped at ``size / 2``, exact when every pair fits in it; the
        size is even) at half the size, else at the full size."""
        k = len(self.refs)
        pairs = [(j, i) for i in range(k) for j in range(i + 1, k)]
        if not pairs:
            return
        longest = max(len(self.refs[i]) + len(self.refs[j]) - 1 for j, i in pairs)
        step = 2 if self.size // 2 >= longest else 1
        products = np.zeros((_batch_rows(len(pairs)), self.size // (2 * step) + 1), dtype=self.spectra.dtype)
        for row, (j, i) in zip(products, pairs, strict=False):
            np.multiply(self.spectra[j, ::step], self.conj[i, ::step], out=row)
        circ = sp_fft.irfft(products, self.size // step, axis=1)
        for c, (j, i) in zip(circ, pairs, strict=False):
            self.pairs[(j, i)] = self._unwrapped(c, len(self.refs[i]), len(self.refs[j]))
            self.pairs[(i, j)] = self.pairs[(j, i)][::-1]

    def residual(self, i: int, lags: list[int], gains) -> tuple[np.ndarray, float]:
        """``correlate(x - sum_{j != i} gains[j] * placed(refs[j], lags[j]), refs[i], mode="full")`` and
        the bound on its rounding error."""
        m_i, cc = len(self.refs[i]), self.mix_cc[i].copy()
        scale = self.x_norm
        for j, (r, lag, g) in enumerate(zip(self.refs, lags, gains, strict=True)):
            if j == i:
                continue
            scale += abs(float(g)) * self.norms[j]
            if 0 <= lag and lag + len(r) <= self.n:
                cc[lag : lag + m_i + len(r) - 1] -= float(g) * self._pair(j, i)
            else:  # clipped at an end of the mix: correlated as placed
                size = sp_fft.next_fast_len(self.n + m_i - 1, real=True)
                product = sp_fft.rfft(_placed(r, lag, self.n).astype(np.float32), size) * np.conj(
                    sp_fft.rfft(self.refs[i].astype(np.float32), size)
                )
                cc -= float(g) * self._unwrapped(sp_fft.irfft(product, size), m_i, self.n)
        return cc, _F32_ERROR * scale * self.norms[i]

    def lag(self, i: int, lags: list[int] | None = None, gains=None) -> int:
        """The lag of ``refs[i]`` in the mix (minus the other placed references when ``lags`` are given):
        the peak of ``|correlation|``, the same lag a double-precision direct correlation gives."""
        if lags is None:
            cc, bound = self.mix_cc[i], _F32_ERROR * self.x_norm * self.norms[i]
        else:
            cc, bound = self.residual(i, lags, gains)
        mag = np.abs(cc)
        k = int(np.argmax(mag))
        peak = float(mag[k])
        mag[k] = -1.0
        if peak - float(np.max(mag, initial=-1.0)) > 2.0 * bound:
            return k - (len(self.refs[i]) - 1)
        target = self.x
        if lags is not None:  # a near tie: decided in double precision, as a direct correlation
            target = self.x - sum(
                (
                    float(g) * _placed(r, lag, self.n)
                    for j, (r, lag, g) in enumerate(zip(self.refs, lags, gains))
                    if j != i
                ),
                np.zeros(self.n),
            )
        return _best_lag(target, self.refs[i])


def _nonzero_span(x: np.ndarray) -> tuple[int, int]:
    """The samples ``[a, b)`` from the first to the last nonzero sample of ``x`` (all of it when it is all zeros)."""
    nonzero = x != 0
    a = int(np.argmax(nonzero))
    if not nonzero[a]:
        return 0, len(x)
    return a, len(x) - int(np.argmax(nonzero[::-1]))


def _even_fast_len(n: int) -> int:
    """The smallest even 5-smooth length >= ``n`` (pocketfft's fast sizes; even, so a pair's correlation
    can be taken from every 2nd bin when it fits in half)."""
    return 2 * sp_fft.next_fast_len((n + 1) // 2, real=True)


def _batch_rows(k: int) -> int:
    """Rows of a batched transform of ``k`` signals: a multiple of :data:`_FFT_BATCH` (pocketfft transforms
    that many rows at once in SIMD lanes, about as fast as one; a remainder of one row is transformed alone)."""
    full, rest = divmod(k, _FFT_BATCH)
    return k if rest <= 1 else (full + 1) * _FFT_BATCH


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``sum(a * b)`` by numpy's pairwise summation (not BLAS, whose threads only add contention here)."""
    return float(np.multiply(a, b).sum())


def _span(lag: int, m: int, n: int) -> tuple[int, int]:
    """The samples ``[a, b)`` of an ``n``-sample timeline that a reference of ``m`` samples at ``lag`` covers."""
    return max(lag, 0), min(lag + m, n)


def _gains(x: np.ndarray, refs: list[np.ndarray], lags: list[int]) -> np.ndarray:
    """Least-squares gains of the placed ``refs`` in ``x``, from the normal equations (each entry a dot
    product over the samples where the placed references overlap); :func:`numpy.linalg.lstsq` when
    they are ill-posed."""
    n, k = len(x), len(refs)
    spans = [_span(lag, len(r), n) for r, lag in zip(refs, lags, strict=True)]
    gram, rhs = np.zeros((k, k)), np.zeros(k)
    for i in range(k):
        a_i, b_i = spans[i]
        if b_i > a_i:
            rhs[i] = _dot(x[a_i:b_i], refs[i][a_i - lags[i] : b_i - lags[i]])
        for j in range(i, k):
            a, b = max(a_i, spans[j][0]), min(b_i, spans[j][1])
            if b > a:
                gram[i, j] = gram[j, i] = _dot(refs[i][a - lags[i] : b - lags[i]], refs[j][a - lags[j] : b - lags[j]])
    if np.linalg.cond(gram) > _MAX_GRAM_COND:
        return _fit_gains(x, refs, lags)
    return np.linalg.solve(gram, rhs)


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
    xm = as_signal(x)
    if xm.ndim == 2:  # one channel: its samples plus 0.0 (a -0.0 becomes 0.0), the float the mean over channels gives
        xm = xm[0] + 0.0 if xm.shape[0] == 1 else xm.mean(axis=0)
    if isinstance(references, np.ndarray) and references.ndim == 1:
        raise ParameterError("references must be a list of 1-D arrays, not a single array")
    refs = [as_mono(r, f"references[{i}]") for i, r in enumerate(references)]
    if not refs:
        raise ParameterError("references must hold at least one signal; got none")
    for i, r in enumerate(refs):
        if not np.any(r):
            raise ParameterError(f"references[{i}] is all zeros")
    corr = _Correlator(xm, refs)
    lags = [corr.lag(i) for i in range(len(refs))]
    gains = _gains(xm, refs, lags)
    if len(refs) > 1:
        for _ in range(_REFINE_PASSES):
            before = list(lags)
            for i in range(len(refs)):
                lags[i] = corr.lag(i, lags, gains)
            if lags == before:  # same lags give the same gains: a further pass changes nothing
                break
            gains = _gains(xm, refs, lags)
    return [
        MixtureComponent(lag / sr, 20.0 * math.log10(abs(g)) if g != 0 else -math.inf)
        for lag, g in zip(lags, gains, strict=True)
    ]
