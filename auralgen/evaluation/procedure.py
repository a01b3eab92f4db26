"""The adaptive-procedure protocol: how an adaptive evaluation picks the next stimulus level.

Fixed-item evaluation (:func:`auralgen.evaluation.session.evaluate`) asks every item of an
exported split and does not use it. An adaptive session (``mode=adaptive``, implemented by
:class:`~auralgen.evaluation.adaptive.QuestPlusProcedure`) runs one track per task and model: it
asks :meth:`Procedure.next_level` for a level value in the task's domain, has an item made at
that value, asks the model, reports the outcome with :meth:`Procedure.update`, and stops when
:meth:`Procedure.done`; :meth:`Procedure.estimate` gives the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["Procedure", "ThresholdEstimate"]


@dataclass(frozen=True)
class ThresholdEstimate:
    """What a procedure concludes: the level (in the task's level unit) at its criterion.

    Parameters
    ----------
    threshold : float
        Level value reaching the procedure's criterion accuracy.
    ci95 : tuple of float
        ``(low, high)`` 95 % credible or confidence interval of ``threshold``.
    n_trials : int
        Trials the estimate rests on.
    posterior : dict
        Procedure-specific summary (e.g. posterior means of slope and lapse), JSON-able.
    """

    threshold: float
    ci95: tuple[float, float]
    n_trials: int
    posterior: dict = field(default_factory=dict)


@runtime_checkable
class Procedure(Protocol):
    """An adaptive procedure: chooses levels trial by trial from the outcomes so far."""

    def next_level(self) -> float:
        """The level value of the next trial (in the task's level unit, inside its domain)."""
        ...

    def update(self, level: float, correct: bool) -> None:
        """Record the outcome of a trial at ``level``.

        Parameters
        ----------
        level : float
            The level value asked, in the task's level unit.
        correct : bool
            Whether the answer was right.
        """
        ...

    def done(self) -> bool:
        """Whether the track has enough trials (its stopping rule)."""
        ...

    def estimate(self) -> ThresholdEstimate:
        """The threshold estimate from the trials so far."""
        ...
