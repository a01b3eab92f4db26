"""Shared pieces of the spatial tasks: source signals, rooms and geometry, rendering, checks.

A spatial item's ``params`` hold the full geometry: room (preset name, dimensions, RT60),
listener position and yaw, receiver config, and per sound the source position with the
azimuth / elevation / distance of its direct path, the statistical DRR, the source signal
recipe, the level and the onset. ``render(params)`` rebuilds the clip from those alone.

Cues left in, per task (documented in the README): direction tasks normalise each sound's
*received* level (RMS over channels) to a roved target, so overall loudness carries no
direction; ITD, ILD, spectral (pinna) cues and the room remain. Distance tasks keep the
source level fixed at 1 m, so the received level follows the inverse-distance law and the
direct-to-reverberant ratio follows the room (``distance_cue: normalised`` removes the level
cue and leaves DRR and spectrum).
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.errors import ParameterError, Redraw
from auralgen.core.memo import BoundedMemo
from auralgen.core.random import Choice, Dist
from auralgen.measure.geometry import az_el_to_unit, listener_to_room, wrap_azimuth_deg
from auralgen.rooms.backends import check_backend
from auralgen.rooms.images import FDL2
from auralgen.rooms.receivers import Binaural, Tetrahedral, receiver_from_config
from auralgen.rooms.scene import convolve, expected_drr_db, spatial_rir
from auralgen.rooms.spec import WALL_MARGIN_M, RoomSpec, load_preset, room_from_config, room_names
from auralgen.sounds.corpus import regular_file
from auralgen.sounds.spatial import SPATIAL, SYNTH_KINDS, source_signal
from auralgen.synth.levels import db_spl_to_rms, set_level_db_spl
from auralgen.tasks import _sounds
from auralgen.tasks.base import RECORDED_TOO, AudioConfig, Task, TaskConfig, require

AUDIO_SUFFIXES = (".wav", ".flac")
LISTENER_MARGIN_M = 0.5
PLACEMENT_TRIES = 400
ONSET_WINDOW_S = 0.008  # direction is measured on the first 8 ms after the direct sound arrives
ILD_MIN_DB = 2.0  # an ILD counts as a side cue from this magnitude on
ITD_MIN_S = 1e-4  # an ITD decides the side from this magnitude on
LATERAL_MIN = 0.34  # |sin(az) cos(el)| below this (within ~20 deg of the median plane): side not checked
MIN_DISTANCE_M = 0.5  # nearest source (m): the far-field HRIRs and the 1/r law hold from about here
# direction cues a receiver layout carries (the listener's yaw is random, so only the layout counts)
CUE_NAMES = {"lateral": "left/right", "front_back": "front/back", "vertical": "above/below"}
LAYOUT_CUES = {
    "mono": (),  # one omni: no direction at all
    "stereo": ("lateral",),  # an omni pair on the left-right axis: front and back mirror each other
    "circular (n=2)": ("front_back",),  # two omnis on the front-back axis: left and right mirror each other
    "circular (n>=3)": ("lateral", "front_back"),  # a horizontal ring: above and below mirror each other
    "tetra": ("lateral", "front_back", "vertical"),
    "foa": ("lateral", "front_back", "vertical"),
    "binaural": ("lateral", "front_back", "vertical"),
}


@dataclass(frozen=True)
class SpatialConfig(TaskConfig):
    rooms: tuple[str, ...] = ("small_office", "living_room", "classroom")
    receiver: Mapping[str, Any] = field(default_factory=lambda: {"type": "binaural"})
    mode: str = "hybrid"
    backend: str = "fast"
    sources: tuple[str, ...] = SYNTH_KINDS
    sources_dir: str | None = None
    source_s: Dist = Dist.of((0.5, 0.8))
    level_db_spl: Dist = Dist.of((60.0, 70.0))
    distance_m: Dist = Dist.of((1.0, 2.0))
    listener_height_m: Dist = Dist.of((1.2, 1.7))
    gap_s: Dist = Dist.of((0.3, 0.5))
    lead_s: Dist = Dist.of((0.1, 0.3))
    clip_s: float = 3.0
    ramp_s: float = 0.01

    def cue_needs(self) -> dict[str, str]:
        """Direction cues (keys of :data:`CUE_NAMES`) the task's answers need, each with what needs it
        (a hook: none here; a receiver layout that lacks a needed cue is refused at config time).

        Returns
        -------
        dict of str to str
            Cue name to what needs it, e.g. ``{"vertical": "telling positions on the median plane apart"}``.
        """
        return {}


def layout_name(receiver: dict) -> str:
    """The :data:`LAYOUT_CUES` entry of a receiver config (its type; a circle by its mic count)."""
    kind = receiver.get("type")
    if kind == "circular":
        return "circular (n=2)" if receiver.get("n") == 2 else "circular (n>=3)"
    return str(kind)


def check_layout(cfg: SpatialConfig, key: str) -> None:
    """Refuse a receiver layout that cannot carry a direction cue the task's answers need."""
    needs = cfg.cue_needs()
    carried = LAYOUT_CUES.get(layout_name(cfg.receiver), tuple(CUE_NAMES))
    for cue, why in needs.items():
        if cue not in carried:
            allowed = [name for name, cues in LAYOUT_CUES.items() if all(c in cues for c in needs)]
            raise ParameterError(
                f"{key}.receiver.type={cfg.receiver.get('type')!r} ({layout_name(cfg.receiver)}) carries no "
                f"{CUE_NAMES[cue]} cue, which {why} needs; allowed: receiver types {', '.join(allowed)}"
            )


