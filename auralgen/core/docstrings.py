"""Shared numpydoc sections: written once, appended to the docstrings of every function they describe.

Many functions take the same arguments with the same meaning (every reference listener takes one
item; every presence detector one scaled mono clip). Their ``Parameters`` and ``Returns`` sections
are written once, as a template, and :func:`sections` appends them to each function's own summary
at import time, filling in what differs (``{name}`` fields, :meth:`str.format`). ``help()``,
numpydoc and the documentation site read the complete docstring.

Examples
--------
>>> CLIP = '''
... Parameters
... ----------
... x : ndarray, shape (samples,)
...     A mono clip.
...
... Returns
... -------
... bool
...     Whether {what} is present.
... '''
>>> @sections(CLIP, what="a tone")
... def has_tone(x):
...     '''Whether the clip holds a tone.'''
>>> print(has_tone.__doc__.splitlines()[-1].strip())
Whether a tone is present.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

__all__ = ["sections"]


def sections(template: str, **fields: str) -> Callable[[F], F]:
    """A decorator appending the numpydoc sections of ``template`` to a function's docstring.

    Parameters
    ----------
    template : str
        The sections (``Parameters``, ``Returns``, ...), in numpydoc layout; indentation is removed.
    **fields : str
        Values of the template's ``{name}`` fields.

    Returns
    -------
    callable
        The decorator: it sets the function's ``__doc__`` to its own text (indentation removed), a
        blank line and the filled template, and returns the function itself.

    Raises
    ------
    KeyError
        When the template names a field that ``fields`` does not give (at import time).
    """
    text = inspect.cleandoc(template).format(**fields)

    def decorate(fn: F) -> F:
        own = inspect.cleandoc(fn.__doc__ or "")
        fn.__doc__ = f"{own}\n\n{text}\n" if own else f"{text}\n"
        return fn

    return decorate
