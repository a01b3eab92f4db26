"""Seeding and typed distributions.

Every random draw in auralgen comes from a per-item :class:`numpy.random.Generator`
made by :func:`item_rng`; there is no global RNG. Distributions are small frozen
dataclasses that own ``validate()`` and ``sample(rng)`` (Scaper-style event specs); a config
field that holds one is typed :class:`Dist`, parsed once when the config is read.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from auralgen.core._distributions import (  # noqa: F401 - re-exported: configs and tasks import them from here
    DISTRIBUTIONS,
    SAMPLE,
    SUPPORT,
    Choice,
    Const,
    Distribution,
    LogUniform,
    Normal,
    TruncNormal,
    Uniform,
    _key,
)
from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError


def stable_id(name: str) -> int:
    """A stable 32-bit integer for a name (CRC32 of its UTF-8 bytes).

    Parameters
    ----------
    name : str
        A task or split name.

    Returns
    -------
    int
        In ``0 .. 2**32 - 1``, the same on every machine and Python version.
    """
    return zlib.crc32(name.encode("utf-8"))


def owner(key: tuple, splits: tuple[str, ...]) -> str:
    """The split that owns a parameter tuple (rendezvous hashing): tuples never repeat across splits.

    Parameters
    ----------
    key : tuple
        The parameter tuple (JSON-able; other values hash by ``str``).
    splits : tuple of str
        The candidate splits.

    Returns
    -------
    str
        The split whose SHA-256 of ``split|key`` is largest (the only split when there is one).
    """
    if len(splits) == 1:
        return splits[0]
    blob = json.dumps(key, sort_keys=True, default=str)
    return max(splits, key=lambda s: hashlib.sha256(f"{s}|{blob}".encode()).digest())


def item_rng(seed: int, split: str, task: str, index: int, *, stream: int = 0) -> np.random.Generator:
    """The generator of one item: independent of worker count, order and shard size.

    Parameters
    ----------
    seed : int
        The run's seed.
    split : str
        The split name (hashed with :func:`stable_id`).
    task : str
        The task name (hashed with :func:`stable_id`).
    index : int
        The item's index (or another coordinate, e.g. a block of items).
    stream : int, optional
        An independent sub-stream of the same item (0 = sampling).

    Returns
    -------
    numpy.random.Generator
        Seeded by ``SeedSequence(seed, spawn_key=(split id, task id, index, stream))``.
    """
    key = (stable_id(split), stable_id(task), int(index), int(stream))
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key))


def as_distribution(name: str, spec: Any):
    """Build a distribution from a config value.

    Accepted forms: a number (``Const``), ``[low, high]`` (``Uniform``), or a mapping
    ``{dist: uniform|loguniform|choice|const|normal|truncnorm, ...fields}``.

    Parameters
    ----------
    name : str
        The config key, quoted in an error.
    spec : int, float, sequence or mapping
        The config value, in the quantity's own unit.

    Returns
    -------
    Const, Uniform, LogUniform, Choice, Normal or TruncNormal
        The validated distribution.

    Raises
    ------
    ParameterError
        When ``spec`` has none of these forms, names an unknown kind or wrong fields, or fails validation.

    Examples
    --------
    >>> as_distribution("gap_s", [0.2, 0.5])
    Uniform(low=0.2, high=0.5)
    >>> as_distribution("f0_hz", {"dist": "choice", "values": [220, 440]})
    Choice(values=(220, 440))
    """
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        dist = Const(float(spec))
    elif isinstance(spec, Sequence) and not isinstance(spec, str):
        if len(spec) != 2 or not all(isinstance(v, (int, float)) for v in spec):
            raise ParameterError(f"{_key(name, list(spec))} is not a range; allowed: [low, high] of two numbers")
        dist = Uniform(float(spec[0]), float(spec[1]))
    elif hasattr(spec, "keys"):
        fields = dict(spec)
        kind = fields.pop("dist", None)
        cls = DISTRIBUTIONS.get(kind, key=f"{name}.dist")
        if cls is Choice and "values" in fields:
            fields["values"] = tuple(fields["values"])
        try:
            dist = cls(**fields)
        except TypeError:
            allowed = list(cls.__dataclass_fields__)
            raise ParameterError(
                f"{name}={dict(spec)!r} has wrong fields for {kind}; allowed fields: {allowed}"
            ) from None
    else:
        raise ParameterError(f"{_key(name, spec)} is not a distribution; allowed: number, [low, high] or {{dist: ...}}")
    dist.validate(name)
    return dist


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or a float (not a bool).

    Parameters
    ----------
    value : object
        Any value.

    Returns
    -------
    bool
        True for an ``int`` or ``float`` that is not a ``bool`` (NaN and inf included).
    """
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def bounded(key: str, spec: Any, *, low: float | None = None, high: float | None = None):
    """:func:`as_distribution` whose whole support (``dist.support()``) lies in ``[low, high]``.

    Parameters
    ----------
    key : str
        The config key, quoted in an error.
    spec : object
        What :func:`as_distribution` accepts, or a :class:`Dist` already parsed (then only its support
        is checked).
    low, high : float or None, optional
        The bounds of the allowed values, in the quantity's unit; None is unbounded.

    Returns
    -------
    Const, Uniform, LogUniform, Choice, Normal or TruncNormal
        The distribution.

    Raises
    ------
    ParameterError
        When ``spec`` is not a distribution, a choice holds non-numbers, or the support leaves ``[low, high]``.

    Examples
    --------
    >>> bounded("gap_s", [0.2, 0.5], low=0.0)
    Uniform(low=0.2, high=0.5)
    """
    if isinstance(spec, Dist):  # parsed already: only its support is checked
        dist, spec = spec.dist, spec.plain
    else:
        dist = as_distribution(key, spec)
    if isinstance(dist, Choice) and not all(is_number(v) for v in dist.values):
        raise ParameterError(f"{key}={list(dist.values)!r} holds non-numbers; allowed: numbers")
    lo, hi = dist.support()
    if (low is not None and lo < low) or (high is not None and hi > high):
        allowed = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
        raise ParameterError(
            f"{key}={spec!r} reaches [{lo}, {hi}]; allowed: values within {allowed} (use truncnorm, not normal)"
        )
    return dist


