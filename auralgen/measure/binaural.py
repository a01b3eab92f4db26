"""Ideal-observer template matching of a binaural direct sound against an HRTF set.

The observer holds the head-related impulse responses the clip was rendered with (the same
set: the upper bound of what the audio carries) and asks, for every measured direction ``d``,
how well the ear signals of the direct sound are explained by ``h_left(d)``, ``h_right(d)``:

- **known source** (:func:`match_known_source`): the dry signal ``s`` reaching the head is
  given, aligned to the direct sound's arrival; the residual of ``x_e ~ g (s * h_e(d))``, one gain
  ``g`` for both ears (so level differences between the ears count). ITD, ILD and the per-ear
  spectra (pinna notches, front/back and elevation colouring) all enter. This is the label
  check of the direction tasks.
- **unknown source** (:func:`match_cross_relation`): the cross relation
  ``x_left * h_right(d) = x_right * h_left(d)`` holds for any source signal, so its normalised
  residual scores ``d`` from the interaural transfer function alone (ITD and ILD per frequency).
  A left/right symmetric head gives the median plane no interaural cue: there only the room and
  the source spectrum could tell directions apart, which a source-blind observer does not have.

The window must hold the direct sound only: it ends before the first reflection arrives.

Directions follow :mod:`auralgen.measure.geometry` (azimuth 0 ahead, +90 left; elevation up).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.fft

from auralgen.core.errors import ParameterError
from auralgen.core.memo import BoundedMemo
from auralgen.measure.common import as_channels

__all__ = ["DirectionMatch", "deconvolve", "match_cross_relation", "match_known_source"]


@dataclass(frozen=True)
class DirectionMatch:
    """Best direction of a template match.

    azimuth_deg, elevation_deg : the best template's direction (deg)
    index : int, its row in the HRTF set
    residual : float in [0, 1], its normalised residual (0 = exact)
    runner_up : float, the best residual among directions more than 20 deg away (how distinct)
    """

    azimuth_deg: float
    elevation_deg: float
    index: int
    residual: float
    runner_up: float


def _check_set(hrirs, directions_deg) -> tuple[np.ndarray, np.ndarray]:
    h = np.asarray(hrirs, dtype=np.float64)
    d = np.asarray(directions_deg, dtype=np.float64)
    if h.ndim != 3 or h.shape[1] != 2 or d.shape != (h.shape[0], 2) or h.shape[0] == 0:
        raise ParameterError(f"hrirs shape={h.shape}, directions_deg shape={d.shape}; allowed: (n, 2, taps) and (n, 2)")
    return h, d


def _check_window(x) -> np.ndarray:
    w = as_channels(x)
    if w.shape[0] != 2 or w.shape[1] < 8:
        raise ParameterError(f"x shape={np.shape(x)}; allowed: (2, n) with n >= 8 (left, right)")
    if not np.any(w):
        raise ParameterError("x carries no energy; allowed: a window holding the direct sound")
    return w


def _best(residual: np.ndarray, d: np.ndarray) -> DirectionMatch:
    i = int(np.argmin(residual))
    far = _far_from(_unit(d), i)
    runner = float(residual[far].min()) if np.any(far) else float("nan")
    return DirectionMatch(float(d[i, 0]), float(d[i, 1]), i, float(residual[i]), runner)


def _far_from(u: np.ndarray, i: int) -> np.ndarray:
    """Which unit vectors ``u`` lie more than 20 deg from ``u[i]``."""
    # a grid direction exactly 20 deg away has a dot product equal to cos(20 deg) up to the last bits of
    # sin/cos, which differ between CPUs, so the margin keeps it out on every CPU
    return u @ u[i] < np.cos(np.radians(20.0)) - 1e-9


def _unit(d: np.ndarray) -> np.ndarray:
    az, el = np.radians(d[:, 0]), np.radians(d[:, 1])
    return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=1)


#: a float32 screen's residuals are within ~1e-5 of the float64 ones; every direction whose screened residual
#: lies within this of the best (or of the best far from it) is scored again in float64
SCREEN_MARGIN = 1e-3
_TABLES = BoundedMemo(4)


def _set_tables(h: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows [k * 2, taps], the same in float32, unit vectors [k, 3])`` of an HRIR set; kept for read-only
    sets (a cached HRTF set is passed again and again), keyed by the arrays themselves."""

    def make():
        rows, unit = h.reshape(-1, h.shape[2]), _unit(d)
        rows32 = rows.astype(np.float32)
        for a in (rows32, unit):
            a.setflags(write=False)
        return rows, rows32, unit

    if h.flags.writeable or d.flags.writeable:
        return make()
    key = (id(h), id(d))
    got = _TABLES.get(key, lambda: (h, d, make()))
    if got[0] is not h or got[1] is not d:  # an id reused by a new array after the old one was freed
        _TABLES.clear()
        got = _TABLES.get(key, lambda: (h, d, make()))
    return got[2]


