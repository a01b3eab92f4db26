"""multi_source_relation: three overlapping sources with distinct timbres at different positions.

Sub-questions (the level index runs over them in order, as in ``mixture``):

- ``left``: which source is furthest to the left? ``levels``: azimuth spacing (deg) of
  the three frontal sources (ear level, same distance, received levels equalised);
- ``closer``: which source is closest? ``distance_levels_m``: distance spacing (m); the
  source level is fixed at 1 m, so the closer source is louder and drier (the cue);
- ``higher``: which source is highest? ``elevation_levels_deg``: elevation spacing (deg)
  at azimuths 40 deg apart on one side of the head (:data:`HIGHER_SIDE_DEG`), at or below
  :data:`TOP_ELEVATION_DEG`; received levels equalised.
- ``left_of``: two sources — is A to the left of B, to the right, or in the same direction?
  ``left_of_levels_deg``: azimuth separation (deg) of the pairs that differ; a third of the
  items put A in B's direction.

Which sound type takes which role is a random permutation, so no timbre predicts the answer.

The sources start one after another (:data:`ENTRY_GAP_S` apart) and then play together. Each one's
direction is carried by its own direct sound: three sources starting together leave no onset that
belongs to one of them, and in these rooms (direct-to-reverberant ratios of -10 to 0 dB) the ongoing
part of a steady sound carries mostly reflections. The synthesized kinds enter in a fixed order
(:data:`ENTRY_ORDER`: the harmonic tone, whose ongoing part is predictable, before the noise, which is
not; the click train, whose direction every click repeats, last), independent of their roles; their
onsets use 2 ms ramps (a 10 ms ramp leaves the first 4 ms of direct sound 20 dB down).
:mod:`auralgen.listeners.multisource` reads each source's direction from the mix this way. The
sweep, whose direct sound no onset isolates, is not among the kinds.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.qa import QA, arrange
from auralgen.core.random import Dist
from auralgen.listeners import multisource
from auralgen.sounds.corpus import NAMEABLE, load_corpus, sound_name
from auralgen.synth.palette import (
    SPATIAL_CLICK_RATE_HZ,
    SPATIAL_ENTRY_ORDER,
    SPATIAL_F0_HZ,
    SPATIAL_NAMES,
    SPATIAL_RAMP_S,
)
from auralgen.tasks import _sounds
from auralgen.tasks._spatial import LocalisationTask, SpatialConfig, check_spatial, is_binaural, with_tetra
from auralgen.tasks.base import DISTANCE_CUE_FEATURES, SPATIAL_FEATURES, AuditSpec, Measurement, register, require
from auralgen.tasks.design import SubQuestions

NAMES = SPATIAL_NAMES
RELATIONS = ("left", "closer", "higher", "left_of")
SIDES = ("left", "right", "same")
LEFT_OF_TEXTS = {"left": "To the left of {b}", "right": "To the right of {b}", "same": "In the same direction as {b}"}
ENTRY_ORDER = SPATIAL_ENTRY_ORDER  # the synthesized kinds, in the order they enter (see entry_times)
TOP_ELEVATION_DEG = 40.0  # "higher": no source above this (higher up, in these rooms, the ceiling reflection
# follows the direct sound within 1-2 ms, and the reference listener read 60-80 deg sources 60-100 deg low)
PULSE_TAPS = 3  # the click train's clicks: single samples (the palette's 9-tap Hann has a null at 4 kHz at 16 kHz,
# below the 4-8 kHz where the HRTFs carry elevation and front/back: the listener misread 4 of 31 clicks' elevations)
HIGHER_SIDE_DEG = (60.0, 120.0)  # "higher": the middle source's azimuth, left or right, so every source lies 20-160
# deg to one side: in the median plane the two ears' HRIRs nearly match at every elevation, so no cue that holds
# for an unknown source signal separates heights there (the listener misread 4 of 40 solo noises near 0 / 180 deg)
ENTRY_GAP_S = (0.15, 0.3)  # one source enters this long after the previous one
LEFT_OF_MIN_MS = 0.04  # onset-ITD difference that separates two directions
LEFT_OF_MIN_LATERAL = 0.1  # non-binaural left_of: measured lateral components (sin az cos el) this far apart differ
ONSET_FLOOR_DB = -50.0  # a source's onset: its 1 ms power first within this of its loudest (a sweep starts weak)
ONSET_TOLERANCE_S = (
    0.005  # ... against onset_s + distance / c + the delay filter's lead (its pre-ringing is earlier by < 2.5 ms)
)
LEVEL_TOLERANCE_DB = 0.5  # a source's received level (RMS over its duration) against its roved level
ARRIVAL_HIGHPASS_HZ = 1500.0  # a source's arrival: its power above this (the tone's low harmonics rise slowly) ...
ARRIVAL_SMOOTH = 16  # ... averaged over the trailing 16 samples ...
ARRIVAL_FLOOR_DB = -30.0  # ... first within this of the direct-path span's highest
MAX_DELAY_S = 0.025  # 8.6 m: beyond any source of this task
UNITS = {
    "left": ("azimuth", "deg"),
    "closer": ("distance", "m"),
    "higher": ("elevation", "deg"),
    "left_of": ("azimuth", "deg"),
}
QUESTIONS = {
    "left": (
        "Three sounds start one after another and overlap, from different directions. "
        "Which one is furthest to the left?"
    ),
    "closer": "Three sounds start one after another and overlap, at different distances. Which one is closest to you?",
    "higher": "Three sounds start one after another and overlap, at different heights. Which one is highest?",
    "left_of": "Two sounds start one after another and overlap. Where is {a} relative to {b}?",
}


@dataclass(frozen=True)
class MultiSourceRelationConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {
        "gap_s": "the sounds overlap: each enters ENTRY_GAP_S (0.15-0.3 s) after the previous one",
        "phrasings": "each relation has one question",
    }
    name: str = "multi_source_relation"
    levels: tuple[float, ...] = (60, 40, 20)
    distance_levels_m: tuple[float, ...] = (2.0, 1.0, 0.5)
    elevation_levels_deg: tuple[float, ...] = (40, 30, 20)
    left_of_levels_deg: tuple[float, ...] = (60, 30, 15)
    relations: tuple[str, ...] = RELATIONS
    source_s: Dist = Dist.of((1.0, 1.5))
    clip_s: float = 3.0
    ramp_s: float = SPATIAL_RAMP_S
    rooms: tuple[str, ...] = ("living_room", "classroom")
    listener_height_m: Dist = Dist.of((1.2, 1.4))

    def cue_needs(self):
        cues = {"left": "lateral", "left_of": "lateral", "higher": "vertical"}
        return {cues[r]: f"relation {r!r} (drop it from relations)" for r in reversed(self.relations) if r in cues}

    def check_task(self, audio, key):
        require(
            self.relations and all(r in RELATIONS for r in self.relations),
            f"{key}.relations={list(self.relations)!r} is invalid; allowed: a non-empty list from {list(RELATIONS)}",
        )
        require(
            all(0 < v <= 60 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: 0 < deg <= 60 (three frontal sources)",
        )
        require(
            all(0 < v <= 2.5 for v in self.distance_levels_m),
            f"{key}.distance_levels_m={list(self.distance_levels_m)!r} is out of range; allowed: 0 < m <= 2.5",
        )
        require(
            all(0 < v <= (TOP_ELEVATION_DEG + 40.0) / 2 for v in self.elevation_levels_deg),
            f"{key}.elevation_levels_deg={list(self.elevation_levels_deg)!r} is out of range; allowed: 0 < deg <= "
            f"{(TOP_ELEVATION_DEG + 40.0) / 2:g} (three sources between KEMAR's lowest -40 and {TOP_ELEVATION_DEG:g} "
            "deg)",
        )
        from auralgen.tasks.base import check_levels

        check_levels(f"{key}.distance_levels_m", self.distance_levels_m)
        check_levels(f"{key}.elevation_levels_deg", self.elevation_levels_deg)
        check_levels(f"{key}.left_of_levels_deg", self.left_of_levels_deg)
        require(
            all(0 < v <= 90 for v in self.left_of_levels_deg),
            f"{key}.left_of_levels_deg={list(self.left_of_levels_deg)!r} is out of range; allowed: 0 < deg <= 90 "
            "(frontal pairs)",
        )
        check_spatial(self, audio, key, max_distance_m=1.0 + 2 * max(self.distance_levels_m))
        kind = self.receiver.get("type")
        require(
            "closer" not in self.relations or kind == "binaural",
            f"{key}.relations has 'closer' with {key}.receiver.type={kind!r}: its per-source onsets cannot be "
            "measured there (the RIR's zero-phase 10 Hz high-pass, as pyroomacoustics', puts energy before the "
            "direct sound of omni and FOA channels), so every such item would be dropped; allowed: receiver type "
            f"binaural, or {key}.relations without 'closer'",
        )
        if audio.source.recorded:  # three sounds named by their classes: three classes at least
            labels = [x for x in load_corpus(audio.source).labels if x]
            require(
                len(labels) >= 3,
                f"source={audio.source.kind} has {len(labels)} labelled classes {labels}; allowed: at least 3 for "
                f"{key}",
            )


class Relations(SubQuestions):
    """The task's design: one level per value of each relation's list (``relations`` order). The plan
    deals the source names (left, closer, higher) and the ``left_of`` texts (grouped by side) equally
    often; a recorded corpus's class names are not dealt."""

    @classmethod
    def of(cls, task) -> Relations:
        cfg = task.cfg
        lists = {
            "left": cfg.levels,
            "closer": cfg.distance_levels_m,
            "higher": cfg.elevation_levels_deg,
            "left_of": cfg.left_of_levels_deg,
        }
        grid = tuple((r, float(v)) for r in cfg.relations for v in lists[r])
        texts = {}
        if not task.audio.source.recorded:
            names = {n: n for n in (NAMES[k] for k in ENTRY_ORDER)}
            sides = {text.format(b=b): side for b in names for side, text in LEFT_OF_TEXTS.items()}
            texts = {"left": names, "closer": names, "higher": names, "left_of": sides}
        return cls(task.name, grid, cfg.items_per_level, task.regime, UNITS, texts)


