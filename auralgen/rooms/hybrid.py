"""Hybrid RIRs: exact image sources until a mixing time, then a shaped noise tail.

Early part: every image arriving before ``t_direct + mixing_time`` (exactly as
:mod:`auralgen.rooms.fast`). Late part: Gaussian noise from ``rng`` whose per-sample energy
is the *expected* energy of the exact shoebox image-source response,

    E(t) = kappa * 4 pi c / (V fs) * mean_u [ prod_walls (1 - a_w)^(bounces_w(u, t)) ]

(``kappa`` = energy of the fractional-delay kernel, ``u`` = direction on the unit sphere;
along ``u`` an image at distance ``c t`` has bounced ``c t |u_d| / (2 L_d)`` times off each
wall of axis ``d``; images beyond the exact engine's order are left out). Averaging over
directions keeps the slight curvature of a shoebox decay, so RT60 and DRR match the exact
response (within 5 % and 1 dB in the tests); in the Millington-Sette limit it is the Eyring
decay of the walls' absorption.

Images that arrive together (source and microphone level with, or mirror images of, each
other along an axis) add coherently in the exact response; :func:`_coherence_weights`
scales the tail for that. Placements within ~10 cm of such a symmetry on several axes at
once can still leave the tail's RT60 ~7 % off the exact one.

The response ends where that direction-averaged decay ``mean_u [...]`` has fallen by
``TAIL_FLOOR_DB`` (70 dB: pyroomacoustics' ray tracer drops a ray at the same energy threshold,
1e-7), or where the exact response ends if that comes first, and never before the crossfade is over.

The two parts are joined by an energy-preserving raised-cosine crossfade (``XFADE_S``), then
the 10 Hz high-pass of :mod:`auralgen.rooms.images` runs over the whole response. The tail
is drawn independently per microphone (no inter-channel coherence of the diffuse field).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from auralgen.core.errors import check_range
from auralgen.rooms import _ism_kernels as _k
from auralgen.rooms.fast import render_order_raw
from auralgen.rooms.images import (
    FDL2,
    _axis_tables,
    _highpass,
    _inscribed_radius_m,
    _natural_length,
    _phase_kernels,
    max_order_for,
)
from auralgen.rooms.spec import RoomSpec, wall_absorption

#: crossfade between the image-source part and the tail (s)
XFADE_S = 0.002
#: directions averaged for the tail envelope, and its time grid (s)
_N_DIRECTIONS = 512
_GRID_S = 0.002
#: the response ends where the modelled diffuse energy has decayed by this much (dB)
TAIL_FLOOR_DB = 70.0


def mixing_time_s(room: RoomSpec) -> float:
    """Default mixing time after the direct sound: ``sqrt(V)`` ms (V in m^3), at least 5 ms.

    Parameters
    ----------
    room : RoomSpec
        The room; its ``volume_m3`` sets the time.

    Returns
    -------
    float
        Mixing time (s).
    """
    return max(0.005, math.sqrt(room.volume_m3) * 1e-3)


@lru_cache(maxsize=4)
def _octant_directions(n: int) -> np.ndarray:
    """``[n, 3]`` near-uniform unit vectors folded into the positive octant (Fibonacci lattice); read-only."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    phi = i * math.pi * (3.0 - math.sqrt(5.0))
    r = np.sqrt(1.0 - z * z)
    u = np.abs(np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1))
    u.flags.writeable = False
    return u


@lru_cache(maxsize=1)
def _kernel_moments() -> tuple[float, float]:
    """``(kappa, dc)``: mean energy and mean sum of the fractional-delay phase kernels."""
    kernel = _phase_kernels()
    return float(np.mean(np.sum(kernel[:-1] ** 2, axis=1))), float(np.mean(np.sum(kernel[:-1], axis=1)))


