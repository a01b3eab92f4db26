"""Published human thresholds, shown beside a model's adaptive threshold for the same attribute.

Each task that knows one states it (:attr:`~auralgen.tasks.base.Task.human_threshold`: value in the
task's level unit, unit, source). They are orientation, not a norm to pass: the human figures come
from trained listeners in laboratory conditions (often 2AFC at 71-79 % correct, pure tones,
headphones), while a track here reports the 75 %-correct point of the task's own question with its
own chance rate. Figures are as we read them in the cited papers (hearing level: by definition).
"""

from __future__ import annotations

from typing import Any


def human_jnd(task) -> dict[str, Any]:
    """``human_jnd``, ``human_jnd_unit`` and ``human_jnd_source`` of ``task`` (empty when it states
    none or its unit is not the task's level unit).

    Parameters
    ----------
    task : Task
        A task; its ``human_threshold`` is ``(value, unit, source)`` or None.

    Returns
    -------
    dict
        ``human_jnd`` (float, in the task's level unit), ``human_jnd_unit`` (str) and ``human_jnd_source``
        (str, the citation); empty when there is none to show.
    """
    known = getattr(task, "human_threshold", None)
    if known is None or known[1] != task.level_unit:
        return {}
    value, unit, source = known
    return {"human_jnd": value, "human_jnd_unit": unit, "human_jnd_source": source}