def source_files(directory: str, key: str = "sources_dir") -> list[Path]:
    """The WAV/FLAC files of ``directory``, each checked to be a regular file (after symlinks)
    before anything opens it: opening a named pipe would wait forever for a writer."""
    d = Path(directory)
    if not d.is_dir():
        raise ParameterError(f"{key}={directory!r} is not a directory; allowed: a folder of WAV/FLAC files")
    files = sorted(p for p in d.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
    for p in files:
        regular_file(p, f"{key}={directory!r}", "regular WAV/FLAC files")
    if not files:
        raise ParameterError(f"{key}={directory!r} has no .wav or .flac file; allowed: a folder of WAV/FLAC files")
    return files


def check_spatial(cfg: SpatialConfig, audio: AudioConfig, key: str, *, max_distance_m: float) -> None:
    """Validation shared by the spatial tasks (rooms exist, geometry fits, sources readable)."""
    bad = [r for r in cfg.rooms if r not in room_names()]
    require(
        cfg.rooms and not bad,
        f"{key}.rooms={list(cfg.rooms)!r} has unknown rooms {bad}; allowed: {room_names()} (conf/room/*.yaml)",
    )
    layout = receiver_from_config(cfg.receiver, key=f"{key}.receiver")
    for r in cfg.rooms:
        check_backend(cfg.backend, cfg.mode, load_preset(r), layout, key=f"{key}.")
    check_layout(cfg, key)
    _sounds.check_stimuli(f"{key}.sources", cfg.sources, SYNTH_KINDS)
    for name in ("source_s", "gap_s", "lead_s", "listener_height_m"):
        _sounds.dist(f"{key}.{name}", getattr(cfg, name), low=0.0)
    _sounds.dist(f"{key}.distance_m", cfg.distance_m, low=MIN_DISTANCE_M)  # a source at the listener is degenerate
    require(
        _sounds.min_of(_sounds.dist(f"{key}.source_s", cfg.source_s)) >= 2 * cfg.ramp_s + ONSET_WINDOW_S,
        f"{key}.source_s={cfg.source_s!r} is too short; allowed: >= {2 * cfg.ramp_s + ONSET_WINDOW_S} s",
    )
    reach = max(math.hypot(load_preset(r).dims_m[0], load_preset(r).dims_m[1]) - 2 * WALL_MARGIN_M for r in cfg.rooms)
    require(
        max_distance_m <= reach,
        f"{key}: a distance of {max_distance_m:g} m does not fit rooms {list(cfg.rooms)}; allowed: at most {reach:.1f} "
        "m (add a larger room, e.g. hall)",
    )
    top_h = _sounds.max_of(_sounds.dist(f"{key}.listener_height_m", cfg.listener_height_m))
    low_room = min(load_preset(r).dims_m[2] for r in cfg.rooms)
    require(
        top_h <= low_room - WALL_MARGIN_M,
        f"{key}.listener_height_m={cfg.listener_height_m!r} does not fit under the {low_room} m ceiling; allowed: "
        f"below {low_room - WALL_MARGIN_M:g} m",
    )
    sr = cfg.sample_rate or audio.sample_rate
    require(sr >= 16000, f"{key}.sample_rate={sr} is too low for spatial cues; allowed: >= 16000")
    loud = _sounds.max_of(_sounds.dist(f"{key}.level_db_spl", cfg.level_db_spl)) + 12.0  # crest headroom
    require(
        loud < audio.full_scale_db_spl,
        f"{key}.level_db_spl={cfg.level_db_spl!r} clips at full_scale_db_spl={audio.full_scale_db_spl}; allowed: at "
        f"most {audio.full_scale_db_spl - 12:g}",
    )
    _sounds.check_recorded(key, cfg, audio, ("sources", "sources_dir"))  # the recording replaces them
    if cfg.sources_dir is not None:
        from auralgen.sounds.files import check_source_file

        for f in source_files(cfg.sources_dir, f"{key}.sources_dir"):
            check_source_file(str(f), f"{key}.sources_dir")


class SpatialTask(Task):
    """Base of the spatial tasks: sampling of geometry and sources, rendering, checks."""

    category = "spatial_perception"
    Config = SpatialConfig
    takes_sources = RECORDED_TOO  # a recording placed in the room; the spatial cue is measured as before

    def __init__(self, cfg: SpatialConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.source_s = _sounds.dist("source_s", cfg.source_s)
        self.level = _sounds.dist("level_db_spl", cfg.level_db_spl)
        self.distance = _sounds.dist("distance_m", cfg.distance_m)
        self.height = _sounds.dist("listener_height_m", cfg.listener_height_m)
        self.gap = _sounds.dist("gap_s", cfg.gap_s)
        self.lead = _sounds.dist("lead_s", cfg.lead_s)
        self.files = [str(p) for p in source_files(cfg.sources_dir)] if cfg.sources_dir else []

    def render_header(self) -> dict[str, Any]:
        """The first params fields of a spatial item: its sample rate, calibration, length, ramps and mode."""
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "clip_s": self.cfg.clip_s,
            "ramp_s": self.cfg.ramp_s,
            "mode": self.cfg.mode,
        }

    def channel_layout(self, params):
        return receiver_from_config(params["receiver"]).layout

    # -- sampling -----------------------------------------------------------------
    def draw_source(
        self, rng: np.random.Generator, duration_s: float | None = None, label: str | None = None
    ) -> dict[str, Any]:
        if self.audio.source.recorded:  # source=folder|hf|clips: a piece of a recording
            from auralgen.sounds.corpus import load_corpus

            d = float(duration_s or self.source_s.sample(rng))
            return SPATIAL.draw(rng, "recording", duration_s=d, corpus=load_corpus(self.audio.source), label=label)
        kinds = tuple(self.cfg.sources) + (("file",) if self.files else ())
        kind = Choice(kinds).sample(rng)
        return SPATIAL.draw(rng, kind, duration_s=float(duration_s or self.source_s.sample(rng)), files=self.files)

    def place(
        self, rng: np.random.Generator, directions: list[tuple[float, float, float]], rooms=None
    ) -> dict[str, Any]:
        """Room, listener and source positions for ``(az, el, dist)`` triples; raises if none fits."""
        rooms = [r for r in (rooms or self.cfg.rooms)]
        for _ in range(PLACEMENT_TRIES):
            name = Choice(tuple(rooms)).sample(rng)
            room = load_preset(name)
            dims = np.asarray(room.dims_m)
            xy = rng.uniform(LISTENER_MARGIN_M, dims[:2] - LISTENER_MARGIN_M)
            listener = np.array([xy[0], xy[1], float(self.height.sample(rng))])
            yaw = float(rng.uniform(-180.0, 180.0))
            local = np.array([d * az_el_to_unit(az, el) for az, el, d in directions])
            pts = listener_to_room(local, listener, yaw)
            if np.all(pts >= WALL_MARGIN_M) and np.all(pts <= dims - WALL_MARGIN_M):
                return {
                    "room": name,
                    "room_spec": room.to_dict(),
                    "room_dims_m": list(room.dims_m),
                    "rt60_s": room.rt60_s,
                    "listener_m": listener.tolist(),
                    "yaw_deg": yaw,
                    "positions_m": pts.tolist(),
                }
        raise ParameterError(
            f"{self.name}: no room of {rooms} fits sources at "
            f"{[(round(a), round(e), round(d, 1)) for a, e, d in directions]} (az, el, m); allowed: larger rooms or "
            "nearer sources"
        )

    def make_params(
        self, rng, sounds: list[dict[str, Any]], *, rooms=None, normalise: bool = True, **extra
    ) -> dict[str, Any]:
        """Params for sounds given as dicts with ``azimuth_deg``, ``elevation_deg``, ``distance_m``."""
        geo = self.place(rng, [(s["azimuth_deg"], s["elevation_deg"], s["distance_m"]) for s in sounds], rooms)
        level = float(self.level.sample(rng))
        t = float(self.lead.sample(rng))
        room = room_from_config(geo["room_spec"])
        for s, pos in zip(sounds, geo["positions_m"]):
            s.setdefault("source", self.draw_source(rng))
            s["position_m"] = pos
            s["azimuth_deg"] = float(wrap_azimuth_deg(s["azimuth_deg"]))
            s["drr_db_expected"] = round(expected_drr_db(room, s["distance_m"]), 3)
            s["level_db_spl"] = level
            s["onset_s"] = t
            s["rir_seed"] = int(rng.integers(2**31))
            t += s["source"]["duration_s"] + float(self.gap.sample(rng))
        receiver = {**dict(self.cfg.receiver), "position_m": geo["listener_m"], "yaw_deg": geo["yaw_deg"]}
        return {
            **self.render_header(),
            "backend": self.cfg.backend,
            "level_reference": "received" if normalise else "source_at_1m",
            **geo,
            "receiver": receiver,
            "sounds": sounds,
            **extra,
        }

    def clip_length_s(self, sounds: list[dict[str, Any]]) -> float:
        end = max(s["onset_s"] + s["source"]["duration_s"] for s in sounds)
        return max(self.cfg.clip_s, end + 0.2)

    # -- rendering -------------------------------------------------------------------
    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        sr = params["sample_rate_hz"]
        fs_db = params["full_scale_db_spl"]
        room = room_of(params)
        receiver = receiver_from_config(params["receiver"])
        total = _sounds.n_samples(
            max(params["clip_s"], max(s["onset_s"] + s["source"]["duration_s"] for s in params["sounds"]) + 0.2), sr
        )
        out = np.zeros((receiver.num_channels, total))
        scene = json.dumps({k: v for k, v in params.items() if k != "sounds"}, sort_keys=True, default=repr)
        for s in params["sounds"]:
            wet = _wet_memo(scene, s, lambda s=s: self._wet(params, s, room, receiver))
            a = _sounds.n_samples(s["onset_s"], sr)
            n = min(wet.shape[1], total - a)
            out[:, a : a + n] += wet[:, :n]
        return [fits_full_scale(out, params["sounds"][0]["level_db_spl"], fs_db)]

    @staticmethod
    def _wet(params: dict[str, Any], s: dict[str, Any], room, receiver) -> np.ndarray:
        """One source in the room at the receiver: ``[channels, samples]`` at its level, from time 0."""
        sr, fs_db = params["sample_rate_hz"], params["full_scale_db_spl"]
        dry = source_signal(s["source"], sr, ramp_s=params["ramp_s"])
        if params["level_reference"] == "source_at_1m":
            dry = set_level_db_spl(dry, s["level_db_spl"], full_scale_db_spl=fs_db)
        rir = spatial_rir(
            room,
            s["position_m"],
            receiver,
            sample_rate=sr,
            mode=params["mode"],
            rng=np.random.default_rng(s["rir_seed"]),
            backend=params.get("backend", "fast"),
        )
        wet = convolve(dry, rir)
        if params["level_reference"] == "received":
            n_dry = len(dry)
            rms = math.sqrt(float(np.mean(wet[:, :n_dry] ** 2)))
            wet *= db_spl_to_rms(s["level_db_spl"], full_scale_db_spl=fs_db) / max(rms, 1e-30)
        return wet

    # -- checks --------------------------------------------------------------------
    def direction_check(self, params, clips, sides: list[bool | None] | None = None) -> dict[str, Any]:
        """Binaural: each sound's onset ITD (or a clear ILD) points to the side of its source.

        ``sides`` (True = left) overrides the side implied by the stored azimuth, so a task
        can check its *label* against the audio.
        """
        from auralgen.measure import itd_ild

        if not is_binaural(params):
            return {"valid": True, "note": "direction measured for binaural receivers only"}
        sr = params["sample_rate_hz"]
        x = clips[0]
        recs, ok = [], True
        for i, s in enumerate(params["sounds"]):
            # the direct sound arrives after the propagation delay and the 40-sample filter offset
            a = _sounds.n_samples(s["onset_s"] + s["distance_m"] / SPEED_OF_SOUND_M_S, sr) + FDL2
            seg = x[:, a : a + _sounds.n_samples(ONSET_WINDOW_S, sr)].astype(np.float64)
            itd, ild = itd_ild(seg[0], seg[1], sr)
            lateral = math.sin(math.radians(s["azimuth_deg"])) * math.cos(math.radians(s["elevation_deg"]))
            side = lateral > 0 if sides is None or sides[i] is None else sides[i]
            # the ITD decides when it is clear; else a clear ILD; else the side is not measurable
            cue = itd > 0 if abs(itd) >= ITD_MIN_S else (ild > 0 if abs(ild) >= ILD_MIN_DB else None)
            good = abs(lateral) < LATERAL_MIN or cue == side
            ok &= good
            recs.append(
                {"itd_ms": round(itd * 1e3, 4), "ild_db": round(ild, 2), "lateral": round(lateral, 3), "ok": bool(good)}
            )
        return {"sounds": recs, "valid": bool(ok)}


def fits_full_scale(out: np.ndarray, level_db_spl: float, fs_db: float) -> np.ndarray:
    """``out`` as float32 clips when its peak stays below digital full scale; else this draw's geometry
    (room gain, overlap, a click train's crest factor) clips and the item is drawn again (:class:`Redraw`)."""
    peak = float(np.maximum(out.max(), -out.min()))  # max |out| without an |out| copy (NaN propagates alike)
    if peak >= 1.0:
        raise Redraw(
            "headroom",
            f"level_db_spl={level_db_spl:.1f} clips (peak {peak:.3f}) at full_scale_db_spl={fs_db}; "
            "allowed: lower levels",
        )
    return out.astype(np.float32)


def room_of(params: dict[str, Any]) -> RoomSpec:
    """The item's room from its own recipe (``room_spec``), so editing a preset later cannot change it."""
    return room_from_config(params["room_spec"])


def max_distance(spec) -> float:
    """Largest value of a ``distance_m`` distribution spec (m)."""
    return _sounds.max_of(_sounds.dist("distance_m", spec))


def is_binaural(params) -> bool:
    """Whether the item's receiver has ears (its channels carry interaural time and level differences)."""
    return receiver_from_config(params["receiver"]).ear_positions_m() is not None


def with_tetra(listener):
    """A direction listener of :mod:`auralgen.listeners.spatial` with the mic offsets of the
    ``tetra`` receiver (its default radius: a row names the layout, not the radius) and, where it takes
    one, the default binaural receiver's HRTF set (a row says "binaural", not which set) bound, as a
    task's ``listener`` class attribute."""
    bound = {"tetra_offsets_m": Tetrahedral().local_offsets_m()}
    if "hrtf" in inspect.signature(listener).parameters:  # binaural: the set the default receiver renders with
        bound["hrtf"] = Binaural(position_m=(0.0, 0.0, 0.0)).hrtf_at
    return staticmethod(partial(listener, **bound))


__all__ = ["SpatialConfig", "SpatialTask", "check_spatial"]


WET_MEMO_SIZE = 8  # sources rendered in their room kept per process: a measurement renders each source alone again
_WET = BoundedMemo(WET_MEMO_SIZE)


def _wet_memo(scene: str, sound: dict[str, Any], make) -> np.ndarray:
    """``make()``, the source ``sound`` rendered in the room ``scene`` (the item's params but its
    sounds, as JSON), or the same read-only array when one of the last :data:`WET_MEMO_SIZE` calls had
    the same scene and sound: a pure function of both (the room's randomness is seeded by the sound's
    ``rir_seed``), so the measurement's solo renders cost nothing and give the render's very values.
    Synthesized sources only (:data:`~auralgen.sounds.spatial.SYNTH_KINDS`)."""
    if sound["source"].get("kind") not in SYNTH_KINDS:  # a file source is read again, as source_signal does
        return make()
    return _WET.get((scene, json.dumps(sound, sort_keys=True, default=repr)), make)


class LocalisationTask(SpatialTask):
    """A spatial task whose answer is a direction, a distance or a motion (filed as spatial)."""

    spatial = True


class AbsoluteLocalisation(LocalisationTask):
    """A localisation task whose answer is the one sound's direction or distance class."""

    sub_category = "absolute_localisation"
    regime = "absolute"


class RelativeLocalisation(LocalisationTask):
    """A localisation task whose answer compares the positions of two sounds."""

    sub_category = "relative_localisation"
    regime = "relative"
