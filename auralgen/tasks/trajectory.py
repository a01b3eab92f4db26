"""trajectory: how does a sound source move relative to the listener?

One moving source (:func:`auralgen.rooms.trajectory.render_moving`: Doppler, 1/r and
changing direction for the direct path and first-order reflections, static hybrid tail).
Four answers (``n_choices = 4``): **Left to right**, **Right to left** (a straight horizontal
pass perpendicular to the line of sight, in front of or behind the listener), **Approaching**,
**Receding** (radial paths along any azimuth, at ear level).

Difficulty: the source **speed** (m/s, ``levels``, default 2.0 ... 0.3; slower = harder). Each
motion lasts ``source_s`` (default 1.5 s), so the path is ``speed * source_s`` long: a pass
sweeps ``2 atan(L / 2d)`` (e.g. 112 deg at 2 m/s and d = 1 m, 17 deg at 0.3 m/s and 1.5 m),
a radial path changes the distance by ``L`` (level change ``20 log10((d + L) / d)`` dB).

Sources: broadband noise and click trains by default. Harmonic complexes render fine (and
carry a clear Doppler glide on a pass) but their periodicity makes the reverberation coherent
with the direct sound, so the ITD and direct-level checks below are unreliable for them; a
sweep's changing spectrum through the HRTF would confound level and direction.

Randomised independently of the answer: the source signal, the distance ``d`` (closest
point of a pass / near end of a radial path, ``distance_m``), front or back passes and the
pass's closest azimuth (``lateral_jitter_deg`` around 0 or 180 deg), the azimuth of radial
paths, the received level (``level_db_spl``, RMS over channels and the whole sound, so a
pass carries no overall level cue to its side), and the room and listener: every item's
geometry lies within ``d + L`` of the listener, and the room (among ``rooms``) and the
listener position are drawn so that a horizontal disc of that radius fits, whatever the
motion. Fast items therefore happen in the larger rooms (the room depends on the level, not
on the answer). Approach and recede legitimately change the level (and the direct-to-
reverberant ratio); passes rise and fall symmetrically.

``check`` measures the audio: for a pass, the interaural time difference (binaural;
GCC-PHAT, median over 100 ms windows of the first and last 30 % of the motion) or the
FOA lateral component ``<W Y> / <W W>`` must move toward the labelled side; for radial
paths the direct sound's level must rise (approaching) or fall (receding) by >= 1 dB and its
propagation delay (the Doppler time compression) must shrink or grow by at least half of what
the path implies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.core.docstrings import sections
from auralgen.core.errors import ParameterError
from auralgen.core.random import Choice, Dist
from auralgen.listeners import temporal as listen
from auralgen.measure.geometry import direction_of
from auralgen.measure.spatial import itd_windows
from auralgen.rooms.images import FDL2
from auralgen.rooms.receivers import receiver_from_config
from auralgen.rooms.spec import WALL_MARGIN_M, RoomSpec, load_preset
from auralgen.rooms.trajectory import MAX_SPEED_M_S, Trajectory, approach, pass_by, recede, render_moving
from auralgen.sounds.spatial import source_signal
from auralgen.synth.levels import db_spl_to_rms
from auralgen.tasks import _sounds
from auralgen.tasks._spatial import LocalisationTask, SpatialConfig, check_spatial, fits_full_scale, room_of
from auralgen.tasks.base import DISTANCE_CUE_FEATURES, MEASURED, AuditSpec, Measurement, register, require

ANSWERS = {
    "left_to_right": "Left to right",
    "right_to_left": "Right to left",
    "approaching": "Approaching",
    "receding": "Receding",
}
LATERAL = ("left_to_right", "right_to_left")
EDGE_FRACTION = 0.3  # start / end windows: this fraction of the motion each
WINDOW_S = 0.1  # ITD analysis window (s)
ITD_CHANGE_MIN_S = 5e-5  # a pass must move the median ITD by at least this much
FOA_CHANGE_MIN = 0.05  # ... or the FOA lateral component by this much
LEVEL_CHANGE_MIN_DB = 1.0  # radial paths: the direct-sound level must change by at least this much
DELAY_CHANGE_MIN = 0.5  # radial paths: the direct sound's delay must change by at least half the path's travel time
MATCH_WINDOW_S = 0.025  # dry-source windows matched against the audio (s)
PLACEMENT_MARGIN_M = 0.05


@dataclass(frozen=True)
class Placement:
    """Where a trajectory item happens: the room (its preset name and spec), the listener's position
    (m, room coordinates) and the listener's yaw (deg)."""

    room_name: str
    room: RoomSpec
    listener_m: list[float]
    yaw_deg: float


