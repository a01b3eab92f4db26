"""Checks of a task config shared by every task: durations, unused fields, level lists, and :func:`require`.

They are re-exported by :mod:`auralgen.tasks.base`, where task modules import them from.
"""

from __future__ import annotations

import functools
import math
import typing
from dataclasses import fields
from typing import Any

from auralgen.core.errors import ParameterError
from auralgen.core.mapping import is_num, plain
from auralgen.core.random import Dist

MAX_DURATION_S = 60.0  # longest value of any duration (``*_s``) field of a task config


@functools.cache
def dist_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields of config class ``cls`` annotated :class:`~auralgen.core.random.Dist`.

    Returns
    -------
    tuple of str
        The field names, in declaration order.
    """
    hints = typing.get_type_hints(cls)
    return tuple(f.name for f in fields(cls) if hints[f.name] is Dist)


def _numbers(value) -> list:
    """Every number inside a config value: a number, a list, or a distribution (mapping or Dist)."""
    if isinstance(value, Dist):
        return _numbers(value.plain)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [value]
    if hasattr(value, "keys"):
        return [v for k in value.keys() if k != "dist" for v in _numbers(value[k])]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _numbers(item)]
    return []


def check_unused(cfg: Any, key: str) -> None:
    """Refuse a changed value in a field the task never reads (``cfg.unused_fields``).

    Parameters
    ----------
    cfg : TaskConfig
        The task's config.
    key : str
        The config path of the task, for the message.

    Raises
    ------
    ParameterError
        Such a field differs from its default.
    """
    defaults = {f.name: f.default for f in fields(cfg)}
    for name, why in cfg.unused_fields.items():
        value = getattr(cfg, name)
        if plain(value) != plain(defaults[name]):
            raise ParameterError(
                f"{key}.{name}={value!r} is not used by {cfg.name} ({why}); allowed: leave it out (default "
                f"{defaults[name]!r})"
            )


def check_durations(cfg: Any, key: str) -> None:
    """Every duration field (a name ending in ``_s``) holds finite values of at least 0 and at most
    :data:`MAX_DURATION_S`, so no clip asks for an absurd allocation (``clip_s=1e9`` would be
    116 TiB): a clip is a few such durations long, at most a few minutes of samples.

    Parameters
    ----------
    cfg : TaskConfig
        The task's config; every number of every ``*_s`` field is checked, inside lists and distributions too.
    key : str
        The config path of the task, for the message.

    Raises
    ------
    ParameterError
        A duration is negative, not finite, or above :data:`MAX_DURATION_S` seconds.
    """
    for f in fields(cfg):
        if not f.name.endswith("_s"):
            continue
        for v in _numbers(getattr(cfg, f.name)):
            require(
                not v < 0,
                f"{key}.{f.name}={getattr(cfg, f.name)!r} holds {v!r}, a negative duration; allowed: finite values "
                f"within [0, {MAX_DURATION_S:g}] s",
            )
            require(
                math.isfinite(v) and v <= MAX_DURATION_S,
                f"{key}.{f.name}={getattr(cfg, f.name)!r} holds {v!r}, beyond the longest duration; allowed: finite "
                f"values <= {MAX_DURATION_S:g} s",
            )


def check_levels(key: str, levels: tuple) -> None:
    """Levels: a non-empty list of numbers, strictly monotonic (increasing or decreasing).

    Parameters
    ----------
    key : str
        The config path of the levels, for the message.
    levels : tuple of float
        The level values, in the task's level unit.

    Raises
    ------
    ParameterError
        Empty, a value not a finite number, or not strictly monotonic.
    """
    if len(levels) == 0:
        raise ParameterError(f"{key}=[] is empty; allowed: a non-empty list of numbers")
    for v in levels:
        if not is_num(v) or not math.isfinite(v):
            raise ParameterError(f"{key}={list(levels)!r} holds {v!r}; allowed: finite numbers only")
    diffs = [b - a for a, b in zip(levels, levels[1:])]
    if not (all(d > 0 for d in diffs) or all(d < 0 for d in diffs)):
        raise ParameterError(
            f"{key}={list(levels)!r} is not monotonic; allowed: strictly increasing or decreasing values"
        )


def config_fields(cls: type) -> list[str]:
    """The field names of task config class ``cls`` (a :class:`~auralgen.tasks.base.TaskConfig` subclass).

    Returns
    -------
    list of str
        Its dataclass field names, in declaration order.
    """
    return [f.name for f in fields(cls)]


def require(cond: bool, message: str) -> None:
    """Raise ParameterError(message) unless ``cond``; message names key, value and what is allowed.

    Parameters
    ----------
    cond : bool
        The condition a valid config meets.
    message : str
        One line: key, value and what is allowed.

    Raises
    ------
    ParameterError
        ``cond`` is false.
    """
    if not cond:
        raise ParameterError(message)
