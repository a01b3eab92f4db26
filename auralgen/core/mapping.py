"""Plain mappings -> typed dataclasses, with one-line errors.

:func:`from_mapping` builds a frozen dataclass from a mapping (a YAML/OmegaConf node or a
dict): unknown keys and missing required keys are refused, each value is coerced to its
field's annotation (:func:`coerce`; a ``Dist`` field is parsed into its distribution here,
once), and every error names the config key, the value and
what is allowed. :func:`plain` turns container nodes into lists and dicts.
"""

from __future__ import annotations

import difflib
import math
import typing
from dataclasses import MISSING, fields
from typing import Any

from auralgen.core.errors import ParameterError
from auralgen.core.random import Dist


def is_num(v) -> bool:
    """Whether ``v`` is a finite real number (an ``int`` or ``float``, not a ``bool``).

    Parameters
    ----------
    v : object
        Any value.

    Returns
    -------
    bool
        True for a finite ``int`` or ``float`` that is not a ``bool``.
    """
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def coerce(key: str, value, annotation):
    """Coerce one config value to the field's annotation, or raise ParameterError.

    Parameters
    ----------
    key : str
        The dotted config key, quoted in an error.
    value : object
        The value as read (a plain value or an OmegaConf node).
    annotation : type
        The field's resolved annotation: ``bool``, ``int``, ``float``, ``str``, a tuple or dict type,
        :class:`~auralgen.core.random.Dist`, ``Any`` or an optional (``X | None``) of one of these.

    Returns
    -------
    object
        The value as that type: a whole float becomes ``int``, a list a ``tuple``, a ``Dist`` field its
        parsed distribution, containers plain lists and dicts.

    Raises
    ------
    ParameterError
        When the value cannot be read as the annotation.
    """
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return coerce(key, value, inner[0])
    if annotation is Any:
        return plain(value)
    if annotation is Dist:  # parsed once, here: a number, [low, high] or {dist: ...}
        return Dist.parse(key, plain(value))
    if annotation is bool:
        if not isinstance(value, bool):
            raise ParameterError(f"{key}={value!r} is not a boolean; allowed: true or false")
        return value
    if annotation is int:
        if isinstance(value, bool) or not (isinstance(value, int) or (is_num(value) and float(value).is_integer())):
            raise ParameterError(f"{key}={value!r} is not an integer; allowed: a whole number")
        return int(value)
    if annotation is float:
        if not is_num(value):
            raise ParameterError(f"{key}={value!r} is not a number; allowed: a finite number")
        return float(value)
    if annotation is str:
        if not isinstance(value, str):
            raise ParameterError(f"{key}={value!r} is not a string; allowed: text")
        return value
    if annotation is tuple or origin is tuple:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or hasattr(value, "keys"):
            raise ParameterError(f"{key}={value!r} is not a list; allowed: a list such as [1, 2]")
        return tuple(plain(v) for v in value)
    if annotation is dict or origin is dict:
        if not hasattr(value, "keys"):
            raise ParameterError(f"{key}={value!r} is not a mapping; allowed: a mapping of key: value")
        return plain(value)
    return plain(value)


def plain(value):
    """OmegaConf containers -> plain python (lists, dicts); a :class:`~auralgen.core.random.Dist` -> its plain form.

    Parameters
    ----------
    value : object
        A scalar, mapping, sequence (any non-string iterable) or distribution, nested to any depth.

    Returns
    -------
    object
        The same data with every mapping a ``dict`` of str keys and every sequence a ``list``; scalars
        unchanged.
    """
    if isinstance(value, Dist):
        return plain(value.plain)
    if hasattr(value, "keys"):
        return {str(k): plain(value[k]) for k in value.keys()}
    if isinstance(value, (list, tuple)) or (hasattr(value, "__iter__") and not isinstance(value, (str, bytes))):
        return [plain(v) for v in value]
    return value


def did_you_mean(name, known, prefix: str = "") -> str:
    """``" (did you mean '<prefix>x'?)"`` for the known name x closest to a misspelt ``name``, else ``""``.

    Parameters
    ----------
    name : str
        The name given (converted with ``str``).
    known : iterable of str
        The names allowed.
    prefix : str, optional
        Put before the suggested name, e.g. ``"task="``.

    Returns
    -------
    str
        The hint, starting with a space, or ``""`` when no known name is close (difflib ratio < 0.75).

    Examples
    --------
    >>> did_you_mean("itmes_per_level", ["levels", "items_per_level"])
    " (did you mean 'items_per_level'?)"
    >>> did_you_mean("zzz", ["levels"])
    ''
    """
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.75)
    return f" (did you mean {prefix + close[0]!r}?)" if close else ""


def from_mapping(cls, data, key: str, **extra):
    """Build dataclass ``cls`` from ``data``; unknown or missing keys are errors.

    Each field's annotation on ``cls`` (a dataclass type) says how its value is coerced (:func:`coerce`).

    Parameters
    ----------
    data : mapping
        The field values by name (a dict or an OmegaConf node).
    key : str
        The config key of ``data``, prefixed to each field's key in an error.
    **extra
        Field values given directly; they are not coerced and override ``data``.

    Returns
    -------
    object
        An instance of ``cls``.

    Raises
    ------
    ParameterError
        When ``data`` is not a mapping, holds an unknown key, misses a required field or a value does
        not coerce.
    """
    if not hasattr(data, "keys"):
        raise ParameterError(f"{key}={data!r} is not a mapping; allowed: a mapping of {cls.__name__} fields")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in fields(cls)]
    for k in data.keys():
        if k not in names:
            raise ParameterError(f"{key}.{k}: unknown key{did_you_mean(k, names)}; allowed keys: {', '.join(names)}")
    kwargs = dict(extra)
    for f in fields(cls):
        if f.name in kwargs:
            continue
        if f.name in data.keys():
            kwargs[f.name] = coerce(f"{key}.{f.name}", data[f.name], hints[f.name])
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ParameterError(f"{key}.{f.name} is missing; allowed: a value of type {hints[f.name]}")
    return cls(**kwargs)
