"""distance_absolute: is the sound near (0-1 m), at medium distance (1-4.5 m) or far (> 4.5 m)?

Difficulty: the margin (percent, in ratio) of the distance from the nearest bin edge: every
item sits exactly at its level's margin (within :data:`MARGIN_TOLERANCE_PP`), above or below an
inner edge (a bin drawn uniformly, then one of its inner edges), and stores it as
``margin_percent`` with the ``edge_side``. All items use the same room (default: the hall) so that the room
cannot give the
distance away; the source level at 1 m is roved over ``level_db_spl`` (10 dB), so the received level
alone does not place the source, and the cue is the direct-to-reverberant ratio (DRR), which falls by
6 dB per doubling of distance in the room's diffuse field whatever the source level.

The grid follows what the cue carries. In the hall (RT60 1.8 s, critical
distance 2.7 m) the DRR is about +15 dB at 0.5 m and -11 dB at 9 m; beyond about 6 m the direct
sound sits more than 7 dB under the diffuse field and its level can no longer be read from the clip
with any precision, so the inner edges are 1 m and 4.5 m (the far side of the far edge needs only
"the DRR is low"). Levels are margins of 100 / 50 / 25 % (a distance ratio of 2 / 1.5 / 1.25 from
the edge: a DRR span of +-6 / +-3.5 / +-1.9 dB). The sources are steady noise: the DRR of a
harmonic complex or a click train read from one clip swings by several dB with the room's modes and
the sound's own gaps (:mod:`auralgen.listeners.distance`), which would make the label's cue a
property of the source kind; they last 1.0-1.2 s, so the steady part averages the noise's envelope
fluctuations over about a second. The blind DRR listener's accuracy at the 100 % margin is in the README's
validity table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from auralgen.core.random import Dist
from auralgen.listeners import distance as listen
from auralgen.tasks._binned import draw_at_margin, margin_percent
from auralgen.tasks._compare import within
from auralgen.tasks._distance import level_check
from auralgen.tasks._spatial import MIN_DISTANCE_M, AbsoluteLocalisation, SpatialConfig, check_spatial
from auralgen.tasks.base import DISTANCE_CUE_FEATURES, SPATIAL_FEATURES, AuditSpec, Measurement, register, require

MARGIN_TOLERANCE_PP = 1.0  # an item's margin from the nearest bin edge vs its level (percentage points)


@dataclass(frozen=True)
class DistanceAbsoluteConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {
        "gap_s": "one sound per clip",
        "distance_m": "distances are set by the levels and bins_m",
        "min_m": (
            "every distance sits at its level's margin from an inner bin edge; the nearest is bins_m[0] / (1 + margin)"
        ),
        "max_m": (
            "every distance sits at its level's margin from an inner bin edge; "
            "the farthest is bins_m[-1] * (1 + margin)"
        ),
    }
    name: str = "distance_absolute"
    levels: tuple[float, ...] = (100, 50, 25)
    rooms: tuple[str, ...] = ("hall",)
    sources: tuple[str, ...] = ("noise",)
    source_s: Dist = Dist.of((1.0, 1.2))  # the DRR is read from the steady part and the decay after the offset
    bins_m: tuple[float, ...] = (1.0, 4.5)
    min_m: float = 0.7
    max_m: float = 14.0

    def check_task(self, audio, key):
        b = self.bins_m
        require(
            b[0] > 0 and all(hi > lo for lo, hi in zip(b, b[1:])),
            f"{key}.bins_m={list(b)!r} is not increasing; allowed: 0 < bins_m...",
        )
        m = 1 + max(self.levels) / 100
        for lo, hi in zip(b, b[1:]):  # an inner bin holds a distance at the margin beyond lo and before hi
            require(
                lo * m < hi / m,
                f"{key}.levels={list(self.levels)!r}: the margin leaves no room in bin [{lo}, {hi}] m; allowed: "
                "smaller margins",
            )
        require(
            b[0] / m >= MIN_DISTANCE_M,
            f"{key}.bins_m={list(b)!r}: the nearest distance {b[0] / m:g} m (bins_m[0] {b[0]} m / {m:g}) is too near; "
            f"allowed: bins_m[0] / (1 + max level / 100) >= {MIN_DISTANCE_M} m",
        )
        check_spatial(self, audio, key, max_distance_m=b[-1] * m)


@register
class DistanceAbsolute(AbsoluteLocalisation):
    name = "distance_absolute"
    audit = AuditSpec(
        (
            *SPATIAL_FEATURES,
            *DISTANCE_CUE_FEATURES,
            "margin_percent",
            "edge_side",  # which inner bin edge the item sits by: the near/far bins have one, so it names the bin
            "bin",
            "sounds.*.distance_m",
            "sounds.*.drr_db_expected",
            # the level at the listener (inverse-square law) is distance's own cue, however it is measured
            "audio.delta_level_db",
            "audio.loudness_lufs",
        ),
    )
    listener = staticmethod(listen.distance_absolute)
    attribute = "distance"
    level_unit = "percent"
    Config = DistanceAbsoluteConfig
    questions = (
        "How far away is the sound source: near, at a medium distance, or far? The options give each range.",
        "Listen to the recording. Estimate the distance between the listener and the sound source.",
        "Is the sound source close to you, at a medium distance, or far away?",
    )

    @property
    def edges(self):
        return (0.0, *self.cfg.bins_m, math.inf)  # the outer ends are never reached (values sit at inner edges)

    @property
    def n_choices(self) -> int:  # type: ignore[override]
        return len(self.cfg.bins_m) + 1

    def labels(self) -> list[str]:
        """The option texts, one per distance bin of ``cfg.bins_m``, nearest first, each naming its range.

        Returns
        -------
        list of str
            ``len(cfg.bins_m) + 1`` texts, e.g. ``Near (0-1 m)``, ``Medium (1-4.5 m)``, ``Far (more than 4.5 m)``.
        """
        b = self.cfg.bins_m
        return (
            [f"Near (0-{b[0]:g} m)"]
            + [f"Medium ({lo:g}-{hi:g} m)" if len(b) == 2 else f"{lo:g}-{hi:g} m" for lo, hi in zip(b, b[1:])]
            + [f"Far (more than {b[-1]:g} m)"]
        )

    def sample(self, rng, level):
        level = self.as_level(level)
        k, side, distance = draw_at_margin(rng, self.edges, level.value)
        sound = {"azimuth_deg": float(rng.uniform(-180, 180)), "elevation_deg": 0.0, "distance_m": distance}
        margin = round(margin_percent(distance, self.edges), 9)
        return self.make_params(rng, [sound], normalise=False, bin=k, edge_side=side, margin_percent=margin)

    def qa(self, params, rng, *, slot):
        labels = self.labels()
        answer = labels[params["bin"]]
        return self.make_qa(answer, labels, rng, slot=slot)

    def measure(self, params, clips):
        """The received level against the statistical model at the item's distance (the audio
        check), and the margin of that distance from the nearest bin edge (from the recipe: beyond
        the critical distance the level's tolerance spans more than a bin, so the audio cannot
        resolve a margin)."""
        rec = level_check(params, clips)
        d = params["sounds"][0]["distance_m"]
        margin = within("margin_percent", margin_percent(d, self.edges), params["margin_percent"], MARGIN_TOLERANCE_PP)
        return Measurement.from_dict({**rec, "margin_percent": margin, "valid": rec["valid"] and margin["ok"]})
