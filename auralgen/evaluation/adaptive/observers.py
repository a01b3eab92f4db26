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

__all__ = ["FAILURES", "FailingObserver", "FlipAdapter", "SimulatedObserver"]


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
        """The probability of a correct answer at ``value``.

        Parameters
        ----------
        value : float
            A level value in the domain's unit.

        Returns
        -------
        float
            Between ``chance`` and ``1 - lapse``; ``criterion`` at :attr:`threshold`.
        """
        u = self.domain.to_axis(value)
        f = 1.0 - math.exp(-(10.0 ** (self.slope * (u - self.scale_axis))))
        return self.chance + (1.0 - self.chance - self.lapse) * f

    def respond(self, trial: int, value: float) -> dict:
        """The record of trial ``trial`` at ``value``: correct with probability :meth:`p_correct`
        (the draw depends on ``(seed, trial)`` only).

        Parameters
        ----------
        trial : int
            The trial's index in its track.
        value : float
            The level value asked, in the domain's unit.

        Returns
        -------
        dict
            ``trial``, ``level_value`` and ``correct`` (bool).
        """
        u = np.random.default_rng([self.seed, trial]).random()
        return {"trial": trial, "level_value": float(value), "correct": bool(u < self.p_correct(value))}


FAILURES = ("refuse", "same", "first", "position", "drift")


@dataclass(frozen=True)
class FailingObserver(SimulatedObserver):
    """A :class:`SimulatedObserver` that fails the way audio-language models do (``kind``):

    ``refuse``    with probability ``rate`` the reply names no option (a refusal, an unparseable reply);
    ``same``      always answers "the same", never right on an adaptive track (every value differs);
    ``first``     always chooses the first option shown (right when the answer is shown first: 1 in n);
    ``position``  hears as the observer does, and when it does not, picks the first option instead of
                  guessing (the accuracy is unchanged under the rotation of options; the choices lean);
    ``drift``     its lapse rate drifts linearly from ``lapse`` to ``rate`` over ``span`` trials (the
                  Weibull position stays; :attr:`true_threshold` is the criterion point at the mean lapse).

    Each record carries ``outcome`` and the choice (``choice_position``, ``choice_text``); options are
    ``round(1 / chance)`` with the answer's position drawn per trial.
    """

    kind: str = "refuse"
    rate: float = 0.1
    span: int = 80

    def __post_init__(self):
        super().__post_init__()
        if self.kind not in FAILURES:
            raise ParameterError(f"observer kind={self.kind!r} is unknown; allowed: {', '.join(FAILURES)}")
        if not 0.0 <= self.rate < 1.0 - self.criterion:
            raise ParameterError(f"observer rate={self.rate!r}; allowed: 0 <= rate < 1 - criterion")

    @property
    def true_threshold(self) -> float:
        """The threshold a track should find: ``inf`` for ``same`` and ``first`` (none), the criterion point
        at the session's mean lapse for ``drift``, else :attr:`threshold`."""
        if self.kind in ("same", "first"):
            return math.inf
        if self.kind != "drift":
            return self.threshold
        lapse = (self.lapse + self.rate) / 2.0
        q = (1.0 - lapse - self.criterion) / (1.0 - self.chance - lapse)
        return float(self.domain.to_value(self.scale_axis + math.log10(-math.log(q)) / self.slope))

    def _p_at(self, trial: int, value: float) -> float:
        if self.kind != "drift":
            return self.p_correct(value)
        lapse = self.lapse + (self.rate - self.lapse) * min(trial / max(self.span, 1), 1.0)
        f = 1.0 - math.exp(-(10.0 ** (self.slope * (self.domain.to_axis(value) - self.scale_axis))))
        return self.chance + (1.0 - self.chance - lapse) * f

    def respond(self, trial: int, value: float) -> dict:
        rng = np.random.default_rng([self.seed, trial, 1])
        n = max(2, round(1.0 / self.chance)) if self.chance > 0 else 2
        truth = int(rng.integers(n))
        rec = {"trial": trial, "level_value": float(value)}
        if self.kind == "refuse" and rng.random() < self.rate:
            return {**rec, "correct": False, "outcome": "unanswered"}
        if self.kind == "same":
            pick, text = (truth + 1) % n, "the same"  # never the answer: every value on the track differs
        elif self.kind == "first":
            pick, text = 0, None
        else:
            p = self._p_at(trial, value)
            heard = rng.random() < (p - self.chance) / (1.0 - self.chance)  # else a guess
            guess = 0 if self.kind == "position" else int(rng.integers(n))
            pick, text = (truth if heard else guess), None
        ok = pick == truth
        return {
            **rec,
            "correct": ok,
            "outcome": "correct" if ok else "wrong",
            "choice_position": pick,
            "choice_text": text,
        }


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

    def take_usage(self) -> dict | None:
        return self.inner.take_usage()

    def late_errors(self) -> dict[str, str]:
        return self.inner.late_errors()

    def protocol_report(self) -> dict:
        return self.inner.protocol_report()

    def describe(self) -> dict:
        return dict(self.cfg)

    def close(self) -> None:
        self.inner.close()
