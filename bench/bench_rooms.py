"""Room acoustics, like for like: our numba engine against pyroomacoustics, exact vs exact and
hybrid vs hybrid, with the accuracy of each beside its speed.

Same room (6 x 5 x 3 m), source, four microphones (a 10 cm tetrahedron near the centre) and sample rate
(16 kHz) for both libraries; RT60 0.3 / 0.6 / 1.0 / 1.5 s (Sabine absorption, no air absorption).
Single-threaded: ``PRA_NUM_THREADS=1`` and ``numba.set_num_threads(1)``; every engine warmed up once
before timing; glibc's allocator tuned as in every generation process (``tune_allocator``), for both.
Each cell is the median and min-max wall time of ``--reps`` runs (default 5; hybrid cells, a tenth of the
exact cells' time, run three times as many), the two engines run alternately, and the ratio column is the
median and min-max over those pairs. A goal is met when the median pair ratio reaches it; the spread is
printed beside it (single pairs on a shared machine swing by a quarter either way).

- exact: ``fast``/``exact`` vs ``pra``/``exact`` (pyroomacoustics' C++ image-source model); accuracy =
  max |RIR difference| over the RIR's peak.
- hybrid: ``fast``/``hybrid`` (images up to the mixing time, then an energy-matched noise tail) vs
  ``pra``/``hybrid`` (pyroomacoustics' images to order 3 + its ray tracer, ``set_ray_tracing()``);
  accuracy of each against pra's exact RIR: RT60 error (%, Schroeder T20), DRR error (dB) and the
  early-reflection energy error (dB, 2.5-50 ms after the direct sound); and the length of each response
  (samples): each ends where its own model has decayed by 70 dB (pra: rays dropped at 1e-7 of their energy).

The second table repeats the fast engine with all of numba's threads (pyroomacoustics' exact mode on
the same cores in a child process with ``PRA_NUM_THREADS`` unset) to show the scaling.

Every run writes its figures to ``bench/results/bench_rooms.json`` (``--results PATH``: elsewhere), the file
the docs' Benchmarks page renders; the file names the command.

    python bench/bench_rooms.py [--reps 5] [--rt60 0.3 0.6 1.0 1.5] [--no-cores] [--results PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("PRA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from auralgen.generation.run import tune_allocator  # noqa: E402
from auralgen.measure.room import drr_db, rt60_schroeder  # noqa: E402
from auralgen.rooms.simulate import compute_rir  # noqa: E402
from auralgen.rooms.spec import RoomSpec  # noqa: E402
from bench import results  # noqa: E402

FS = 16000
DIMS = (6.0, 5.0, 3.0)
SOURCE = (1.5, 3.6, 1.3)
MICS = np.array([3.0, 2.5, 1.5]) + 0.05 * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)
EARLY_S = (0.0025, 0.05)  # early reflections: this span after the direct sound's peak
RESULT_FILE = "bench/results/bench_rooms.json"
GOALS = {"exact": 20.0, "hybrid": 100.0}  # >= 20x at RT60 >= 0.6 s (exact), >= 100x at 1.0 s (hybrid)


def _times(fn, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _paired_times(fn_a, fn_b, reps: int) -> tuple[list[float], list[float]]:
    """Wall times of ``fn_a`` and ``fn_b`` run alternately, ``reps`` pairs: a pair sees the same machine
    state, so the ratio of a pair does not carry the drift between the two engines' runs."""
    t_a, t_b = [], []
    for _ in range(reps):
        t_a += _times(fn_a, 1)
        t_b += _times(fn_b, 1)
    return t_a, t_b


def _rir(room, backend: str, mode: str) -> np.ndarray:
    rng = np.random.default_rng(0) if mode == "hybrid" else None
    return compute_rir(room, SOURCE, MICS, sample_rate=FS, backend=backend, mode=mode, rng=rng)


def early_db(rir: np.ndarray) -> float:
    """Energy (dB) of the early reflections: :data:`EARLY_S` after the direct sound's peak, mic 0."""
    h = rir[0]
    peak = int(np.argmax(np.abs(h)))
    a, b = peak + int(EARLY_S[0] * FS), peak + int(EARLY_S[1] * FS)
    return 10 * np.log10(float(np.sum(h[a:b] ** 2)) + 1e-30)


