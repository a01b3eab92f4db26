"""The interface of a check the dataset audit runs over all items of one task (re-exported by
:mod:`auralgen.tasks.base`)."""

from __future__ import annotations

from typing import Any, ClassVar


class DatasetCheck:
    """A check the dataset audit runs over all items of one task (``AuditSpec.dataset_checks``).

    The audit makes one instance per task, calls :meth:`observe` with each item's ``params``
    and then :meth:`finish`, which returns the report entry (stored under ``name``) and one
    line per problem found (each becomes a flag of the audit).
    """

    name: ClassVar[str]

    def observe(self, params: dict[str, Any]) -> None:
        """Take in one item of the task (subclasses implement it).

        Parameters
        ----------
        params : dict of str to Any
            The item's recipe, as :meth:`Task.sample` returned it.
        """
        raise NotImplementedError

    def finish(self) -> tuple[dict[str, Any], list[str]]:
        """The check's result over every item observed (subclasses implement it).

        Returns
        -------
        tuple of (dict of str to Any, list of str)
            The JSON-able report entry and one line per problem found (empty: the check passes).
        """
        raise NotImplementedError
