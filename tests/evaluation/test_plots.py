"""Tests of the evaluation figures: valid PNGs whose plotted data match the input."""

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.evaluation.metrics import score
from auralgen.evaluation.plots import plot_audiogram, plot_psychometric, plot_task_bars
from auralgen.evaluation.psychometrics import fit_psychometric

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(path):
    data = path.read_bytes()
    assert len(data) > 1000 and data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"


def lines_by_gid(ax):
    return {line.get_gid(): line for line in ax.lines if line.get_gid()}


@pytest.fixture(scope="module")
def fits():
    x = np.array([5.0, 10.0, 20.0, 40.0, 80.0])
    n = np.full(5, 40)
    return {
        "model_a": fit_psychometric(x, [13, 20, 31, 38, 39], n, chance=0.25, n_boot=0),
        "model_b": fit_psychometric(x, [10, 11, 9, 12, 10], n, chance=0.25, n_boot=0),  # at chance
    }


def test_plot_psychometric(tmp_path, fits):
    path = tmp_path / "psy.png"
    fig = plot_psychometric(fits, path, x_label="pitch difference (cents)")
    assert_png(path)
    ax = fig.axes[0]
    lines = lines_by_gid(ax)
    for model, fit in fits.items():
        data = lines[f"data:{model}"]
        np.testing.assert_allclose(data.get_xdata(), fit.x)
        np.testing.assert_allclose(data.get_ydata(), np.asarray(fit.n_correct) / np.asarray(fit.n_total))
        curve = lines[f"fit:{model}"]
        np.testing.assert_allclose(curve.get_ydata(), fit.predict(curve.get_xdata()))
        assert (curve.get_xdata().min(), curve.get_xdata().max()) == pytest.approx((min(fit.x), max(fit.x)))
    assert fits["model_a"].finite and not fits["model_b"].finite
    assert lines["threshold:model_a"].get_xdata()[0] == pytest.approx(fits["model_a"].threshold)
    assert "threshold:model_b" not in lines
    assert lines["criterion"].get_ydata()[0] == 0.75
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "pitch difference (cents)"


def test_plot_audiogram(tmp_path):
    thresholds = {
        "model_a": {250.0: 10.0, 1000.0: 0.0, 4000.0: 30.0, 8000.0: None},
        "model_b": {250.0: 40.0, 1000.0: None, 4000.0: 60.0},
    }
    path = tmp_path / "sub" / "audiogram.png"
    fig = plot_audiogram(thresholds, path)
    assert_png(path)
    ax = fig.axes[0]
    lines = lines_by_gid(ax)
    np.testing.assert_allclose(lines["audiogram:model_a"].get_xdata(), [250, 1000, 4000])
    np.testing.assert_allclose(lines["audiogram:model_a"].get_ydata(), [10, 0, 30])
    np.testing.assert_allclose(lines["audiogram:model_b"].get_ydata(), [40, 60])
    np.testing.assert_allclose(lines["not_heard_at_highest:model_a"].get_xdata(), [8000])
    np.testing.assert_allclose(lines["not_heard_at_highest:model_b"].get_xdata(), [1000])
    assert ax.get_xscale() == "log"
    low, high = ax.get_ylim()
    assert low > high  # dB HL grows downwards, like a clinical audiogram
    assert lines["not_heard_at_highest:model_a"].get_ydata()[0] >= 60


def test_audiogram_bounds_are_markers_not_thresholds(tmp_path):
    thresholds = {"m": {250.0: -10.0, 1000.0: 20.0, 4000.0: None}}
    levels = {"m": {250.0: (-10.0, 80.0), 1000.0: (-10.0, 80.0), 4000.0: (0.0, 70.0)}}
    fig = plot_audiogram(thresholds, tmp_path / "a.png", levels_by_model=levels)
    lines = lines_by_gid(fig.axes[0])
    np.testing.assert_allclose(lines["audiogram:m"].get_xydata(), [[1000, 20]])  # only the real threshold
    np.testing.assert_allclose(lines["heard_at_lowest:m"].get_xydata(), [[250, -10]])
    np.testing.assert_allclose(lines["not_heard_at_highest:m"].get_xydata(), [[4000, 75]])  # just below 70 dB HL
    assert lines["heard_at_lowest:m"].get_marker() == "^" and lines["not_heard_at_highest:m"].get_marker() == "v"


def test_plot_task_bars_from_score_results(tmp_path):
    def records(p_right):
        out = []
        for task, n_opt in (("pitch", 4), ("loudness", 2)):
            for i in range(10):
                for r in range(2):
                    out.append(
                        dict(
                            id=f"{task}{i}",
                            task=task,
                            rotation=r,
                            correct=(i + r) / 20 < p_right,
                            status="ok",
                            n_options=n_opt,
                        )
                    )
        return out

    scores = {"model_a": score(records(0.8)), "model_b": score(records(0.3))}
    path = tmp_path / "bars.png"
    fig = plot_task_bars(scores, path)
    assert_png(path)
    ax = fig.axes[0]
    heights = {}
    for container in ax.containers:
        heights[container.get_label()] = [bar.get_height() for bar in container]
    tasks = [t.get_text() for t in ax.get_xticklabels()]
    assert tasks == ["loudness", "pitch"]
    for model, result in scores.items():
        assert heights[model] == pytest.approx([result["by_task"][t]["AA"] for t in tasks])
    chance = {c.get_gid(): c.get_segments()[0][0][1] for c in ax.collections if c.get_gid()}
    assert chance == {"chance:loudness": 0.5, "chance:pitch": 0.25}


def test_plot_task_bars_from_flat_mapping_and_acr(tmp_path):
    fig = plot_task_bars({"m": {"b": 0.4, "a": 0.9}}, tmp_path / "flat.png", metric="ACR")
    assert [bar.get_height() for bar in fig.axes[0].containers[0]] == [0.9, 0.4]
    assert fig.axes[0].get_ylabel() == "ACR"


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda p: plot_task_bars({}, p / "x.png"), "scores_by_model is empty"),
        (lambda p: plot_task_bars({"m": {"a": 1}}, p / "x.png", metric="F1"), "metric='F1'"),
        (lambda p: plot_audiogram({"m": {1000.0: 0.0}}, p / "x.pdf"), "does not end in .png"),
        (lambda p: plot_audiogram({"m": {0.0: 0.0}}, p / "x.png"), "frequency 0.0 Hz"),
        (lambda p: plot_psychometric({}, p / "x.png"), "fits_by_model is empty"),
    ],
)
def test_bad_input(tmp_path, call, match):
    with pytest.raises(ParameterError, match=match):
        call(tmp_path)
