"""texture_relative: two grain textures one after the other; is the second denser, sparser or the same?

A texture is a stream of short irregular grains (noise or tone bursts, :mod:`auralgen.synth.textures`).
Difficulty: the event-density difference in percent (denser = sparser x (1 + level / 100)). The
hardest non-zero default level (8 %) is below the ~10-20 % Weber fraction for the density (event
rate) of irregular sound textures -- a figure consistent with texture-statistics discrimination
(McDermott & Simoncelli 2011, Neuron 71:926-940) though no single study fixes it; the easiest (60 %)
is far above it; level 0 is the "same" level.

Controlled (drawn independently of the answer): the pair is centred (geometrically) on a base
density; both textures share the grain (kind, frequency, size: the same spectral shape), the
window length and the integrated loudness (LUFS, BS.1770: equal), in the same places of a
fixed-length clip (the lead-in roved); the grain timing is irregular (jitter) with a roved phase,
and each grain's level is jittered identically at every density. At equal loudness the denser
texture's grains are softer -- that is part of density.

Label: each texture's density measured from the audio (grains' energy centroids,
:func:`auralgen.measure.texture.density_hz`) equals the recipe's; the signed difference equals the
level within :data:`TOLERANCE_PERCENT` + 1 % of the level; both windows' loudness within
:data:`TOLERANCE_LU` of the recipe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Choice, Dist
from auralgen.listeners import texture as listen
from auralgen.synth import textures as X
from auralgen.synth.levels import loudness_lufs
from auralgen.synth.signals import n_samples, place
from auralgen.tasks import _sounds as S
from auralgen.tasks._compare import CompareTask, check_config, within
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, Task, TaskConfig, register, require
from auralgen.tasks.tempo_relative import signed_ratio_percent

TOLERANCE_PERCENT = 0.5
TOLERANCE_LU = 0.2
LOUDEST_LUFS = -30.0  # grains are peaky (sparse crackle: peaks ~25 dB above the integrated loudness)


@dataclass(frozen=True)
class GrainConfig(TaskConfig):
    """The grain and loudness fields both texture tasks have."""

    grain_kinds: tuple[str, ...] = X.GRAIN_KINDS
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 500.0, "high": 3000.0})
    grain_s: Dist = Dist.of((0.002, 0.005))
    jitter: float = 0.25
    loudness_lufs: Dist = Dist.of((-40.0, -34.0))


@dataclass(frozen=True)
class TextureRelativeConfig(GrainConfig):
    name: str = "texture_relative"
    levels: tuple[float, ...] = (0, 8, 15, 30, 60)
    base_density_hz: Dist = Dist.of({"dist": "loguniform", "low": 6.0, "high": 20.0})
    window_s: float = 1.6
    sep_s: float = 0.5
    lead_s: Dist = Dist.of((0.1, 0.3))
    clip_s: float = 4.0


def check_grains(cfg, audio: AudioConfig, key: str, *, densest_hz: float, sparsest_hz: float,
                 window: tuple[str, float] | None = None) -> None:  # fmt: skip
    """Grain kinds, tone below Nyquist, grains separated at the densest rate, at least
    :data:`~auralgen.synth.textures.MIN_GRAINS` in a window at the sparsest (``window``: the config key
    and the shortest window, default ``window_s``), loudness below clipping."""
    bad = [k for k in cfg.grain_kinds if k not in X.GRAIN_KINDS]
    require(cfg.grain_kinds and not bad,
            f"{key}.grain_kinds={list(cfg.grain_kinds)!r} is invalid; allowed: a non-empty list from {list(X.GRAIN_KINDS)}")  # fmt: skip
    sr = cfg.sample_rate or audio.sample_rate
    top = S.max_of(S.dist(f"{key}.freq_hz", cfg.freq_hz, low=1e-9))
    require(top < sr / 2, f"{key}.freq_hz={cfg.freq_hz!r} reaches {top:g} Hz at or above Nyquist ({sr / 2:g} Hz); allowed: below Nyquist")  # fmt: skip
    require(0 <= cfg.jitter < 0.5, f"{key}.jitter={cfg.jitter}; allowed: 0 <= jitter < 0.5")
    grain = S.dist(f"{key}.grain_s", cfg.grain_s, low=1e-9)
    min_ioi = (1 - 2 * cfg.jitter) / densest_hz
    require(
        2 * S.max_of(grain) <= min_ioi,
        f"{key}.grain_s={cfg.grain_s!r} overlaps at {densest_hz:.1f} grains/s (shortest interval {min_ioi:.4f} s); allowed: grains at most half the shortest interval",
    )
    need = (X.MIN_GRAINS + 1) / sparsest_hz
    name, shortest = window or ("window_s", cfg.window_s)
    require(shortest >= need, f"{key}.{name}={getattr(cfg, name)!r} holds fewer than {X.MIN_GRAINS} grains at {sparsest_hz:.2f} /s; allowed: {name} >= {need:.3f}")  # fmt: skip
    loud = cfg.loudness_lufs.high
    require(loud <= LOUDEST_LUFS, f"{key}.loudness_lufs={cfg.loudness_lufs!r} may clip; allowed: at most {LOUDEST_LUFS} LUFS")  # fmt: skip


def draw_grain(rng: np.random.Generator, kinds, freq, grain) -> dict[str, Any]:
    """The grain shared by a texture (pair). Draws: kind, frequency, size."""
    kind = Choice(tuple(kinds)).sample(rng)
    return {"kind": kind, "freq_hz": float(freq.sample(rng)), "grain_s": float(grain.sample(rng))}


def render_textures(params: dict[str, Any]) -> list[np.ndarray]:
    """The clip ``[1, n]`` float32 of ``params['textures']`` placed at their ``start_s``."""
    sr = int(params["sample_rate_hz"])
    segs = [(X.render_texture(t, sr), n_samples(t["start_s"], sr)) for t in params["textures"]]
    return [place(segs, n_samples(params["clip_s"], sr))[None, :].astype(np.float32)]


def texture_samples(params: dict[str, Any], clip: np.ndarray) -> list[np.ndarray]:
    """Each texture's window of ``clip``."""
    sr = int(params["sample_rate_hz"])
    x = np.asarray(clip, dtype=np.float64).reshape(-1)
    return [x[n_samples(t["start_s"], sr) : n_samples(t["start_s"], sr) + n_samples(t["window_s"], sr)]
            for t in params["textures"]]  # fmt: skip


