"""The former grouped binaural render (test support, not shipped in the wheel).

:func:`render_binaural_reference` is the render :meth:`auralgen.rooms.receivers.Binaural.render`
replaced; tests/rooms/test_receiver_speed_equivalence.py and bench/bench_receivers.py compare
the fast render with it (equal up to rounding when the reference high-passes the sum once).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.fft

from auralgen.core.errors import ParameterError
from auralgen.rooms import _ism_kernels as _ik
from auralgen.rooms import images as _images
from auralgen.rooms import receivers
from auralgen.rooms.images import render_omni
from auralgen.rooms.receivers import Binaural

_REFERENCE_HIGHPASS = ("per_direction", "per_direction_padded", "end")


def render_binaural_reference(
    receiver: Binaural, images, *, sample_rate: int, c_m_s: float, n_samples: int, highpass: str = "per_direction"
) -> np.ndarray:
    """The former grouped binaural render, kept to test :meth:`Binaural.render` against.

    Images are grouped by nearest HRIR direction; each group's impulse train is rendered
    like :func:`~auralgen.rooms.images.render_omni` at the head centre, convolved with its
    HRIR pair by FFT, and the products summed. Slow: one FFT pair per direction.

    highpass : {"per_direction", "per_direction_padded", "end"}
        ``per_direction`` (the former behaviour): each group's train is cut and high-passed
        over ``n_samples`` (it *is* ``render_omni``), so the zero-phase filter's edges fall at
        sample 0 and ``n_samples`` before the HRIR convolution; ``per_direction_padded``: the
        same with 0.5 s of zeros before and after the full trains, so no edge reaches the
        output (the edge-free result); ``end``: the full trains, convolved, summed, rendered
        as far as :meth:`Binaural.render` does and high-passed once.
    """
    if highpass not in _REFERENCE_HIGHPASS:
        raise ParameterError(f"highpass={highpass!r}; allowed: {', '.join(_REFERENCE_HIGHPASS)}")
    sample_rate, c_m_s, n_samples = receivers._check_render_args(sample_rate, c_m_s, n_samples)
    seen = receiver._image_directions(images, sample_rate, c_m_s, n_samples)
    positions, gains, bucket = seen.positions_m, seen.gains, seen.directions
    hr = receiver.hrtf_at(sample_rate)
    orders = np.asarray(images.orders).ravel()
    centre = np.asarray(receiver.position_m, dtype=float)
    lead, n_len = 0, n_samples
    if highpass == "per_direction_padded":
        lead, n_len = sample_rate // 2, n_samples + hr.num_taps + _images.FRAC_DELAY_LENGTH + sample_rate // 2
    elif highpass == "end":
        n_len = n_samples + receivers._highpass_margin(hr.num_taps, sample_rate)
    n_fft = scipy.fft.next_fast_len(lead + n_len + hr.num_taps - 1, real=True)
    acc = np.zeros((2, n_fft // 2 + 1), dtype=np.complex128)
    for b in np.unique(bucket):
        sel = bucket == b
        if highpass == "per_direction":
            group = dataclasses.replace(images, positions_m=positions[sel], gains=gains[sel], orders=orders[sel])
            train = render_omni(group, centre, sample_rate=sample_rate, c_m_s=c_m_s, n_samples=n_samples)
        else:
            rows = _ik._scatter_list(
                np.ascontiguousarray(positions[sel]),
                np.ascontiguousarray(gains[sel]),
                centre,
                _images._phase_basis()[0],
                sample_rate,
                c_m_s,
                _images.FDL2,
                _images.SINC_LUT_GRANULARITY,
                n_samples,  # images starting at or after n_samples are left out, as in render_omni
                (n_samples + 1) * c_m_s / sample_rate,
            )
            rows = np.concatenate([np.zeros((lead, rows.shape[1])), rows, np.zeros((n_len - n_samples, rows.shape[1]))])
            train = _images._synthesise(rows)
            if highpass == "per_direction_padded":
                train = _images._highpass(train, sample_rate)
        acc += scipy.fft.rfft(train, n_fft) * scipy.fft.rfft(hr.hrirs[b], n_fft, axis=-1)
    out = scipy.fft.irfft(acc, n_fft, axis=-1)[:, : lead + n_len]
    if highpass == "end":
        out = _images._highpass(out, sample_rate)
    return np.ascontiguousarray(out[:, lead : lead + n_samples])