def accuracy(rir: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """Errors of ``rir`` against the reference ``ref`` (pra exact), mic 0 for the room measures."""
    n = min(rir.shape[1], ref.shape[1])
    rt, rt_ref = rt60_schroeder(rir[0], FS), rt60_schroeder(ref[0], FS)
    return {
        "length": int(rir.shape[1]),
        "rir_err": float(np.max(np.abs(rir[:, :n] - ref[:, :n])) / np.max(np.abs(ref))),
        "rt60_err_pct": 100.0 * (rt - rt_ref) / rt_ref,
        "drr_err_db": drr_db(rir[0], FS) - drr_db(ref[0], FS),
        "early_err_db": early_db(rir) - early_db(ref),
    }


def run(rt60s=(0.3, 0.6, 1.0, 1.5), *, reps: int = 5) -> list[dict]:
    """One row per RT60 and comparison (exact, hybrid): times of both engines and the accuracy."""
    import numba

    numba.set_num_threads(1)
    tune_allocator()  # as every generation process does (generation/run.py::_init_worker); both engines run here
    warm = RoomSpec(DIMS, rt60_s=0.2)
    for backend in ("fast", "pra"):
        for mode in ("exact", "hybrid"):
            _rir(warm, backend, mode)
    rows = []
    for rt in rt60s:
        room = RoomSpec(DIMS, rt60_s=rt)
        ref = _rir(room, "pra", "exact")
        for mode in ("exact", "hybrid"):
            n = reps if mode == "exact" else 3 * reps
            t_pra, t_fast = _paired_times(
                lambda room=room, mode=mode: _rir(room, "pra", mode),
                lambda room=room, mode=mode: _rir(room, "fast", mode),
                n,
            )
            ratios = sorted(p / f for p, f in zip(t_pra, t_fast))  # pairs run back to back
            rows.append(
                {
                    "rt60_s": rt,
                    "mode": mode,
                    "pra_s": t_pra,
                    "fast_s": t_fast,
                    "ratio_med": float(np.median(ratios)),
                    "ratio_lo": ratios[0],
                    "ratio_hi": ratios[-1],
                    "fast": accuracy(_rir(room, "fast", mode), ref),
                    "pra": accuracy(_rir(room, "pra", mode), ref),
                }
            )
    return rows


def cores_row(rt: float, reps: int) -> dict:
    """Fast exact/hybrid with numba's default threads; pra exact in a child with ``PRA_NUM_THREADS`` unset."""
    import numba

    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    room = RoomSpec(DIMS, rt60_s=rt)
    _rir(room, "fast", "exact")
    fast = {m: float(np.median(_times(lambda m=m: _rir(room, "fast", m), reps))) for m in ("exact", "hybrid")}
    env = {k: v for k, v in os.environ.items() if k != "PRA_NUM_THREADS"}
    code = (
        f"import sys, json; sys.path.insert(0, {os.getcwd()!r}); import bench.bench_rooms as b; "
        f"from auralgen.rooms.spec import RoomSpec; r = RoomSpec(b.DIMS, rt60_s={rt}); b._rir(r, 'pra', 'exact'); "
        "import numpy as np; print(json.dumps(float(np.median(b._times(lambda: b._rir(r, 'pra', 'exact'), "
        f"{reps})))))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900, check=True)
    return {"rt60_s": rt, "threads": numba.config.NUMBA_NUM_THREADS, "pra_exact_s": json.loads(out.stdout), **fast}


def _cell(ts: list[float]) -> str:
    return f"{np.median(ts):8.4f} [{min(ts):.4f}-{max(ts):.4f}]"


def report(rows: list[dict]) -> list[str]:
    lines = [
        f"{'RT60':>4} {'mode':6} {'pra s median [min-max]':>27} {'fast s median [min-max]':>27} "
        f"{'ratio med [min-max]':>22} {'goal':>5}  accuracy vs pra exact (ours | pra's)"
    ]
    for r in rows:
        goal = _goal(r)
        met = "" if goal is None else ("met" if r["ratio_med"] >= goal else "MISS")
        f, p = r["fast"], r["pra"]
        acc = (
            f"RIR err {f['rir_err']:.1e} of peak"
            if r["mode"] == "exact"
            else f"RT60 {f['rt60_err_pct']:+.1f} % | {p['rt60_err_pct']:+.1f} %, DRR {f['drr_err_db']:+.2f} | "
            f"{p['drr_err_db']:+.2f} dB, early {f['early_err_db']:+.2f} | {p['early_err_db']:+.2f} dB, "
            f"length {f['length']} | {p['length']}"
        )
        lines.append(
            f"{r['rt60_s']:4.1f} {r['mode']:6} {_cell(r['pra_s']):>27} {_cell(r['fast_s']):>27} "
            f"{r['ratio_med']:7.1f}x [{r['ratio_lo']:.1f}-{r['ratio_hi']:.1f}] {met:>5}  {acc}"
        )
    return lines


def _goal(row: dict) -> float | None:
    """The speed-up goal a row is judged on: exact at RT60 >= 0.6 s, hybrid at 1.0 s; ``None`` elsewhere."""
    if row["mode"] == "exact" and row["rt60_s"] >= 0.6 or row["mode"] == "hybrid" and row["rt60_s"] == 1.0:
        return GOALS[row["mode"]]
    return None


def figures(rows: list[dict], cores: list[dict] = ()) -> list[dict]:
    """The results file's figures: per RT60 and mode the pair ratios pra / fast (the accuracy in the note),
    and per all-cores row pyroomacoustics exact over fast exact."""
    out = []
    for r in rows:
        goal, f, p = _goal(r), r["fast"], r["pra"]
        note = (
            f"RIR error {f['rir_err']:.1e} of the peak against pyroomacoustics exact"
            if r["mode"] == "exact"
            else f"against pyroomacoustics exact: RT60 {f['rt60_err_pct']:+.1f} % "
            f"(pra hybrid {p['rt60_err_pct']:+.1f} %), "
            f"DRR {f['drr_err_db']:+.2f} dB ({p['drr_err_db']:+.2f}), early {f['early_err_db']:+.2f} dB "
            f"({p['early_err_db']:+.2f})"
        )
        out.append(
            results.figure(
                f"RIR {DIMS[0]:g}x{DIMS[1]:g}x{DIMS[2]:g} m, {FS // 1000} kHz, 4 mics, RT60 {r['rt60_s']:g} s: fast "
                f"{r['mode']} vs pyroomacoustics {r['mode']}, speed-up (one thread)",
                [a / b for a, b in zip(r["pra_s"], r["fast_s"])],
                "x",
                target="" if goal is None else f">= {goal:g}x",
                note=note,
            )
        )
    for c in cores:
        out.append(
            results.figure(
                f"RIR, RT60 {c['rt60_s']:g} s, all cores ({c['threads']} threads): pyroomacoustics exact / fast exact",
                c["pra_exact_s"] / c["exact"],
                "x",
            )
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rt60", type=float, nargs="+", default=[0.3, 0.6, 1.0, 1.5])
    ap.add_argument("--no-cores", action="store_true", help="skip the all-cores table")
    ap.add_argument("--results", type=Path, default=None, help=f"where the figures go (default {RESULT_FILE})")
    args = ap.parse_args(argv)
    print(
        f"single thread (PRA_NUM_THREADS=1, numba threads 1), {args.reps} runs per exact cell, {3 * args.reps} per "
        f"hybrid cell, {FS} Hz, 4 mics, "
        f"room {DIMS} m"
    )
    rows = run(tuple(args.rt60), reps=args.reps)
    for line in report(rows):
        print(line, flush=True)
    cores = []
    if not args.no_cores:
        print(f"\nall cores ({os.cpu_count()}): median of {args.reps} runs")
        print(
            f"{'RT60':>4} {'threads':>7} {'pra exact s':>12} {'fast exact s':>13} {'fast hybrid s':>14} {'pra/fast':>9}"
        )
        for rt in args.rt60:
            c = cores_row(rt, args.reps)
            cores.append(c)
            print(
                f"{rt:4.1f} {c['threads']:7d} {c['pra_exact_s']:12.4f} {c['exact']:13.4f} {c['hybrid']:14.4f} "
                f"{c['pra_exact_s'] / c['exact']:8.1f}x",
                flush=True,
            )
    command = " ".join(["python bench/bench_rooms.py", *(sys.argv[1:] if argv is None else argv)])
    results.write("bench_rooms", command, figures(rows, cores), out=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