def measure_window(x: np.ndarray, texture: dict, sr: int) -> tuple[float, bool]:
    """A window's measured density and whether its grain count and loudness match the recipe."""
    from auralgen.measure.texture import density_hz, grain_times

    t = grain_times(x, sr)
    ok = t.size == texture["n_grains"] and abs(loudness_lufs(x, sr) - texture["loudness_lufs"]) <= TOLERANCE_LU
    return density_hz(t), bool(ok)


@check_config
@register
class TextureRelative(CompareTask):
    name = "texture_relative"
    # density drives the silences between grains the segment features see (> 50 ms: sparse textures split into many segments);
    # at equal loudness the denser texture's grains are softer (peak level)
    audit = AuditSpec(
        (*("direction", "difference", "row.level"), "textures.*.density_hz", "textures.*.n_grains",
         "audio.peak_dbfs", "audio.n_segments", "audio.active_s", "audio.delta_level_db", "row.flac_bytes",
         "audio.delta_duration_s"),  # the sounding span of a sparser texture ends sooner: a cue of its density
        listener_easiest="max",
    )  # fmt: skip
    listener = staticmethod(listen.texture_relative)
    attribute = "texture"
    level_unit = "percent"
    Config = TextureRelativeConfig
    answers = {"up": "Denser", "down": "Sparser", "same": "The same"}
    questions = (
        "Two sound textures are played one after the other. Is the second texture denser (more events per second), sparser, or the same as the first?",
        "Listen to the two crackling textures. Compared with the first, is the second one denser, sparser, or equally dense?",
        "How does the density of grains in the second texture compare with the first texture?",
    )
    card_note = (
        "texture_relative: two grain textures (irregular noise or tone bursts) in fixed windows of one fixed-length "
        "clip; the level is the event-density difference in percent (0 = same density), measured from the grains' "
        "times. Grain (kind, frequency, size), window and loudness (LUFS) are shared; timing jitter, phase and grain "
        "levels are roved independently of the answer. At equal loudness the denser texture's grains are softer."
    )

    def __init__(self, cfg: TextureRelativeConfig, audio: AudioConfig):
        Task.__init__(self, cfg, audio)
        self.base = cfg.base_density_hz
        self.freq = cfg.freq_hz
        self.grain = cfg.grain_s
        self.loudness = cfg.loudness_lufs
        self.lead = cfg.lead_s

    @classmethod
    def validate_config(cls, cfg: TextureRelativeConfig, audio: AudioConfig, key: str) -> None:
        cls.check_differences(cfg, key)
        half = math.sqrt(1 + max(cfg.levels) / 100.0)
        base = S.dist(f"{key}.base_density_hz", cfg.base_density_hz, low=1e-9)
        check_grains(cfg, audio, key, densest_hz=S.max_of(base) * half, sparsest_hz=S.min_of(base) / half)
        require(cfg.sep_s > 2.0 * half / S.min_of(base),
                f"{key}.sep_s={cfg.sep_s} does not exceed the longest grain interval; allowed: sep_s > {2.0 * half / S.min_of(base):.3f}")  # fmt: skip
        S.check_fits(key, S.max_of(S.dist(f"{key}.lead_s", cfg.lead_s, low=0.0)) + 2 * cfg.window_s + cfg.sep_s, cfg.clip_s)  # fmt: skip

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        require(level.value >= 0, f"{self.name} level {level.value!r} is negative; allowed: percent >= 0")
        direction = self.draw_direction(rng, level)
        grain = draw_grain(rng, self.cfg.grain_kinds, self.freq, self.grain)
        base = float(self.base.sample(rng))
        step = math.sqrt(1 + level.value / 100.0) ** self.sign(direction)
        start, lufs, w = float(self.lead.sample(rng)), float(self.loudness.sample(rng)), self.cfg.window_s
        textures = [X.draw_texture(rng, grain, density_hz=d, start_s=start + k * (w + self.cfg.sep_s), window_s=w,
                                   jitter=self.cfg.jitter, loudness_lufs=lufs)
                    for k, d in enumerate((base / step, base * step))]  # fmt: skip
        return {"sample_rate_hz": self.sample_rate, "clip_s": self.cfg.clip_s, "direction": direction,
                "difference": level.value, "base_density_hz": base, "textures": textures}  # fmt: skip

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return render_textures(params)

    def measure(self, params, clips):
        """Each window's density (grain times from the audio), grain count and loudness; the signed
        density difference in percent against the level."""
        sr = int(params["sample_rate_hz"])
        got = [measure_window(x, t, sr) for x, t in zip(texture_samples(params, clips[0]), params["textures"])]
        diff = params["difference"]
        rec = within("density_difference_percent", signed_ratio_percent(got[0][0], got[1][0]),
                     self.sign(params["direction"]) * diff, TOLERANCE_PERCENT + 0.01 * diff)  # fmt: skip
        return Measurement.from_dict({"density_difference_percent": rec, "density_hz": [round(d, 4) for d, _ in got],
                                      "valid": bool(rec["ok"] and all(ok for _, ok in got))})  # fmt: skip

    def eval_fields(self, params):
        return {"difference": params["difference"], "difference_unit": "percent"}
