"""Stand-ins for a model in an adaptive track: simulated observers, and a wrapper that adds known noise.

:class:`SimulatedObserver` answers from a known psychometric function (no audio): the session
uses it in place of a model to check that the procedure recovers the threshold it was given.
:class:`FlipAdapter` wraps a real adapter (e.g. the reference DSP listener) and, with a known
probability, replaces its answer by a uniform guess among the options: accuracy
becomes ``guess + (1 - flip) * (p - guess)``, i.e. a lapse of ``flip * (1 - guess)``, so the
threshold at a fixed criterion must rise by a predictable amount while the curve's position
(its Weibull scale) stays.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError

from ..adapters.base import Adapter, letter
from .domain import LevelDomain

__all__ = ["FlipAdapter", "SimulatedObserver"]


@dataclass(frozen=True)
class SimulatedObserver:
    """An observer whose accuracy at value ``v`` is the log10-Weibull of :mod:`.quest` on ``domain``'s axis,
    reaching ``criterion`` at ``threshold`` (level units), with ``slope`` (per decade on a log domain),
    ``lapse`` and guess rate ``chance``.

    Examples
    --------
    >>> from auralgen.evaluation.adaptive.domain import LevelDomain
    >>> obs = SimulatedObserver(LevelDomain(1.0, 1000.0, "cents"), threshold=40.0, slope=2.0, chance=1 / 3)
    >>> round(obs.p_correct(40.0), 3)
    0.75
    """

    domain: LevelDomain
    threshold: float
    slope: float
    lapse: float = 0.0
    chance: float = 0.5
    criterion: float = 0.75
    seed: int = 0

    def __post_init__(self):
        if not 0 <= self.chance < self.criterion < 1 - self.lapse:
            raise ParameterError(
                f"observer chance={self.chance}, criterion={self.criterion}, lapse={self.lapse}; "
                "allowed: chance < criterion < 1 - lapse"
            )

    @property
    def scale_axis(self) -> float:
        """The Weibull position ``t`` on the axis (where accuracy is 1 - 1/e of the way up)."""
        q = (1.0 - self.lapse - self.criterion) / (1.0 - self.chance - self.lapse)
        return self.domain.to_axis(self.threshold) - math.log10(-math.log(q)) / self.slope

    def p_correct(self, value: float) -> float:
        u = self.domain.to_axis(value)
        f = 1.0 - math.exp(-(10.0 ** (self.slope * (u - self.scale_axis))))
        return self.chance + (1.0 - self.chance - self.lapse) * f

    def respond(self, trial: int, value: float) -> dict:
        """The record of trial ``trial`` at ``value``: correct with probability :meth:`p_correct`
        (the draw depends on ``(seed, trial)`` only)."""
        u = np.random.default_rng([self.seed, trial]).random()
        return {"trial": trial, "level_value": float(value), "correct": bool(u < self.p_correct(value))}


class FlipAdapter(Adapter):
    """``inner``'s reply, replaced with probability ``flip`` by a letter drawn uniformly among the
    options; the draws depend on ``(seed, unique_id)``."""

    kind = "flip"

    def __init__(self, inner: Adapter, flip: float, *, seed: int = 0):
        if not 0.0 <= flip <= 1.0:
            raise ParameterError(f"flip={flip!r}; allowed: a probability in [0, 1]")
        super().__init__({"inner": inner.describe(), "flip": flip}, seed=seed)
        self.inner, self.flip = inner, float(flip)

    def _guess(self, msg: dict) -> str | None:
        rng = np.random.default_rng([self.seed, zlib.crc32(msg["meta"]["unique_id"].encode())])
        options = msg["meta"]["options"]
        if rng.random() >= self.flip:
            return None
        return letter(int(rng.integers(len(options))))

    def generate_inner(self, msg):
        return self._guess(msg) or self.inner.generate_inner(msg)

    async def agenerate(self, msg):
        return self._guess(msg) or await self.inner.agenerate(msg)

    def describe(self) -> dict:
        return dict(self.cfg)

    def close(self) -> None:
        self.inner.close()