@dataclass(frozen=True)
class TrajectoryConfig(SpatialConfig):
    unused_fields: ClassVar[dict[str, str]] = {"gap_s": "one moving sound per clip"}
    name: str = "trajectory"
    levels: tuple[float, ...] = (2.0, 1.4, 1.0, 0.6, 0.3)
    rooms: tuple[str, ...] = ("living_room", "classroom", "hall")
    sources: tuple[str, ...] = ("noise", "clicks")
    source_s: Dist = Dist.of(1.5)
    distance_m: Dist = Dist.of((1.0, 1.5))
    lateral_jitter_deg: float = 20.0
    early_order: int = 1
    clip_s: float = 2.5

    def cue_needs(self):
        return {"lateral": "a left-to-right / right-to-left answer"}

    def check_task(self, audio, key):
        require(
            all(0 < v <= MAX_SPEED_M_S for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: speeds 0 < m/s <= {MAX_SPEED_M_S}",
        )
        require(
            0.0 <= self.lateral_jitter_deg <= 60.0,
            f"{key}.lateral_jitter_deg={self.lateral_jitter_deg!r} is out of range; allowed: 0 <= deg <= 60",
        )
        require(0 <= self.early_order <= 3, f"{key}.early_order={self.early_order!r} is out of range; allowed: 0..3")
        require(
            self.mode == "hybrid",
            f"{key}.mode={self.mode!r} is unsupported here; allowed: hybrid (moving early part + static tail)",
        )
        check_spatial(self, audio, key, max_distance_m=_sounds.max_of(_sounds.dist("distance_m", self.distance_m)))
        reach = _reach_m(
            _sounds.max_of(_sounds.dist("distance_m", self.distance_m)),
            max(self.levels),
            _sounds.max_of(_sounds.dist("source_s", self.source_s)),
        )
        fit = [r for r in self.rooms if _disc_fits(load_preset(r), reach)]
        require(
            bool(fit),
            f"{key}: paths reaching {reach:.2f} m (distance + speed * source_s) fit none of rooms {list(self.rooms)}; "
            "allowed: slower levels, shorter source_s or a larger room (hall)",
        )


def _reach_m(distance_m: float, speed_m_s: float, duration_s: float) -> float:
    """Radius around the listener that holds every motion kind of one item (m)."""
    return distance_m + speed_m_s * duration_s


def _disc_fits(room, reach_m: float) -> bool:
    return min(room.dims_m[:2]) > 2.0 * (reach_m + WALL_MARGIN_M + PLACEMENT_MARGIN_M)


@register
class TrajectoryTask(LocalisationTask):
    name = "trajectory"
    audit = AuditSpec(
        (
            "row.level",  # SPATIAL_FEATURES but positions_m: a moving source's positions are its trajectory
            "sounds.*.position_m.*",
            *DISTANCE_CUE_FEATURES,
            "motion",
            "trajectory.*",
            "closest_distance_m",
            "path_length_m",
            "sounds.*.azimuth_deg",
            "sounds.*.end_azimuth_deg",
            "sounds.*.distance_m",
            "sounds.*.end_distance_m",
            "sounds.*.end_position_m.*",
            # a source that approaches or recedes grows louder or quieter: its level change is the motion's cue
            "audio.delta_level_db",
            "audio.loudness_lufs",
        ),
        listener_floor=0.95,  # 98 % at 2 m/s on 50 items (task=trajectory task.items_per_level=50, seed 0)
    )
    listener = staticmethod(listen.trajectory)
    category = "spatiotemporal_reasoning"
    sub_category = "motion_trajectory"
    attribute = "motion"
    regime = "absolute"
    level_unit = "m/s"
    n_choices = 4
    Config = TrajectoryConfig
    questions = (
        "A sound source moves while it plays. How does it move relative to the listener?",
        "Listen to the moving sound. In which way does the source travel with respect to you?",
        "Which option best describes the motion of the sound source relative to the listener?",
    )

    def sample(self, rng, level):
        level = self.as_level(level)
        motion = Choice(tuple(ANSWERS)).sample(rng)
        speed = level.value
        source = self.draw_source(rng)
        duration = source["duration_s"]
        length = speed * duration
        d = float(self.distance.sample(rng))
        place = self._place(rng, _reach_m(d, speed, duration))
        name, room, listener, yaw = place.room_name, place.room, place.listener_m, place.yaw_deg
        # drawn for every item (used by some motions only), so the stream does not depend on the answer
        back = bool(rng.integers(2))
        jitter = float(rng.uniform(-self.cfg.lateral_jitter_deg, self.cfg.lateral_jitter_deg))
        radial_az = float(rng.uniform(-180.0, 180.0))
        tr = _path(motion, listener, yaw, d, length, duration, back=back, jitter=jitter, radial_az=radial_az)
        tr.check_in(room)
        sound = self._sound(rng, source, tr, listener, yaw)
        receiver = {**dict(self.cfg.receiver), "position_m": listener, "yaw_deg": yaw}
        return {
            **self.render_header(),
            "early_order": int(self.cfg.early_order),
            "level_reference": "received",
            "room": name,
            "room_spec": room.to_dict(),
            "room_dims_m": list(room.dims_m),
            "rt60_s": room.rt60_s,
            "listener_m": listener,
            "yaw_deg": yaw,
            "receiver": receiver,
            "motion": motion,
            "speed_m_s": speed,
            "path_length_m": length,
            "closest_distance_m": d,
            "trajectory": tr.to_dict(),
            "sounds": [sound],
        }

    def _place(self, rng, reach: float) -> Placement:
        """The :class:`Placement` of an item: a room whose floor fits a path reaching
        ``reach`` m around the listener, and the listener placed with that margin from the walls."""
        fits = [r for r in self.cfg.rooms if _disc_fits(load_preset(r), reach)]
        if not fits:
            raise ParameterError(
                f"{self.name}: a path reaching {reach:.2f} m fits none of rooms {list(self.cfg.rooms)}; allowed: a "
                "larger room"
            )
        name = Choice(tuple(fits)).sample(rng)
        room = load_preset(name)
        lo = reach + WALL_MARGIN_M + PLACEMENT_MARGIN_M
        xy = rng.uniform(lo, np.asarray(room.dims_m[:2]) - lo)
        listener = [float(xy[0]), float(xy[1]), float(self.height.sample(rng))]
        return Placement(name, room, listener, float(rng.uniform(-180.0, 180.0)))

    def _sound(self, rng, source: dict[str, Any], tr: Trajectory, listener, yaw: float) -> dict[str, Any]:
        """The moving sound's record: its source, start and end positions and directions, level, onset."""
        ends = tr.position_at([0.0, source["duration_s"]])
        az, el, dist = direction_of(ends, listener, yaw)
        return {
            "source": source,
            "position_m": ends[0].tolist(),
            "end_position_m": ends[1].tolist(),
            "azimuth_deg": float(az[0]),
            "end_azimuth_deg": float(az[1]),
            "elevation_deg": float(el[0]),
            "distance_m": float(dist[0]),
            "end_distance_m": float(dist[1]),
            "level_db_spl": float(self.level.sample(rng)),
            "onset_s": float(self.lead.sample(rng)),
            "rir_seed": int(rng.integers(2**31)),
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        sr = params["sample_rate_hz"]
        fs_db = params["full_scale_db_spl"]
        room = room_of(params)
        receiver = receiver_from_config(params["receiver"])
        s = params["sounds"][0]
        dry = source_signal(s["source"], sr, ramp_s=params["ramp_s"])
        tr = Trajectory.from_dict(params["trajectory"])
        total = _sounds.n_samples(max(params["clip_s"], s["onset_s"] + s["source"]["duration_s"] + 0.2), sr)
        a = _sounds.n_samples(s["onset_s"], sr)
        wet = render_moving(
            dry,
            tr,
            room,
            receiver,
            sample_rate=sr,
            early_order=params["early_order"],
            late=True,
            rng=np.random.default_rng(s["rir_seed"]),
            n_out=total - a,  # what the clip keeps (it is longer than the dry sound)
        )
        rms = math.sqrt(float(np.mean(wet[:, : len(dry)] ** 2)))
        gain = db_spl_to_rms(s["level_db_spl"], full_scale_db_spl=fs_db) / max(rms, 1e-30)
        out = np.zeros((receiver.num_channels, total))
        n = min(wet.shape[1], total - a)
        np.multiply(wet[:, :n], gain, out=out[:, a : a + n])  # only the samples the clip keeps are scaled
        return [fits_full_scale(out, s["level_db_spl"], fs_db)]

    def qa(self, params, rng, *, slot):
        answer = ANSWERS[params["motion"]]
        return self.make_qa(answer, ANSWERS.values(), rng, slot=slot)

    def measure(self, params, clips):
        return Measurement.from_dict(motion_check(params, clips))


def _edges(params) -> tuple[tuple[int, int], tuple[int, int]]:
    """Sample ranges of the first and last ``EDGE_FRACTION`` of the motion as heard (direct sound)."""
    sr = params["sample_rate_hz"]
    s = params["sounds"][0]
    dur = s["source"]["duration_s"]
    edge = EDGE_FRACTION * dur
    t0 = s["onset_s"] + s["distance_m"] / SPEED_OF_SOUND_M_S
    t1 = s["onset_s"] + dur + s["end_distance_m"] / SPEED_OF_SOUND_M_S
    return (
        (_sounds.n_samples(t0, sr) + FDL2, _sounds.n_samples(t0 + edge, sr) + FDL2),
        (_sounds.n_samples(t1 - edge, sr) + FDL2, _sounds.n_samples(t1, sr) + FDL2),
    )


def _median_itds_s(x: np.ndarray, spans, sr: int) -> list[float]:
    """The median ITD (s) over the ``WINDOW_S`` windows (half overlapping) of each span: every window of
    every span in one batch of :func:`~auralgen.measure.spatial.itd_windows`."""
    w = _sounds.n_samples(WINDOW_S, sr)
    starts = [np.arange(a, max(a + 1, b - w + 1), w // 2) for a, b in spans]
    vals = itd_windows(x[0], x[1], sr, np.concatenate(starts), w)  # nan: a window past the end or silent in an ear
    out = []
    for part in np.split(vals, np.cumsum([s.size for s in starts])[:-1]):
        part = part[np.isfinite(part)]
        out.append(float(np.median(part)) if part.size else math.nan)
    return out


@dataclass(frozen=True)
class _EdgeWindows:
    """The dry source cut into ``MATCH_WINDOW_S`` windows over one edge of the motion (:func:`_edge_windows`)."""

    dry: np.ndarray  # the dry source signal
    starts: list[int]  # first dry sample of each window kept: not silent, its audio span inside the clip
    width: int  # window length (samples)
    onset: int  # audio sample where the dry signal starts
    max_lag: int  # the farthest direct sound's delay (samples), the end of the searched lags


def _edge_windows(x: np.ndarray, params, edge: str) -> _EdgeWindows:
    """The windows of the first or last ``EDGE_FRACTION`` of the motion (``edge``: ``"first"`` or ``"last"``)
    that :func:`_direct_level_db` measures in the audio ``x [channels, n]``: silent ones (between clicks) and
    those whose delays reach past the clip are left out."""
    sr = params["sample_rate_hz"]
    s = params["sounds"][0]
    dry = source_signal(s["source"], sr, ramp_s=params["ramp_s"])
    w = _sounds.n_samples(MATCH_WINDOW_S, sr)
    edge_n = int(EDGE_FRACTION * len(dry))
    span = (0, edge_n) if edge == "first" else (len(dry) - edge_n, len(dry))
    onset = _sounds.n_samples(s["onset_s"], sr)
    max_lag = (
        int(math.ceil(max(s["distance_m"], s["end_distance_m"]) / SPEED_OF_SOUND_M_S * sr)) + FDL2 + 8
    )  # the direct sound
    k = max(0, (span[1] - span[0]) // w)
    energy = np.sum(dry[span[0] : span[0] + k * w].reshape(k, w) ** 2, axis=1)  # each window's, summed as alone
    starts = [
        span[0] + i * w
        for i in range(k)
        if float(energy[i]) > 1e-3 * w  # not a silent window (between clicks)
        and onset + span[0] + i * w + w + max_lag <= x.shape[1]  # its delays inside the clip
    ]
    return _EdgeWindows(dry, starts, w, onset, max_lag)


def _direct_level_db(x: np.ndarray, params, edge: str) -> tuple[float, float]:
    """Level (dB) of the part of the audio coherent with the dry source and its delay (s), medians over windows.

    The dry source is cut into ``MATCH_WINDOW_S`` windows (emission time) over the first or
    last ``EDGE_FRACTION`` of the motion (:func:`_edge_windows`); for each, the response from the dry window to
    the audio is estimated by regularised deconvolution (whitened cross-correlation) over the
    delays up to the farthest direct sound, and its peak (RMS over channels) is that window's
    direct-sound amplitude. The reverberation, which arrives later or does not correlate
    with the window, barely contributes (unlike in the plain level). The peak's lag is the
    window's propagation delay: its change over the motion is the Doppler time compression
    (``path length / c``: shorter for an approaching source).
    """
    return _direct_levels_db(x, params, (edge,))[0]


def _direct_levels_db(x: np.ndarray, params, edges=("first", "last")) -> list[tuple[float, float]]:
    """:func:`_direct_level_db` of each of ``edges``, the windows of all of them in one batch of FFTs (the
    same windows, lengths and regularisation per window: the same values)."""
    wins = [_edge_windows(x, params, edge) for edge in edges]
    dry, w, onset, max_lag = wins[0].dry, wins[0].width, wins[0].onset, wins[0].max_lag
    starts = [a for win in wins for a in win.starts]
    if not starts:
        return [(math.nan, math.nan) for _ in edges]
    n_fft = 1 << int(math.ceil(math.log2(2 * w + max_lag)))
    ref_f = np.fft.rfft(np.stack([dry[a : a + w] for a in starts]), n_fft, axis=-1)
    power = np.abs(ref_f) ** 2
    whiten = np.conj(ref_f) / (power + 1e-2 * np.mean(power, axis=-1, keepdims=True))  # regularised deconvolution
    segs = np.stack([x[:, onset + a : onset + a + w + max_lag] for a in starts])  # [window, channel, sample]
    h = np.fft.irfft(np.fft.rfft(segs, n_fft, axis=-1) * whiten[:, None, :], n_fft, axis=-1)[..., : max_lag + 1]
    env = np.sqrt(np.mean(h**2, axis=1))  # [window, lag]
    amps, lags = np.max(env, axis=1), np.argmax(env, axis=1)
    out, k = [], 0
    for win in wins:
        a, g, k = amps[k : k + len(win.starts)], lags[k : k + len(win.starts)], k + len(win.starts)
        if not win.starts:
            out.append((math.nan, math.nan))
            continue
        out.append((20.0 * math.log10(float(np.median(a))), float(np.median(g)) / params["sample_rate_hz"]))
    return out


@sections(
    MEASURED,
    checks="``motion``, the start and end measurements (ITD in ms, FOA lateral ratio, or direct level in dB "
    "and delay in ms)",
)
def motion_check(params, clips) -> dict[str, Any]:
    """Measure whether the rendered audio moves as ``params['motion']`` says (see module doc), from its
    ``motion``, ``receiver``, ``path_length_m`` and ``sample_rate_hz``."""
    sr = params["sample_rate_hz"]
    x = clips[0].astype(np.float64)
    first, last = _edges(params)
    motion = params["motion"]
    receiver = receiver_from_config(params["receiver"])
    out: dict[str, Any] = {"motion": motion}
    if motion in LATERAL:
        want = 1.0 if motion == "right_to_left" else -1.0  # sign of (end - start) of the left-ness
        if receiver.ear_positions_m() is not None:
            itd0, itd1 = _median_itds_s(x, (first, last), sr)
            change = itd1 - itd0
            out.update(itd_start_ms=round(itd0 * 1e3, 4), itd_end_ms=round(itd1 * 1e3, 4))
            ok = math.isfinite(change) and change * want >= ITD_CHANGE_MIN_S
        elif receiver.ambisonic_order() == 1:
            lat = [float(np.sum(x[0, a:b] * x[1, a:b]) / max(np.sum(x[0, a:b] ** 2), 1e-30)) for a, b in (first, last)]
            out.update(foa_lateral_start=round(lat[0], 4), foa_lateral_end=round(lat[1], 4))
            ok = (lat[1] - lat[0]) * want >= FOA_CHANGE_MIN
        else:
            return {**out, "valid": True, "note": "lateral motion measured for binaural and FOA receivers only"}
    else:
        (lv0, d0), (lv1, d1) = _direct_levels_db(x, params)
        sign = 1.0 if motion == "approaching" else -1.0
        change, nearer_s = lv1 - lv0, d0 - d1  # level up and delay down when approaching
        out.update(
            direct_level_start_db=round(lv0, 3),
            direct_level_end_db=round(lv1, 3),
            delay_start_ms=round(d0 * 1e3, 3),
            delay_end_ms=round(d1 * 1e3, 3),
        )
        # the windows' centres are (1 - EDGE_FRACTION) of the path apart
        want_s = (1 - EDGE_FRACTION) * params["path_length_m"] / SPEED_OF_SOUND_M_S
        ok = (
            math.isfinite(change)
            and change * sign >= LEVEL_CHANGE_MIN_DB
            and math.isfinite(nearer_s)
            and nearer_s * sign >= DELAY_CHANGE_MIN * want_s
        )
    return {**out, "valid": bool(ok)}


def _path(
    motion: str,
    listener,
    yaw: float,
    d: float,
    length: float,
    duration: float,
    *,
    back: bool,
    jitter: float,
    radial_az: float,
) -> Trajectory:
    """The source's path for ``motion``: a pass at closest distance ``d`` (in front, or behind when
    ``back``, ``jitter`` deg off the median plane), or a radial path of ``length`` m at ``radial_az``."""
    if motion in LATERAL:
        # azimuth increases (ccw) for right-to-left in front and for left-to-right behind
        ccw = (motion == "right_to_left") != back
        return pass_by(
            listener,
            closest_azimuth_deg=(180.0 if back else 0.0) + jitter,
            closest_distance_m=d,
            length_m=length,
            ccw=ccw,
            yaw_deg=yaw,
            duration_s=duration,
        )
    if motion == "approaching":
        return approach(
            listener,
            azimuth_deg=radial_az,
            start_distance_m=d + length,
            end_distance_m=d,
            yaw_deg=yaw,
            duration_s=duration,
        )
    return recede(
        listener, azimuth_deg=radial_az, start_distance_m=d, end_distance_m=d + length, yaw_deg=yaw, duration_s=duration
    )