@register
class MultiSourceRelation(LocalisationTask):
    name = "multi_source_relation"
    takes_sources = NAMEABLE  # options name the sounds: procedural kinds or a labelled corpus, not bare clips
    audit = AuditSpec(
        (
            *SPATIAL_FEATURES,
            *DISTANCE_CUE_FEATURES,
            "relation",
            "step",
            "answer_sound",
            "side",
            "sounds.*.azimuth_deg",
            "sounds.*.elevation_deg",
            "sounds.*.distance_m",
            "sounds.*.drr_db_expected",
            "delta.*",
            "row.level",
            "row.question",
        ),
        listener_easiest=None,
        reason="the grid runs over four relations, so no one end is the easiest; the listener reads left, left_of "
        "and higher from each synthesized source's direct sound in the mix (binaural), closer from each one's "
        "direct level against its recipe, and answers NO_ANSWER for recorded classes (naming them needs a "
        "classifier); measure confirms every named source's onset, received level and direction on its solo "
        "render, and the labelled relation among the measured positions",
        # which sound is closest is which one is loudest at the listener: the mix's loudness, the level shape of
        # its parts and its crest factor (a near click train sets the peak) follow the distances there
        cues_when=(("relation", ("closer",), ("audio.loudness_lufs", "audio.crest_db", "audio.delta_level_db")),),
    )
    listener = with_tetra(multisource.multi_source_relation)
    category = "spatiotemporal_reasoning"
    sub_category = "multi_source_spatial_relation"
    attribute = "azimuth"
    regime = "relative"
    level_unit = "deg"
    n_choices = 3
    Config = MultiSourceRelationConfig
    Design = Relations
    questions = tuple(QUESTIONS.values())

    def sample(self, rng: np.random.Generator, level: int) -> dict[str, Any]:
        level = self.as_level(level)
        relation, step = self.design.sub(level), level.value  # the relation by grid index
        pool = sorted(ENTRY_ORDER)
        if self.audio.source.recorded:  # named classes of the corpus; the measurement keeps the ones that carry the cue
            pool = list(load_corpus(self.audio.source).labels)
        kinds = [str(k) for k in rng.permutation(pool)[:3]]
        roles = [int(v) for v in rng.permutation(3)]  # roles[i]: rank of sound i (0 = the answer)
        dur = float(self.source_s.sample(rng))
        sounds = []
        side = SIDES[int(rng.integers(3))]  # drawn for every item: the stream does not depend on the relation
        if relation == "left_of":  # sound 0 (A) left of / right of / in the same direction as sound 1 (B)
            centre = float(rng.uniform(-90 + step, 90 - step))
            offset = {"left": step, "right": -step, "same": 0.0}[side]
            d = float(self.distance.sample(rng))
            geo = [(centre + offset, 0.0, d), (centre, 0.0, d)]
            kinds = kinds[:2]
        elif relation == "left":
            centre = float(rng.uniform(-90 + step, 90 - step))
            geo = [(centre + step * (1 - r), 0.0, float(self.distance.sample(rng))) for r in roles]
            d = geo[0][2]
            geo = [(az, el, d) for az, el, _ in geo]
        elif relation == "closer":
            d0 = float(rng.uniform(1.0, 1.5))
            az0 = float(rng.uniform(-60, 60))
            geo = [(az0 + 60.0 * (i - 1), 0.0, d0 + step * r) for i, r in enumerate(roles)]
        else:
            el0 = float(rng.uniform(-40.0, TOP_ELEVATION_DEG - 2 * step))
            az0 = float(rng.uniform(*HIGHER_SIDE_DEG)) * (1.0 if rng.integers(2) else -1.0)
            d = float(rng.uniform(1.0, 1.2))  # near, so that high sources fit under the ceiling
            geo = [(az0 + 40.0 * (i - 1), el0 + step * (2 - r), d) for i, r in enumerate(roles)]
        for kind, (az, el, d) in zip(kinds, geo):
            if self.audio.source.recorded:
                src = self.draw_source(rng, dur, label=kind)
                sounds.append({"azimuth_deg": az, "elevation_deg": el, "distance_m": d, "source": src})
                continue
            src = self.draw_source(rng, dur)
            src["kind"] = kind
            src.setdefault("f0_hz", float(rng.uniform(*SPATIAL_F0_HZ)))
            src.setdefault("rate_hz", float(rng.uniform(*SPATIAL_CLICK_RATE_HZ)))
            src.setdefault("up", bool(rng.integers(2)))
            if kind == "clicks":
                src["pulse_taps"] = PULSE_TAPS
            sounds.append({"azimuth_deg": az, "elevation_deg": el, "distance_m": d, "source": src})
        extra = {"side": side} if relation == "left_of" else {"answer_sound": roles.index(0)}
        params = self.make_params(rng, sounds, normalise=relation != "closer", relation=relation, step=step, **extra)
        gaps = [float(g) for g in rng.uniform(*ENTRY_GAP_S, size=len(sounds) - 1)]
        for s, t in zip(
            params["sounds"], entry_times(params["sounds"][0]["onset_s"], kinds, gaps, self.audio.source.recorded)
        ):
            s["onset_s"] = t
        return params

    def qa(self, params, rng, *, slot):
        names = [source_name(s["source"]) for s in params["sounds"]]
        if params["relation"] == "left_of":
            b = names[1]
            texts = {side: text.format(b=b) for side, text in LEFT_OF_TEXTS.items()}
            answer = texts[params["side"]]
            options, index = arrange(answer, [t for t in texts.values() if t != answer], slot=slot, rng=rng)
            return QA(QUESTIONS["left_of"].format(a=names[0], b=b), options, index)
        answer = names[params["answer_sound"]]
        options, index = arrange(answer, [n for n in names if n != answer], slot=slot, rng=rng)
        return QA(QUESTIONS[params["relation"]], options, index)

    def measure(self, params, clips):
        """Each source rendered alone (same recipe): its onset, received level and direction
        (:func:`source_record`) against the recipe, and the labelled relation among the measured
        positions (:meth:`relation_check`); the clip must be the sources' sum."""
        solos = [self.render({**params, "sounds": [s]})[0].astype(np.float64) for s in params["sounds"]]
        total = solos[0].copy()
        for x in solos[1:]:
            total += x  # np.sum(solos, axis=0)'s additions, in order, without stacking the solos
        total -= clips[0]
        same_audio = bool(np.maximum(total.max(), -total.min()) <= 1e-5)
        sources = [source_record(params, s, x) for s, x in zip(params["sounds"], solos)]
        ok, measured = self.relation_check(params, solos, sources)
        each = all(r["onset_s"]["ok"] and r["level_db_spl"]["ok"] for r in sources)
        return Measurement.from_dict(
            {
                **measured,
                "sources": sources,
                "clip_is_sum_of_sources": same_audio,
                "valid": bool(ok and each and same_audio),
            }
        )

    def relation_check(self, params, solos, sources) -> tuple[bool, dict[str, Any]]:
        """Whether the measured positions carry the labelled relation, and what was measured.

        Parameters
        ----------
        params : dict of str to Any
            The item's recipe (``relation``, ``answer_sound`` or ``side``, ``sounds``).
        solos : list of ndarray
            Each source rendered alone, shape (channels, samples), float64.
        sources : list of dict
            Each source's :func:`source_record` (its measured ``direction`` in degrees, or None).

        Returns
        -------
        tuple of (bool, dict of str to Any)
            Whether the relation holds, and the measurements it rests on (e.g. ``itd_ms``, ``ild_db``,
            ``arrival_delay_ms``, ``side``).
        """
        rel, ans = params["relation"], params.get("answer_sound")
        dirs = [r["direction"] for r in sources]
        if rel in ("left", "left_of") and is_binaural(params):
            cues = [
                self.direction_check({**params, "sounds": [s]}, [x])["sounds"][0]  # x holds float32 values
                for s, x in zip(params["sounds"], solos)
            ]
            measured = {"itd_ms": [c["itd_ms"] for c in cues], "ild_db": [c["ild_db"] for c in cues]}
            if rel == "left":
                return max(range(3), key=lambda i: cues[i]["itd_ms"] + 0.05 * cues[i]["ild_db"]) == ans, measured
            lead = cues[0]["itd_ms"] - cues[1]["itd_ms"]  # ILDs of different spectra are not comparable
            seen = "same" if abs(lead) < LEFT_OF_MIN_MS else ("left" if lead > 0 else "right")
            return seen == params["side"], {**measured, "side": seen}
        if rel == "closer":  # the direct sound's travel time, from each solo against its dry signal
            delays = [arrival_delay_s(params, s, x) for s, x in zip(params["sounds"], solos)]
            return int(np.argmin(delays)) == ans, {"arrival_delay_ms": [round(1e3 * d, 3) for d in delays]}
        if any(d is None for d in dirs):
            return False, {"note": "a source's direct sound is too short to measure its direction"}
        if rel == "higher":
            return int(np.argmax([d["elevation_deg"] for d in dirs])) == ans, {}
        lateral = [math.sin(math.radians(d["azimuth_deg"])) * math.cos(math.radians(d["elevation_deg"])) for d in dirs]
        if rel == "left":
            return int(np.argmax(lateral)) == ans, {}
        diff = lateral[0] - lateral[1]
        seen = "same" if abs(diff) < LEFT_OF_MIN_LATERAL else ("left" if diff > 0 else "right")
        return seen == params["side"], {"side": seen}


