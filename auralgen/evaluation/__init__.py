"""Evaluation harness: adapters, prompts, answer parsing, metrics, psychometrics and reports.

Entry point: ``auralgen evaluate`` (:mod:`auralgen.cli.evaluate`) -> :func:`auralgen.evaluation.runner.run`
(the action switch) -> :func:`auralgen.evaluation.session.evaluate`, with the config of
:mod:`auralgen.evaluation.config`. Adapters: :mod:`auralgen.evaluation.adapters`; the adaptive
procedure slot: :mod:`auralgen.evaluation.procedure`.
"""

from auralgen.evaluation.metrics import score, wilson_interval
from auralgen.evaluation.parsing import ParseResult, extract_choice, rotate_options
from auralgen.evaluation.psychometrics import audiogram_thresholds, fit_psychometric

__all__ = [
    "ParseResult",
    "audiogram_thresholds",
    "extract_choice",
    "fit_psychometric",
    "rotate_options",
    "score",
    "wilson_interval",
]
