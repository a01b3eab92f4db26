"""The ``events`` palette's recipe values (:mod:`auralgen.sounds.events` draws and renders with them).

Kept here, below both, so that the mixture listener's detectors (:mod:`auralgen.listeners.presence`,
a layer under ``sounds``) read the same values as the palette: an ideal observer that knows the recipe.
"""

from __future__ import annotations

HARMONIC_F0_HZ, N_HARMONICS = (150.0, 400.0), 6  # harmonic tone: fundamental range, harmonics (1/k amplitudes)
SWEEP_START_HZ, SWEEP_OCTAVES = (250.0, 500.0), (2.5, 3.5)  # rising log sweep: start, octaves up
CLICK_HZ, CLICK_DECAY_S, CLICK_LENGTH_S, CLICK_RATE_HZ = 3000.0, 0.002, 0.01, (8.0, 14.0)  # one fixed click pulse
KNOCK_HZ, KNOCK_DECAY_S, KNOCK_LENGTH_S, KNOCK_RATE_HZ = (250.0, 500.0), 0.03, 0.2, (2.5, 4.5)  # knock pulses

# The ``spatial`` palette (:mod:`auralgen.sounds.spatial`) and the sounds of ``multi_source_relation``,
# read by its listener (:mod:`auralgen.listeners.multisource`).
SPATIAL_F0_HZ, SPATIAL_MAX_HARMONICS = (150.0, 400.0), 30  # harmonic: fundamental range, harmonics below Nyquist
SPATIAL_CLICK_RATE_HZ = (6.0, 16.0)  # click train: clicks per second
SPATIAL_NAMES = {
    "noise": "the noise burst",
    "harmonic": "the harmonic tone",
    "chirp": "the sweep",
    "clicks": "the click train",
}
# multi_source_relation: its synthesized kinds (no sweep: its direct sound has no onset of its own), in the order
# they enter one after another, whatever their roles
SPATIAL_ENTRY_ORDER = ("harmonic", "noise", "clicks")
SPATIAL_RAMP_S = 0.002  # multi_source_relation: the onset ramps (raised cosine) of its tone and noise (its default)
SPATIAL_NOISE_BAND_HZ = (100.0, 8000.0)  # the noise: pink, in this band (the top capped below Nyquist)


def spatial_noise_band(sample_rate: int) -> tuple[float, float]:
    """The spatial noise's band at ``sample_rate``: :data:`SPATIAL_NOISE_BAND_HZ`, its top kept below Nyquist.

    Parameters
    ----------
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    tuple of (float, float)
        Lower and upper band edge, in Hz.
    """
    return SPATIAL_NOISE_BAND_HZ[0], min(SPATIAL_NOISE_BAND_HZ[1], sample_rate / 2 - 1)


def spatial_harmonics(f0_hz: float, sample_rate: int) -> int:
    """How many harmonics the spatial harmonic tone of ``f0_hz`` has.

    Those below Nyquist, at most :data:`SPATIAL_MAX_HARMONICS`.

    Parameters
    ----------
    f0_hz : float
        Fundamental frequency, in Hz.
    sample_rate : int
        Sampling rate, in Hz.

    Returns
    -------
    int
        The number of harmonics.
    """
    return min(SPATIAL_MAX_HARMONICS, int((sample_rate / 2 - 1) // f0_hz))
