"""The binned-absolute family: one sound whose value sits at an exact margin from a bin edge.

The options are value ranges (bins) delimited by a config field of inner edges; an item's bin is
drawn uniformly, then one of its inner edges, and the value lies exactly the level's margin
(percent, in ratio) inside that edge. The params record ``bin``, ``edge_side`` and
``margin_percent``; ``measure`` reads the value back and checks it lies in the labelled bin at the
recipe's margin.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from auralgen.core.qa import QA
from auralgen.tasks._compare import Drawn, parse_drawn, within
from auralgen.tasks.base import AudioConfig, Task, TaskConfig, require


class BinnedAbsoluteTask(Task):
    """Base of the absolute tasks whose options are bins of one value (see the module docstring).

    A subclass names its config field of inner edges (``bins_field``), the distributions it draws
    from (``drawn``) and its option texts (:meth:`labels`, one per bin).
    """

    sub_category = "absolute_perception"
    regime = "absolute"
    level_unit = "percent"
    bins_field: ClassVar[str]  # the config field of the inner bin edges, increasing
    drawn: ClassVar[dict[str, Drawn]] = {}

    def __init__(self, cfg: TaskConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.edges = self.bin_edges()
        parse_drawn(self, self.drawn)

    def bin_edges(self) -> tuple[float, ...]:
        """The bins' edges, outer ends included (0 and infinity unless a task bounds its range).

        Returns
        -------
        tuple of float
            ``n_choices + 1`` increasing edges, in the binned quantity's unit.
        """
        return (0.0, *getattr(self.cfg, self.bins_field), math.inf)

    @property
    def n_choices(self) -> int:  # type: ignore[override]
        return len(self.edges) - 1

    def labels(self) -> list[str]:
        """One option text per bin, in bin order (every subclass implements it).

        Returns
        -------
        list of str
            ``n_choices`` texts, lowest bin first.
        """
        raise NotImplementedError

    def draw_bin(self, rng: np.random.Generator, margin: float) -> tuple[int, str, float]:
        """``(bin, side, value)`` at ``margin`` percent inside a drawn edge (:func:`draw_at_margin`).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's random stream (two draws).
        margin : float
            The level: margin from the edge, percent (in ratio), >= 0 (ParameterError otherwise).

        Returns
        -------
        tuple of (int, str, float)
            Bin index, ``"low"`` or ``"high"`` (the edge it sits by) and the value, in the bins' unit.
        """
        require(margin >= 0, f"{self.name} level {margin!r} is negative; allowed: percent >= 0")
        return draw_at_margin(rng, self.edges, margin)

    def bin_record(self, k: int, side: str, value: float) -> dict[str, Any]:
        """The params fields naming the item's bin, the edge it sits by and its margin from it.

        Parameters
        ----------
        k : int
            Bin index.
        side : str
            ``"low"`` or ``"high"``.
        value : float
            The item's value, in the bins' unit.

        Returns
        -------
        dict of str to Any
            ``bin``, ``edge_side`` and ``margin_percent`` (percent from the nearest inner edge).
        """
        return {"bin": k, "edge_side": side, "margin_percent": round(margin_percent(value, self.edges), 9)}

    def in_bin(self, value: float, k: int, tolerance: float = 0.0) -> bool:
        """Whether ``value`` lies in bin ``k``, its edges widened by ``tolerance``.

        Parameters
        ----------
        value : float
            A value, in the bins' unit.
        k : int
            Bin index.
        tolerance : float, optional
            Widening of each edge, same unit.

        Returns
        -------
        bool
            True inside the (widened) bin, edges included.
        """
        return self.edges[k] - tolerance <= value <= self.edges[k + 1] + tolerance

    def margin_check(self, measured: float, expected: float, tolerance: float) -> dict[str, Any]:
        """The measured value's margin against the recipe's (:func:`margin_check`).

        Parameters
        ----------
        measured : float
            The value measured in the audio, in the bins' unit.
        expected : float
            The recipe's value, same unit.
        tolerance : float
            Allowed error of the value, same unit.

        Returns
        -------
        dict of str to Any
            A :func:`within` record of ``margin_percent`` (percent).
        """
        return margin_check(measured, expected, self.edges, tolerance)

    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        labels = self.labels()
        return self.make_qa(labels[params["bin"]], labels, rng, slot=slot)

    def eval_fields(self, params: dict[str, Any]) -> dict[str, float | str]:
        """The value's margin from the nearest bin edge (percent, larger = easier)."""
        return {"difference": float(params["margin_percent"]), "difference_unit": "percent"}


def edge_text(value: float, unit: str) -> str:
    """A bin edge as an option text states it, e.g. ``0.5 s`` or ``75 BPM``.

    Parameters
    ----------
    value : float
        The edge.
    unit : str
        Its unit as shown.

    Returns
    -------
    str
        ``value`` in ``%g`` format, a space, ``unit``.

    Examples
    --------
    >>> edge_text(0.50, "s")
    '0.5 s'
    """
    return f"{value:g} {unit}"


