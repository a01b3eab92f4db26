"""brightness_absolute's crest factor by class, and how far harmonic phases can move it.

The task declares the crest factor (peak/RMS) as a cue that follows brightness itself. This prints,
per class, the 5-95 % range and median of the items' own crest factors, and per item the lowest and
highest crest factor over ``--draws`` random phase draws (same harmonics, same tilt): if the highest a
dark item reaches stays under what bright items have, no phase roving can equalise the cue.

    .venv/bin/python bench/brightness_crest.py [--items 600] [--draws 32] [--seed 104729]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auralgen.cli._hydra import compose  # noqa: E402
from auralgen.config import build_tasks, validate  # noqa: E402
from auralgen.synth import brightness  # noqa: E402

CLASSES = ("dark", "neutral", "bright")


def crest_db(sound: dict, sample_rate: int, phases: np.ndarray | None = None) -> float:
    """Crest factor (dB) of one period of the sound's tilted harmonic complex (its own phases, or ``phases``)."""
    x = brightness.tilted_period(sound, sample_rate, phases)
    return float(20 * np.log10(np.abs(x).max() / np.sqrt(np.mean(x**2))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--draws", type=int, default=32, help="random phase draws per item")
    parser.add_argument("--seed", type=int, default=104729)
    args = parser.parse_args()
    task = build_tasks(validate(compose(["task=brightness_absolute", "progress=false"])))["brightness_absolute"]
    sr, n_levels = task.sample_rate, len(task.cfg.levels)
    rng, phase_rng = np.random.default_rng(args.seed), np.random.default_rng(args.seed + 1)
    rows: dict[int, list[tuple[float, float, float]]] = {0: [], 1: [], 2: []}
    for i in range(args.items):
        params = task.sample(rng, i % n_levels)
        sound = params["sounds"][0]
        others = [crest_db(sound, sr, phase_rng.uniform(0.0, 2 * math.pi, 4096)) for _ in range(args.draws)]
        rows[params["bin"]].append((crest_db(sound, sr), min(others), max(others)))
    print(f"brightness_absolute, default config, {args.items} items, seed {args.seed}, {args.draws} phase draws each")
    print("| class | items | own crest 5-95 % (dB) | own median | lowest of draws, median | highest of draws, median |")
    print("|---|---|---|---|---|---|")
    for k, name in enumerate(CLASSES):
        v = np.array(rows[k])
        lo, hi = np.percentile(v[:, 0], [5, 95])
        print(
            f"| {name} | {len(v)} | {lo:.1f}-{hi:.1f} | {np.median(v[:, 0]):.1f} | {np.median(v[:, 1]):.1f} | "
            f"{np.median(v[:, 2]):.1f} |"
        )
    dark, bright = np.array(rows[0]), np.array(rows[2])
    reach = float(np.mean(dark[:, 2] >= np.median(bright[:, 0])))
    print(f"dark items whose highest draw reaches the bright items' median crest: {100 * reach:.1f} %")


if __name__ == "__main__":
    main()
