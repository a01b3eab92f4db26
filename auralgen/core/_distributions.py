"""The distribution kinds a config value can name: ``{dist: <kind>, ...}`` -> one of these classes.

Each is a small frozen dataclass that owns ``validate(name)``, ``sample(rng)`` and ``support()``;
:func:`auralgen.core.random.as_distribution` builds one from a config value and
:class:`auralgen.core.random.Dist` wraps it for a config field. Values are in the unit of the
quantity the config key names (``_hz``, ``_s``, ``_db``, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError
from auralgen.core.registry import Registry

DISTRIBUTIONS: Registry[type] = Registry("dist")  # ``{dist: <name>, ...}`` in a config -> class


def _key(name: str, value: Any) -> str:
    return f"{name}={value!r}"


# The sections of the three methods every kind has, written once (``sections`` fills in what differs).
VALIDATE = """
Parameters
----------
name : str
    The config key, quoted in an error.

Raises
------
ParameterError
    When the kind's fields are refused, naming ``name``, the value and what is allowed.
"""
SAMPLE = """
Parameters
----------
rng : numpy.random.Generator
    The item's generator; {draws}.

Returns
-------
{type}
    {value}
"""
SUPPORT = """
Returns
-------
tuple of float
    {support}
"""


@DISTRIBUTIONS.register("const")
@dataclass(frozen=True)
class Const:
    """A constant: every draw is ``value``."""

    value: float

    def validate(self, name: str) -> None:
        """Accept any value (a constant needs no check).

        Parameters
        ----------
        name : str
            Not read.
        """
        return None

    @sections(SAMPLE, draws="not drawn from", type="float", value="``value``.")
    def sample(self, rng: np.random.Generator) -> float:
        """The constant (no draw)."""
        return self.value

    @sections(SUPPORT, support="``(value, value)``.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return self.value, self.value


@DISTRIBUTIONS.register("choice")
@dataclass(frozen=True)
class Choice:
    """One of ``values`` (numbers, or any values for a non-``Dist`` field), each equally likely."""

    values: tuple

    @sections(VALIDATE)
    def validate(self, name: str) -> None:
        """Refuse an empty list of values."""
        if len(self.values) == 0:
            raise ParameterError(f"{_key(name, list(self.values))} is empty; allowed: a non-empty list")

    @sections(SAMPLE, draws="draws one integer", type="object", value="An element of ``values``.")
    def sample(self, rng: np.random.Generator):
        """One of ``values``, each equally likely."""
        return self.values[int(rng.integers(len(self.values)))]

    @sections(SUPPORT, support="``(min(values), max(values))``.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return min(self.values), max(self.values)


@DISTRIBUTIONS.register("uniform")
@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[low, high]``."""

    low: float
    high: float

    @sections(VALIDATE)
    def validate(self, name: str) -> None:
        """Refuse ``low > high``."""
        if not self.low <= self.high:
            raise ParameterError(
                f"{_key(name, [self.low, self.high])} has low > high; allowed: [low, high] with low <= high"
            )

    @sections(SAMPLE, draws="draws one uniform", type="float", value="The draw.")
    def sample(self, rng: np.random.Generator) -> float:
        """One draw, uniform on ``[low, high)``."""
        return float(rng.uniform(self.low, self.high))

    @sections(SUPPORT, support="``(low, high)``.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return self.low, self.high


@DISTRIBUTIONS.register("loguniform")
@dataclass(frozen=True)
class LogUniform:
    """Log-uniform on ``[low, high]`` (``0 < low``): equal probability per octave or decade."""

    low: float
    high: float

    @sections(VALIDATE)
    def validate(self, name: str) -> None:
        """Refuse a range that is not positive (``0 < low <= high``)."""
        if not 0 < self.low <= self.high:
            raise ParameterError(
                f"{_key(name, [self.low, self.high])} is not a positive range; "
                "allowed: [low, high] with 0 < low <= high"
            )

    @sections(SAMPLE, draws="draws one uniform", type="float", value="The draw.")
    def sample(self, rng: np.random.Generator) -> float:
        """One draw whose logarithm is uniform on ``[log low, log high)``."""
        return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))

    @sections(SUPPORT, support="``(low, high)``.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return self.low, self.high


@DISTRIBUTIONS.register("normal")
@dataclass(frozen=True)
class Normal:
    """Normal with ``mean`` and standard deviation ``std``, unbounded unless ``std`` is 0."""

    mean: float
    std: float

    @sections(VALIDATE)
    def validate(self, name: str) -> None:
        """Refuse a negative ``std``."""
        if self.std < 0:
            raise ParameterError(f"{name}.std={self.std!r} is negative; allowed: >= 0")

    @sections(SAMPLE, draws="draws one normal", type="float", value="The draw.")
    def sample(self, rng: np.random.Generator) -> float:
        """One draw from the normal distribution."""
        return float(rng.normal(self.mean, self.std))

    @sections(SUPPORT, support="``(mean, mean)`` when ``std`` is 0, else ``(-inf, inf)``.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return (self.mean, self.mean) if self.std == 0 else (-math.inf, math.inf)


@DISTRIBUTIONS.register("truncnorm")
@dataclass(frozen=True)
class TruncNormal:
    """Normal with ``mean`` and ``std`` truncated to ``[low, high]``."""

    mean: float
    std: float
    low: float
    high: float

    @sections(VALIDATE)
    def validate(self, name: str) -> None:
        """Refuse a negative ``std`` or ``low > high``."""
        Normal(self.mean, self.std).validate(name)
        Uniform(self.low, self.high).validate(name)

    @sections(
        SAMPLE,
        draws="draws one uniform (none when ``std`` is 0)",
        type="float",
        value="The draw; ``mean`` clipped to the range when ``std`` is 0.",
    )
    def sample(self, rng: np.random.Generator) -> float:
        """One draw from the normal truncated to ``[low, high]`` (inverse CDF)."""
        # Inverse-CDF sampling: one uniform draw per sample, so streams stay aligned.
        from scipy.stats import truncnorm

        if self.std == 0:
            return float(min(max(self.mean, self.low), self.high))
        a, b = (self.low - self.mean) / self.std, (self.high - self.mean) / self.std
        u = rng.uniform()
        return float(truncnorm.ppf(u, a, b, loc=self.mean, scale=self.std))

    @sections(SUPPORT, support="``(low, high)``.")
    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take."""
        return self.low, self.high


Distribution = Const | Choice | Uniform | LogUniform | Normal | TruncNormal  #: any parsed distribution
