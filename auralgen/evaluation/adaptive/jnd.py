"""Published human thresholds, shown beside a model's adaptive threshold for the same attribute.

One entry per task whose level is a difference people have been measured on, in the task's own
level unit. They are orientation, not a norm to pass: the human figures come from trained
listeners in laboratory conditions (often 2AFC at 71-79 % correct, pure tones, headphones), while a
track here reports the 75 %-correct point of the task's own question with its own chance rate.
Figures are as we read them in the cited papers (or, for hearing level, by definition).
"""

from __future__ import annotations

from typing import Any

# task -> (threshold, unit, source)
HUMAN_JND: dict[str, tuple[float, str, str]] = {
    "pitch_relative": (3.5, "cents",
                       "Wier, Jesteadt & Green 1977, JASA 61(1) 178-184: about 0.2 % of frequency at 1 kHz, 40 dB SL"),
    "loudness_relative": (1.0, "dB",
                          "Jesteadt, Wier & Green 1977, JASA 61(1) 169-177: about 1 dB at 40 dB SL (0.5 dB at 80 dB SL)"),
    "duration_relative": (10.0, "percent",
                          "Abel 1972, JASA 51(4B) 1219-1223: Weber fractions of about 0.1 for tone and noise bursts"),
    "azimuth_relative": (1.0, "deg", "Mills 1958, JASA 30(4) 237-246: minimum audible angle about 1 deg straight ahead"),
    "tempo_relative": (2.0, "percent",
                       "Drake & Botte 1993, Percept. Psychophys. 54(3) 277-286: about 2 % at inter-onset intervals of 300-800 ms"),
    "brightness_relative": (5.0, "percent",
                            "Allen & Oxenham 2014, JASA 135(3) 1371-1379: spectral-centroid thresholds of a few percent"),
    "reverberation_relative": (5.0, "percent", "ISO 3382-1:2009, Annex A: subjective limen of early decay time 5 %"),
    "audiogram": (0.0, "dB HL", "ISO 389-7 / ISO 7029: 0 dB HL is the median threshold of young otologically normal listeners"),
}  # fmt: skip


def human_jnd(task) -> dict[str, Any]:
    """``human_jnd``, ``human_jnd_unit`` and ``human_jnd_source`` of ``task`` (empty when none is known
    or its unit is not the task's level unit)."""
    known = HUMAN_JND.get(task.name)
    if known is None or known[1] != task.level_unit:
        return {}
    value, unit, source = known
    return {"human_jnd": value, "human_jnd_unit": unit, "human_jnd_source": source}
