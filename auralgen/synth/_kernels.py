"""Private numba kernels of the synthesis layer.

Every kernel is ``@njit(cache=True)``, takes plain floats/ints/arrays, allocates its
output and does **no validation**: the public wrappers in :mod:`auralgen.synth.signals`
check every argument before calling in. Time of sample ``i`` is ``i / sample_rate``;
phases are computed from the sample index (never accumulated), so long signals do
not drift.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

TWO_PI = 2.0 * math.pi


@njit(cache=True)
def _render_tone(freq_hz, n, sample_rate, amplitude, phase_rad):
    """``amplitude * sin(2 pi f t + phase)`` for ``t = i / sample_rate``, ``i < n``."""
    out = np.empty(n, dtype=np.float64)
    w = TWO_PI * freq_hz / sample_rate
    for i in range(n):
        out[i] = amplitude * math.sin(w * i + phase_rad)
    return out


@njit(cache=True)
def _render_harmonic(f0_hz, n, sample_rate, amplitudes, phases_rad, block):
    """Sum over ``k = 1..len(amplitudes)`` of ``a_k sin(2 pi k f0 t + phi_k)``.

    ``block == 0``: one library sine per sample. ``block > 0``: by angle addition, ``sin(w b + phi)``
    and ``cos(w b + phi)`` from the sample index at each block start ``b`` (every ``block`` samples),
    ``sin(w j)`` and ``cos(w j)`` for ``j < block`` once per harmonic, ``sin(w (b + j) + phi)`` their
    sum formula: two library calls per block instead of one per sample. The phase at a block start
    is computed from the sample index, so no error builds up; each value differs from the per-sample
    sine by about the rounding of the phase itself (``w i`` is ~1e5 rad at the end of a second at
    Nyquist: ~1e-11 rad).
    """
    out = np.zeros(n, dtype=np.float64)
    w0 = TWO_PI * f0_hz / sample_rate
    sj = np.empty(block, dtype=np.float64)
    cj = np.empty(block, dtype=np.float64)
    for k in range(amplitudes.shape[0]):
        a = amplitudes[k]
        if a == 0.0:
            continue
        w = w0 * (k + 1)
        phi = phases_rad[k]
        if block == 0:
            for i in range(n):
                out[i] += a * math.sin(w * i + phi)
            continue
        for j in range(block):
            sj[j] = a * math.sin(w * j)
            cj[j] = a * math.cos(w * j)
        for b in range(0, n, block):
            sb = math.sin(w * b + phi)
            cb = math.cos(w * b + phi)
            for j in range(min(block, n - b)):
                out[b + j] += sb * cj[j] + cb * sj[j]
    return out


@njit(cache=True)
def _render_sweep_linear(f_start_hz, f_end_hz, n, sample_rate, amplitude):
    """Linear chirp: f(t) = f0 + (f1 - f0) t / T with T = n / sample_rate; sine phase 0 at t = 0."""
    out = np.empty(n, dtype=np.float64)
    period = n / sample_rate
    beta = (f_end_hz - f_start_hz) / period
    for i in range(n):
        t = i / sample_rate
        out[i] = amplitude * math.sin(TWO_PI * (f_start_hz * t + 0.5 * beta * t * t))
    return out


@njit(cache=True)
def _render_sweep_log(f_start_hz, f_end_hz, n, sample_rate, amplitude):
    """Exponential chirp: f(t) = f0 (f1 / f0) ** (t / T) with T = n / sample_rate."""
    out = np.empty(n, dtype=np.float64)
    period = n / sample_rate
    log_ratio = math.log(f_end_hz / f_start_hz)
    for i in range(n):
        t = i / sample_rate
        if log_ratio == 0.0:
            phase = TWO_PI * f_start_hz * t
        else:
            phase = TWO_PI * f_start_hz * period / log_ratio * math.expm1(log_ratio * t / period)
        out[i] = amplitude * math.sin(phase)
    return out


@njit(cache=True)
def _render_sweep_log_blocks(f_start_hz, f_end_hz, n, sample_rate, amplitude, block):
    """:func:`_render_sweep_log` by rotation over blocks of ``block`` samples.

    The phase is ``phi(i) = C (q**i - 1)`` with ``q = (f1 / f0) ** (1 / n)``, so its step ``d(i) = phi(i + 1) -
    phi(i)`` grows by ``q`` per sample and the step's rotation ``exp(j d(i))`` turns by ``exp(j e(i))``,
    ``e(i) = d(i) (q - 1)`` (~1e-4 rad here). At each block start the phase, its step and their sines come
    from the sample index (as in the per-sample kernel); within the block ``exp(j phi)`` is advanced by
    complex products, ``exp(j e)`` by its Taylor series (error < 1e-19 for ``|e| <= 1e-3``; a block whose
    ``e`` is larger takes the per-sample sines). Each value differs from the per-sample sine by about the
    rounding of the phase itself plus ~``block**2`` roundings (< 1e-10 of the amplitude).
    """
    log_ratio = math.log(f_end_hz / f_start_hz)
    if log_ratio == 0.0:  # a constant tone: no chirp to rotate
        return _render_sweep_log(f_start_hz, f_end_hz, n, sample_rate, amplitude)
    out = np.empty(n, dtype=np.float64)
    period = n / sample_rate
    scale = TWO_PI * f_start_hz * period / log_ratio
    q_minus_1 = math.expm1(log_ratio / n)
    q = 1.0 + q_minus_1
    for b in range(0, n, block):
        m = min(block, n - b)
        phase = scale * math.expm1(log_ratio * (b / sample_rate) / period)
        step = scale * math.exp(log_ratio * (b / sample_rate) / period) * q_minus_1  # phi(b + 1) - phi(b)
        turn = step * q_minus_1
        if abs(turn) * q**m > 1e-3:
            for i in range(b, b + m):
                t = i / sample_rate
                out[i] = amplitude * math.sin(scale * math.expm1(log_ratio * t / period))
            continue
        zr, zi = math.cos(phase), math.sin(phase)
        wr, wi = math.cos(step), math.sin(step)
        for i in range(b, b + m):
            out[i] = amplitude * zi
            zr, zi = zr * wr - zi * wi, zr * wi + zi * wr
            e2 = turn * turn
            ur = 1.0 - e2 * (0.5 - e2 / 24.0)
            ui = turn * (1.0 - e2 * (1.0 / 6.0 - e2 / 120.0))
            wr, wi = wr * ur - wi * ui, wr * ui + wi * ur
            turn *= q
    return out


@njit(cache=True)
def _render_raised_cosine_ramps(x, n_ramp):
    """Copy of ``x`` with Hann-half onset/offset ramps of ``n_ramp`` samples each.

    Onset gain of sample ``i < n_ramp`` is ``0.5 * (1 - cos(pi * i / n_ramp))`` (0 at the
    first sample); the offset is its mirror image (0 at the last sample).
    """
    out = x.copy()
    n = x.shape[0]
    for i in range(n_ramp):
        g = 0.5 * (1.0 - math.cos(math.pi * i / n_ramp))
        out[i] *= g
        out[n - 1 - i] *= g
    return out


@njit(cache=True)
def _render_impact(freq_hz, decay_s, n, sample_rate, amplitude):
    """Exponentially decaying sinusoid ``amplitude * exp(-t / decay_s) * sin(2 pi f t)``."""
    out = np.empty(n, dtype=np.float64)
    w = TWO_PI * freq_hz / sample_rate
    for i in range(n):
        out[i] = amplitude * math.exp(-i / (sample_rate * decay_s)) * math.sin(w * i)
    return out
