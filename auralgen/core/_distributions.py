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

from auralgen.core.errors import ParameterError
from auralgen.core.registry import Registry

DISTRIBUTIONS: Registry[type] = Registry("dist")  # ``{dist: <name>, ...}`` in a config -> class


def _key(name: str, value: Any) -> str:
    return f"{name}={value!r}"


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
            The config key, quoted in an error.
        """
        return None

    def sample(self, rng: np.random.Generator) -> float:
        """The constant (no draw).

        Parameters
        ----------
        rng : numpy.random.Generator
            Not drawn from.

        Returns
        -------
        float
            ``value``.
        """
        return self.value

    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take.

        Returns
        -------
        tuple of float
            ``(value, value)``.
        """
        return self.value, self.value


@DISTRIBUTIONS.register("choice")
@dataclass(frozen=True)
class Choice:
    """One of ``values`` (numbers, or any values for a non-``Dist`` field), each equally likely."""

    values: tuple

    def validate(self, name: str) -> None:
        """Refuse an empty list of values.

        Parameters
        ----------
        name : str
            The config key, quoted in an error.
        """
        if len(self.values) == 0:
            raise ParameterError(f"{_key(name, list(self.values))} is empty; allowed: a non-empty list")

    def sample(self, rng: np.random.Generator):
        """One of ``values``, each equally likely.

        Parameters
        ----------
        rng : numpy.random.Generator
            Draws one integer.

        Returns
        -------
        object
            An element of ``values``.
        """
        return self.values[int(rng.integers(len(self.values)))]

    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take.

        Returns
        -------
        tuple of float
            ``(min(values), max(values))``.
        """
        return min(self.values), max(self.values)


@DISTRIBUTIONS.register("uniform")
@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[low, high]``."""

    low: float
    high: float

    def validate(self, name: str) -> None:
        """Refuse ``low > high``.

        Parameters
        ----------
        name : str
            The config key, quoted in an error.
        """
        if not self.low <= self.high:
            raise ParameterError(
                f"{_key(name, [self.low, self.high])} has low > high; allowed: [low, high] with low <= high"
            )

    def sample(self, rng: np.random.Generator) -> float:
        """One draw, uniform on ``[low, high)``.

        Parameters
        ----------
        rng : numpy.random.Generator
            Draws one uniform.

        Returns
        -------
        float
            The value.
        """
        return float(rng.uniform(self.low, self.high))

    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take.

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        return self.low, self.high


@DISTRIBUTIONS.register("loguniform")
@dataclass(frozen=True)
class LogUniform:
    """Log-uniform on ``[low, high]`` (``0 < low``): equal probability per octave or decade."""

    low: float
    high: float

    def validate(self, name: str) -> None:
        """Refuse a range that is not positive (``0 < low <= high``).

        Parameters
        ----------
        name : str
            The config key, quoted in an error.
        """
        if not 0 < self.low <= self.high:
            raise ParameterError(
                f"{_key(name, [self.low, self.high])} is not a positive range; "
                "allowed: [low, high] with 0 < low <= high"
            )

    def sample(self, rng: np.random.Generator) -> float:
        """One draw whose logarithm is uniform on ``[log low, log high)``.

        Parameters
        ----------
        rng : numpy.random.Generator
            Draws one uniform.

        Returns
        -------
        float
            The value.
        """
        return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))

    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take.

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        return self.low, self.high


@DISTRIBUTIONS.register("normal")
@dataclass(frozen=True)
class Normal:
    """Normal with ``mean`` and standard deviation ``std``, unbounded unless ``std`` is 0."""

    mean: float
    std: float

    def validate(self, name: str) -> None:
        """Refuse a negative ``std``.

        Parameters
        ----------
        name : str
            The config key, quoted in an error.
        """
        if self.std < 0:
            raise ParameterError(f"{name}.std={self.std!r} is negative; allowed: >= 0")

    def sample(self, rng: np.random.Generator) -> float:
        """One draw from the normal distribution.

        Parameters
        ----------
        rng : numpy.random.Generator
            Draws one normal.

        Returns
        -------
        float
            The value.
        """
        return float(rng.normal(self.mean, self.std))

    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take.

        Returns
        -------
        tuple of float
            ``(mean, mean)`` when ``std`` is 0, else ``(-inf, inf)``.
        """
        return (self.mean, self.mean) if self.std == 0 else (-math.inf, math.inf)


@DISTRIBUTIONS.register("truncnorm")
@dataclass(frozen=True)
class TruncNormal:
    """Normal with ``mean`` and ``std`` truncated to ``[low, high]``."""

    mean: float
    std: float
    low: float
    high: float

    def validate(self, name: str) -> None:
        """Refuse a negative ``std`` or ``low > high``.

        Parameters
        ----------
        name : str
            The config key, quoted in an error.
        """
        Normal(self.mean, self.std).validate(name)
        Uniform(self.low, self.high).validate(name)

    def sample(self, rng: np.random.Generator) -> float:
        """One draw from the normal truncated to ``[low, high]`` (inverse CDF).

        Parameters
        ----------
        rng : numpy.random.Generator
            Draws one uniform (none when ``std`` is 0).

        Returns
        -------
        float
            The value; ``mean`` clipped to the range when ``std`` is 0.
        """
        # Inverse-CDF sampling: one uniform draw per sample, so streams stay aligned.
        from scipy.stats import truncnorm

        if self.std == 0:
            return float(min(max(self.mean, self.low), self.high))
        a, b = (self.low - self.mean) / self.std, (self.high - self.mean) / self.std
        u = rng.uniform()
        return float(truncnorm.ppf(u, a, b, loc=self.mean, scale=self.std))

    def support(self) -> tuple[float, float]:
        """The smallest and largest value a draw can take.

        Returns
        -------
        tuple of float
            ``(low, high)``.
        """
        return self.low, self.high
