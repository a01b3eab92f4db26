"""Typed distributions: every one states its support, and bounded() refuses what can leave a range."""

import math

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.core.random import Choice, Const, LogUniform, Normal, TruncNormal, Uniform, bounded


@pytest.mark.parametrize(
    "dist,support",
    [
        (Const(2.0), (2.0, 2.0)),
        (Choice((3, -1, 7)), (-1, 7)),
        (Uniform(-2.0, 0.0), (-2.0, 0.0)),
        (LogUniform(0.5, 4.0), (0.5, 4.0)),
        (Normal(1.0, 0.0), (1.0, 1.0)),
        (Normal(1.0, 2.0), (-math.inf, math.inf)),
        (TruncNormal(0.0, 1.0, -0.5, 0.25), (-0.5, 0.25)),
    ],
)
def test_samples_stay_within_the_stated_support(dist, support):
    assert dist.support() == support
    rng = np.random.default_rng(0)
    draws = [dist.sample(rng) for _ in range(200)]
    assert min(draws) >= support[0] and max(draws) <= support[1]


def test_bounded_refuses_supports_that_leave_the_range():
    assert bounded("x", [0.1, 0.2], low=0.0) == Uniform(0.1, 0.2)
    with pytest.raises(
        ParameterError, match=r"level=\[-3, 2\] reaches \[-3.0, 2.0\]; allowed: values within \[-inf, 0.0\]"
    ):
        bounded("level", [-3, 2], high=0.0)
    with pytest.raises(ParameterError, match="truncnorm"):
        bounded("tone_s", {"dist": "normal", "mean": 0.8, "std": 0.1}, low=1e-9)
    with pytest.raises(ParameterError, match="non-numbers"):
        bounded("k", {"dist": "choice", "values": ["a", "b"]})
