"""Mixing: loudness control and temporal dislocation of several clips, with the mix record.

:func:`mix` / :func:`render_mix` (:mod:`auralgen.mixing.core`) compose clips; :class:`MixSpec`
(:mod:`auralgen.mixing.spec`) draws levels and timelines (its defaults, or a ``conf/mixing/*.yaml`` preset);
the sounds mixed are the ``events`` palette of :mod:`auralgen.sounds.events`.
"""

from auralgen.mixing.core import (
    DEFAULT_MAX_PEAK,
    LEVEL_MODES,
    ComponentRecord,
    MixInfo,
    component_level,
    mix,
    plan_mix,
    render_mix,
)
from auralgen.mixing.spec import DEFAULT_MIXING, TIMINGS, MixSpec

__all__ = [
    "DEFAULT_MAX_PEAK",
    "DEFAULT_MIXING",
    "LEVEL_MODES",
    "TIMINGS",
    "ComponentRecord",
    "MixInfo",
    "MixSpec",
    "component_level",
    "mix",
    "plan_mix",
    "render_mix",
]