def _residuals(rows: np.ndarray, taps: list[np.ndarray], w: np.ndarray, energy: float) -> np.ndarray:
    """``[k]`` normalised residual of each template pair ``rows [k * 2, n_taps]`` (left, right) with the best
    shared gain, the smallest over the delayed signals ``taps`` (each ``[n_taps, n]``: template to window),
    against the window ``w [2, n]`` of energy ``energy``; computed in the dtype of ``rows``."""
    k, n = rows.shape[0] // 2, w.shape[1]
    residual = np.ones(k)
    for t in taps:
        pred = (rows @ t).reshape(k, 2, n)  # every template through the delayed signal, in the window
        num = np.einsum("ken,en->k", pred, w).astype(np.float64)
        den = np.einsum("ken,ken->k", pred, pred).astype(np.float64)
        residual = np.minimum(residual, 1.0 - num**2 / np.maximum(den * energy, 1e-300))  # best shared gain
    return np.clip(residual, 0.0, 1.0)


def _unit_peak(x: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(x)))
    return x / peak if peak > 0 else x


def _best_exact(screen: np.ndarray, exact, d: np.ndarray, u: np.ndarray) -> DirectionMatch:
    """:func:`_best` of the float64 residuals, scoring in float64 (``exact(indices)``) only the directions
    whose screened residual lies within :data:`SCREEN_MARGIN` of the best, or of the best among those far from
    the chosen one: the same direction, residual and runner-up as scoring every direction."""
    near = np.flatnonzero(screen <= screen.min() + SCREEN_MARGIN)
    scored = exact(near)
    j = int(np.argmin(scored))
    i = int(near[j])
    far = np.flatnonzero(_far_from(u, i))
    runner = float("nan")
    if far.size:
        rest = far[screen[far] <= screen[far].min() + SCREEN_MARGIN]
        runner = float(exact(rest).min())
    return DirectionMatch(float(d[i, 0]), float(d[i, 1]), i, float(scored[j]), runner)


def _window_taps(taps: int, end: int, n: int, nfft: int) -> np.ndarray:
    """``idx [taps, n]``: sample ``(end - n + j - t) mod nfft`` of a signal of length ``nfft`` at tap ``t`` and
    window sample ``j``, so that ``templates [k, taps] @ signal[idx]`` is the window ``[end - n, end)`` of each
    template's circular convolution with the signal: one matrix product (the FFT of every template at
    ``nfft`` and its inverse cost ~2x more for the few samples a window keeps)."""
    return (end - n + np.arange(n)[None, :] - np.arange(taps)[:, None]) % nfft


def match_known_source(
    x, dry, hrirs, directions_deg, *, max_lag: float = 0.0, lag_step: float = 0.25, lag: float = 0.0
) -> DirectionMatch:
    """Direction whose HRIR pair, applied to the known ``dry`` signal, best explains ``x``.

    Parameters
    ----------
    x : np.ndarray [shape=(2, n)]
        Left and right ear, a window holding the direct sound only.
    dry : np.ndarray [shape=(m,)]
        The source signal aligned to ``x``: ``dry[j]`` reaches the head at ``x[:, j - (m - n)]``
        (the HRIR's own lead included in ``hrirs``), so a ``dry`` longer than the window carries
        the samples that still ring into it (the last ``n`` output samples are compared).
    hrirs : np.ndarray [shape=(k, 2, taps)]
        The set the clip was rendered with, at the clip's rate.
    directions_deg : np.ndarray [shape=(k, 2)]
        ``(azimuth, elevation)`` of each HRIR pair in degrees.
    max_lag, lag_step : float
        The arrival is searched within +-``max_lag`` (>= 0) samples of that alignment, in steps of
        ``lag_step`` (> 0) samples (fractional delays by a linear phase); each direction keeps its best.
    lag : float
        A known delay (samples, fractional) of the arrival after that alignment: the search is
        centred on it (with ``max_lag=0`` the one lag evaluated: one inverse FFT per direction).

    Returns
    -------
    DirectionMatch
        The best direction, its residual and the best residual more than 20 degrees away.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> h = rng.standard_normal((3, 2, 16)); d = np.array([[0.0, 0.0], [90.0, 0.0], [180.0, 0.0]])
    >>> s = rng.standard_normal(200); x = np.stack([np.convolve(s, h[1, e])[:200] for e in (0, 1)])
    >>> match_known_source(x[:, -64:], s, h, d).azimuth_deg
    90.0
    """
    h, d = _check_set(hrirs, directions_deg)
    w = _check_window(x)
    s = np.asarray(dry, dtype=np.float64).ravel()
    n = w.shape[1]
    if s.size < n:
        raise ParameterError(f"dry has {s.size} samples; allowed: at least the window's {n}")
    if not (max_lag >= 0 and lag_step > 0):
        raise ParameterError(f"max_lag={max_lag!r}, lag_step={lag_step!r}; allowed: max_lag >= 0, lag_step > 0")
    pad = int(np.ceil(max_lag + abs(lag))) + 1
    nfft = scipy.fft.next_fast_len(s.size + 2 * pad + h.shape[2] - 1, real=True)
    sf = scipy.fft.rfft(np.concatenate([np.zeros(pad), s, np.zeros(pad)]), nfft)
    omega = 2.0 * np.pi * np.fft.rfftfreq(nfft)
    idx = _window_taps(h.shape[2], pad + s.size, n, nfft)
    shifts = lag + (np.arange(-max_lag, max_lag + lag_step / 2, lag_step) if max_lag > 0 else np.zeros(1))
    # the dry signal delayed by each shift, as the [taps, n] matrix that maps a template to its window
    taps = [scipy.fft.irfft(sf * np.exp(-1j * omega * shift), nfft)[idx] for shift in shifts]
    rows, rows32, unit = _set_tables(h, d)
    # residuals are scale-free: the float32 screen sees window and signal at a peak of 1 (no under- or overflow)
    wn = _unit_peak(w)
    screen = _residuals(rows32, [_unit_peak(t).astype(np.float32) for t in taps], wn.astype(np.float32), np.sum(wn**2))
    pairs, energy = rows.reshape(h.shape), float(np.sum(w**2))
    return _best_exact(screen, lambda keep: _residuals(pairs[keep].reshape(-1, h.shape[2]), taps, w, energy), d, unit)