def bin_names(names: tuple[str, ...], what: str, bins) -> tuple[str, ...]:
    """``names`` when ``bins`` holds one inner edge fewer, else ``<what> range 1``, ``<what> range 2``, ...

    Parameters
    ----------
    names : tuple of str
        The default bin names.
    what : str
        The quantity, for generic names.
    bins : sequence of float
        The inner edges.

    Returns
    -------
    tuple of str
        One name per bin, ``len(bins) + 1`` of them.
    """
    return names if len(bins) == len(names) - 1 else tuple(f"{what} range {k + 1}" for k in range(len(bins) + 1))


def range_labels(names: tuple[str, ...], bins, unit: str, *, unit_twice: bool = True) -> list[str]:
    """One option text per bin: its name and its range, each edge in ``unit`` (:func:`edge_text`); an inner
    bin's lower edge without it unless ``unit_twice``.

    Parameters
    ----------
    names : tuple of str
        One name per bin, ``len(bins) + 1`` of them.
    bins : sequence of float
        The inner edges, increasing, in ``unit``.
    unit : str
        The edges' unit as shown.
    unit_twice : bool, optional
        Name the unit after both edges of an inner bin.

    Returns
    -------
    list of str
        E.g. ``Short (below 0.5 s)``, ``Medium (0.5 s to 1 s)``, ``Long (above 1 s)``.
    """
    labels = [f"{names[0]} (below {edge_text(bins[0], unit)})"]
    labels += [
        f"{name} ({edge_text(lo, unit) if unit_twice else f'{lo:g}'} to {edge_text(hi, unit)})"
        for name, lo, hi in zip(names[1:], bins, bins[1:])
    ]
    return labels + [f"{names[-1]} (above {edge_text(bins[-1], unit)})"]


def between_labels(names: tuple[str, ...], quantity: str, low: str, high: str) -> list[str]:
    """The option texts of three classes split at the edges ``low`` and ``high`` (as shown) of ``quantity``.

    Parameters
    ----------
    names : tuple of str
        The three class names, lowest first.
    quantity : str
        What the edges bound, e.g. ``rise time``.
    low, high : str
        The two edges as texts, with their unit.

    Returns
    -------
    list of str
        Three texts.
    """
    return [
        f"{names[0]} ({quantity} below {low})",
        f"{names[1]} ({quantity} between {low} and {high})",
        f"{names[2]} ({quantity} above {high})",
    ]


def check_margins(key: str, levels) -> float:
    """Every level is a margin >= 0 percent; returns the largest as a ratio, ``1 + max / 100``.

    Parameters
    ----------
    key, levels
        As in :func:`check_three_bins`.

    Returns
    -------
    float
        The largest margin as a ratio (>= 1).
    """
    require(all(v >= 0 for v in levels), f"{key}.levels={list(levels)!r} has a negative margin; allowed: percent >= 0")
    return 1 + max(levels) / 100.0


def check_three_bins(key: str, name: str, bins, levels, what: str, classes: tuple[str, ...], unit: str) -> float:
    """Two increasing inner edges ``bins`` (config field ``name``) of three classes named ``classes``, and room in
    the middle class for a value at the largest margin; returns that margin as a ratio (:func:`check_margins`).

    Parameters
    ----------
    key : str
        The task's config path, for messages.
    name : str
        The config field of the edges.
    bins : sequence of float
        The two inner edges, in ``unit``.
    levels : sequence of float
        The margins, percent.
    what : str
        What the edges are, for the message (e.g. ``rise times``).
    classes : tuple of str
        The three class names, lowest first.
    unit : str
        The edges' unit, for messages.

    Returns
    -------
    float
        The largest margin as a ratio (>= 1).
    """
    low, middle, high = (c.lower() for c in classes)
    require(
        len(bins) == 2 and 0 < bins[0] < bins[1],
        f"{key}.{name}={list(bins)!r} is not two increasing {what}; allowed: [{low}/{middle}, {middle}/{high}] "
        f"{unit}, 0 < first < second",
    )
    m = check_margins(key, levels)
    require(
        bins[0] * m < bins[1] / m,
        f"{key}.levels={list(levels)!r}: a {max(levels)} % margin leaves no room in the {middle} range "
        f"{list(bins)} {unit}; allowed: a smaller margin or wider bins",
    )
    return m


def check_room(key: str, levels, bins, unit: str) -> None:
    """Every inner bin ``[lo, hi]`` holds a value at the largest margin above ``lo`` and below ``hi``.

    Parameters
    ----------
    key, levels, bins, unit
        As in :func:`check_bins`.
    """
    m = 1 + max(levels) / 100.0
    for lo, hi in zip(bins, bins[1:]):
        require(
            lo * m < hi / m,
            f"{key}.levels={list(levels)!r}: a {max(levels)} % margin leaves no room in bin [{lo}, {hi}] {unit}; "
            "allowed: a smaller margin or wider bins",
        )


