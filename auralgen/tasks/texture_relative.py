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

from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import texture as listen
from auralgen.synth import textures as textures_synth
from auralgen.tasks import _texture
from auralgen.tasks._compare import (
    CompareTask,
    Drawn,
    check_differences,
    check_two_windows,
    drawn_from,
    loudness_pair_header,
    pair_extremes,
)
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, register, require

TOLERANCE_PERCENT = 0.5


@dataclass(frozen=True)
class TextureRelativeConfig(_texture.GrainConfig):
    name: str = "texture_relative"
    levels: tuple[float, ...] = (0, 8, 15, 30, 60)
    base_density_hz: Dist = Dist.of({"dist": "loguniform", "low": 6.0, "high": 20.0})
    window_s: float = 1.6
    sep_s: float = 0.5
    lead_s: Dist = Dist.of((0.1, 0.3))
    clip_s: float = 4.0

    def check_task(self, audio: AudioConfig, key: str) -> None:
        check_differences(self, key, "percent")
        sparsest, densest = pair_extremes(self, key, "base_density_hz")
        _texture.check_grains(self, audio, key, densest_hz=densest, sparsest_hz=sparsest)
        require(
            self.sep_s > 2.0 / sparsest,
            f"{key}.sep_s={self.sep_s} does not exceed the longest grain interval; allowed: sep_s > "
            f"{2.0 / sparsest:.3f}",
        )
        check_two_windows(key, self)


@register
class TextureRelative(CompareTask):
    name = "texture_relative"
    # density drives the silences between grains the segment features see (> 50 ms: sparse textures split into
    # many segments);
    # at equal loudness the denser texture's grains are softer (peak level)
    audit = AuditSpec(
        (
            *("direction", "difference", "row.level"),
            "textures.*.density_hz",
            "textures.*.n_grains",
            "audio.peak_dbfs",
            "audio.n_segments",
            "audio.active_s",
            "audio.delta_level_db",
            "row.flac_bytes",
            "audio.delta_duration_s",
        ),  # the sounding span of a sparser texture ends sooner: a cue of its density
    )
    listener = staticmethod(listen.texture_relative)
    attribute = "texture"
    level_unit = "percent"
    Config = TextureRelativeConfig
    answers = {"up": "Denser", "down": "Sparser", "same": "The same"}
    questions = (
        "Two sound textures are played one after the other. Is the second texture denser (more events per second), "
        "sparser, or the same as the first?",
        "Listen to the two crackling textures. Compared with the first, is the second one denser, sparser, or equally "
        "dense?",
        "How does the density of grains in the second texture compare with the first texture?",
    )
    card_note = (
        "texture_relative: two grain textures (irregular noise or tone bursts) in fixed windows of one fixed-length "
        "clip; the level is the event-density difference in percent (0 = same density), measured from the grains' "
        "times. Grain (kind, frequency, size), window and loudness (LUFS) are shared; timing jitter, phase and grain "
        "levels are roved independently of the answer. At equal loudness the denser texture's grains are softer."
    )

    drawn = drawn_from("freq", "grain", "loudness", "lead", base=Drawn("base_density_hz", low=1e-9))

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level, direction = self.begin(rng, level)
        grain = _texture.draw_grain(rng, self.cfg.grain_kinds, self.freq, self.grain)
        base, windows = self.window_pair(rng, level, direction)
        lufs = float(self.loudness.sample(rng))
        textures = [
            textures_synth.draw_texture(
                rng,
                grain,
                density_hz=d,
                start_s=start,
                window_s=self.cfg.window_s,
                jitter=self.cfg.jitter,
                loudness_lufs=lufs,
            )
            for start, d in windows
        ]
        return {
            **loudness_pair_header(self, direction, level.value),
            "base_density_hz": base,
            "textures": textures,
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        return _texture.render_textures(params)

    def measure(self, params, clips):
        """Each window's density (grain times from the audio), grain count and loudness; the signed
        density difference in percent against the level."""
        sr = int(params["sample_rate_hz"])
        got = [
            _texture.measure_window(x, t, sr)
            for x, t in zip(_texture.texture_samples(params, clips[0]), params["textures"])
        ]
        tol = TOLERANCE_PERCENT + 0.01 * params["difference"]
        rec = self.ratio_check("density_difference_percent", params, got[0][0], got[1][0], tol)
        return Measurement.from_dict(
            {
                "density_difference_percent": rec,
                "density_hz": [round(d, 4) for d, _ in got],
                "valid": bool(rec["ok"] and all(ok for _, ok in got)),
            }
        )

    def eval_fields(self, params):
        return {"difference": params["difference"], "difference_unit": "percent"}