def match_cross_relation(x, hrirs, directions_deg) -> DirectionMatch:
    """Direction whose interaural transfer function best explains ``x`` (any source signal).

    Scores ``|X_l H_r(d) - X_r H_l(d)|^2 / (|X_l H_r(d)|^2 + |X_r H_l(d)|^2)`` summed over
    frequency (0 = the cross relation holds exactly). ``x`` should start where the sound starts
    (silence before it), so the window's edge does not break the relation.

    Parameters
    ----------
    x : array_like, shape (2, samples)
        Left and right ear, at least 8 samples, a window holding the direct sound only.
    hrirs, directions_deg
        The HRIR pairs (left, right) to score and their directions, as in :func:`match_known_source`.

    Returns
    -------
    DirectionMatch
        As for :func:`match_known_source`, the residual being the cross relation's.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> h = rng.standard_normal((3, 2, 16)); d = np.array([[0.0, 0.0], [90.0, 0.0], [180.0, 0.0]])
    >>> s = rng.standard_normal(100); x = np.stack([np.convolve(s, h[2, e]) for e in (0, 1)])
    >>> match_cross_relation(x, h, d).azimuth_deg
    180.0
    """
    h, d = _check_set(hrirs, directions_deg)
    w = _check_window(x)
    n = w.shape[1]
    nfft = scipy.fft.next_fast_len(n + h.shape[2] - 1, real=True)
    xl, xr = scipy.fft.rfft(w, nfft, axis=-1)
    hf = scipy.fft.rfft(h, nfft, axis=-1)
    # compare where both predictions are defined: the first n output samples (time domain)
    a = scipy.fft.irfft(xl * hf[:, 1], nfft, axis=-1)[:, :n]
    b = scipy.fft.irfft(xr * hf[:, 0], nfft, axis=-1)[:, :n]
    residual = np.sum((a - b) ** 2, axis=-1) / np.maximum(np.sum(a**2 + b**2, axis=-1), 1e-300)
    return _best(residual, d)


def deconvolve(x, dry, *, n_out: int, regularisation: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Impulse responses from a recording ``x`` of a known ``dry`` signal (Wiener deconvolution).

    ``H = X S* / (|S|^2 + r max|S|^2)`` with ``r = regularisation``: where the source has no
    energy the estimate is 0.

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        The recording.
    dry : array_like
        The source signal (flattened), not silent, aligned so that lag 0 is sample 0 of ``x``.
    n_out : int
        Length of the returned responses in samples; >= 1.
    regularisation : float, optional
        ``r`` above, relative to the source's peak power.

    Returns
    -------
    h : ndarray, shape (channels, n_out), float64
        The responses: the true ones seen through ``kernel``.
    kernel : ndarray, shape (nfft,), float64
        The zero-phase filter ``|S|^2 / (|S|^2 + r max|S|^2)`` (index 0 = lag 0, negative lags wrap
        to the end), to be applied to templates compared with ``h``.

    Examples
    --------
    >>> s = np.random.default_rng(0).standard_normal(1000); x = np.convolve(s, [0.0, 0.0, 1.0, 0.5])[None]
    >>> h, k = deconvolve(x, s, n_out=6, regularisation=1e-9); np.round(np.abs(h), 3).tolist()
    [[0.0, 0.0, 1.0, 0.5, 0.0, 0.0]]
    """
    w = as_channels(x)
    s = np.asarray(dry, dtype=np.float64).ravel()
    if s.size == 0 or not np.any(s) or n_out < 1:
        raise ParameterError(f"dry has {s.size} samples, n_out={n_out!r}; allowed: a non-silent dry signal, n_out >= 1")
    nfft = scipy.fft.next_fast_len(max(w.shape[1], s.size) + n_out, real=True)
    sf = scipy.fft.rfft(s, nfft)
    power = np.abs(sf) ** 2
    den = power + regularisation * power.max()
    h = scipy.fft.irfft(scipy.fft.rfft(w, nfft, axis=-1) * (np.conj(sf) / den), nfft, axis=-1)[:, :n_out]
    return h, scipy.fft.irfft(power / den, nfft)