def entry_times(first_s: float, kinds: list[str], gaps: list[float], recorded: bool) -> list[float]:
    """Onset (s) of each sound: one after another, ``gaps`` apart, from ``first_s``.

    Synthesized kinds enter in :data:`ENTRY_ORDER`, whatever their roles (the roles are a random
    permutation, so the order says nothing about the answer): the periodic tone first, whose ongoing
    part a listener can predict and remove, the noise, which nothing predicts, before the sounds
    whose direction a listener reads from repeated or known waveforms. Recorded classes enter in
    their drawn order.

    Parameters
    ----------
    first_s : float
        Onset of the first sound to enter, seconds.
    kinds : list of str
        Each sound's kind (or recorded class), in the order of ``params["sounds"]``.
    gaps : list of float
        Seconds between successive entries, ``len(kinds) - 1`` of them.
    recorded : bool
        The sounds are recordings (they enter in their drawn order).

    Returns
    -------
    list of float
        Each sound's onset, seconds, in the order of ``kinds``.
    """
    order = (
        list(range(len(kinds))) if recorded else sorted(range(len(kinds)), key=lambda i: ENTRY_ORDER.index(kinds[i]))
    )
    times = [0.0] * len(kinds)
    t = first_s
    for rank, i in enumerate(order):
        times[i] = t
        t += gaps[rank] if rank < len(gaps) else 0.0
    return times