_NEGATE = (0, 2, 1, 4, 3)  # offset index of -x for the offsets (0, a, -a, b, -b)
_HALF_COMBOS = np.array(
    [c for c in itertools.product(range(5), repeat=3) if c < tuple(_NEGATE[i] for i in c)], dtype=np.int64
)  # 62 of the 125 offset triples: each with its negation is one pair; (0, 0, 0) is its own and left out
_OFFSET_WEIGHTS = np.array([1.0, 0.25, 0.25, 0.25, 0.25])


def _coherence_weights(room: RoomSpec, source_m, mics_m, u: np.ndarray, sample_rate: int) -> np.ndarray:
    """Energy gain ``[n_mics, n_dir]`` from images that arrive together, per direction.

    Along axis d the images of a source at ``s`` seen from ``m`` pair up (index ``n`` and its
    mirror) with path differences ``2 e |u_d|``, ``e = s - m`` (even images) or ``s + m - L``
    (odd ones). Each pair adds ``1 + cos(2 pi f 2 e |u_d| / c)`` times the incoherent
    energy; the gain is that product over axes, averaged over both parities and over a flat
    spectrum up to Nyquist: a weighted sum of sincs of the 125 sums of per-axis wavenumber offsets
    ``{0, +-a, +-b}`` (weights 1 and 1/4), 63 of them distinct (:func:`~auralgen.rooms._ism_kernels._coherence_sum`).
    It is ~1 for generic placements and up to 8 when source and microphone are level with, or
    mirror images of, each other on every axis.
    """
    src = np.asarray(source_m, dtype=float)
    mics = np.asarray(mics_m, dtype=float).reshape(-1, 3)
    dims = np.asarray(room.dims_m, dtype=float)
    ea, eb = 4.0 * np.pi * (src - mics), 4.0 * np.pi * (src + mics - dims)  # a = ea u_d / c, b = eb u_d / c
    return _k._coherence_sum(
        ea, eb, np.ascontiguousarray(u), float(room.c_m_s), _HALF_COMBOS, _OFFSET_WEIGHTS, 0.5 * sample_rate
    )


