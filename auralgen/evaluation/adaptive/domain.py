"""The level domain of an adaptive track: which values a task can be asked at, on which axis.

The rule (one per task, from what the task already declares -- no table names a task):

* **values** -- the positive values of the task's grid ``cfg.levels`` (0, the "same" level of a
  two-interval task, does not lie on the detection curve and is left out);
* **easier end** -- a property of the task's stimulus, not of a listener: the task's ``easier``
  (``"larger"``: a larger value is easier, e.g. a larger pitch, loudness or duration difference, a
  wider azimuth separation, a larger distance ratio; ``"smaller"``: a smaller value is easier), or
  when it sets none, the end its ``audit.listener_easiest`` names (``"max"`` larger, ``"min"`` smaller);
* **scale** -- ``"log"`` when the positive grid spans a ratio of at least :data:`LOG_SPAN`
  (every relative task today), else ``"lin"``;
* **range** -- the grid's range, extended on its *hard* side by the factor ``extend`` (log) or by
  ``extend - 1`` grid spans (lin) when the hard side is the small end, so a listener better than
  the grid's hardest level still gets a number; never extended where the hard side is the large
  end (a farther source may not fit the task's room).

A task may state its own domain instead (:meth:`~auralgen.tasks.design.Design.adaptive_axis`: the
audiogram, hearing level in dB on a linear axis over its grid, one track per frequency).
Otherwise a task is offered when it is relative (``regime == "relative"``), samples at any value (its
:meth:`~auralgen.tasks.base.Task.sample` accepts ``Level(index=None, value=v)``) and has at
least two positive grid values.

Adaptive procedures work on an internal axis ``u`` on which larger is easier:
``u = +-log10(value)`` (log) or ``u = +-value`` (lin), the sign from the easier end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError

__all__ = ["LOG_SPAN", "LevelDomain", "domain_for", "easier_end"]

LOG_SPAN = 4.0  # a positive grid spanning at least this ratio is searched on a log axis


@dataclass(frozen=True)
class LevelDomain:
    """Values ``low <= v <= high`` (in ``unit``) on a ``"log"`` or ``"lin"`` axis; ``easier`` is
    ``"larger"`` or ``"smaller"``.

    Examples
    --------
    >>> d = LevelDomain(6.25, 1200.0, "cents", scale="log", easier="larger")
    >>> round(d.to_value(d.to_axis(100.0)), 6), d.to_axis(10.0)
    (100.0, 1.0)
    """

    low: float
    high: float
    unit: str
    scale: str = "log"
    easier: str = "larger"

    def __post_init__(self):
        if self.scale not in ("log", "lin"):
            raise ParameterError(f"domain scale={self.scale!r} is unknown; allowed: log, lin")
        if self.easier not in ("larger", "smaller"):
            raise ParameterError(f"domain easier={self.easier!r} is unknown; allowed: larger, smaller")
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ParameterError(f"domain [{self.low!r}, {self.high!r}] is empty; allowed: finite low < high")
        if self.scale == "log" and self.low <= 0:
            raise ParameterError(f"log domain low={self.low!r} is not positive; allowed: low > 0")

    @property
    def sign(self) -> float:
        return 1.0 if self.easier == "larger" else -1.0

    def to_axis(self, value):
        """The internal axis ``u`` of ``value`` (larger = easier).

        Parameters
        ----------
        value : float or array_like
            Level value(s) in :attr:`unit` (positive on a log domain).

        Returns
        -------
        float or ndarray
            ``+-log10(value)`` (log) or ``+-value`` (lin), same shape as ``value``.
        """
        v = np.asarray(value, dtype=float)
        u = self.sign * (np.log10(v) if self.scale == "log" else v)
        return float(u) if u.ndim == 0 else u

    def to_value(self, u):
        """The level value of axis point ``u`` (inverse of :meth:`to_axis`).

        Parameters
        ----------
        u : float or array_like
            Point(s) on the internal axis.

        Returns
        -------
        float or ndarray
            Level value(s) in :attr:`unit`, same shape as ``u``.
        """
        u = np.asarray(u, dtype=float) * self.sign
        v = 10.0**u if self.scale == "log" else u
        return float(v) if v.ndim == 0 else v

    def axis(self, n: int) -> np.ndarray:
        """``n`` evenly spaced axis points from the hardest to the easiest value.

        Parameters
        ----------
        n : int
            Number of points.

        Returns
        -------
        ndarray, shape (n,), float64
            Increasing axis points ``u``, the domain's ends included.
        """
        ends = sorted((self.to_axis(self.low), self.to_axis(self.high)))
        return np.linspace(ends[0], ends[1], int(n))

    def hard_value(self) -> float:
        """The hardest value of the domain.

        Returns
        -------
        float
            ``low`` when larger is easier, else ``high`` (in :attr:`unit`).
        """
        return self.low if self.easier == "larger" else self.high

    def easy_value(self) -> float:
        """The easiest value of the domain.

        Returns
        -------
        float
            ``high`` when larger is easier, else ``low`` (in :attr:`unit`).
        """
        return self.high if self.easier == "larger" else self.low

    def to_dict(self) -> dict:
        """The domain as JSON-able fields.

        Returns
        -------
        dict
            ``low``, ``high``, ``unit``, ``scale`` and ``easier``.
        """
        return {"low": self.low, "high": self.high, "unit": self.unit, "scale": self.scale, "easier": self.easier}


def easier_end(task) -> str | None:
    """``"larger"`` or ``"smaller"``: which end of ``task``'s level values is easier (its ``easier``, else
    from ``audit.listener_easiest``); None when the task states neither.

    Parameters
    ----------
    task : Task or type
        A task (or task class).

    Returns
    -------
    str or None
        ``"larger"``, ``"smaller"`` or None.
    """
    easier = getattr(task, "easier", None)
    if easier is not None:
        return easier
    return {"max": "larger", "min": "smaller"}.get(task.audit.listener_easiest)


def domain_for(task, *, extend: float = 16.0) -> LevelDomain:
    """The :class:`LevelDomain` of ``task`` by the rule of the module docstring.

    Parameters
    ----------
    task : Task
        A configured task.
    extend : float, optional
        How far the range reaches past the grid's hard end, when that is the small end: a factor
        (log scale), or ``extend - 1`` grid spans but not below ``low / extend`` (lin scale); >= 1.

    Returns
    -------
    LevelDomain
        Values in the task's level unit, their scale and easier end.

    Raises
    ------
    ParameterError
        When the task is not relative, has fewer than two positive grid values, or states no
        easier end (neither ``easier`` nor ``audit.listener_easiest`` set).
    """
    name = task.name
    own = task.design.adaptive_axis()
    if own is not None:  # the task states its domain (the audiogram: dB HL on a linear axis)
        return LevelDomain(own["low"], own["high"], task.level_unit, scale=own["scale"], easier=own["easier"])
    if task.regime != "relative":
        raise ParameterError(
            f"task {name} has regime={task.regime!r}; allowed in mode=adaptive: a relative task (a difference level)"
        )
    values = sorted(float(v) for v in task.cfg.levels if float(v) > 0)
    easier = easier_end(task)
    if len(values) < 2 or easier is None:
        raise ParameterError(
            f"task {name} has levels={list(task.cfg.levels)!r}, easier end {easier!r}; allowed in mode=adaptive: "
            "at least two positive levels and an easier end (the task's easier 'larger' or 'smaller')"
        )
    if not extend >= 1.0:
        raise ParameterError(f"adaptive.extend={extend!r} is too small; allowed: >= 1")
    lo, hi = values[0], values[-1]
    scale = "log" if hi / lo >= LOG_SPAN else "lin"
    if easier == "larger":  # the hard side is the small end: extend it downwards
        lo = lo / extend if scale == "log" else max(lo - (extend - 1.0) * (hi - lo), lo / extend)
    return LevelDomain(lo, hi, task.level_unit, scale=scale, easier=easier)
