"""Adaptive evaluation: a model's threshold per task, measured with QUEST+ on items
generated at the values the procedure asks for.

- :mod:`.domain` -- the level domain of a task (the rule that derives it from the task's grid);
- :mod:`.quest` -- :class:`QuestPlusProcedure` (the :class:`~auralgen.evaluation.procedure.Procedure`);
- :mod:`.trials` -- one trial: the item at a value, asked, parsed, recorded (``trials.jsonl``);
- :mod:`.session` -- :func:`run_adaptive` (tracks against a model, or replayed from the record);
- :mod:`.observers` -- simulated observers and a known-noise wrapper for a model;
- :mod:`.simulate` -- coverage, bias and the adaptive-vs-grid trial count on simulated observers.
"""

from .domain import LevelDomain, domain_for
from .observers import FlipAdapter, SimulatedObserver
from .quest import QuestPlusProcedure, QuestSettings
from .session import run_adaptive, run_track

__all__ = [
    "FlipAdapter",
    "LevelDomain",
    "QuestPlusProcedure",
    "QuestSettings",
    "SimulatedObserver",
    "domain_for",
    "run_adaptive",
    "run_track",
]