def _decay_rates(room: RoomSpec, max_order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(u [n_dir, 3], rates [n_dir], t_end [n_dir])``: the directions, the energy decay rate (1/s) along
    each, and the time (s) after which that direction has no image of order <= ``max_order``."""
    dims = np.asarray(room.dims_m, dtype=float)
    alpha = np.clip(wall_absorption(room), 0.0, 1.0)
    log_t = np.log(np.clip(1.0 - alpha, 1e-300, None))  # energy reflection per bounce
    per_axis = -(log_t[0::2] + log_t[1::2]) / (2.0 * dims)  # energy decay per metre along an axis
    u = _octant_directions(_N_DIRECTIONS)
    rates = room.c_m_s * (u @ per_axis)
    # along u, an image of order N sits at distance ~ (N + 1/2) / sum(|u_d| / L_d)
    return u, rates, (max_order + 0.5) / (room.c_m_s * (u @ (1.0 / dims)))


@dataclass(frozen=True)
class _TailModel:
    """The tail's envelopes on a time grid: the mean per sample at time ``t`` (s) is
    ``s_mean * t / v_fs * interp(t, grid, env[:, 1])`` and the variance
    ``s_var * interp(t, grid, env[:, 0])`` (:func:`tail_statistics`)."""

    grid: np.ndarray  # times (s), shape (n_t,)
    env: np.ndarray  # envelopes, shape (n_mics, 2, n_t)
    s_mean: float
    v_fs: float  # room volume (m^3) times the sample rate (Hz)
    s_var: float


def _tail_model(
    room: RoomSpec, t_max_s: float, *, sample_rate: int, max_order: int, source_m, mics_m, decay=None
) -> _TailModel:
    """The tail's envelopes up to ``t_max_s`` (s). ``decay``: the :func:`_decay_rates` of ``room``
    and ``max_order`` if the caller has them."""
    u, rates, t_end = _decay_rates(room, max_order) if decay is None else decay
    if source_m is None or mics_m is None:
        weights = np.ones((1, u.shape[0]))
    else:
        weights = _coherence_weights(room, source_m, mics_m, u, sample_rate)
    grid = np.arange(0.0, t_max_s + 2 * _GRID_S, _GRID_S)  # grid[i] = i * _GRID_S
    env = _k._decay_envelope(_GRID_S, grid.size, rates, t_end, weights)
    kappa, dc = _kernel_moments()
    c, v, fs = room.c_m_s, room.volume_m3, sample_rate
    # arrivals per sample 4 pi c^3 t^2 / (V fs), each of amplitude g / (c t)
    return _TailModel(grid, env, dc * 4.0 * math.pi * c**2, v * fs, kappa * 4.0 * math.pi * c / (v * fs))


def tail_statistics(room: RoomSpec, t_s, *, sample_rate: int, max_order: int, source_m=None, mics_m=None):
    """Expected value and variance per sample of the exact image-source response at times ``t_s`` (s).

    ``n_mics = 1`` and no coherence correction without ``source_m``/``mics_m``. All image gains are
    positive, so the response has a slowly varying mean (low-frequency content, only partly removed
    by the 10 Hz high-pass) on top of the fluctuating part.

    Parameters
    ----------
    room : RoomSpec
        The room.
    t_s : array_like, shape (n,)
        Times in seconds (negative times count as 0).
    sample_rate : int
        Sample rate in Hz.
    max_order : int
        Image-source order of the exact response (directions run out of images after it).
    source_m : array_like, shape (3,), optional
        Source position in the room frame, metres; with ``mics_m``, turns on the coherence correction.
    mics_m : array_like, shape (n_mics, 3), optional
        Microphone positions in the room frame, metres.

    Returns
    -------
    mean : ndarray, shape (n_mics, n), float64
        Expected response amplitude per sample (linear, direct sound at 1 m = 1).
    var : ndarray, shape (n_mics, n), float64
        Variance of the response per sample (amplitude squared).
    """
    t_s = np.asarray(t_s, dtype=float)
    tail = _tail_model(
        room,
        float(np.max(t_s, initial=0.0)),
        sample_rate=sample_rate,
        max_order=max_order,
        source_m=source_m,
        mics_m=mics_m,
    )
    tt = np.clip(t_s, 0.0, None)
    mean = np.stack([tail.s_mean * tt / tail.v_fs * np.interp(tt, tail.grid, e[1]) for e in tail.env])
    var = np.stack([tail.s_var * np.interp(tt, tail.grid, e[0]) for e in tail.env])
    return mean, var


def _response_length(rates, t_end, fs: int, *, n_exact: int, n_needed: int) -> int:
    """Samples of a hybrid response: to where the modelled diffuse energy (decay ``rates`` and ends ``t_end``
    of :func:`_decay_rates`) has decayed by :data:`TAIL_FLOOR_DB` (``t = (n - FDL2) / fs``), at most
    ``n_exact`` (the exact engine's length), at least ``n_needed``."""
    t_hi = (n_exact - 1 - FDL2) / fs
    t_stop = _k._decay_end_s(rates, t_end, 10.0 ** (-TAIL_FLOOR_DB / 10.0), t_hi, 0.25 / fs)
    return int(min(n_exact, max(n_needed, math.ceil(t_stop * fs) + FDL2 + 1)))


def _early_part(room: RoomSpec, src, mics, order: int, n_ends, n_total: int, fs: int) -> np.ndarray:
    """The exact image-source part ``[n_mics, n_total]`` of each response, up to one sample past its
    crossfade end ``n_ends`` (zeros after)."""
    c = float(room.c_m_s)
    diag = float(np.linalg.norm(room.dims_m))
    rirs = np.zeros((mics.shape[0], n_total))  # every response is n_total long
    early_orders, n_early, reach = n_ends.copy(), n_ends.copy(), np.zeros(mics.shape[0])
    for i in range(mics.shape[0]):
        reach[i] = c * n_ends[i] / fs  # images farther than this cannot touch samples < n_end
        early_orders[i] = min(order, int(math.ceil((reach[i] + diag) / _inscribed_radius_m(room))))
        n_early[i] = min(n_ends[i] + 1, n_total)
    early = render_order_raw(
        room, src, mics, sample_rate=fs, max_orders=early_orders, n_lens=n_early, max_dists_m=reach + c / fs
    )
    for i, e in enumerate(early):
        rirs[i, : e.shape[0]] = e
    return rirs


def compute_rir_hybrid(
    room: RoomSpec,
    source_m,
    mics_m,
    *,
    sample_rate: int,
    rng: np.random.Generator,
    mixing_time: float | None = None,
) -> np.ndarray:
    """Hybrid RIRs ``[n_mics, n_samples]`` float64, as long as the modelled decay needs (:func:`_response_length`).

    Parameters
    ----------
    room, source_m, mics_m, sample_rate
        As :func:`auralgen.rooms.simulate.compute_rir` (assumed validated).
    rng : np.random.Generator
        Draws the tail noise: one ``standard_normal((n_mics, n_samples))`` call.
    mixing_time : float (s) or None
        Tail start after each microphone's direct sound; default :func:`mixing_time_s`.

    Returns
    -------
    np.ndarray, shape (n_mics, n_samples), float64
        One response per microphone (direct sound at 1 m has amplitude 1), high-passed at 10 Hz.
    """
    rirs = _hybrid_before_highpass(room, source_m, mics_m, sample_rate=sample_rate, rng=rng, mixing_time=mixing_time)
    return _highpass(rirs, int(sample_rate))  # one call filters every channel


def _hybrid_before_highpass(
    room: RoomSpec, source_m, mics_m, *, sample_rate: int, rng: np.random.Generator, mixing_time: float | None = None
) -> np.ndarray:
    """:func:`compute_rir_hybrid` before its 10 Hz high-pass (same parameters): a caller that filters more
    responses than these filters them all in one call (:func:`~auralgen.rooms.images._highpass` runs four rows
    at once)."""
    fs = int(sample_rate)
    c = float(room.c_m_s)
    t_mix = mixing_time_s(room) if mixing_time is None else float(check_range("mixing_time", mixing_time, low=0.0))
    order = max_order_for(room, fs)
    src = np.asarray(source_m, dtype=float)
    mics = np.asarray(mics_m, dtype=float).reshape(-1, 3)
    cx, _, cy, _, cz, _ = _axis_tables(room, src, order)
    dims = np.asarray(room.dims_m, dtype=float)
    n_x = max(1, int(round(XFADE_S * fs)))
    n0s = np.array([int(round((np.linalg.norm(m - src) / c + t_mix) * fs)) + FDL2 for m in mics], dtype=np.int64)
    decay = _decay_rates(room, order)  # the length and the tail's envelope both read it
    n_total = _response_length(
        *decay[1:],
        fs,
        n_exact=max(_natural_length(_k._max_image_distance(cx, cy, cz, order, m, dims), c, fs) for m in mics),
        n_needed=int(n0s.max()) + n_x + 1,
    )
    noise = rng.standard_normal((mics.shape[0], n_total))
    tail = _tail_model(
        room, (n_total - 1 - FDL2) / fs, sample_rate=fs, max_order=order, source_m=src, mics_m=mics, decay=decay
    )
    n_ends = np.minimum(n0s + n_x, n_total)  # crossfade start n0 (sample index) and end
    n0s = np.minimum(n0s, n_total)  # before n0 the early part alone, after n_end the tail alone
    rirs = _early_part(room, src, mics, order, n_ends, n_total, fs)
    ramp = np.cos(0.5 * np.pi * (np.arange(n_x) + 0.5) / n_x) ** 2
    fade = np.sqrt(np.clip(1.0 - ramp**2, 0.0, 1.0))
    _k._hybrid_tail(
        rirs, noise, tail.grid, tail.env, tail.s_mean, tail.v_fs, tail.s_var, float(fs), FDL2, n0s, n_ends, ramp, fade
    )
    return rirs
