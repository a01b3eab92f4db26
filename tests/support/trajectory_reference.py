"""The trajectory task's radial measurement as first written, one window at a time: the reference that
:func:`auralgen.tasks.trajectory._direct_level_db` (one batch of FFTs over the windows) must reproduce."""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.rooms.images import FDL2
from auralgen.sounds.spatial import source_signal
from auralgen.tasks import _sounds
from auralgen.tasks.trajectory import EDGE_FRACTION, MATCH_WINDOW_S


def direct_level_db(x: np.ndarray, params, edge: str) -> tuple[float, float]:
    """trajectory's direct-sound level (dB) and delay (s) of one edge, window by window, as first written."""
    sr = params["sample_rate_hz"]
    s = params["sounds"][0]
    dry = source_signal(s["source"], sr, ramp_s=params["ramp_s"])
    n = len(dry)
    w = _sounds.n_samples(MATCH_WINDOW_S, sr)
    edge_n = int(EDGE_FRACTION * n)
    span = (0, edge_n) if edge == "first" else (n - edge_n, n)
    onset = _sounds.n_samples(s["onset_s"], sr)
    max_lag = (
        int(math.ceil(max(s["distance_m"], s["end_distance_m"]) / SPEED_OF_SOUND_M_S * sr)) + FDL2 + 8
    )  # the direct sound
    amps, lags = [], []
    for a in range(span[0], span[1] - w + 1, w):
        ref = dry[a : a + w]
        e = float(np.sum(ref**2))
        if e <= 1e-3 * w:  # silent window (between clicks)
            continue
        seg = x[:, onset + a : onset + a + w + max_lag]
        if seg.shape[1] < w + max_lag:
            continue
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
    return 20.0 * math.log10(float(np.median(amps))), float(np.median(lags)) / sr