class Dist:
    """A distribution config value, parsed once: the distribution and the form it was written in.

    A config field annotated ``Dist`` accepts what :func:`as_distribution` accepts (a number, a
    ``[low, high]`` pair or a ``{dist: <kind>, ...}`` mapping); the config layer parses it once,
    and a task samples it with :meth:`sample`, the draws of the distribution itself. The value
    records, prints and compares as the plain form it was written in (:attr:`plain`), so a
    config's record (and every id keyed by it) and every message quoting the value read as written.

    Examples
    --------
    >>> d = Dist.parse("tone_s", [0.6, 1.0])
    >>> d.kind, d.low, d.high, d.plain, d
    ('uniform', 0.6, 1.0, [0.6, 1.0], [0.6, 1.0])
    >>> Dist.of(440).sample(item_rng(0, "test", "pitch_relative", 0))
    440.0
    """

    __slots__ = ("dist", "plain")
    dist: Distribution  # the parsed distribution
    plain: float | list | tuple | dict  # as written: a number, a list or a mapping (a tuple for a Python default)

    def __init__(self, dist, plain) -> None:
        object.__setattr__(self, "dist", dist)
        object.__setattr__(self, "plain", plain)

    @classmethod
    def parse(cls, key: str, value: Any) -> Dist:
        """The distribution of config value ``value`` (``key`` names it in a refusal); a Dist as it is.

        A distribution field holds a quantity: a ``choice`` of anything but numbers is refused.

        Parameters
        ----------
        key : str
            The config key, quoted in an error.
        value : object
            What :func:`as_distribution` accepts (OmegaConf nodes included), or a Dist.

        Returns
        -------
        Dist
            The parsed value, recording ``value`` as written.
        """
        if isinstance(value, Dist):
            return value
        written = _written(value)
        dist = as_distribution(key, written)
        if isinstance(dist, Choice) and not all(is_number(v) for v in dist.values):
            raise ParameterError(f"{key}={list(dist.values)!r} holds non-numbers; allowed: numbers")
        return cls(dist, written)

    @classmethod
    def of(cls, value: Any) -> Dist:
        """A field default: :meth:`parse` of a value written in Python.

        Parameters
        ----------
        value : object
            A number, ``(low, high)`` or a ``{"dist": ...}`` dict.

        Returns
        -------
        Dist
            The parsed default.
        """
        return cls.parse("value", value)

    @property
    def kind(self) -> str:
        """The registered name of the distribution (``const``, ``uniform``, ``loguniform``, ``choice``, ...)."""
        return next(name for name, cls in DISTRIBUTIONS.items() if cls is type(self.dist))

    @property
    def low(self) -> float:
        """The smallest value a draw can take."""
        return self.dist.support()[0]

    @property
    def high(self) -> float:
        """The largest value a draw can take."""
        return self.dist.support()[1]

    @sections(SUPPORT, support="``(low, high)``; infinite for an untruncated normal.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return self.dist.support()

    @sections(
        SAMPLE,
        draws="as many draws as the kind takes",
        type="float or object",
        value="The draw (a ``choice`` returns one of its values as written).",
    )
    def sample(self, rng: np.random.Generator):
        """One draw of the distribution."""
        return self.dist.sample(rng)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Dist is frozen: cannot set {name}")

    def __repr__(self) -> str:
        return repr(self.plain)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dist) and self.dist == other.dist and _listed(self.plain) == _listed(other.plain)

    def __hash__(self) -> int:
        return hash(self.dist)

    def __reduce__(self):
        return Dist, (self.dist, self.plain)

    def __copy__(self) -> Dist:
        return self

    def __deepcopy__(self, memo) -> Dist:
        return self


def _written(value: Any) -> Any:
    """A config value as plain Python: OmegaConf containers become lists and dicts; plain values stay."""
    if isinstance(value, (dict, list, tuple, str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "keys"):
        return {str(k): _written(value[k]) for k in value.keys()}
    if hasattr(value, "__iter__"):
        return [_written(v) for v in value]
    return value


def _listed(value: Any) -> Any:
    """``value`` with tuples as lists (a default written ``(a, b)`` equals the config value ``[a, b]``)."""
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_listed(v) for v in value]
    return value


def as_written(value: Any) -> Any:
    """``value`` with every :class:`Dist` inside (dicts, lists, tuples) replaced by its plain form: a
    config record as JSON takes it.

    Parameters
    ----------
    value : object
        A config record, nested to any depth.

    Returns
    -------
    object
        The same structure (dicts, lists and tuples kept as such) with Dists as written.
    """
    if isinstance(value, Dist):
        return value.plain
    if isinstance(value, dict):
        return {k: as_written(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(as_written(v) for v in value)
    return value
