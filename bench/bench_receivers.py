"""Speed of the binaural receiver: the former per-direction grouped render vs the per-image kernel.

6 x 5 x 3 m room (RT60 0.5 s), source (1.5, 3.6, 1.3), head at (3, 2.5, 1.5) yawed 20 deg;
image orders 6 and 12 (377 and 2,625 images), 16 and 48 kHz; two response lengths: the
farthest image's natural length (``exact`` mode) and 1 s (the hybrid early part is rendered
over the tail's length). "old" is ``render_binaural_reference`` (the former
``Binaural.render``), "new" is ``Binaural.render``; both warmed up first (numba compiled, HRIRs
and the cached HRIR x fractional-delay kernels built: the one-off build time per rate is printed).
Best of ``repeats`` wall-clock times; ``err`` is the normalised L2 difference new vs old.
FOA is timed too (four ``render_omni`` calls; unchanged).

    python bench/bench_receivers.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("PRA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the former render lives in tests/support

import numpy as np  # noqa: E402

from auralgen.rooms import receivers  # noqa: E402
from auralgen.rooms.images import image_sources, rir_length  # noqa: E402
from auralgen.rooms.receivers import FOA, Binaural  # noqa: E402
from auralgen.rooms.spec import RoomSpec  # noqa: E402
from tests.support.binaural_reference import render_binaural_reference  # noqa: E402

C = 343.0
ROOM = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.5)
SOURCE = (1.5, 3.6, 1.3)
HEAD = (3.0, 2.5, 1.5)


def _best(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _warm(rec: Binaural, sample_rate: int) -> float:
    """Compile, load the HRIRs at ``sample_rate`` and build the kernel cache; seconds for the kernels."""
    rec.hrtf_at(sample_rate)
    receivers._binaural_kernels.cache_clear()
    t0 = time.perf_counter()
    receivers._binaural_kernels(rec.hrtf, sample_rate)
    build = time.perf_counter() - t0
    ims = image_sources(ROOM, SOURCE, max_order=1)
    rec.render(ims, sample_rate=sample_rate, c_m_s=C, n_samples=1000)
    render_binaural_reference(rec, ims, sample_rate=sample_rate, c_m_s=C, n_samples=1000)
    return build


def run(orders=(6, 12), rates=(16000, 48000), lengths=("natural", 1.0), *, repeats: int = 3) -> list[dict]:
    """One row per (images, rate, length): old / new / FOA seconds, old/new ratio, new-vs-old error."""
    rec = Binaural(position_m=HEAD, yaw_deg=20.0)
    foa = FOA(position_m=HEAD, yaw_deg=20.0)
    rows = []
    for fs in rates:
        build = _warm(rec, fs)
        for order in orders:
            ims = image_sources(ROOM, SOURCE, max_order=order)
            far = float(np.linalg.norm(ims.positions_m - np.asarray(HEAD), axis=1).max())
            for length in lengths:
                n = rir_length(ROOM, fs, max_distance_m=far) if length == "natural" else int(length * fs)
                kw = dict(sample_rate=fs, c_m_s=C, n_samples=n)
                new = rec.render(ims, **kw)
                old = render_binaural_reference(rec, ims, **kw)
                t_old = _best(lambda ims=ims, kw=kw: render_binaural_reference(rec, ims, **kw), max(1, repeats - 1))
                t_new = _best(lambda ims=ims, kw=kw: rec.render(ims, **kw), repeats)
                t_foa = _best(lambda ims=ims, kw=kw: foa.render(ims, **kw), repeats)
                rows.append(
                    {
                        "images": len(ims.gains),
                        "sample_rate": fs,
                        "n_samples": n,
                        "old_s": t_old,
                        "new_s": t_new,
                        "speedup": t_old / t_new,
                        "err": float(np.linalg.norm(new - old) / np.linalg.norm(old)),
                        "foa_s": t_foa,
                        "kernel_build_s": build,
                    }
                )
    return rows


def main() -> None:
    print(
        f"{'images':>6} {'fs':>6} {'n':>6} {'old s':>8} {'new s':>8} {'old/new':>8} {'err':>8} "
        f"{'FOA s':>8} {'kernels s':>9}"
    )
    for r in run():
        print(
            f"{r['images']:6d} {r['sample_rate']:6d} {r['n_samples']:6d} {r['old_s']:8.3f} {r['new_s']:8.4f} "
            f"{r['speedup']:7.0f}x {r['err']:8.1e} {r['foa_s']:8.4f} {r['kernel_build_s']:9.3f}"
        )


if __name__ == "__main__":
    main()
