"""Measurements on rendered audio, used to check that labels match the signal.

Every function is pure: float arrays in (mono ``[n]`` or channels-first ``[channels, n]``,
float32 or float64) plus ``sample_rate``, plain floats or small frozen dataclasses out
(JSON-able through :func:`dataclasses.asdict`). Bad input raises
:class:`~auralgen.core.errors.ParameterError` with a one-line message.

The implementations live in ``measure_*`` modules by theme; import from here.

=====================  ==================================================================
pitch / frequency      :func:`f0_hz`, :func:`cents`, :func:`dominant_freq_hz`, :func:`freq_track`
level / time           :func:`level_db_rms`, :func:`level_db_spl`, :func:`loudness_lufs`,
                       :func:`segments`, :func:`tone_presence`
space                  :func:`itd_ild`, :func:`doa_array`, :func:`doa_foa`
room                   :func:`rt60_schroeder`, :func:`drr_db`, :func:`energy_decay_db`
mixtures               :func:`mixture_components`
=====================  ==================================================================
"""

from auralgen.measure.level import (
    Segment,
    TonePresence,
    level_db_rms,
    level_db_spl,
    loudness_lufs,
    segments,
    tone_presence,
)
from auralgen.measure.mix import MixtureComponent, mixture_components
from auralgen.measure.pitch import FreqTrack, cents, dominant_freq_hz, f0_hz, freq_track
from auralgen.measure.room import drr_db, energy_decay_db, rt60_schroeder
from auralgen.measure.spatial import SPEED_OF_SOUND_M_S, doa_array, doa_foa, itd_ild

__all__ = [
    "SPEED_OF_SOUND_M_S",
    "FreqTrack",
    "MixtureComponent",
    "Segment",
    "TonePresence",
    "cents",
    "dominant_freq_hz",
    "doa_array",
    "doa_foa",
    "drr_db",
    "energy_decay_db",
    "f0_hz",
    "freq_track",
    "itd_ild",
    "level_db_rms",
    "level_db_spl",
    "loudness_lufs",
    "mixture_components",
    "rt60_schroeder",
    "segments",
    "tone_presence",
]
