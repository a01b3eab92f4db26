"""Every task-config field has a type: no ``Any``/``object``, no bare ``tuple``; distributions are ``Dist``."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from auralgen.core.random import Dist
from auralgen.tasks.base import TASKS, dist_fields

NAMES = sorted(TASKS.load_all())


def untyped(cls) -> list[str]:
    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if hints[f.name] in (typing.Any, object, tuple)]


@pytest.mark.parametrize("name", NAMES)
def test_no_field_is_any_object_or_a_bare_tuple(name):
    assert untyped(TASKS.get(name).Config) == []


@pytest.mark.parametrize("name", NAMES)
def test_every_default_of_a_dist_field_is_a_dist_and_nothing_else_holds_one(name):
    cfg = TASKS.get(name).Config(name=name)
    holding = {f.name for f in dataclasses.fields(cfg) if isinstance(getattr(cfg, f.name), Dist)}
    assert holding == set(dist_fields(type(cfg)))


def test_the_distribution_fields_are_the_roved_quantities():
    fields = {f for name in NAMES for f in dist_fields(TASKS.get(name).Config)}
    assert {"tone_s", "gap_s", "lead_s", "freq_hz", "level_db_spl", "loudness_lufs", "distance_m"} <= fields
    assert len([n for n in NAMES if dist_fields(TASKS.get(n).Config)]) >= 25  # all but the audiogram and a few


def test_untyped_finds_an_any_field():
    @dataclasses.dataclass(frozen=True)
    class Loose:
        a: typing.Any = 1
        b: tuple = ()
        c: tuple[float, ...] = ()

    assert untyped(Loose) == ["a", "b"]
