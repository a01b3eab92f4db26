"""Rebuild this folder: 24 recorded samples (8 classes x 3) of the Fluid (R3) General MIDI SoundFont.

The samples are the SoundFont's raw PCM recordings (an instrument or drum hit played once), not
notes synthesised from them. Each is taken from its left channel, resampled to 22,050 Hz, cut to at
most 1.2 s with a 10 ms raised-cosine fade at the cut and peak-normalised to -3 dBFS, and written as
16-bit FLAC under ``<label>/``; ``metadata.csv`` names label, license and attribution per file (the
Hugging Face ``audiofolder`` convention, so ``load_dataset("audiofolder", data_dir=...)`` reads it).

Needs the Debian package's SoundFont and sf2utils (not a dependency of auralgen)::

    cd /tmp && apt-get download fluid-soundfont-gm && dpkg-deb -x fluid-soundfont-gm_*.deb /tmp/fluid
    python3 -m venv /tmp/sfenv && /tmp/sfenv/bin/pip install sf2utils numpy scipy soundfile
    /tmp/sfenv/bin/python tests/data/real_sounds/make_fixture.py /tmp/fluid/usr/share/sounds/sf2/FluidR3_GM.sf2
"""

import csv
import sys
from math import gcd
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly
from sf2utils.sf2parse import Sf2File

RATE = 22050
MAX_S = 1.2
FADE_S = 0.01
LICENSE = "MIT"
ATTRIBUTION = "Fluid (R3) General MIDI SoundFont by Frank Wen, via Debian fluid-soundfont-gm 3.1"
CLASSES = {
    "piano": ["P200 Piano D4(L)", "P200 Piano F#4(L)", "P200 Piano A#4(L)"],
    "flute": ["Flute E4(L)", "Flute G4(L)", "Flute D5(L)"],
    "violin": ["Violin G#4(L)", "Violin F5(L)", "Violin D6(L)"],
    "guitar": ["Jazz Guitar D4", "Jazz Guitar G4", "Jazz Guitar Bb4"],
    "xylophone": ["Xylophone C 5(L)", "Xylophone F# 5(L)", "Xylophone C 6(L)"],
    "snare_drum": ["Orch Snare(L)", "Power Snare 1(L)", "Power Snare 2(L)"],
    "kick_drum": ["Room Kick (L)", "Power Kick (L)", "Power Kick 2(L)"],
    "hi_hat": ["Hi-Hat Closed(L)", "Hi-Hat Foot(L)", "Hi-Hat Half-Open(L)"],
}


def main(sf2_path: str) -> None:
    root = Path(__file__).parent
    rows = []
    with open(sf2_path, "rb") as f:
        samples = {s.name: s for s in Sf2File(f).samples}
        for label, names in CLASSES.items():
            (root / label).mkdir(exist_ok=True)
            for k, name in enumerate(names, 1):
                s = samples[name]
                x = np.frombuffer(s.raw_sample_data, dtype="<i2").astype(np.float64) / 32768.0
                g = gcd(int(s.sample_rate), RATE)
                x = resample_poly(x, RATE // g, int(s.sample_rate) // g)
                n = int(MAX_S * RATE)
                if len(x) > n:
                    x = x[:n]
                    m = int(FADE_S * RATE)
                    x[-m:] *= 0.5 * (1 + np.cos(np.pi * np.arange(m) / m))
                x *= 10 ** (-3 / 20) / np.max(np.abs(x))
                file_name = f"{label}/{label}_{k}.flac"
                sf.write(root / file_name, x, RATE, subtype="PCM_16")
                rows.append(
                    {
                        "file_name": file_name,
                        "label": label,
                        "license": LICENSE,
                        "attribution": ATTRIBUTION,
                        "source_sample": name,
                    }
                )
    with open(root / "metadata.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1])
