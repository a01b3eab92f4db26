"""The numba image-source engine: exact shoebox RIRs in pyroomacoustics' conventions.

Same images, gains, fractional delay, offset, length and high-pass as
``pyroomacoustics.ShoeBox(...).compute_rir()`` (see :mod:`auralgen.rooms.images`), but:

- images are never materialised: a kernel walks the diamond of image rooms per axis
  tables and scatters each image as two weighted impulses on the rows of pyroomacoustics'
  interpolated sinc table (O(1) per image);
- the rows are projected once per microphone onto 8 basis rows (a rank-8 factorisation of
  that table) and the windowed sinc is applied by FFT to those, not as 81 taps per image.

It does not model air absorption (:class:`auralgen.rooms.backends.FastBackend` refuses
``air_absorption`` with ``backend='fast'``).

Examples
--------
>>> from auralgen.rooms.spec import RoomSpec
>>> room = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.3).validate()
>>> rir = compute_rir_fast(room, (2.0, 3.0, 1.5), [[4.0, 2.0, 1.2]], sample_rate=16000)
>>> rir.shape[0]
1
"""

from __future__ import annotations

import numpy as np

from auralgen.rooms import _ism_kernels as _k
from auralgen.rooms.images import (
    FDL2,
    SINC_LUT_GRANULARITY,
    _axis_tables,
    _highpass,
    _natural_length,
    _phase_basis,
    _synthesise_batch,
    max_order_for,
)
from auralgen.rooms.spec import RoomSpec


def pad_stack(rirs: list[np.ndarray]) -> np.ndarray:
    """Zero-pad 1-D responses to the longest and stack: ``[n, max_len]`` float64.

    Parameters
    ----------
    rirs : list of ndarray
        Responses, each shape ``(n_i,)``; at least one.

    Returns
    -------
    ndarray, shape (len(rirs), max n_i), float64
        The responses, zero-padded at the end.
    """
    n = max(r.shape[-1] for r in rirs)
    out = np.zeros((len(rirs), n))
    for i, r in enumerate(rirs):
        out[i, : r.shape[-1]] = r
    return out


def render_order_raw(room: RoomSpec, source_m, mics_m, *, sample_rate: int, max_orders, n_lens, max_dists_m) -> list:
    """Unfiltered responses of the microphones ``mics_m [n, 3]``, each from its own set of images.

    Microphone ``m``'s has ``n_lens[m]`` samples from all images of order <= ``max_orders[m]`` closer
    than ``max_dists_m[m]``. Microphones with the same order share one pass of the image kernel and
    one batch of FFTs (the group's longest length sets the FFT size).

    Parameters
    ----------
    room, source_m, mics_m, sample_rate
        As :func:`auralgen.rooms.simulate.compute_rir` (assumed validated).
    max_orders : array_like of int, shape (n_mics,)
        Highest image order per microphone.
    n_lens : array_like of int, shape (n_mics,)
        Response length per microphone in samples.
    max_dists_m : array_like of float, shape (n_mics,)
        Images at this distance (metres) or farther are left out, per microphone.

    Returns
    -------
    list of ndarray
        Per microphone a ``(n_lens[m],)`` float64 response: no high-pass applied.
    """
    mics = np.ascontiguousarray(np.asarray(mics_m, dtype=float).reshape(-1, 3))
    orders, lens = np.asarray(max_orders, dtype=np.int64), np.asarray(n_lens, dtype=np.int64)
    dists = np.asarray(max_dists_m, dtype=float)
    basis = _phase_basis()[0]
    out: list = [None] * mics.shape[0]
    for order in np.unique(orders):
        group = np.flatnonzero(orders == order)
        acc = _k._scatter_shoebox(
            *_axis_tables(room, source_m, int(order)),
            int(order),
            mics[group],
            basis.shape[0],
            int(sample_rate),
            float(room.c_m_s),
            FDL2,
            SINC_LUT_GRANULARITY,
            lens[group],
            dists[group],
        )
        rows = _project(acc.reshape(-1, acc.shape[2]), basis)  # rows past a microphone's length are zero
        raw = _synthesise_batch(
            rows.reshape(basis.shape[1], acc.shape[0], acc.shape[1]).transpose(1, 0, 2), rank_major=True
        )  # one FFT length for the group
        for k, m in enumerate(group):
            out[m] = raw[k, : lens[m]]
    return out


def compute_rir_fast(room: RoomSpec, source_m, mics_m, *, sample_rate: int) -> np.ndarray:
    """Exact image-source RIRs ``[n_mics, n_samples]`` float64 (inputs assumed validated).

    Each microphone's response has pyroomacoustics' own length (from its farthest
    image) and is high-passed at that length; shorter ones are zero-padded.

    Parameters
    ----------
    room, source_m, mics_m, sample_rate
        As :func:`auralgen.rooms.simulate.compute_rir` (assumed validated); the image order is
        :func:`~auralgen.rooms.images.max_order_for` of ``room`` and ``sample_rate``.

    Returns
    -------
    ndarray, shape (n_mics, n_samples), float64
        One response per microphone (direct sound at 1 m has amplitude 1), zero-padded to the longest.
    """
    fs = int(sample_rate)
    order = max_order_for(room, fs)
    tables = _axis_tables(room, source_m, order)
    basis = _phase_basis()[0]
    mics = np.ascontiguousarray(np.asarray(mics_m, dtype=float).reshape(-1, 3))
    dims = np.asarray(room.dims_m, dtype=float)
    n_lens = np.array(
        [
            _natural_length(_k._max_image_distance(tables[0], tables[2], tables[4], order, mic, dims), room.c_m_s, fs)
            for mic in mics
        ],
        dtype=np.int64,
    )
    acc = _k._scatter_shoebox(
        *tables,
        order,
        mics,
        basis.shape[0],
        fs,
        float(room.c_m_s),
        FDL2,
        SINC_LUT_GRANULARITY,
        n_lens,
        np.full(mics.shape[0], np.inf),
    )
    raw = pad_stack(
        [_synthesise_batch(_project(acc[m, :n], basis)[None], rank_major=True)[0] for m, n in enumerate(n_lens)]
    )
    return _highpass(raw, fs, lengths=n_lens)  # each microphone filtered at its own length


def _project(rows: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Sinc-table-row impulse trains ``[n, table rows]`` onto the low-rank basis: ``[rank, n]`` float64
    (rank-major, so that the synthesis FFTs run on contiguous rows)."""
    out = np.zeros((basis.shape[1], rows.shape[0]))
    _k._project_rows(np.ascontiguousarray(rows), np.ascontiguousarray(basis), out.T)  # numba: one thread, no BLAS
    return out
