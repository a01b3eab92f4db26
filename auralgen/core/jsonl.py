"""JSON Lines read with errors that name the file and the line."""

from __future__ import annotations

import json
from typing import Any

from auralgen.core.errors import ParameterError


def jsonl_rows(text: str, where: str) -> list[Any]:
    """The JSON value of every non-blank line of ``text``; a line that is not JSON is one error
    naming ``where`` (the config key and file) and the line number.

    Parameters
    ----------
    text : str
        The file's text, one JSON value per line; blank lines are skipped.
    where : str
        What the text is, quoted in an error (e.g. ``"predictions='p.jsonl'"``).

    Returns
    -------
    list
        The decoded values, in line order.

    Raises
    ------
    ParameterError
        When a non-blank line is not JSON.

    Examples
    --------
    >>> jsonl_rows('{"a": 1}\\n\\n{"a": 2}\\n', "metadata.jsonl")
    [{'a': 1}, {'a': 2}]
    >>> jsonl_rows('{"a": 1}\\nnot json', "metadata.jsonl")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    auralgen.core.errors.ParameterError: metadata.jsonl line 2 is not JSON
    (Expecting value: line 1 column 1 (char 0)); allowed: one JSON object per line
    """
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise ParameterError(
                    f"{where} line {n} is not JSON ({exc}); allowed: one JSON object per line"
                ) from None
    return rows
