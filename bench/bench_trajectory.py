"""Moving-source rendering speed against a static render of the same clip, measured in the same run.

A 3 s binaural pass-by (classroom, 16 kHz, direct path + first-order reflections + the room's
tail) is timed against the static spatial render of the same noise at the path's start
(:func:`auralgen.rooms.scene.spatial_rir` + convolution), the reference a piecewise-static
renderer would repeat for every block.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auralgen.rooms.receivers import Binaural  # noqa: E402
from auralgen.rooms.scene import convolve, spatial_rir  # noqa: E402
from auralgen.rooms.spec import load_preset  # noqa: E402
from auralgen.rooms.trajectory import pass_by, render_moving  # noqa: E402
from bench import results  # noqa: E402

FS = 16000


def _times(fn, repeats: int = 5) -> list[float]:
    fn()  # compile / caches
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def run() -> dict:
    room = load_preset("classroom")
    lis = (4.5, 3.5, 1.5)
    rec = Binaural(position_m=lis)
    tr = pass_by(lis, closest_azimuth_deg=0.0, closest_distance_m=1.5, length_m=6.0, ccw=True, duration_s=3.0)
    sig = np.random.default_rng(0).standard_normal(3 * FS)
    moving_times = _times(
        lambda: render_moving(sig, tr, room, rec, sample_rate=FS, early_order=1, rng=np.random.default_rng(0))
    )
    start = tr.position_at(np.array([0.0]))[0]
    static_times = _times(
        lambda: convolve(sig, spatial_rir(room, start, rec, sample_rate=FS, rng=np.random.default_rng(0)))
    )
    moving, static = min(moving_times), min(static_times)
    return {
        "clip_s": 3.0,
        "moving_s": moving,
        "static_s": static,
        "moving_over_static": moving / static,
        "moving_times_s": moving_times,
        "static_times_s": static_times,
    }


def main() -> None:
    r = run()
    print(
        f"3 s binaural pass-by, classroom, 16 kHz: moving {r['moving_s']:.3f} s, static {r['static_s']:.3f} s "
        f"(moving / static = {r['moving_over_static']:.2f}; real-time factor "
        f"{r['moving_s'] / r['clip_s']:.3f})"
    )
    results.write(
        "bench_trajectory",
        "python bench/bench_trajectory.py",
        [
            results.figure("3 s binaural pass-by (classroom, 16 kHz), moving source", r["moving_times_s"], "s"),
            results.figure("the same clip rendered static", r["static_times_s"], "s"),
        ],
    )


if __name__ == "__main__":
    main()
