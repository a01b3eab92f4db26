"""Spatial measurements: interaural time/level differences, array DOA, FOA direction.

All directions follow :mod:`auralgen.measure.geometry`: azimuth 0 = ahead, positive = to the
listener's left, range [-180, 180); elevation positive upward.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.fft
from numba import njit

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.errors import ParameterError
from auralgen.measure.common import (
    as_channels,
    as_mono,
    check_band,
    check_positive,
    check_rate,
    db_power,
    parabolic_offset,
)
from auralgen.measure.geometry import az_el_to_unit, unit_to_az_el, wrap_azimuth_deg

_DOA_METHODS = ("SRP", "MUSIC")


def itd_ild(left, right, sample_rate, *, max_itd_s: float = 1e-3) -> tuple[float, float]:
    """Interaural time and level differences of a binaural pair.

    ITD by GCC-PHAT with sub-sample refinement; **positive ITD = the left ear leads**, i.e.
    the source is on the left (positive azimuth). ILD = ``10 log10(E_left / E_right)``
    (positive = louder on the left).

    Parameters
    ----------
    left, right : np.ndarray [shape=(n,)]
        Ear signals of equal length.
    sample_rate : float > 0
        Sample rate of both in Hz.
    max_itd_s : float > 0
        Largest |ITD| searched (s).

    Returns
    -------
    itd_s : float
        Interaural time difference in seconds, positive when the left ear leads.
    ild_db : float
        Interaural level difference in dB, positive when the left ear is louder.

    Examples
    --------
    >>> rng = np.random.default_rng(0); s = rng.standard_normal(4800)
    >>> itd, ild = itd_ild(s, 0.5 * np.roll(s, 10), 48000)
    >>> round(itd * 48000), round(ild, 2)
    (10, 6.02)
    """
    sr = check_rate(sample_rate)
    lft = as_mono(left, "left", min_samples=2)
    rgt = as_mono(right, "right", min_samples=2)
    if lft.shape != rgt.shape:
        raise ParameterError(f"left and right must have the same length; got {lft.shape} and {rgt.shape}")
    max_lag = check_positive("max_itd_s", max_itd_s) * sr
    if max_lag < 1 or max_lag >= len(lft):
        raise ParameterError(f"max_itd_s={max_itd_s!r} must span >= 1 sample and < the signal length at {sr:g} Hz")
    e_l, e_r = float(np.sum(lft**2)), float(np.sum(rgt**2))
    if e_l == 0 or e_r == 0:
        raise ParameterError("left and right must both carry energy to measure ITD/ILD")
    itd_s = float(_gcc_phat_lags(lft[None, :], rgt[None, :], max_lag)[0]) / sr
    return itd_s, db_power(e_l) - db_power(e_r)


_FINE = np.linspace(-1.0, 1.0, 33)  # the sub-sample grid of a GCC-PHAT refinement (lags around the integer peak)


@functools.lru_cache(maxsize=4)
def _fine_shift_parts(nfft: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cos, sin)`` of ``outer(_FINE, omega)`` ``[33, nfft // 2 + 1]`` and the roots of unity
    ``exp(2j pi m / nfft)`` ``[nfft]``, read-only: with them the 33 fractional shifts around any integer lag
    ``c`` are ``exp(1j omega c) * exp(1j omega fine)``, the first a lookup of the roots."""
    omega = 2.0 * np.pi * np.arange(nfft // 2 + 1) / nfft
    phase = np.outer(_FINE, omega)
    parts = (np.cos(phase), np.sin(phase), np.exp(2j * np.pi * np.arange(nfft) / nfft))
    for a in parts:
        a.setflags(write=False)
    return parts


def itd_windows(left, right, sample_rate, starts, window: int, *, max_itd_s: float = 1e-3) -> np.ndarray:
    """Interaural time differences (s) of many windows of a binaural pair, in one batch.

    The ITD of :func:`itd_ild` (GCC-PHAT, the same sub-sample refinement) of each window
    ``left[a : a + window]`` vs ``right[a : a + window]``, ``a`` in ``starts``, from batched FFTs;
    equal to :func:`itd_ild`'s to float rounding (< 1e-12 s). A window that runs past the end or
    where an ear carries no energy gives nan.

    Parameters
    ----------
    left, right, sample_rate, max_itd_s
        As in :func:`itd_ild` (``max_itd_s`` below the window's length).
    starts : array_like of int
        First sample of each window (>= 0).
    window : int > 1
        Window length (samples).

    Returns
    -------
    np.ndarray [shape=(len(starts),)]
        ITD per window (s, positive when the left ear leads), nan for a short or silent window.

    Examples
    --------
    >>> rng = np.random.default_rng(0); s = rng.standard_normal(4800)
    >>> itd = itd_windows(s, 0.5 * np.roll(s, 10), 48000, [0, 1200, 3000], 2400)
    >>> np.round(itd[:2] * 48000).tolist(), bool(np.isnan(itd[2]))
    ([10.0, 10.0], True)
    """
    sr = check_rate(sample_rate)
    lft = as_mono(left, "left", min_samples=2)
    rgt = as_mono(right, "right", min_samples=2)
    if lft.shape != rgt.shape:
        raise ParameterError(f"left and right must have the same length; got {lft.shape} and {rgt.shape}")
    if isinstance(window, bool) or int(window) != window or window < 2:
        raise ParameterError(f"window={window!r} is invalid; allowed: an integer >= 2 (samples)")
    w = int(window)
    max_lag = check_positive("max_itd_s", max_itd_s) * sr
    if max_lag < 1 or max_lag >= w:
        raise ParameterError(f"max_itd_s={max_itd_s!r} must span >= 1 sample and < the window at {sr:g} Hz")
    a = np.asarray(starts, dtype=np.int64).ravel()
    if np.any(a < 0):
        raise ParameterError(f"starts={a.tolist()!r} holds a negative start; allowed: starts >= 0")
    out = np.full(a.size, np.nan)
    a_in = a[a + w <= lft.size]
    idx = a_in[:, None] + np.arange(w)[None, :]
    segs = np.stack([lft[idx], rgt[idx]])  # [ear, window, sample]
    live = np.all(np.sum(segs**2, axis=2) > 0, axis=0)
    if np.any(live):
        out[np.flatnonzero(a + w <= lft.size)[live]] = _gcc_phat_lags(segs[0][live], segs[1][live], max_lag) / sr
    return out


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _shifted_real_products(wr, wi, coarse, rr, ri, cos, sin):
    """``Re(z @ (cos + 1j sin).T)`` ``[k, m]`` of ``z[i, b] = w[i, b] * roots[(coarse[i] * b) % nfft]``
    (``w = wr + 1j wi`` ``[k, n]``, ``roots = rr + 1j ri`` ``[nfft]``): the GCC at the fractional lags around
    each row's integer peak, its shifted spectrum built a row at a time, summed in one thread (a BLAS
    product may start threads that stall on a loaded machine), in SIMD lanes (reassociated: rounding only)."""
    nfft = rr.shape[0]
    out = np.zeros((wr.shape[0], cos.shape[0]))
    zr = np.empty(wr.shape[1])
    zi = np.empty(wr.shape[1])
    for i in range(wr.shape[0]):
        step = coarse[i] % nfft
        idx = 0
        for b in range(wr.shape[1]):
            zr[b] = wr[i, b] * rr[idx] - wi[i, b] * ri[idx]
            zi[b] = wr[i, b] * ri[idx] + wi[i, b] * rr[idx]
            idx += step
            if idx >= nfft:
                idx -= nfft
        for j in range(cos.shape[0]):
            acc = 0.0
            for b in range(wr.shape[1]):
                acc += zr[b] * cos[j, b] - zi[b] * sin[j, b]
            out[i, j] = acc
    return out


def _gcc_phat_lags(left: np.ndarray, right: np.ndarray, max_lag: float) -> np.ndarray:
    """GCC-PHAT lag (samples, fractional) at which each row of ``right`` best matches the delayed row of
    ``left`` (``[k, n]`` both): the integer peak within ``max_lag``, then the GCC at 33 fractional lags
    around it and a parabola through the best three."""
    nfft = 1 << int(math.ceil(math.log2(2 * left.shape[1])))
    spec = scipy.fft.rfft(np.concatenate([right, left]), nfft, axis=1)  # both ears in one batch
    cross = spec[: len(right)] * np.conj(spec[len(right) :])
    mag = np.abs(cross)
    weight = cross / np.maximum(mag, 1e-12 * mag.max(axis=1, keepdims=True))
    cc = scipy.fft.irfft(weight, nfft, axis=1)
    m = int(math.floor(max_lag))
    lags = np.concatenate([np.arange(0, m + 1), np.arange(-m, 0)])
    coarse = lags[np.argmax(np.concatenate([cc[:, : m + 1], cc[:, nfft - m :]], axis=1), axis=1)]
    weight[:, 1:] *= 2.0
    if nfft % 2 == 0:
        weight[:, -1] *= 0.5
    cos, sin, roots = _fine_shift_parts(nfft)
    vals = _shifted_real_products(  # [k, 33], shifted to the integer peak
        np.ascontiguousarray(weight.real),
        np.ascontiguousarray(weight.imag),
        coarse.astype(np.int64),
        np.ascontiguousarray(roots.real),
        np.ascontiguousarray(roots.imag),
        cos,
        sin,
    )
    step = _FINE[1] - _FINE[0]
    out = np.empty(len(coarse))
    for i, v in enumerate(vals):
        k = int(np.clip(np.argmax(v), 1, len(_FINE) - 2))
        out[i] = coarse[i] + _FINE[k] + step * parabolic_offset(v[k - 1], v[k], v[k + 1])
    return np.clip(out, -max_lag, max_lag)


def doa_array(
    x,
    mic_positions_m,
    sample_rate,
    *,
    method: str = "SRP",
    freq_range: tuple[float, float] = (300.0, 3500.0),
    nfft: int = 512,
    grid_step_deg: float = 0.5,
    c_m_s: float = SPEED_OF_SOUND_M_S,
) -> float:
    """Azimuth (deg, auralgen convention) of one far-field source seen by a microphone array.

    Uses ``pyroomacoustics.doa`` on the horizontal projection of the array, so the source is assumed
    near ear level. pyroomacoustics measures azimuth counter-clockwise from its x axis towards the
    source; with the mic positions given in the listener frame (x ahead, y left) that is the auralgen azimuth.

    Parameters
    ----------
    x : np.ndarray [shape=(n_mics, n)]
        The microphone signals, at least 2 mics and ``nfft`` samples.
    mic_positions_m : np.ndarray [shape=(n_mics, 3)]
        Listener frame (x ahead, y left, z up), metres.
    sample_rate : float > 0
        Sample rate of ``x`` in Hz.
    method : {"SRP", "MUSIC"}
        The pyroomacoustics DOA algorithm (``"SRP"``: SRP-PHAT).
    freq_range : (float, float)
        Band used (Hz).
    nfft : int >= 16
        STFT frame length in samples (Hann window, hop ``nfft // 2``).
    grid_step_deg, c_m_s : float
        Azimuth grid step of the search (degrees, > 0) and the speed of sound (m/s).

    Returns
    -------
    float
        The azimuth in degrees, [-180, 180), counter-clockwise from the front.

    Examples
    --------
    >>> sr = 16000; rng = np.random.default_rng(0); s = rng.standard_normal(sr)
    >>> mics = np.array([[0.05, 0, 0], [0, 0.05, 0], [-0.05, 0, 0], [0, -0.05, 0]])
    >>> lead = mics @ np.array([0.0, 1.0, 0.0]) / 343.0  # source at +90 deg (left)
    >>> f = np.fft.rfftfreq(sr, 1 / sr)
    >>> x = np.fft.irfft(np.fft.rfft(s) * np.exp(2j * np.pi * f * lead[:, None]), sr)
    >>> round(doa_array(x, mics, sr))
    90
    """
    import pyroomacoustics as pra

    sr = check_rate(sample_rate)
    xc = _as_signal_2d(x)
    pos, (f_lo, f_hi), nfft = _doa_inputs(xc, mic_positions_m, sr, method, freq_range, nfft)
    step = check_positive("grid_step_deg", grid_step_deg)
    stft = _stft(xc, nfft)
    grid = np.radians(np.arange(0.0, 360.0, step))
    doa = pra.doa.algorithms[method](pos[:, :2].T, sr, nfft, c=float(c_m_s), num_src=1, azimuth=grid)
    doa.locate_sources(np.transpose(stft, (0, 2, 1)), num_src=1, freq_range=[f_lo, f_hi])
    return float(wrap_azimuth_deg(np.degrees(doa.azimuth_recon[0])))


def _doa_inputs(xc: np.ndarray, mic_positions_m, sr: float, method: str, freq_range, nfft) -> tuple:
    """:func:`doa_array`'s checks, in order: ``(positions [mics, 3], (f_lo, f_hi) Hz, nfft)``."""
    pos = np.asarray(mic_positions_m, dtype=float)
    if pos.ndim != 2 or pos.shape[1] != 3 or pos.shape[0] != xc.shape[0] or not np.all(np.isfinite(pos)):
        raise ParameterError(f"mic_positions_m must be finite [n_mics={xc.shape[0]}, 3]; got shape {pos.shape}")
    if xc.shape[0] < 2:
        raise ParameterError(f"x must have >= 2 microphones; got {xc.shape[0]}")
    if method not in _DOA_METHODS:
        raise ParameterError(f"method={method!r} is not supported; allowed: {_DOA_METHODS}")
    band = check_band("freq_range", *freq_range, sr)
    nfft = int(nfft)
    if nfft < 16 or xc.shape[1] < nfft:
        raise ParameterError(f"nfft={nfft!r} must be >= 16 and <= the signal length {xc.shape[1]}")
    return pos, band, nfft


def _stft(xc: np.ndarray, nfft: int) -> np.ndarray:
    """STFT ``[mics, frames, bins]`` of ``xc [mics, n]``: Hann frames of ``nfft`` samples, hop ``nfft // 2``."""
    hop = nfft // 2
    n_frames = 1 + (xc.shape[1] - nfft) // hop
    idx = np.arange(n_frames)[:, None] * hop + np.arange(nfft)[None, :]
    return np.fft.rfft(xc[:, idx] * np.hanning(nfft + 2)[1:-1], axis=-1)


def _as_signal_2d(x) -> np.ndarray:
    """Validate a channels-first ``[channels, n]`` array (2-D only)."""
    arr = as_channels(x)
    if np.ndim(x) != 2:
        raise ParameterError(f"x must be 2-D [channels, n]; got shape {np.shape(x)}")
    return arr


def doa_foa(x, sample_rate=None, *, freq_range: tuple[float, float] | None = None) -> tuple[float, float]:
    """Direction ``(azimuth_deg, elevation_deg)`` of the dominant source in FOA (ACN/SN3D).

    Channels are W, Y, Z, X (ACN 0..3). The time-averaged active intensity
    ``I ~ mean(W * [X, Y, Z])`` points towards the source. With ``freq_range`` (needs
    ``sample_rate``) the channels are first band-passed in the frequency domain.

    Parameters
    ----------
    x : array_like, shape (4, samples)
        First-order ambisonics, ACN channel order (W, Y, Z, X), SN3D.
    sample_rate : float or None, optional
        Sample rate of ``x`` in Hz; needed only with ``freq_range``.
    freq_range : tuple of (float, float) or None, optional
        Band (Hz) the channels are limited to first; ``None`` uses the whole band.

    Returns
    -------
    azimuth_deg : float
        Azimuth in degrees, [-180, 180), counter-clockwise from the front.
    elevation_deg : float
        Elevation in degrees, positive up.

    Raises
    ------
    ParameterError
        If ``x`` is not 4-channel, carries no directional energy, or ``freq_range`` comes without ``sample_rate``.

    Examples
    --------
    >>> s = np.random.default_rng(0).standard_normal(4800)
    >>> az, el = np.radians(30.0), np.radians(10.0)
    >>> x = np.stack([s, s * np.sin(az) * np.cos(el), s * np.sin(el), s * np.cos(az) * np.cos(el)])
    >>> [round(v, 6) for v in doa_foa(x)]
    [30.0, 10.0]
    """
    arr = _as_signal_2d(x)
    if arr.shape[0] != 4:
        raise ParameterError(f"x must have 4 FOA channels (ACN W, Y, Z, X); got shape {arr.shape}")
    if freq_range is not None:
        if sample_rate is None:
            raise ParameterError("freq_range needs sample_rate")
        sr = check_rate(sample_rate)
        f_lo, f_hi = check_band("freq_range", *freq_range, sr)
        spec = np.fft.rfft(arr, axis=-1)
        f = np.fft.rfftfreq(arr.shape[1], 1.0 / sr)
        spec[:, (f < f_lo) | (f > f_hi)] = 0.0
        arr = np.fft.irfft(spec, arr.shape[1], axis=-1)
    w, y, z, xx = arr
    intensity = np.array([np.mean(w * xx), np.mean(w * y), np.mean(w * z)])
    if not np.any(intensity):
        raise ParameterError("x carries no directional energy (zero intensity vector)")
    az, el = unit_to_az_el(intensity)
    return float(az), float(el)


def srp_phat_direction(
    x,
    mic_positions_m,
    sample_rate,
    *,
    freq_range: tuple[float, float] = (300.0, 7000.0),
    grid_step_deg: float = 2.0,
    c_m_s: float = SPEED_OF_SOUND_M_S,
) -> tuple[float, float]:
    """Direction ``(azimuth_deg, elevation_deg)`` of one far-field source by SRP-PHAT over the sphere.

    The steered response power ``P(u) = sum_f |sum_m X_m(f) / |X_m(f)| exp(-j 2 pi f r_m . u / c)|^2``
    (DiBiase, Silverman & Brandstein 2001, "Robust localization in reverberant rooms", in
    *Microphone Arrays*, Springer) is evaluated on an azimuth x elevation grid of ``grid_step_deg``;
    a source at ``u`` reaches mic ``m`` ``r_m . u / c`` early. Meant for a short window of the
    direct sound (or the direct part of measured impulse responses). A planar array (all mics at
    one height) cannot tell above from below: its grid is the horizontal plane (elevation 0).

    Parameters
    ----------
    x : np.ndarray [shape=(n_mics, n)]
        The microphone signals, at least 2 mics.
    mic_positions_m : np.ndarray [shape=(n_mics, 3)]
        Microphone positions in the listener frame (x ahead, y left, z up), metres.
    sample_rate : float > 0
        Sample rate of ``x`` in Hz.
    freq_range : (float, float)
        Band used (Hz).
    grid_step_deg, c_m_s : float
        Step of the azimuth and elevation grid (degrees, > 0) and the speed of sound (m/s).

    Returns
    -------
    azimuth_deg : float
        Azimuth in degrees, [-180, 180), counter-clockwise from the front.
    elevation_deg : float
        Elevation in degrees, positive up (0 for a planar array).

    Examples
    --------
    >>> sr = 16000; s = np.random.default_rng(0).standard_normal(256)
    >>> mics = np.array([[0.03, 0.03, 0.03], [0.03, -0.03, -0.03], [-0.03, 0.03, -0.03], [-0.03, -0.03, 0.03]])
    >>> from auralgen.measure.geometry import az_el_to_unit
    >>> lead = mics @ az_el_to_unit(60.0, 30.0) / 343.0; f = np.fft.rfftfreq(256, 1 / sr)
    >>> x = np.fft.irfft(np.fft.rfft(s) * np.exp(2j * np.pi * f * lead[:, None]), 256)
    >>> [round(v) for v in srp_phat_direction(x, mics, sr)]
    [60, 30]
    """
    sr = check_rate(sample_rate)
    xc = _as_signal_2d(x)
    pos = np.asarray(mic_positions_m, dtype=float)
    if pos.shape != (xc.shape[0], 3) or xc.shape[0] < 2 or not np.all(np.isfinite(pos)):
        raise ParameterError(
            f"mic_positions_m shape={pos.shape} for x with {xc.shape[0]} channels; allowed: (n_mics >= 2, 3)"
        )
    f_lo, f_hi = check_band("freq_range", *freq_range, sr)
    step = check_positive("grid_step_deg", grid_step_deg)
    spec, f_band = _phat_spectra(xc, sr, f_lo, f_hi)
    return _srp_grid(spec, pos, 2.0 * np.pi * f_band / float(c_m_s), step)


def _phat_spectra(xc: np.ndarray, sr: float, f_lo: float, f_hi: float) -> tuple[np.ndarray, np.ndarray]:
    """PHAT-weighted spectra ``[mics, bins]`` of ``xc`` over ``[f_lo, f_hi]`` Hz and those bins' frequencies."""
    nfft = max(64, 1 << int(math.ceil(math.log2(2 * xc.shape[1]))))
    f = np.fft.rfftfreq(nfft, 1.0 / sr)
    band = (f >= f_lo) & (f <= f_hi)
    spec = np.fft.rfft(xc, nfft, axis=-1)[:, band]
    mag = np.abs(spec)
    if not np.any(mag):
        raise ParameterError("x carries no energy in freq_range; allowed: a window holding the direct sound")
    return spec / np.maximum(mag, 1e-12 * mag.max()), f[band]


def _srp_grid(spec: np.ndarray, pos: np.ndarray, k: np.ndarray, step: float) -> tuple[float, float]:
    """Grid point of the largest steered power of PHAT spectra ``spec [mics, bins]`` (``k``: rad/m,
    consecutive FFT bins, so evenly spaced)."""
    els = np.array([0.0]) if np.ptp(pos[:, 2]) < 1e-9 else np.arange(-90.0, 90.0 + step / 2, step)
    az, el = np.meshgrid(np.arange(-180.0, 180.0, step), els, indexing="ij")
    leads = np.ascontiguousarray(az_el_to_unit(az.ravel(), el.ravel()) @ pos.T)  # [g, mics] (m)
    dk = float(k[1] - k[0]) if k.size > 1 else 0.0
    power = _srp_power(np.ascontiguousarray(spec.real), np.ascontiguousarray(spec.imag), leads, float(k[0]), dk)
    best = int(np.argmax(power))
    return float(az.ravel()[best]), float(el.ravel()[best])


@njit(cache=True, boundscheck=False)
def _srp_power(spec_re, spec_im, leads, k0, dk):
    """Steered power ``sum_f |sum_m X_m(f) exp(-j k_f lead_m)|^2`` per grid point ``leads [g, mics]``.

    ``k_f = k0 + f dk``: each microphone's phasor is advanced from bin to bin by one complex
    multiplication instead of an exponential per bin (13x faster than the vectorised form it
    replaced; the phasors drift by ~1e-13, far below any difference between grid points).
    """
    n_g, n_m = leads.shape
    n_f = spec_re.shape[1]
    out = np.empty(n_g)
    p_re, p_im = np.empty(n_m), np.empty(n_m)
    s_re, s_im = np.empty(n_m), np.empty(n_m)
    for g in range(n_g):
        for m in range(n_m):
            p_re[m], p_im[m] = np.cos(-k0 * leads[g, m]), np.sin(-k0 * leads[g, m])
            s_re[m], s_im[m] = np.cos(-dk * leads[g, m]), np.sin(-dk * leads[g, m])
        total = 0.0
        for f in range(n_f):
            re = 0.0
            im = 0.0
            for m in range(n_m):
                re += spec_re[m, f] * p_re[m] - spec_im[m, f] * p_im[m]
                im += spec_re[m, f] * p_im[m] + spec_im[m, f] * p_re[m]
                t = p_re[m] * s_re[m] - p_im[m] * s_im[m]
                p_im[m] = p_re[m] * s_im[m] + p_im[m] * s_re[m]
                p_re[m] = t
            total += re * re + im * im
        out[g] = total
    return out
