"""Pitch shift and time stretch of recordings: pedalboard (Rubber Band R3) against librosa's phase
vocoder and pytsmod's WSOLA, on the same notes, the same targets and one thread each.

The notes are the 15 pitched recordings of ``tests/data/real_sounds`` (piano, flute, violin, guitar,
xylophone) at 16 kHz, 0.8 s from 0.1 s into the file. Quality is what the tasks check:

* pitch shift by -200 / +100 / +400 cents: the error of the f0-measured shift (cents), and the share
  of shifts within pitch_relative's tolerance (3 cents);
* time stretch to 0.7x / 1.5x the length: the pitch change it causes (cents; 0 is ideal) and the
  length error (samples);
* attacks: the 10-90 % rise time of the 9 drum hits (from their start) after a 200-cent shift and a
  1.5x stretch, as a ratio to the original's (median; 1 = kept, larger = smeared).

Speed: median seconds per second of audio over 3 repetitions of the whole set. pytsmod has no pitch
shifter of its own; its shift is WSOLA stretch by the ratio followed by resampling (what librosa's
pitch_shift does with its phase vocoder). Needs ``pip install 'auralgen[bench]'`` (librosa, pytsmod).
"""

from __future__ import annotations

import sys
import time
from math import gcd
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auralgen.measure import cents, f0_hz  # noqa: E402
from auralgen.sounds.corpus import SourceConfig, load_corpus, read_entry  # noqa: E402

SR = 16000
PITCHED = ("piano", "flute", "violin", "guitar", "xylophone")
SHIFTS = (-200.0, 100.0, 400.0)
STRETCHES = (0.7, 1.5)  # output length / input length
TOLERANCE_CENTS = 3.0


def notes(labels=PITCHED, offset_s: float = 0.1) -> list[np.ndarray]:
    corpus = load_corpus(SourceConfig(kind="clips", dir=str(ROOT / "tests" / "data" / "real_sounds")))
    out = []
    for e in corpus.entries:
        if e.label in labels:
            spec = {"root": corpus.root, "file": e.file, "sha256": e.sha256, "offset_s": offset_s}
            out.append(read_entry(spec, SR, 0.8).astype(np.float32))
    return out


def attack_ratio(fn, hits) -> float:
    """Median ratio of the 10-90 % rise time after / before a 200-cent shift or a 1.5x stretch, on
    drum hits from their start (1 = the attack kept; a phase vocoder smears it)."""
    from auralgen.measure.attack import rise_time_s

    ratios = []
    for x in hits:
        r0 = rise_time_s(x.astype(np.float64), SR)
        for y in (fn(x, shift=200.0), fn(x, stretch=1.5)):
            ratios.append(rise_time_s(np.asarray(y, dtype=np.float64), SR) / max(r0, 1.0 / SR))
    return float(np.median(ratios))


def _resample(x: np.ndarray, ratio: float) -> np.ndarray:
    """``x`` resampled so that it plays ``ratio`` times higher (fewer samples)."""
    from scipy.signal import resample_poly

    num, den = 1000, int(round(1000 * ratio))
    g = gcd(num, den)
    return resample_poly(x, num // g, den // g).astype(np.float32)


def rubberband(x, *, shift=0.0, stretch=1.0):
    import pedalboard

    return pedalboard.time_stretch(
        x[None, :], float(SR), stretch_factor=1.0 / stretch, pitch_shift_in_semitones=shift / 100
    )[0]


def librosa_pv(x, *, shift=0.0, stretch=1.0):
    import librosa

    if shift:
        return librosa.effects.pitch_shift(x, sr=SR, n_steps=shift / 100)
    return librosa.effects.time_stretch(x, rate=1.0 / stretch)


def pytsmod_wsola(x, *, shift=0.0, stretch=1.0):
    import pytsmod

    if shift:
        ratio = 2 ** (shift / 1200)
        y = np.asarray(pytsmod.wsola(x.astype(np.float64), ratio), dtype=np.float32)
        return _resample(y, ratio)[: len(x)]
    return np.asarray(pytsmod.wsola(x.astype(np.float64), stretch), dtype=np.float32)


METHODS = {
    "pedalboard (Rubber Band R3)": rubberband,
    "librosa (phase vocoder)": librosa_pv,
    "pytsmod (WSOLA)": pytsmod_wsola,
}


def _f0(x: np.ndarray) -> float:
    mid, half = len(x) // 2, int(0.2 * SR)
    return f0_hz(x[mid - half : mid + half].astype(np.float64), SR)


def quality(fn, xs) -> dict[str, float]:
    shift_err, stretch_cents, length_err = [], [], []
    for x in xs:
        f_ref = _f0(x)
        for s in SHIFTS:
            got = cents(f_ref, _f0(fn(x, shift=s)))
            shift_err.append(abs(got - s) if np.isfinite(got) else np.inf)
        for r in STRETCHES:
            y = fn(x, stretch=r)
            length_err.append(abs(len(y) - round(r * len(x))))
            got = cents(f_ref, _f0(y))
            stretch_cents.append(abs(got) if np.isfinite(got) else np.inf)
    e = np.array(shift_err)
    return {
        "shift_err_median": float(np.median(e)),
        "shift_err_p90": float(np.percentile(e, 90)),
        "within_tol": float(np.mean(e <= TOLERANCE_CENTS)),
        "stretch_cents_median": float(np.median(stretch_cents)),
        "length_err_max": float(np.max(length_err)),
    }


def speed(fn, xs, repeats: int = 3) -> tuple[float, float, float]:
    audio_s = len(xs) * (len(SHIFTS) + len(STRETCHES)) * 0.8
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for x in xs:
            for s in SHIFTS:
                fn(x, shift=s)
            for r in STRETCHES:
                fn(x, stretch=r)
        times.append((time.perf_counter() - t0) / audio_s)
    return float(np.median(times)), float(min(times)), float(max(times))


def main() -> int:
    import importlib.util

    missing = [m for m in ("pedalboard", "librosa", "pytsmod") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"skipped: {', '.join(missing)} not installed; allowed: pip install 'auralgen[clips,bench]'")
        return 0
    xs = notes()
    hits = notes(("snare_drum", "kick_drum", "hi_hat"), offset_s=0.0)
    for fn in METHODS.values():  # warm-up (imports, FFT plans)
        fn(xs[0], shift=100.0)
    print(f"{len(xs)} recorded notes, shifts {SHIFTS} cents, stretches {STRETCHES}; one thread")
    print(
        f"{'method':30s} {'shift err median':>17s} {'p90':>7s} {'<=3 ct':>7s} {'stretch: pitch moved':>21s} "
        f"{'len err':>8s} {'attack x':>9s} {'s per s audio (median, min-max)':>32s}"
    )
    ref = None
    for name, fn in METHODS.items():
        q = quality(fn, xs)
        med, lo, hi = speed(fn, xs)
        ref = ref or med
        print(
            f"{name:30s} {q['shift_err_median']:14.1f} ct {q['shift_err_p90']:7.1f} {100 * q['within_tol']:6.0f}% "
            f"{q['stretch_cents_median']:18.1f} ct {q['length_err_max']:8.0f} {attack_ratio(fn, hits):9.2f} "
            f"{med:11.4f} ({lo:.4f}-{hi:.4f}), {med / ref:4.2f}x pedalboard"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
