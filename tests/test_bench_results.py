"""The benches write their figures to a results file the docs render."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bench import bench_generation, bench_ray, bench_rooms, bench_spatial, bench_tasks, results

ROOT = Path(__file__).resolve().parents[1]
FIGURE_KEYS = {"name", "unit", "median", "min", "max", "n", "target", "note"}


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks_bench", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _well_formed(path: Path, bench: str, command: str) -> dict:
    """The record at ``path``: measured, naming its command, every figure complete; the docs render it."""
    rec = json.loads(path.read_text())
    assert (rec["bench"], rec["command"], rec["source"]) == (bench, command, "measured")
    assert rec["machine"]["cores"] >= 1 and rec["versions"]["auralgen"] and rec["figures"]
    for f in rec["figures"]:
        assert set(f) == FIGURE_KEYS and f["min"] <= f["median"] <= f["max"] and f["median"] > 0, f
    text = _hooks().render_results(path.parent)
    assert f"Measured by `{command}`" in text and f"### `{bench}`" in text
    return rec


def _room_row(mode: str, rt60_s: float) -> dict:
    acc = {"length": 100, "rir_err": 1e-5, "rt60_err_pct": 2.0, "drr_err_db": -0.5, "early_err_db": 0.25}
    return {"rt60_s": rt60_s, "mode": mode, "pra_s": [1.0, 3.0], "fast_s": [0.05, 0.1], "fast": acc, "pra": acc}


def test_rooms_figures_are_the_pair_ratios_with_the_goal_that_applies():
    cores = [{"rt60_s": 0.6, "threads": 2, "pra_exact_s": 0.8, "exact": 0.02, "hybrid": 0.01}]
    figs = bench_rooms.figures([_room_row("exact", 0.6), _room_row("hybrid", 0.6), _room_row("hybrid", 1.0)], cores)
    exact, hybrid_06, hybrid_10, all_cores = figs
    assert (exact["min"], exact["max"], exact["median"], exact["n"]) == (20.0, 30.0, 25.0, 2)
    assert (exact["target"], hybrid_06["target"], hybrid_10["target"]) == (">= 20x", "", ">= 100x")
    assert "RIR error 1.0e-05" in exact["note"] and "RT60 +2.0 %" in hybrid_10["note"]
    assert all_cores["median"] == pytest.approx(40.0) and "2 threads" in all_cores["name"]


def test_spatial_figures_leave_refused_cells_out_and_give_the_scaling_ratios():
    cells = {("azimuth_relative", "binaural"): [20.0, 24.0, 22.0], ("distance_relative", "foa"): "refused (no cue)"}
    rates = {
        "1": {"whole": [10.0, 10.0], "marginal": [10.0, 12.0]},
        "2": {"whole": [18.0, 16.0], "marginal": [19.0, 24.0]},
        "ceiling": {"whole": [20.0, 19.0]},
    }
    figs = {f["name"]: f for f in bench_spatial.figures(cells, rates)}
    assert figs["azimuth_relative, binaural, items/s on one core"]["median"] == 22.0
    assert not any(name.startswith("distance_relative") for name in figs)
    ratio = figs["generate.py task=azimuth_relative, 2 workers / 1, marginal rate"]
    assert (ratio["min"], ratio["max"], ratio["target"]) == (1.9, 2.0, ">= 1.8x")
    assert figs["generate.py task=azimuth_relative, 2 one-worker jobs at once / 1 alone (the machine's ceiling)"][
        "median"
    ] == pytest.approx(1.95)
    assert len(bench_spatial.figures(cells, None)) == 1


def test_ray_figures_are_the_rates_and_the_pool_over_ray_ratios():
    rates = {
        "pool": ([40.0, 44.0, 42.0], [50.0, 48.0, 52.0]),
        "ray1": ([30.0, 35.0, 32.0], [47.0, 50.0, 49.0]),
        "ray2": ([28.0, 30.0, 29.0], [45.0, 46.0, 44.0]),
    }
    figs = {f["name"]: f for f in bench_ray.figures(rates, 120)}
    assert figs["ray, 1 node x 2 CPUs: marginal rate, items/s"]["median"] == 49.0
    whole = figs["ray, 1 node x 2 CPUs: pool / Ray items/s, whole job (1 + overhead)"]
    assert whole["median"] == pytest.approx(42.0 / 32.0) and whole["target"] == "<= 1.10x"
    # start-up beyond the pool's: N/whole - N/marginal of Ray minus the same of the pool
    fixed = figs["ray, 2 nodes x 1 CPU: start-up per job beyond the pool's"]["median"]
    assert fixed == pytest.approx(120 / 29.0 - 120 / 45.0 - (120 / 42.0 - 120 / 50.0))


def test_task_figures_carry_the_target_unless_exempt():
    rows = [
        {"task": "pitch_relative", "rates": [200.0, 220.0, 210.0], "exempt": False},
        {"task": "azimuth_relative", "rates": [28.0, 30.0, 29.0], "exempt": True},
    ]
    pitch, azimuth = bench_tasks.figures(rows)
    assert (pitch["median"], pitch["target"], pitch["note"]) == (210.0, ">= 100", "")
    assert azimuth["target"] == "" and "exempt" in azimuth["note"]


def test_the_docs_render_one_bench_and_the_million_clip_projection(tmp_path):
    rows = [{"task": "azimuth_absolute", "rates": [50.0], "exempt": True}]
    results.write(
        "bench_tasks", "python bench/bench_tasks.py --x", bench_tasks.figures(rows), out=tmp_path / "bench_tasks.json"
    )
    results.write(
        "bench_other", "python bench/other.py", [results.figure("y", 1.0, "x")], out=tmp_path / "bench_other.json"
    )
    hooks = _hooks()
    one = hooks.render_results(tmp_path, names=["bench_tasks"])
    assert "### `bench_tasks`" in one and "bench_other" not in one
    table = hooks.render_projection(tmp_path)
    # 1e6 clips at 50 items/s: 20,000 s on one core, 10,000 s (2.8 h) on 2, 1,250 s (21 min) on 16
    assert (
        "| 1 x 2 | 2.8 h |" in table and "| 1 x 16 | 21 min |" in table and "python bench/bench_tasks.py --x" in table
    )


def test_generation_row_prints_the_median_and_keeps_every_run():
    row = bench_generation._row("x", [290.0, 330.0, 300.0], 300.0, {"name": "x"})
    assert (row["value"], row["ratio"], row["figure"]) == (300.0, 1.0, {"name": "x"})


@pytest.mark.long
def test_a_short_run_of_each_bench_writes_a_measured_record(tmp_path, monkeypatch):
    monkeypatch.setenv("PRA_NUM_THREADS", "1")
    runs = {
        "bench_generation": (
            bench_generation,
            "--tasks pitch_relative --items 3 --runs 1 --parts tone",
            [
                "pitch_relative, items/s on one core (validation off)",
                "pitch_relative, items/s on one core (validation on)",
            ],
        ),
        "bench_rooms": (bench_rooms, "--reps 1 --rt60 0.3 --no-cores", None),
        "bench_tasks": (bench_tasks, "--tasks pitch_relative --runs 1 --n 3", ["pitch_relative: items/s on one core"]),
        "bench_spatial": (
            bench_spatial,
            "--no-scaling --tasks azimuth_relative --layouts binaural --items 2 --runs 1",
            ["azimuth_relative, binaural, items/s on one core"],
        ),
    }
    for bench, (module, args, names) in runs.items():
        out = tmp_path / bench / f"{bench}.json"
        argv = [*args.split(), "--results", str(out)]
        assert module.main(argv) == 0
        rec = _well_formed(out, bench, " ".join([f"python bench/{bench}.py", *argv]))
        if names:
            assert [f["name"] for f in rec["figures"]] == names
        else:
            assert [f["unit"] for f in rec["figures"]] == ["x", "x"]
