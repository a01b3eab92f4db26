"""Figures of evaluation results (matplotlib, Agg; no pyplot state).

Each function writes one PNG and returns the :class:`matplotlib.figure.Figure`, so callers
and tests can read the plotted data back (``fig.axes[0].lines``, ``.patches``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from auralgen.core.errors import ParameterError

from .psychometrics import PsychometricFit

__all__ = ["plot_adaptive_track", "plot_audiogram", "plot_psychometric", "plot_task_bars"]

_DPI = 100
_AUDIOMETRIC_HZ = (125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0, 16000.0)


def _new_figure(width_in: float, height_in: float) -> Figure:
    fig = Figure(figsize=(width_in, height_in), dpi=_DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path) -> Figure:
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ParameterError(f"path={str(path)!r} does not end in .png; allowed: a .png file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return fig


def _check_nonempty(name: str, mapping: Mapping) -> None:
    if not mapping:
        raise ParameterError(f"{name} is empty; allowed: at least one model")


def _one_axes(name: str, by_model: Mapping, width_in: float, height_in: float) -> tuple[Figure, Axes]:
    """A figure of one axes for the models of ``by_model`` (refused when it is empty)."""
    _check_nonempty(name, by_model)
    fig = _new_figure(width_in, height_in)
    return fig, fig.add_subplot(1, 1, 1)


def plot_psychometric(
    fits_by_model: Mapping[str, PsychometricFit], path, *, x_label: str = "stimulus difference"
) -> Figure:
    """Observed accuracy and fitted curve per model, on a log-x axis.

    Per model the axes get, in order: the data points (``Line2D`` with marker, x = tested
    differences, y = proportion correct), the fitted curve drawn over the model's tested
    range only (no extrapolation), and -- when the threshold is a number within that range
    (``fit.finite``) -- a vertical threshold line at ``x = threshold``. A threshold reported
    as a bound gets no line. A dashed line marks the criterion of the first fit.

    Parameters
    ----------
    fits_by_model : mapping of str to PsychometricFit
        Fits to draw (their ``x``, ``n_correct``, ``n_total`` are plotted).
    path : str or Path
        Output ``.png``.
    x_label : str
        Label of the x axis (include the unit, e.g. ``"pitch difference (cents)"``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, already saved to ``path``.
    """
    fig, ax = _one_axes("fits_by_model", fits_by_model, 6.4, 4.4)
    for i, (model, fit) in enumerate(fits_by_model.items()):
        color = f"C{i % 10}"
        grid = np.geomspace(min(fit.x), max(fit.x), 200)
        p_obs = np.asarray(fit.n_correct, dtype=float) / np.asarray(fit.n_total, dtype=float)
        ax.plot(fit.x, p_obs, "o", color=color, label=f"{model} data", gid=f"data:{model}")
        ax.plot(grid, fit.predict(grid), "-", color=color, label=f"{model} fit", gid=f"fit:{model}")
        if fit.finite:
            ax.axvline(fit.threshold, color=color, ls=":", lw=1, gid=f"threshold:{model}")
    first = next(iter(fits_by_model.values()))
    ax.axhline(first.criterion, color="0.5", ls="--", lw=0.8, gid="criterion")
    ax.axhline(first.chance, color="0.7", ls="-.", lw=0.8, gid="chance")
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel(x_label)
    ax.set_ylabel("proportion correct")
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    return _save(fig, path)


def plot_audiogram(
    thresholds_by_model: Mapping[str, Mapping[float, float | None]],
    path,
    *,
    levels_by_model: Mapping[str, Mapping[float, tuple[float, float]]] | None = None,
) -> Figure:
    """Model audiograms: threshold (dB HL) vs frequency, drawn like a clinical audiogram.

    Frequency on a log axis; dB HL increasing **downwards** (better hearing higher up).
    Per model one line through the thresholds (``gid="audiogram:<model>"``). With the tested
    level range per frequency (``levels_by_model``), two bounds are drawn as markers, not as
    thresholds: heard at the lowest tested level (the threshold is at most that; an upward
    triangle at that level, ``gid="heard_at_lowest:<model>"``) and not heard at the highest
    tested level (a downward triangle just below it, ``gid="not_heard_at_highest:<model>"``).
    Without ranges, a frequency with no threshold (``None``) gets the downward triangle at the
    bottom of the axis.

    Parameters
    ----------
    thresholds_by_model : mapping of str to {frequency_hz: threshold_db_hl or None}
        As returned per model by :func:`~auralgen.evaluation.psychometrics.audiogram_thresholds`.
    path : str or Path
        Output ``.png``.
    levels_by_model : mapping of str to {frequency_hz: (lowest, highest)}, optional
        Tested levels per frequency, dB HL (:func:`~auralgen.evaluation.psychometrics.level_ranges`).

    Returns
    -------
    matplotlib.figure.Figure
        The figure, already saved to ``path``.
    """
    fig, ax = _one_axes("thresholds_by_model", thresholds_by_model, 6.4, 4.8)
    levels_by_model = levels_by_model or {}
    finite_levels = [v for th in thresholds_by_model.values() for v in th.values() if v is not None]
    finite_levels += [v for lv in levels_by_model.values() for pair in lv.values() for v in pair]
    bottom = max([120.0] + [v + 10.0 for v in finite_levels])
    top = min([-10.0] + [v - 10.0 for v in finite_levels])
    for i, (model, th) in enumerate(thresholds_by_model.items()):
        if any(float(f) <= 0 for f in th):
            raise ParameterError(f"frequency {min(th)} Hz for {model!r} is out of range; allowed: > 0")
        heard, at_lowest, missing = _audiogram_points(th, levels_by_model.get(model, {}), bottom)
        style = {"color": f"C{i % 10}", "ls": "none"}
        if heard:
            ax.plot(*zip(*heard), "o-", color=style["color"], label=model, gid=f"audiogram:{model}")
        if at_lowest:
            ax.plot(*zip(*at_lowest), marker="^", ms=8, gid=f"heard_at_lowest:{model}", **style)
        if missing:
            ax.plot(*zip(*missing), marker="v", ms=8, gid=f"not_heard_at_highest:{model}", **style)
    _audiogram_axes(ax, [float(f) for th in thresholds_by_model.values() for f in th], bottom, top)
    fig.tight_layout()
    return _save(fig, path)


def _audiogram_axes(ax, all_freqs: list[float], bottom: float, top: float) -> None:
    """Log frequency axis with audiometric ticks, dB HL growing downwards, labels and legend."""
    ax.set_xscale("log")
    ticks = [f for f in _AUDIOMETRIC_HZ if min(all_freqs) / 1.5 <= f <= max(all_freqs) * 1.5] or sorted(set(all_freqs))
    ax.set_xticks(ticks, [f"{f / 1000:g}k" if f >= 1000 else f"{f:g}" for f in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(bottom + 2.0, top)  # inverted: larger dB HL lower on the page
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("threshold (dB HL)")
    ax.set_title("▲ heard at the lowest tested level, ▼ not heard at the highest", fontsize="small")
    ax.grid(True, which="both", color="0.9")
    if ax.get_legend_handles_labels()[0]:  # every model may lack a finite threshold
        ax.legend(fontsize="small", loc="lower left")


def _audiogram_points(th: Mapping, levels: Mapping, bottom: float) -> tuple[list, list, list]:
    """(thresholds, heard-at-lowest bounds, not-heard markers) as ``(frequency, level)`` points."""
    heard, at_lowest, missing = [], [], []
    for f in sorted(th, key=float):
        low, high = levels.get(f, (None, None))
        if th[f] is None:
            missing.append((float(f), bottom if high is None else high + 5.0))
        elif low is not None and th[f] <= low:
            at_lowest.append((float(f), float(low)))
        else:
            heard.append((float(f), float(th[f])))
    return heard, at_lowest, missing


def _task_scores(scores, metric: str) -> tuple[dict[str, float], dict[str, float]]:
    """(task -> metric, task -> chance) from a ``score()`` result or a flat mapping."""
    if isinstance(scores, Mapping) and "by_task" in scores:
        by_task = scores["by_task"]
        values = {t: s[metric] for t, s in by_task.items()}
        chance = {t: s["chance"] for t, s in by_task.items() if s.get("chance") is not None}
        return values, chance
    return {str(t): float(v) for t, v in scores.items()}, {}


def plot_task_bars(scores_by_model: Mapping[str, Mapping], path, *, metric: str = "AA") -> Figure:
    """Grouped bars: one group per task, one bar per model.

    Parameters
    ----------
    scores_by_model : mapping of str to dict
        Per model either the result of :func:`~auralgen.evaluation.metrics.score` (its
        ``by_task[task][metric]`` is plotted, and ``chance`` as a short black line) or a
        flat ``{task: value}`` mapping.
    path : str or Path
        Output ``.png``.
    metric : {"AA", "ACR"}
        Which score to draw from ``score()`` results.

    Returns
    -------
    matplotlib.figure.Figure
        Bars are added model by model, tasks in sorted order; each model's bars share the
        ``label`` of the model.
    """
    _check_nonempty("scores_by_model", scores_by_model)
    if metric not in ("AA", "ACR"):
        raise ParameterError(f"metric={metric!r} is unknown; allowed: AA, ACR")
    per_model = {m: _task_scores(s, metric) for m, s in scores_by_model.items()}
    tasks = sorted({t for values, _ in per_model.values() for t in values})
    n_models = len(per_model)
    width = 0.8 / n_models
    fig = _new_figure(
        min(16.0, max(6.4, 0.18 * len(tasks) * n_models + 2.0)), 5.2
    )  # readable up to ~15 tasks x 5 models
    ax = fig.add_subplot(1, 1, 1)
    centres = np.arange(len(tasks), dtype=float)
    chance_all: dict[str, float] = {}
    for i, (model, (values, chance)) in enumerate(per_model.items()):
        heights = [values.get(t, math.nan) for t in tasks]
        offsets = centres - 0.4 + width * (i + 0.5)
        ax.bar(offsets, heights, width=width, color=f"C{i % 10}", label=model)
        chance_all.update(chance)
    for j, t in enumerate(tasks):
        if t in chance_all:
            ax.hlines(chance_all[t], j - 0.45, j + 0.45, colors="k", lw=1.2, gid=f"chance:{t}")
    ax.set_xticks(centres)
    ax.set_xticklabels(tasks, rotation=30, ha="right")
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel(metric)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return _save(fig, path)


def plot_adaptive_track(track: Mapping, path) -> Figure:
    """One ``mode=adaptive`` track (a :func:`~auralgen.evaluation.adaptive.session.track_summary`):
    left, the level asked at each trial (filled: correct, open: wrong) with the threshold and its
    95 % interval (or the bound past the hardest level); right, the posterior of the threshold.
    Log axis for a log domain; the published human threshold, when known, as a dotted line.

    Parameters
    ----------
    track : Mapping
        The track summary: ``levels`` and ``correct`` per trial, ``domain`` (``unit``, ``scale``),
        ``threshold`` and ``ci95`` or ``bound``, optionally ``human_jnd`` and ``posterior_threshold``.
    path : str or Path
        Output ``.png``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, already saved to ``path``.
    """
    levels, correct = list(track.get("levels") or []), list(track.get("correct") or [])
    if not levels:
        raise ParameterError(f"track {track.get('track')!r} has no trials; allowed: a track with at least one trial")
    dom = track.get("domain") or {}
    unit, log = dom.get("unit", ""), dom.get("scale") == "log"
    fig = _new_figure(9.0, 3.6)
    ax, bx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    trials = np.arange(1, len(levels) + 1)
    ok = np.asarray(correct, dtype=bool)
    ax.plot(trials, levels, color="0.6", lw=0.8)
    ax.plot(trials[ok], np.asarray(levels)[ok], "o", color="C0", label="correct")
    ax.plot(trials[~ok], np.asarray(levels)[~ok], "o", mfc="none", color="C3", label="wrong")
    if track.get("threshold") is not None:
        lo, hi = track["ci95"]
        ax.axhspan(lo, hi, color="C0", alpha=0.12, label="95 % interval")
        ax.axhline(track["threshold"], color="C0", lw=1.2, label=f"threshold {track['threshold']:.3g} {unit}")
    elif track.get("bound") is not None:
        ax.axhline(
            track["bound"],
            color="C3",
            ls="--",
            lw=1.0,
            label=f"{track.get('bound_side', '<')} {track['bound']:g} {unit}",
        )
    if track.get("human_jnd") is not None:
        ax.axhline(track["human_jnd"], color="k", ls=":", lw=1.0, label=f"human {track['human_jnd']:g} {unit}")
    ax.set(xlabel="trial", ylabel=unit, title=str(track.get("track", "")), yscale="log" if log else "linear")
    ax.legend(fontsize=7, loc="best")
    post = track.get("posterior_threshold") or {}
    if post.get("value"):
        bx.plot(post["value"], post["mass"], color="C0")
        bx.set(xscale="log" if log else "linear")
    bx.set(xlabel=f"threshold ({unit})", ylabel="posterior mass", title="posterior of the threshold")
    fig.tight_layout()
    return _save(fig, path)
