"""texture_absolute: is a grain texture a sparse crackle, a dense rain-like patter or a buzz?

Options are the event-density bins delimited by ``bins_hz`` (default: below 6, 6 to 24, above 24
grains per second; conventions of this task, set by config: below ~6 /s single crackles are
heard, above ~20-25 /s the grains fuse toward a buzz). Difficulty: the margin (percent, in ratio)
of the density from the nearest inner bin edge, as in tempo_absolute: a bin drawn uniformly, then
one of its inner edges, the density exactly that margin inside it. The hardest default margin
(6 %) is below the ~10-20 % Weber fraction for the density of irregular textures (see
texture_relative; McDermott & Simoncelli 2011, Neuron 71:926-940); the easiest (50 %) far above.

Controlled (drawn independently of the answer): the grain (kind, frequency, size), the texture's
loudness (LUFS), the timing jitter and the grain levels, and the sounding span (first grain's onset to
the last grain's offset): drawn from ``span_s`` whatever the density, then rounded to whole intervals
down or up at random so that its mean does not move with the density (as tempo_absolute's pulses), and
placed uniformly in the fixed-length clip, so the lead and trail silences carry no class. (A window of
fixed length with a roved phase let the first grain of a sparse texture come up to one interval late
and its last end up to one interval early: lead and trail silence answered 40 % and span 85 % on 240
items, chance 33 %.) The number of grains grows with the density -- that is the density -- and with it
the silences between grains (segments, sounding time, the grains' peak and the crest factor at one
loudness): declared cues.

Label: the density measured from the audio (grains' energy centroids,
:func:`auralgen.measure.texture.density_hz`) within :data:`TOLERANCE_HZ` of the recipe, inside the
labelled bin, its margin equal to the level within that tolerance mapped to percent, the grain
count and the loudness those of the recipe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.random import Dist
from auralgen.listeners import texture as listen
from auralgen.synth import textures
from auralgen.tasks import _sounds, _texture
from auralgen.tasks._binned import BinnedAbsoluteTask, bin_names, check_bins, range_labels
from auralgen.tasks._compare import drawn_from
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, register

TOLERANCE_HZ = 0.02
EDGE_S = 0.1  # the window starts at least this after the clip's start and ends this before its end
FILL_PAD_S = 0.001  # the window ends this after the last grain's offset (a sample's rounding never cuts it)


@dataclass(frozen=True)
class TextureAbsoluteConfig(_texture.GrainConfig):
    name: str = "texture_absolute"
    levels: tuple[float, ...] = (50, 25, 12, 6)
    bins_hz: tuple[float, ...] = (6.0, 24.0)
    span_s: Dist = Dist.of((1.4, 2.0))  # first grain's onset to last one's offset, any density (then whole intervals)
    clip_s: float = 2.5

    def check_task(self, audio: AudioConfig, key: str) -> None:
        b = self.bins_hz
        m = check_bins(key, "bins_hz", b, self.levels, "/s")
        span = _sounds.dist(f"{key}.span_s", self.span_s, low=1e-9)
        _texture.check_grains(
            self, audio, key, densest_hz=b[-1] * m, sparsest_hz=b[0] / m, window=("span_s", _sounds.min_of(span))
        )
        _sounds.check_fits(
            key, _sounds.max_of(span) + m / b[0] + FILL_PAD_S + 2 * EDGE_S, self.clip_s
        )  # rounded up: one interval more


@register
class TextureAbsolute(BinnedAbsoluteTask):
    name = "texture_absolute"
    # density drives the silences between grains the segment features see (> 50 ms: sparse textures split into many
    # segments: their number, sounding time and first/last segment's level and length) and, at one loudness, the
    # grains' peak and the crest factor (fewer grains carry the same energy). The span is roved (its class means
    # within 0.04 s) but is a whole number of intervals, ``(grains - 1) / density`` plus a grain: at the grid's few
    # densities it falls on a lattice a nearest-neighbour vote on the span alone can match (59 % on 240 items);
    # lead and trail silence, placed at random, carry nothing (34 %, chance 33 %)
    audit = AuditSpec(
        (
            "bin",
            "edge_side",
            "margin_percent",
            "textures.*.density_hz",
            "textures.*.n_grains",
            "audio.delta_duration_s",
            "audio.peak_dbfs",
            "audio.crest_db",
            "audio.span_s",
            "audio.n_segments",
            "audio.active_s",
            "audio.delta_level_db",
            "row.flac_bytes",
        ),
    )
    listener = staticmethod(listen.texture_absolute)
    attribute = "texture"
    bins_field = "bins_hz"
    drawn = drawn_from("freq", "grain", "loudness", "span")
    Config = TextureAbsoluteConfig
    questions = (
        "What kind of sound texture is this: a sparse crackle, a dense rain-like patter, or a buzz?",
        "Listen to the texture. How dense are its grains?",
        "How many sound events per second does this texture have?",
    )
    card_note = (
        "texture_absolute: one grain texture (irregular noise or tone bursts) placed at a random offset in a "
        "fixed-length clip; the answer is its density bin (grains per second: sparse crackle, dense rain-like, "
        "buzzing), the level "
        "the density's margin in percent from the nearest bin edge, measured from the grains' times. Grain, loudness "
        "(LUFS), sounding span (first onset to last offset) and its place, timing jitter and grain levels are roved "
        "independently of the answer."
    )

    def labels(self) -> list[str]:
        b = self.cfg.bins_hz
        names = bin_names(("Sparse crackle", "Dense rain-like patter", "Buzzing"), "Density", b)
        return range_labels(names, b, "events per second", unit_twice=False)

    def sample(self, rng: np.random.Generator, level) -> dict[str, Any]:
        level = self.as_level(level)
        k, side, density = self.draw_bin(rng, level.value)
        grain = _texture.draw_grain(rng, self.cfg.grain_kinds, self.freq, self.grain)
        span = float(self.span.sample(rng))
        intervals = max(textures.MIN_GRAINS - 1, int(math.floor((span - grain["grain_s"]) * density + rng.uniform())))
        window = intervals / density + grain["grain_s"] + FILL_PAD_S
        start = float(rng.uniform(EDGE_S, self.cfg.clip_s - window - EDGE_S))
        texture = textures.draw_texture(
            rng,
            grain,
            density_hz=density,
            start_s=start,
            window_s=window,
            jitter=self.cfg.jitter,
            loudness_lufs=float(self.loudness.sample(rng)),
            filled=True,
        )
        return {
            "sample_rate_hz": self.sample_rate,
            "clip_s": self.cfg.clip_s,
            **self.bin_record(k, side, density),
            "textures": [texture],
        }

    def render(self, params):
        return _texture.render_textures(params)

    def measure(self, params, clips):
        """The density from the grains (within :data:`TOLERANCE_HZ`, inside the labelled bin), the
        grain count, the loudness and the margin from the nearest inner bin edge."""
        sr = int(params["sample_rate_hz"])
        tex = params["textures"][0]
        (x,) = _texture.texture_samples(params, clips[0])
        d, ok = _texture.measure_window(x, tex, sr)
        k = params["bin"]
        ok = ok and math.isfinite(d) and abs(d - tex["density_hz"]) <= TOLERANCE_HZ
        ok = ok and self.in_bin(d, k, TOLERANCE_HZ)
        margin = self.margin_check(d, tex["density_hz"], TOLERANCE_HZ)
        return Measurement.from_dict(
            {
                "density_hz": round(d, 4) if math.isfinite(d) else None,
                "expected_density_hz": round(tex["density_hz"], 4),
                "margin_percent": margin,
                "valid": bool(ok and margin["ok"]),
            }
        )
