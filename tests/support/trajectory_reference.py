"""The trajectory task's radial measurement as first written, one window at a time: the reference that
:func:`auralgen.tasks.trajectory._direct_level_db` (one batch of FFTs over the windows) must reproduce. Both
measure the same windows (:func:`auralgen.tasks.trajectory._edge_windows`); the speed-up changed only how the
windows are transformed."""

from __future__ import annotations

import math

import numpy as np

from auralgen.tasks.trajectory import _edge_windows


def direct_level_db(x: np.ndarray, params, edge: str) -> tuple[float, float]:
    """trajectory's direct-sound level (dB) and delay (s) of one edge, window by window, as first written (the
    windows are the task's own, :func:`auralgen.tasks.trajectory._edge_windows`)."""
    win = _edge_windows(x, params, edge)
    w, max_lag = win.width, win.max_lag
    amps, lags = [], []
    for a in win.starts:
        ref = win.dry[a : a + w]
        seg = x[:, win.onset + a : win.onset + a + w + max_lag]
        n_fft = 1 << int(math.ceil(math.log2(2 * w + max_lag)))
        ref_f = np.fft.rfft(ref, n_fft)
        power = np.abs(ref_f) ** 2
        whiten = np.conj(ref_f) / (power + 1e-2 * float(np.mean(power)))  # regularised deconvolution
        h = np.fft.irfft(np.fft.rfft(seg, n_fft, axis=1) * whiten, n_fft, axis=1)[:, : max_lag + 1]
        env = np.sqrt(np.mean(h**2, axis=0))
        amps.append(float(np.max(env)))
        lags.append(int(np.argmax(env)))
    if not amps:
        return math.nan, math.nan
    return 20.0 * math.log10(float(np.median(amps))), float(np.median(lags)) / params["sample_rate_hz"]