def source_name(src: dict[str, Any]) -> str:
    """The option text of a source: its class for a recording ("the snare drum"), else the kind's name.

    Parameters
    ----------
    src : dict of str to Any
        A sound's ``source`` entry (its ``kind``, and ``label`` for a recording).

    Returns
    -------
    str
        The name the options use.
    """
    return sound_name(src["label"]) if src["kind"] == "recording" else NAMES[src["kind"]]


def source_record(params, sound, solo: np.ndarray) -> dict[str, Any]:
    """One named source, rendered alone: its measured onset (the direct sound's arrival, where the
    solo first rises within :data:`ONSET_FLOOR_DB` of its loudest 1 ms) against ``onset_s`` plus the
    travel time, its received level against the recipe (the roved received level, or the statistical
    level at its distance for ``closer``), and its direction (:func:`~auralgen.tasks._direction.measure_direction`).

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe.
    sound : dict of str to Any
        One entry of ``params["sounds"]`` (``onset_s``, ``distance_m``, ``level_db_spl``, ``source``).
    solo : ndarray, shape (channels, samples)
        That sound rendered alone: the clip's float32 samples, as float64.

    Returns
    -------
    dict of str to Any
        ``kind``, the ``onset_s`` (seconds) and ``level_db_spl`` (dB SPL) check records, and ``direction``
        (``azimuth_deg``, ``elevation_deg``) or None where the direct sound is too short to measure.
    """
    from auralgen.measure import level_db_spl
    from auralgen.rooms.images import FDL2
    from auralgen.tasks._direction import measure_direction
    from auralgen.tasks._distance import TOLERANCE_DB, expected_received_db

    sr = params["sample_rate_hz"]
    f = max(1, sr // 1000)
    p = np.mean(solo**2, axis=0)
    frames = p[: p.size // f * f].reshape(-1, f).mean(axis=1)
    onset = int(np.flatnonzero(frames >= frames.max() * 10 ** (ONSET_FLOOR_DB / 10))[0]) * f / sr
    want_onset = sound["onset_s"] + sound["distance_m"] / SPEED_OF_SOUND_M_S + FDL2 / sr  # + the filter's delay
    a = _sounds.n_samples(sound["onset_s"], sr)
    b = a + _sounds.n_samples(sound["source"]["duration_s"], sr)
    got = level_db_spl(solo[:, a:b], full_scale_db_spl=params["full_scale_db_spl"])
    received = params["level_reference"] == "received"
    want, tol = (
        (sound["level_db_spl"], LEVEL_TOLERANCE_DB) if received else (expected_received_db(params, sound), TOLERANCE_DB)
    )
    d = measure_direction(params, solo, sound)  # float32 values (a clip's) held in float64
    return {
        "kind": sound["source"]["kind"],
        "onset_s": {
            "measured": round(onset, 4),
            "expected": round(want_onset, 4),
            "tolerance": ONSET_TOLERANCE_S,
            "ok": bool(abs(onset - want_onset) <= ONSET_TOLERANCE_S),
        },
        "level_db_spl": {
            "measured": round(got, 3),
            "expected": round(want, 3),
            "tolerance": tol,
            "ok": bool(abs(got - want) <= tol),
        },
        "direction": None if d is None else {k: d[k] for k in ("azimuth_deg", "elevation_deg")},
    }


def arrival_delay_s(params, sound, solo: np.ndarray) -> float:
    """Delay (s) of the direct sound in ``sound``'s solo render: where the solo's power (both ears)
    first comes within :data:`ARRIVAL_FLOOR_DB` of its highest in the direct-path span, less where the
    dry signal's own power does so (its ramp and waveform) and the delay filter's lead. The direct
    sound arrives first; a reflection can be stronger (a far source), so the strongest arrival is not it.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``sample_rate_hz``, ``ramp_s``).
    sound : dict of str to Any
        One entry of ``params["sounds"]`` (``onset_s``, ``source``).
    solo : ndarray, shape (channels, samples)
        That sound rendered alone.

    Returns
    -------
    float
        The direct sound's travel time, seconds.
    """
    from scipy.signal import sosfilt

    from auralgen.rooms.images import FDL2
    from auralgen.sounds.spatial import source_signal

    sr = params["sample_rate_hz"]
    span = FDL2 + int(MAX_DELAY_S * sr)
    dry = source_signal(sound["source"], sr, ramp_s=params["ramp_s"])[:span]
    a = int(round(sound["onset_s"] * sr))
    sos = _arrival_highpass(sr)
    wet = sosfilt(sos, solo[:, a : a + span], axis=-1)
    return (_first_within(np.sum(wet**2, axis=0)) - _first_within(sosfilt(sos, dry) ** 2) - FDL2) / sr


def _arrival_highpass(sample_rate: int) -> np.ndarray:
    """The 4th-order Butterworth high-pass at :data:`ARRIVAL_HIGHPASS_HZ` as second-order sections (a copy of
    the design, which is kept per rate: scipy's ``sosfilt`` wants a writable array)."""
    return _arrival_design(int(sample_rate)).copy()


@functools.lru_cache(maxsize=4)
def _arrival_design(sample_rate: int) -> np.ndarray:
    from scipy.signal import butter

    return butter(4, ARRIVAL_HIGHPASS_HZ, btype="highpass", fs=sample_rate, output="sos")


def _first_within(power: np.ndarray) -> int:
    """First index whose trailing mean ``power`` (over :data:`ARRIVAL_SMOOTH` samples) is within
    :data:`ARRIVAL_FLOOR_DB` of the highest."""
    env = np.convolve(power, np.ones(ARRIVAL_SMOOTH) / ARRIVAL_SMOOTH)[: power.size]
    return int(np.flatnonzero(env >= env.max() * 10 ** (ARRIVAL_FLOOR_DB / 10))[0])
