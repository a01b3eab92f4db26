"""The mixture sounds live in :mod:`auralgen.sounds.events` (palette ``mixture``); re-exported here."""

from auralgen.sounds.events import CONTINUOUS, KINDS, MIN_SAMPLE_RATE, NAMES, draw_sound, synth_sound

__all__ = ["CONTINUOUS", "KINDS", "MIN_SAMPLE_RATE", "NAMES", "draw_sound", "synth_sound"]
