"""Physical and format constants, each written once (import them; never restate the value).

``conf/config.yaml`` repeats :data:`DEFAULT_FULL_SCALE_DB_SPL` and :data:`DEFAULT_SAMPLE_RATE`
as the Hydra defaults of the run; ``tests/core/test_constants.py`` keeps the two in step.
"""

from __future__ import annotations

SPEED_OF_SOUND_M_S = 343.0  # in air at ~20 degC; rooms, spatial tasks and the listener share it

# calibration: digital RMS 1.0 plays at this many dB SPL (why 136: auralgen.synth.levels)
DEFAULT_FULL_SCALE_DB_SPL = 136.0
# presentation: every task whose attribute is not absolute level plays digital RMS 1.0 at this many dB SPL
# instead, so that its 50-75 dB SPL sounds sit at -50..-25 dBFS RMS (why 100: auralgen.synth.levels)
PRESENTATION_FULL_SCALE_DB_SPL = 100.0

DEFAULT_SAMPLE_RATE = 16000  # Hz
SAMPLE_RATES = (8000, 16000, 22050, 24000, 32000, 44100, 48000)  # every sample rate a run accepts
PLAYBACK_SAMPLE_RATES = (44100, 48000, 96000)  # rates auralgen listen plays to a browser at
