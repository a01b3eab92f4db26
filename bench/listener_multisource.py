"""multi_source_relation's reference listener on many items of one relation and level.

The validity table has 67 items per level, so its 95 % interval on a 95 % accuracy is about
+-6 pp. This script draws ``--items`` items of one relation at one spacing (task defaults otherwise,
binaural, 16 kHz), renders each, asks the listener and prints its accuracy with a Wilson interval.
For every wrong item it prints each source's true direction beside the direction the listener read
from the mix (for ``closer``: each source's distance beside the distance its read direct level
implies, relative to the answer's), so the source that was misread shows::

    OPENBLAS_NUM_THREADS=1 python bench/listener_multisource.py --relation higher --step 40 --items 200

(single-threaded BLAS: the listener's least-squares fits are small; threads only add contention.)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from auralgen.evaluation.adaptive.session import build_task
from auralgen.evaluation.metrics import wilson_interval
from auralgen.listeners import multisource
from auralgen.rooms.receivers import Binaural
from auralgen.validation import listener as L

LEVEL_FIELD = {
    "left": "levels",
    "closer": "distance_levels_m",
    "higher": "elevation_levels_deg",
    "left_of": "left_of_levels_deg",
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--relation", choices=sorted(LEVEL_FIELD), default="higher")
    ap.add_argument("--step", type=float, default=40.0, help="the relation's spacing (deg; m for closer)")
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--seed", type=int, default=5000, help="item i is drawn from default_rng(seed + i)")
    a = ap.parse_args(argv)
    task = build_task("multi_source_relation", relations=(a.relation,), **{LEVEL_FIELD[a.relation]: (a.step,)})
    hrtf = Binaural(position_m=(0.0, 0.0, 0.0)).hrtf_at(task.sample_rate)
    right, t0 = 0, time.perf_counter()
    for i in range(a.items):
        rng = np.random.default_rng(a.seed + i)
        params = task.sample(rng, 0)
        qa = task.qa(params, rng, slot=i % task.n_choices)
        x = task.render(params)[0]
        got = L.answer("multi_source_relation", qa.question, qa.options, [x], task.sample_rate, layout="binaural")
        right += got == qa.answer_index
        if got != qa.answer_index:
            print(f"wrong: seed {a.seed + i}, answer {qa.answer!r}, listener {got}")
            _print_sources(params, x, hrtf)
    lo, hi = wilson_interval(right, a.items)
    print(
        f"{a.relation} at {a.step:g}: {right} / {a.items} = {100 * right / a.items:.1f} % "
        f"[{100 * lo:.1f}, {100 * hi:.1f}] (95 % Wilson), {time.perf_counter() - t0:.0f} s"
    )


def _print_sources(params, x, hrtf) -> None:
    kinds = [s["source"]["kind"] for s in params["sounds"]]
    closer = params["relation"] == "closer"
    read = multisource.read_sources(np.asarray(x, np.float64), params["sample_rate_hz"], kinds, hrtf, levels=closer)
    ref = params["sounds"][params.get("answer_sound", 0)]
    ref_level = (read.get(ref["source"]["kind"]) or multisource.Heard(None)).level
    for s, k in zip(params["sounds"], kinds):
        h = read.get(k)
        got = "not read" if h is None or h.direction is None else f"({h.direction[0]:.0f}, {h.direction[1]:.0f})"
        line = f"    {k:9s} true ({s['azimuth_deg']:.0f}, {s['elevation_deg']:.0f}) deg, read {got}"
        if closer and h is not None and h.level and ref_level:  # 1/d**2: the read distance, scaled to the answer's
            line += f"; {s['distance_m']:.2f} m, read {ref['distance_m'] * (ref_level / h.level) ** 0.5:.2f} m"
        print(line)


if __name__ == "__main__":
    main()
