"""pyroomacoustics backend: ``pra.ShoeBox`` image sources, optionally with its ray tracer.

pyroomacoustics keeps global state; this module confines it:

- **threads**: pyroomacoustics reads ``PRA_NUM_THREADS`` at import. Importing this module
  sets ``PRA_NUM_THREADS=1`` if unset (before importing pyroomacoustics), and every call
  runs with ``constants["num_threads"]`` = ``PRA_NUM_THREADS`` (default 1), so a process
  pool of N workers uses N cores, not N x cpu_count threads. Safe under a process pool:
  each worker has its own copy of the package state.
- **constants**: every call runs with pyroomacoustics' default fractional delay
  (81 taps, table granularity 20), 10 Hz order-2 Butterworth high-pass and ``c = room.c_m_s``,
  whatever the process set globally; the previous values are restored afterwards.
- **randomness** (hybrid mode only): the ray tracer draws from pyroomacoustics' package RNG
  (``pra.random.generator._rng``: a numpy Generator plus the C++ libroom generator; older releases used
  numpy's global RNG). Inside a lock, the call seeds both from ``rng``, and afterwards
  restores the package Generator object and numpy's global state. The C++ generator's
  state cannot be read back, so it is left seeded from ``rng`` (deterministic, not restored).
  Same ``rng`` state -> same RIR.
"""

from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

os.environ.setdefault("PRA_NUM_THREADS", "1")

import pyroomacoustics as pra  # noqa: E402

from auralgen.rooms.fast import pad_stack  # noqa: E402
from auralgen.rooms.images import (  # noqa: E402
    FRAC_DELAY_LENGTH,
    RIR_HPF_FC_HZ,
    RIR_HPF_ORDER,
    SINC_LUT_GRANULARITY,
    max_order_for,
)
from auralgen.rooms.spec import WALLS, RoomSpec, wall_absorption  # noqa: E402

_LOCK = threading.RLock()
#: scattering given to every wall in hybrid (ray-traced) mode; 0 in exact mode.
HYBRID_SCATTERING = 0.1


def _num_threads() -> int:
    return max(1, int(os.environ.get("PRA_NUM_THREADS", "1")))


@contextlib.contextmanager
def _pra_state(rng: np.random.Generator | None):
    """Set pyroomacoustics' constants (and seeds, if ``rng``) for one call; restore after."""
    wanted = {
        "frac_delay_length": FRAC_DELAY_LENGTH,
        "sinc_lut_granularity": SINC_LUT_GRANULARITY,
        "num_threads": _num_threads(),
        "rir_hpf_enable": True,
        "rir_hpf_fc": RIR_HPF_FC_HZ,
        "rir_hpf_kwargs": {"n": RIR_HPF_ORDER, "rp": 5.0, "rs": 60.0, "type": "butter"},
    }
    with _LOCK:
        saved = {key: pra.constants.get(key) for key in wanted}
        # pyroomacoustics >= 0.8 keeps its Generator in pra.random.generator._rng
        rng_module = getattr(getattr(pra, "random", None), "generator", None)
        saved_pkg_rng = getattr(rng_module, "_rng", None)
        saved_np_state = np.random.get_state()
        try:
            for key, value in wanted.items():
                pra.constants.set(key, value)
            if rng is not None:
                seeds = rng.integers(0, 2**63 - 1, size=3, dtype=np.int64)
                if hasattr(rng_module, "seed"):
                    rng_module.seed(numpy=int(seeds[0]), libroom=int(seeds[1]))
                np.random.seed(int(seeds[2]) % (2**32))
            yield
        finally:
            for key, value in saved.items():
                pra.constants.set(key, value)
            if rng is not None:
                if hasattr(rng_module, "_rng"):
                    rng_module._rng = saved_pkg_rng
                np.random.set_state(saved_np_state)


def _materials(room: RoomSpec, scattering: float) -> dict:
    alpha = wall_absorption(room)
    return {
        w: pra.Material(energy_absorption=float(a), scattering=scattering) for w, a in zip(WALLS, alpha, strict=True)
    }


def compute_rir_pra(
    room: RoomSpec,
    source_m,
    mics_m,
    *,
    sample_rate: int,
    mode: str = "exact",
    rng: np.random.Generator | None = None,
    ism_order: int | None = None,
) -> np.ndarray:
    """RIRs ``[n_mics, n_samples]`` float64 from ``pra.ShoeBox`` (inputs assumed validated).

    ``mode='exact'``: image sources up to :func:`~auralgen.rooms.images.max_order_for`. ``mode='hybrid'``:
    image sources up to ``ism_order`` plus the ray tracer, every wall with scattering :data:`HYBRID_SCATTERING`.

    Parameters
    ----------
    room, source_m, mics_m, sample_rate
        As :func:`auralgen.rooms.simulate.compute_rir` (assumed validated).
    mode : {"exact", "hybrid"}, optional
        Image sources only, or low-order image sources plus the ray tracer.
    rng, ism_order : numpy.random.Generator or None, int or None, optional
        Hybrid mode only: seeds the ray tracer (``None``: seed 0) and the image order (``None``: 3).

    Returns
    -------
    ndarray, shape (n_mics, n_samples), float64
        One response per microphone, zero-padded to the longest.
    """
    fs = int(sample_rate)
    mics = np.asarray(mics_m, dtype=float).reshape(-1, 3)
    hybrid = mode == "hybrid"
    order = (3 if ism_order is None else int(ism_order)) if hybrid else max_order_for(room, fs)
    if hybrid and rng is None:
        rng = np.random.default_rng(0)
    with _pra_state(rng if hybrid else None):
        shoebox = pra.ShoeBox(
            list(map(float, room.dims_m)),
            fs=fs,
            materials=_materials(room, HYBRID_SCATTERING if hybrid else 0.0),
            max_order=order,
            air_absorption=bool(room.air_absorption),
            ray_tracing=hybrid,
            use_rand_ism=False,
        )
        shoebox.set_sound_speed(float(room.c_m_s))
        if hybrid:
            shoebox.set_ray_tracing()
        shoebox.add_source(np.asarray(source_m, dtype=float))
        shoebox.add_microphone_array(mics.T)
        shoebox.compute_rir()
        rirs = [np.asarray(shoebox.rir[m][0], dtype=float) for m in range(mics.shape[0])]
    return pad_stack(rirs)
