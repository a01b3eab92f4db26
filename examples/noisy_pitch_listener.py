"""A model for the ``command`` adapter whose pitch threshold is known: it hears with internal noise.

It speaks the framed protocol (one JSON request per stdin line, one ``{"id": ..., "reply": ...}``
per stdout line) and answers pitch_relative questions the way a listener with a Gaussian internal
noise of ``--sigma`` cents would: it measures both tones' f0 (auralgen's reference measurement),
adds noise to their difference in cents, and says "the same" when the noisy difference is within
``--sigma`` of zero. Its threshold therefore grows with ``--sigma`` -- which ``evaluate.py
mode=adaptive model=command`` should find. The noise is seeded by the question's id, so the same
question gets the same reply. Other tasks get "I cannot tell".

    .venv/bin/python evaluate.py mode=adaptive model=command \\
        model.cmd='.venv/bin/python examples/noisy_pitch_listener.py --sigma 40' task=pitch_relative out=results/noisy40
"""

import argparse
import json
import math
import sys
import zlib

import numpy as np
import soundfile as sf

from auralgen.listeners.common import compare, mono, sound_segments
from auralgen.measure import f0_hz


def answer(request: dict, sigma: float) -> str:
    meta = request["meta"]
    if meta.get("task") != "pitch_relative":
        return "I cannot tell."
    path = next(p["value"] for p in request["prompts"] if p["type"] == "audio")
    x, sr = sf.read(path, dtype="float64", always_2d=True)
    x = mono(x.T)
    spans = sound_segments(x, sr)
    if len(spans) < 2:
        return "I cannot tell."
    f = []
    for a, b in spans[:2]:
        mid, h = (a + b) // 2, min(sr // 8, (b - a) // 2)
        f.append(f0_hz(x[mid - h : mid + h], sr))
    rng = np.random.default_rng(zlib.crc32(meta["unique_id"].encode()))
    heard = 1200.0 * math.log2(f[1] / f[0]) + rng.normal(0.0, sigma)
    index = compare(list(meta["options"]), heard, sigma, "higher", "lower", "same")
    return "ABCDEFGH"[index] if index is not None and index >= 0 else "I cannot tell."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sigma", type=float, default=20.0, help="internal noise, cents (standard deviation)")
    args = parser.parse_args()
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"id": request["id"], "reply": answer(request, args.sigma)}), flush=True)


if __name__ == "__main__":
    main()