def check_bins(key: str, name: str, bins, levels, unit: str) -> float:
    """Bin edges increasing from above 0, margins >= 0 with room in every bin; returns the largest
    margin as a ratio (:func:`check_margins`).

    Parameters
    ----------
    key, name
        As in :func:`check_three_bins`.
    bins : sequence of float
        The inner edges (any number), in ``unit``.
    levels, unit
        As in :func:`check_three_bins`.

    Returns
    -------
    float
        The largest margin as a ratio (>= 1).
    """
    require(
        len(bins) >= 1 and bins[0] > 0 and all(hi > lo for lo, hi in zip(bins, bins[1:])),
        f"{key}.{name}={list(bins)!r} is not increasing; allowed: 0 < {name}...",
    )
    m = check_margins(key, levels)
    check_room(key, levels, bins, unit)
    return m


def bin_sides(k: int, n_bins: int) -> tuple[str, ...]:
    """The edges of bin ``k`` (of ``n_bins``) a value may sit near: ``"low"`` (its lower edge) for
    every bin but the first, ``"high"`` (its upper edge) for every bin but the last.

    Parameters
    ----------
    k : int
        Bin index.
    n_bins : int
        Number of bins.

    Returns
    -------
    tuple of str
        One or two of ``"low"`` and ``"high"``.

    Examples
    --------
    >>> bin_sides(0, 3), bin_sides(1, 3), bin_sides(2, 3)
    (('high',), ('low', 'high'), ('low',))
    """
    return (("low",) if k > 0 else ()) + (("high",) if k < n_bins - 1 else ())


def at_margin(edges: tuple[float, ...], k: int, side: str, margin_percent: float) -> float:
    """The value inside bin ``k`` of ``edges`` exactly ``margin_percent`` (in ratio) from its
    ``side`` edge: ``edges[k] * (1 + m)`` or ``edges[k + 1] / (1 + m)``.

    Parameters
    ----------
    edges : tuple of float
        The bins' edges, outer ends included.
    k : int
        Bin index.
    side : str
        ``"low"`` or ``"high"``.
    margin_percent : float
        The margin, percent.

    Returns
    -------
    float
        The value, in the edges' unit.

    Examples
    --------
    >>> at_margin((0.0, 1.0, 2.0, math.inf), 1, "high", 25.0)
    1.6
    """
    m = 1 + margin_percent / 100.0
    return float(edges[k] * m if side == "low" else edges[k + 1] / m)


def draw_at_margin(rng: np.random.Generator, edges: tuple[float, ...], margin_percent: float) -> tuple[int, str, float]:
    """``(bin, side, value)``: a bin drawn uniformly, then one of its inner edges (:func:`bin_sides`)
    uniformly, and the value exactly ``margin_percent`` inside that edge. Two draws, in that order.

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream.
    edges : tuple of float
        The bins' edges, outer ends included.
    margin_percent : float
        The margin, percent.

    Returns
    -------
    tuple of (int, str, float)
        Bin index, ``"low"`` or ``"high"``, and the value in the edges' unit.
    """
    n = len(edges) - 1
    k = int(rng.integers(n))
    sides = bin_sides(k, n)
    side = sides[int(rng.integers(len(sides)))]
    return k, side, at_margin(edges, k, side, margin_percent)


def margin_percent(value: float, edges: tuple[float, ...]) -> float:
    """Margin (percent, in ratio) of ``value`` from the nearest *inner* bin edge of ``edges``
    (the outer ends are the range, not bin boundaries).

    Parameters
    ----------
    value : float
        A value > 0, in the edges' unit.
    edges : tuple of float
        The bins' edges, outer ends included (at least one inner edge).

    Returns
    -------
    float
        ``100 * (max(value / e, e / value) - 1)`` for the nearest inner edge ``e``, percent.
    """
    return min(100.0 * (max(value / e, e / value) - 1.0) for e in edges[1:-1])


def margin_check(measured: float, expected: float, edges: tuple[float, ...], tolerance: float) -> dict[str, Any]:
    """The margin (:func:`margin_percent`) of a measured value against the recipe's, as a
    :func:`within` record whose tolerance is the value's ``tolerance`` mapped to percent (the
    larger margin change of ``expected -/+ tolerance``).

    Parameters
    ----------
    measured : float
        The value measured in the audio, in the edges' unit (NaN or <= 0: not measured).
    expected : float
        The recipe's value, same unit.
    edges : tuple of float
        The bins' edges, outer ends included.
    tolerance : float
        Allowed error of the value, same unit.

    Returns
    -------
    dict of str to Any
        A ``margin_percent`` record: ``measured``, ``expected`` and ``tolerance`` in percent, ``ok``.
    """
    want = margin_percent(expected, edges)
    tol = max(abs(margin_percent(expected + s * tolerance, edges) - want) for s in (-1, 1))
    got = margin_percent(measured, edges) if math.isfinite(measured) and measured > 0 else math.nan
    return within("margin_percent", got, want, round(tol, 4))
