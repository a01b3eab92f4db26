"""Shared pieces of the reverberation tasks: a dry sound heard in a room whose absorption is solved
so that the clip's measured decay has the reverberation time the item asks for.

An item is one geometry -- a room's dimensions (from ``conf/room/<name>.yaml``; its absorption is
not used), a listener and a source ``distance_m`` away in a random horizontal direction -- one dry
source signal (:mod:`auralgen.sounds.spatial`), one seed for the late reverberation's noise, and
per sound a *target* reverberation time ``rt60_s``. The room is rendered by the project's room
engine (:func:`auralgen.rooms.scene.spatial_rir`, the ``fast`` backend in ``hybrid`` mode: exact
image sources, then an energy-matched noise tail) through the task's receiver, a mono omni by
default: reverberation is not a direction cue, and one channel keeps the rendering fast.

**Reverberation time solved on the clip.** The room's ``rt60_s`` (inverse Sabine absorption) is
not what a decay measures: the image-source decay is curved and, at high absorption, Eyring-like,
so the T20 read from a clip is 0.7-1.2 times the nominal value depending on the room and the
absorption. :func:`calibrated` therefore solves the nominal value by a log-secant search until the
clip's T20 after the dry sound ends (:func:`auralgen.measure.reverb.decay_rt60_s`, ISO 3382-1
T20, the interrupted-noise / impulse decay backward-integrated) is within :data:`SOLVE_TOLERANCE`
of the target. The search is a pure function of ``params`` (cached, so ``measure`` reuses what
``render`` solved), and ``render`` draws nothing.

**Controlled.** Each rendered sound (the dry sound and its decay, cut at the end of its fixed
slot) is scaled to the item's integrated loudness ``loudness_lufs`` (BS.1770 via pyloudnorm), so
loudness carries no reverberation. Sounds start at fixed slot offsets and the clip has one
length (``clip_s``) for every item; each slot holds the longest sound plus a decay of the
longest reverberation time the config can ask for (``TAIL_RT60`` times it, i.e. 60 dB), so the
clip's length and the sounds' places say nothing about the answer. The sound's kind and
duration, the room, the geometry and the loudness are drawn independently of the answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.errors import ParameterError
from auralgen.core.random import Dist
from auralgen.measure.reverb import decay_rt60_s
from auralgen.measure.room import drr_db
from auralgen.rooms.images import FDL2
from auralgen.rooms.receivers import receiver_from_config
from auralgen.rooms.scene import convolve, spatial_rir
from auralgen.rooms.spec import MAX_RT60_S, RoomSpec, min_rt60_s
from auralgen.sounds.spatial import source_signal
from auralgen.synth import loudness_lufs, n_samples, place
from auralgen.synth.levels import set_loudness_lufs
from auralgen.tasks import _sounds
from auralgen.tasks._spatial import SpatialConfig, SpatialTask, check_spatial
from auralgen.tasks.base import AudioConfig, require

TAIL_RT60 = 1.0  # a slot holds the longest sound and this many reverberation times of decay (60 dB per RT60)
FADE_S = 0.02  # raised-cosine fade at a slot's end (the decay there is ~60 dB down)
SOLVE_TOLERANCE = 0.002  # the solved clip T20 is within this fraction of the target
SOLVE_STEPS = 8  # log-secant steps of the search
FIRST_GUESS = 1.1  # first nominal RT60 = target / FIRST_GUESS (clip T20 / nominal is ~0.7-1.2)
MIN_NOMINAL = 1.02  # nominal RT60 kept above this many times the room's shortest (absorption 1)
LOUDEST_LUFS = (
    -32.0
)  # the sounds' loudness may not exceed this: a click train in a dry room peaks ~28 dB above its LUFS
DECAY_DB = 20.0  # T20 (ISO 3382-1)
# the reverberation-time estimators a label must hold under (ISO 3382-1): name -> (start_db, decay_db)
ESTIMATORS = {"t20_s": (-5.0, 20.0), "t30_s": (-5.0, 30.0), "edt_s": (0.0, 10.0)}
LOUDNESS_STEPS = 4  # loudness scalings of a sound
LOUDNESS_TOLERANCE_LU = 0.01  # a sound's loudness is within this of the item's


@dataclass(frozen=True)
class ReverbConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {
        "gap_s": "sounds start at fixed slots (clip_s, lead_s)",
        "level_db_spl": "every sound is set to loudness_lufs",
    }
    rooms: tuple[str, ...] = ("living_room", "classroom")
    receiver: Mapping[str, Any] = field(default_factory=lambda: {"type": "mono"})
    sources: tuple[str, ...] = ("noise", "clicks")
    source_s: Dist = Dist.of((0.2, 0.4))
    distance_m: Dist = Dist.of((1.0, 2.0))
    lead_s: Dist = Dist.of((0.05, 0.15))
    loudness_lufs: Dist = Dist.of((-40.0, -32.0))
    sample_rate: int | None = 16000
    ramp_s: float = 0.005


def check_reverb(
    cfg: ReverbConfig, audio: AudioConfig, key: str, *, n_sounds: int, lowest_s: float, highest_s: float
) -> None:
    """Config checks shared by the reverberation tasks: the spatial ones (rooms, receiver, sources,
    distances), the loudness, every target RT60 in ``[lowest_s, highest_s]`` reachable in every
    room, and the clip holding ``n_sounds`` slots of the longest sound and decay.

    Parameters
    ----------
    cfg : ReverbConfig
        The task's config.
    audio : AudioConfig
        The audio settings the task renders with.
    key : str
        The task's config path, for messages.
    n_sounds : int
        Sounds per clip, each in its own slot.
    lowest_s, highest_s : float
        The shortest and longest target RT60 the config asks for, seconds.

    Raises
    ------
    ParameterError
        A value is out of range (one line naming key, value and what is allowed).
    """
    check_spatial(cfg, audio, key, max_distance_m=_sounds.max_of(_sounds.dist(f"{key}.distance_m", cfg.distance_m)))
    loud = _sounds.max_of(_sounds.dist(f"{key}.loudness_lufs", cfg.loudness_lufs))
    require(
        loud <= LOUDEST_LUFS,
        f"{key}.loudness_lufs={cfg.loudness_lufs!r} may clip; allowed: at most {LOUDEST_LUFS} LUFS",
    )
    require(lowest_s > 0, f"{key}: the shortest reverberation time asked for is {lowest_s:g} s; allowed: > 0")
    require(highest_s <= 5.0, f"{key}: the longest reverberation time asked for is {highest_s:g} s; allowed: <= 5 s")
    need = _sounds.max_of(_sounds.dist(f"{key}.lead_s", cfg.lead_s)) + n_sounds * slot_needed_s(cfg, highest_s)
    require(
        cfg.clip_s >= need,
        f"{key}.clip_s={cfg.clip_s} is too short for {n_sounds} sound(s) and decays of up to {highest_s:.2f} s; "
        f"allowed: clip_s >= {need:.2f}",
    )


def slot_needed_s(cfg: ReverbConfig, rt60_s: float) -> float:
    """A slot's length for the longest sound, the propagation delay and a decay of ``rt60_s``.

    Parameters
    ----------
    cfg : ReverbConfig
        The task's config (its longest ``source_s`` and ``distance_m``).
    rt60_s : float
        Reverberation time, seconds.

    Returns
    -------
    float
        Seconds.
    """
    longest = _sounds.max_of(_sounds.dist("source_s", cfg.source_s))
    return (
        longest + _sounds.max_of(_sounds.dist("distance_m", cfg.distance_m)) / SPEED_OF_SOUND_M_S + TAIL_RT60 * rt60_s
    )


def slot_s(cfg: ReverbConfig, n_sounds: int) -> float:
    """Each sound's slot (s): the clip after the longest lead-in, shared equally.

    Parameters
    ----------
    cfg : ReverbConfig
        The task's config (``clip_s``, ``lead_s``).
    n_sounds : int
        Sounds per clip.

    Returns
    -------
    float
        Seconds.
    """
    return (cfg.clip_s - _sounds.max_of(_sounds.dist("lead_s", cfg.lead_s))) / n_sounds


def longest_rt60_s(cfg: ReverbConfig, n_sounds: int) -> float:
    """The longest reverberation time whose decay fits a slot of this config.

    Parameters
    ----------
    cfg : ReverbConfig
        The task's config.
    n_sounds : int
        Sounds per clip.

    Returns
    -------
    float
        RT60, seconds.
    """
    return (slot_s(cfg, n_sounds) - slot_needed_s(cfg, 0.0)) / TAIL_RT60


class ReverbTask(SpatialTask):
    """Base of the reverberation tasks: one geometry and dry sound per item, sounds in fixed slots."""

    category = "foundational_perception"
    n_sounds: ClassVar[int] = 1

    def __init__(self, cfg: ReverbConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.loudness = _sounds.dist("loudness_lufs", cfg.loudness_lufs)

    def check_rt60(self, values: list[float], what: str) -> None:
        """Refuse (adaptive) levels whose reverberation times do not fit the slots.

        Parameters
        ----------
        values : list of float
            Target RT60s, seconds.
        what : str
            What asks for them, for the message (e.g. ``level``).

        Raises
        ------
        ParameterError
            The longest is above :func:`longest_rt60_s`.
        """
        top = longest_rt60_s(self.cfg, self.n_sounds)
        if max(values) > top:
            raise ParameterError(
                f"task {self.name} {what} asks for a reverberation time of {max(values):.3f} s; allowed: at most "
                f"{top:.3f} s with clip_s={self.cfg.clip_s}"
            )

    def base_params(self, rng: np.random.Generator, rt60s: list[float], **extra) -> dict[str, Any]:
        """Geometry, source, loudness and slots of an item whose sounds have target RT60s ``rt60s``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's random stream.
        rt60s : list of float
            One target RT60 per sound, seconds, in slot order.
        **extra
            Further params fields (e.g. the answer's), stored before ``sounds``.

        Returns
        -------
        dict of str to Any
            The item's recipe: geometry (metres, degrees), ``source``, ``rir_seed``, ``loudness_lufs`` (LUFS),
            ``slot_s`` and ``sounds`` (each ``onset_s`` and ``rt60_s``, seconds).
        """
        self.check_rt60(rt60s, "level")
        d = float(self.distance.sample(rng))
        geo = self.place(rng, [(float(rng.uniform(-180.0, 180.0)), 0.0, d)])
        source = self.draw_source(rng)
        lead, slot = float(self.lead.sample(rng)), slot_s(self.cfg, self.n_sounds)
        sounds = [{"onset_s": lead + i * slot, "rt60_s": float(rt)} for i, rt in enumerate(rt60s)]
        receiver = {**dict(self.cfg.receiver), "position_m": geo["listener_m"], "yaw_deg": geo["yaw_deg"]}
        return {
            "sample_rate_hz": self.sample_rate,
            "clip_s": self.cfg.clip_s,
            "slot_s": slot,
            "ramp_s": self.cfg.ramp_s,
            "mode": self.cfg.mode,
            "backend": self.cfg.backend,
            "room": geo["room"],
            "room_dims_m": geo["room_dims_m"],
            "receiver": receiver,
            "source_m": geo["positions_m"][0],
            "distance_m": d,
            "source": source,
            "rir_seed": int(rng.integers(2**31)),
            "loudness_lufs": float(self.loudness.sample(rng)),
            **extra,
            "sounds": sounds,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        sr = params["sample_rate_hz"]
        segs = [(loud_sound(params, s["rt60_s"]), n_samples(s["onset_s"], sr)) for s in params["sounds"]]
        n = n_samples(params["clip_s"], sr)
        out = np.stack([place([(w[c], a) for w, a in segs], n) for c in range(segs[0][0].shape[0])])
        if float(np.max(np.abs(out))) >= 1.0:
            raise ParameterError(f"loudness_lufs={params['loudness_lufs']:.1f} clips; allowed: lower loudness_lufs")
        return [out.astype(np.float32)]

    def sound_record(self, params, clips, sound) -> dict[str, Any]:
        """One sound measured in the clip: its decay's T20 from where its dry sound ends, its
        loudness; and, on the impulse response it was rendered with, T20 and DRR (for the record).

        Parameters
        ----------
        params : dict of str to Any
            The item's recipe.
        clips : list of ndarray
            The item's clips; the first, shape (channels, samples), is measured.
        sound : dict of str to Any
            One entry of ``params["sounds"]`` (``onset_s``, ``rt60_s``).

        Returns
        -------
        dict of str to Any
            ``rt60_s`` (clip T20, s; NaN if unmeasurable), ``loudness_lufs`` (LUFS), ``rir_rt60_s`` (s),
            ``drr_db`` (dB) and ``nominal_rt60_s`` (the room's solved RT60, s).
        """
        sr = params["sample_rate_hz"]
        a = n_samples(sound["onset_s"], sr)
        stop = a + n_samples(params["slot_s"], sr)
        x = clips[0].astype(np.float64)
        try:
            t20 = decay_rt60_s(x, sr, a + decay_offset(params), stop, decay_db=DECAY_DB)
        except ParameterError:
            t20 = math.nan
        sol = calibrated(params, sound["rt60_s"])
        return {
            "rt60_s": t20,
            "loudness_lufs": loudness_lufs(x[:, a:stop], sr),
            "rir_rt60_s": sol.rir_t20,
            "drr_db": sol.drr,
            "nominal_rt60_s": sol.nominal,
        }


def decay_estimates(x: np.ndarray, params: dict[str, Any], onset: int = 0, stop: int | None = None) -> dict[str, float]:
    """T20, T30 and EDT (s; nan where the decay cannot carry one) of the sound starting at sample
    ``onset`` of ``x`` ``[channels, n]``, read after its dry sound ends (:func:`decay_offset`).

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    params : dict of str to Any
        The item's recipe.
    onset : int, optional
        The sound's onset, samples.
    stop : int or None, optional
        Where the decay ends (its slot's end), samples; None: the clip's end.

    Returns
    -------
    dict of str to float
        ``t20_s``, ``t30_s`` and ``edt_s``, seconds (see :data:`ESTIMATORS`).
    """
    sr, start = params["sample_rate_hz"], onset + decay_offset(params)
    out = {}
    for name, (start_db, decay_db) in ESTIMATORS.items():
        try:
            out[name] = decay_rt60_s(x, sr, start, stop, decay_db=decay_db, start_db=start_db)
        except ParameterError:
            out[name] = math.nan
    return out


def finite(value: float, digits: int = 4) -> float | None:
    """``value`` rounded for the ``measured`` column, None when it could not be measured (nan).

    Parameters
    ----------
    value : float
        A measurement.
    digits : int, optional
        Decimal digits kept.

    Returns
    -------
    float or None
        The rounded value, or None for NaN or infinity.
    """
    return round(float(value), digits) if math.isfinite(value) else None


def decay_offset(params: dict[str, Any]) -> int:
    """Samples from a sound's onset to where its dry sound's end reaches the receiver (the decay's start).

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``source.duration_s``, ``distance_m``, ``sample_rate_hz``).

    Returns
    -------
    int
        Samples: the dry sound, the travel time and the fractional-delay filter's lead.
    """
    sr = params["sample_rate_hz"]
    dry_n = n_samples(params["source"]["duration_s"], sr)
    return dry_n + int(round(params["distance_m"] / SPEED_OF_SOUND_M_S * sr)) + FDL2


class Solved(NamedTuple):
    nominal: float  # the room's rt60_s (inverse Sabine) that gives the target
    wet: np.ndarray  # [channels, slot samples] the sound in the room, unscaled
    measured: float  # its clip T20 (s)
    rir_t20: float  # T20 of the impulse response (Schroeder), for the record
    drr: float  # DRR of the impulse response (dB)


def calibrated(params: dict[str, Any], target_s: float) -> Solved:
    """The sound of ``params`` in its room, with the absorption solved so that its clip T20 is ``target_s``.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (only its geometry, source and seeds are read: the solution is cached by them).
    target_s : float
        The target T20 of the clip, seconds.

    Returns
    -------
    Solved
        The room's nominal RT60 (s), the sound in the room ``[channels, slot samples]`` (unscaled), its
        clip T20 (s), and the impulse response's T20 (s) and DRR (dB).
    """
    keys = (
        "sample_rate_hz",
        "slot_s",
        "ramp_s",
        "mode",
        "backend",
        "room_dims_m",
        "receiver",
        "source_m",
        "distance_m",
        "source",
        "rir_seed",
    )
    return _solve(json.dumps({k: params[k] for k in keys}, sort_keys=True), float(target_s))


def _render_at(p: dict[str, Any], dry: np.ndarray, nominal: float) -> tuple[np.ndarray, np.ndarray]:
    sr = p["sample_rate_hz"]
    room = RoomSpec(dims_m=tuple(p["room_dims_m"]), rt60_s=nominal).validate()
    rir = spatial_rir(
        room,
        p["source_m"],
        receiver_from_config(p["receiver"]),
        sample_rate=sr,
        mode=p["mode"],
        rng=np.random.default_rng(p["rir_seed"]),
        backend=p["backend"],
    )
    n = n_samples(p["slot_s"], sr)
    wet = convolve(dry, rir)[:, :n]
    wet = np.pad(wet, ((0, 0), (0, n - wet.shape[1])))
    k = n_samples(FADE_S, sr)
    wet[:, n - k :] *= np.cos(0.5 * np.pi * (np.arange(k) + 0.5) / k) ** 2
    return rir, wet


@lru_cache(maxsize=16)
def _solve(key: str, target_s: float) -> Solved:
    p = json.loads(key)
    sr = p["sample_rate_hz"]
    dry = source_signal(p["source"], sr, ramp_s=p["ramp_s"])
    start = decay_offset(p)
    floor = MIN_NOMINAL * min_rt60_s(RoomSpec(dims_m=tuple(p["room_dims_m"])))
    tried: list[tuple[float, float]] = []  # (log nominal, log measured)
    nominal = max(target_s / FIRST_GUESS, floor)
    best = None
    for _ in range(SOLVE_STEPS):
        rir, wet = _render_at(p, dry, nominal)
        try:
            got = decay_rt60_s(wet, sr, start, decay_db=DECAY_DB)
        except ParameterError:
            got = math.nan
        if best is None or abs(math.log(got / target_s) if got > 0 else math.inf) < abs(
            math.log(best[2] / target_s) if best[2] > 0 else math.inf
        ):
            best = (nominal, rir, got, wet)
        if not got > 0 or abs(got / target_s - 1) <= SOLVE_TOLERANCE:
            break
        tried.append((math.log(nominal), math.log(got)))
        if len(tried) == 1:
            step = math.log(target_s) - tried[0][1]  # slope 1 at first
        else:
            (x0, y0), (x1, y1) = tried[-2], tried[-1]
            slope = (y1 - y0) / (x1 - x0) if x1 != x0 else 1.0
            step = (math.log(target_s) - y1) / (slope if slope > 0.2 else 1.0)
        nxt = min(max(math.exp(tried[-1][0] + step), floor), MAX_RT60_S)  # a room may not ask for more
        if nxt == nominal:  # pinned at a bound: another render would give the same T20
            break
        nominal = nxt
    nominal, rir, got, wet = best
    try:
        rir_t20 = float(decay_rt60_s(rir, sr, 0, decay_db=DECAY_DB))
    except ParameterError:
        rir_t20 = math.nan
    return Solved(nominal, wet, got, rir_t20, float(drr_db(rir, sr)))


def loud_sound(params: dict[str, Any], target_s: float) -> np.ndarray:
    """The solved sound scaled to the item's integrated loudness (LUFS). BS.1770's absolute gate
    (-70 LUFS) lets a scaled decay gain or lose blocks, so the scaling is repeated until it holds.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``loudness_lufs``, ``sample_rate_hz`` and what :func:`calibrated` reads).
    target_s : float
        The sound's target T20, seconds.

    Returns
    -------
    ndarray, shape (channels, slot samples)
        The sound and its decay, at ``params["loudness_lufs"]`` LUFS.
    """
    sr, want = params["sample_rate_hz"], params["loudness_lufs"]
    wet = calibrated(params, target_s).wet
    for _ in range(LOUDNESS_STEPS):
        wet = set_loudness_lufs(wet, sr, want)
        if abs(loudness_lufs(wet, sr) - want) <= LOUDNESS_TOLERANCE_LU:
            break
    return wet


__all__ = ["ESTIMATORS", "ReverbConfig", "ReverbTask", "calibrated", "check_reverb", "decay_estimates", "finite"]

REVERB_AUDIO_FEATURES = (
    "audio.active_s",
    "audio.last_offset_s",
    "audio.delta_duration_s",
    "audio.delta_level_db",
    "audio.rms_dbfs",
    "audio.peak_dbfs",
    "audio.n_segments",
    "row.flac_bytes",
)  # the decay's length and the energy it spreads at equal loudness: driven by the reverberation itself
