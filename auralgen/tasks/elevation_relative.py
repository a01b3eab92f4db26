"""elevation_relative: do two sounds come from the same or different positions on the median plane?

Positions lie on the vertical arc in front of, above and behind the listener, described by
an arc angle phi in [-40, 220] deg: phi <= 90 is in front at elevation phi, phi > 90 behind
at elevation 180 - phi. Difficulty: the arc separation (deg) of the "different" pairs
(default 15, 90, 120, 150); half of the items are "same" pairs. On the median plane the
interaural cues are ~0: only spectral (pinna) cues and the room distinguish positions.
"""

from __future__ import annotations

from dataclasses import dataclass

from auralgen.listeners import spatial as listen
from auralgen.tasks._direction import MedianPlaneConfig, pair_check
from auralgen.tasks._spatial import RelativeLocalisation, with_tetra
from auralgen.tasks.base import SPATIAL_FEATURES, AuditSpec, Measurement, register, require

ARC_LOW, ARC_HIGH = -40.0, 220.0
ANSWERS = {"same": "Same position", "different": "Different positions"}


def arc_to_direction(phi_deg: float) -> tuple[float, float]:
    """(azimuth, elevation) of arc angle ``phi_deg`` on the median plane.

    Parameters
    ----------
    phi_deg : float
        Degrees along the median plane from straight ahead at ear level: 90 overhead, 180 straight behind.

    Returns
    -------
    tuple of (float, float)
        ``(azimuth_deg, elevation_deg)``: azimuth 0 (front) up to 90, else 180 (behind), elevation in degrees.
    """
    return (0.0, phi_deg) if phi_deg <= 90 else (180.0, 180.0 - phi_deg)


@dataclass(frozen=True)
class ElevationRelativeConfig(MedianPlaneConfig):
    name: str = "elevation_relative"
    levels: tuple[float, ...] = (15, 90, 120, 150)

    def cue_needs(self):
        return {
            "front_back": "telling positions on the median plane apart",
            "vertical": "telling positions on the median plane apart",
        }

    def check_levels(self, key):
        require(
            all(0 < v <= ARC_HIGH - ARC_LOW for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: 0 < deg <= {ARC_HIGH - ARC_LOW:g}",
        )


@register
class ElevationRelative(RelativeLocalisation):
    name = "elevation_relative"
    audit = AuditSpec(
        (
            *SPATIAL_FEATURES,
            "relation",
            "separation_deg",
            "sounds.*.arc_deg",
            "sounds.*.elevation_deg",
            "sounds.*.azimuth_deg",
            "delta.arc_deg",
            "delta.elevation_deg",
            "delta.azimuth_deg",
        ),
    )
    listener = with_tetra(listen.relative_direction)
    attribute = "elevation"
    level_unit = "deg"
    n_choices = 2
    Config = ElevationRelativeConfig
    questions = (
        "Two sounds are played one after the other, both straight ahead, above or behind you. Do they come from the "
        "same position?",
        "Listen to both sounds. Are they at the same position on the vertical arc around the listener?",
        "Did the second sound come from the same position as the first one?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        same = bool(rng.integers(2))
        sep = 0.0 if same else level.value
        phi1 = float(rng.uniform(ARC_LOW, ARC_HIGH - sep))
        phis = [phi1, phi1 + sep] if rng.integers(2) else [phi1 + sep, phi1]
        d = float(self.distance.sample(rng))
        source = self.draw_source(rng)
        sounds = []
        for phi in phis:
            az, el = arc_to_direction(phi)
            sounds.append(
                {"azimuth_deg": az, "elevation_deg": el, "arc_deg": phi, "distance_m": d, "source": dict(source)}
            )
        return self.make_params(rng, sounds, relation="same" if same else "different", separation_deg=sep)

    def qa(self, params, rng, *, slot):
        answer = ANSWERS[params["relation"]]
        return self.make_qa(answer, ANSWERS.values(), rng, slot=slot)

    def measure(self, params, clips):
        return Measurement.from_dict(pair_check(params, clips))
