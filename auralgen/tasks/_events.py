"""Shared pieces of the tempo and counting tasks: sequences of short sounds placed in silence.

A *sequence* is a JSON-able dict: the spectral recipe of its events (a ``tones`` stimulus:
``kind``, ``freq_hz``, ``n_harmonics`` or ``noise_seed``; every event of a sequence has the same
spectrum, a noise event ``k`` uses ``noise_seed + k``) and per event its ``onsets_s``,
``durations_s`` and ``levels_db_spl``. A clip's params carry ``sample_rate_hz``,
``full_scale_db_spl``, ``clip_s``, ``ramp_s`` and ``sequences``; :func:`render_sequences` rebuilds
the clip from those alone.

Two kinds of sequence are drawn here:

- :func:`pulse_train`: isochronous pulses at a tempo (events per minute) inside a fixed window;
  the phase of the grid in the window is roved, and each pulse lasts ``duty`` of the
  inter-onset interval, so the sounding time of a window (``duty * window_s``) does not depend on
  the tempo (clip size and RMS carry no tempo);
- :func:`event_run`: ``n`` events separated by silent gaps of exactly ``gap_s`` whose durations
  share a total sounding time ``total_s`` (jittered per event, so the onsets are not isochronous):
  the clip's sounding time and energy do not depend on the count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import Dist
from auralgen.sounds.corpus import RECIPE_KEYS
from auralgen.tasks import _sounds
from auralgen.tasks._compare import CREST
from auralgen.tasks.base import RECORDED_TOO, TaskConfig, require

# audit features of a pulse sequence that are, or follow, its tempo: its intervals and its pulses
PULSE_FEATURES = (
    "sequences.*.bpm",
    "sequences.*.ioi_s",
    "sequences.*.n_events",
    "sequences.*.onsets_s.*",
    "sequences.*.durations_s.*",
    "sequences.*.levels_db_spl.*",
    "audio.n_segments",
    "audio.delta_duration_s",
)
MIN_PULSES = 3  # a tempo is measured from at least two inter-onset intervals


class EventSequences:
    """What the event-sequence tasks share as a family, a mixin before the task's base class: they take every
    sound source (events cut from a recording's start; their onsets measured as those of synthesised events)."""

    takes_sources = RECORDED_TOO


@dataclass(frozen=True)
class EventsConfig(TaskConfig):
    """Fields every event-sequence task has: the stimulus kinds, their spectrum and the events' ramps."""

    stimuli: tuple[str, ...] = ("pure", "harmonic", "noise")
    freq_hz: Dist = Dist.of({"dist": "loguniform", "low": 300.0, "high": 1200.0})
    n_harmonics: int = 5
    ramp_s: float = 0.005


@dataclass(frozen=True)
class CountsConfig(EventsConfig):
    """Fields of the counting tasks: counts up to ``max_count``, events sharing a jittered total sounding time."""

    min_count: int = 1
    max_count: int = 10
    total_s: Dist = Dist.of((0.4, 0.6))
    jitter: float = 0.2
    level_db_spl: Dist = Dist.of((60.0, 68.0))


@dataclass(frozen=True)
class PulsesConfig(EventsConfig):
    """Fields of the tempo tasks: pulses sounding ``duty`` of their interval."""

    duty: Dist = Dist.of((0.1, 0.3))
    level_db_spl: Dist = Dist.of((60.0, 70.0))


def draw_spectrum(
    rng: np.random.Generator, stimuli, freq, n_harmonics: int, kind: str | None = None, *, source=None
) -> dict[str, Any]:
    """A ``tones`` stimulus recipe shared by every event of a sequence (of ``kind`` when given); with
    a recorded ``source``, a recording whose events each start at the file's start (its attack).

    Parameters
    ----------
    rng, stimuli, freq, n_harmonics, kind
        As in :func:`auralgen.tasks._sounds.draw_sound`.
    source : SourceConfig or None, optional
        The run's ``source`` settings; a recorded one replaces the synthetic stimulus.

    Returns
    -------
    dict of str to Any
        The spectral recipe (``kind``, ``freq_hz`` in Hz, ... or a recording's entry), no timing or level.
    """
    if source is not None and source.recorded:
        return _sounds.draw_clip(rng, source, 0.0, at_start=True)
    return _sounds.draw_sound(rng, stimuli, freq, n_harmonics, kind)


def pulse_train(
    rng: np.random.Generator,
    spectrum: dict,
    *,
    bpm: float,
    start_s: float,
    window_s: float,
    duty: float,
    level_db_spl: float,
    ramp_s: float,
) -> dict[str, Any]:
    """Isochronous pulses at ``bpm`` inside ``[start_s, start_s + window_s]``, the first one a
    uniformly drawn fraction of an interval after ``start_s`` (one draw); each pulse lasts
    ``duty`` of the interval plus one ramp (its two raised-cosine ramps hold the energy of one
    ramp, so its energy is that of ``duty`` of the interval at full level) and ends inside the window
    (ParameterError when it holds fewer than :data:`MIN_PULSES`).

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the grid's phase (one draw).
    spectrum : dict
        The events' spectral recipe (:func:`draw_spectrum`).
    bpm : float
        Tempo, pulses per minute.
    start_s, window_s : float
        The window's start and length, seconds.
    duty : float
        Sounding fraction of each interval.
    level_db_spl : float
        Every pulse's level, dB SPL.
    ramp_s : float
        Onset/offset ramp, seconds.

    Returns
    -------
    dict of str to Any
        A sequence (module docstring) of ``n_events`` pulses, with its ``bpm``, ``ioi_s`` and ``duty``.
    """
    ioi = 60.0 / bpm
    pulse = duty * ioi + ramp_s
    phase = float(rng.uniform(0.0, 1.0)) * ioi
    n = int(math.floor((window_s - pulse - phase) / ioi + 1e-9)) + 1
    if n < MIN_PULSES:
        raise ParameterError(
            f"a {window_s:g} s window holds {n} pulses at {bpm:.1f} BPM; allowed: a window of at least {MIN_PULSES} "
            "intervals"
        )
    onsets = [start_s + phase + k * ioi for k in range(n)]
    return {
        **spectrum,
        "bpm": float(bpm),
        "ioi_s": ioi,
        "duty": float(duty),
        "n_events": n,
        "onsets_s": onsets,
        "durations_s": [pulse] * n,
        "levels_db_spl": [float(level_db_spl)] * n,
    }


def event_run(
    rng: np.random.Generator,
    spectrum: dict,
    *,
    n: int,
    gap_s: float,
    start_s: float,
    total_s: float,
    jitter: float,
    level_db_spl: float,
    ramp_s: float,
) -> dict[str, Any]:
    """``n`` events at ``level_db_spl`` separated by silences of exactly ``gap_s``, starting at
    ``start_s``; their durations are ``total_s / n`` each jittered by a factor ``1 +- jitter``
    (uniform, ``n`` draws), rescaled to sum to ``total_s``, plus one ramp each (two raised-cosine
    ramps hold the energy of one ramp), so the run's energy is that of ``total_s`` at full level
    for every ``n``. Every event has the same level: a per-event rove would make the loudest
    event (the clip's peak) grow with the count.

    Parameters
    ----------
    rng : numpy.random.Generator
        Draws the duration jitter (``n`` draws).
    spectrum : dict
        The events' spectral recipe (:func:`draw_spectrum`).
    n : int
        Number of events.
    gap_s, start_s, total_s : float
        Silence between events, first onset, and the events' summed duration before ramps, seconds.
    jitter : float
        Relative duration jitter, in [0, 1).
    level_db_spl : float
        Every event's level, dB SPL.
    ramp_s : float
        Onset/offset ramp, seconds.

    Returns
    -------
    dict of str to Any
        A sequence like :func:`pulse_train`'s, with its ``gap_s`` and ``total_s`` in place of a tempo.
    """
    factors = 1.0 + rng.uniform(-jitter, jitter, n)
    durations = (total_s * factors / factors.sum() + ramp_s).tolist()
    levels = [float(level_db_spl)] * n
    onsets, t = [], start_s
    for d in durations:
        onsets.append(t)
        t += d + gap_s
    return {
        **spectrum,
        "n_events": int(n),
        "gap_s": float(gap_s),
        "total_s": float(total_s),
        "onsets_s": onsets,
        "durations_s": durations,
        "levels_db_spl": levels,
    }


def counted_run(
    rng: np.random.Generator,
    spectrum: dict,
    cfg,
    *,
    n: int,
    gap_s: float,
    start_s: float,
    total_s: float,
    level_db_spl: float,
) -> dict[str, Any]:
    """:func:`event_run` with the jitter and ramp of a counting task's ``cfg``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream.
    spectrum : dict
        The events' spectral recipe.
    cfg : CountsConfig
        The task's config (``jitter``, ``ramp_s``).
    n : int
        Number of events.
    gap_s, start_s, total_s : float
        Silence between events, first onset and summed duration, seconds.
    level_db_spl : float
        Every event's level, dB SPL.

    Returns
    -------
    dict of str to Any
        The sequence (:func:`event_run`).
    """
    timing = {"gap_s": gap_s, "start_s": start_s, "total_s": total_s, "jitter": cfg.jitter}
    return event_run(rng, spectrum, n=n, **timing, level_db_spl=level_db_spl, ramp_s=cfg.ramp_s)


def run_span_s(total_s: float, n: int, gap_s: float, ramp_s: float) -> float:
    """Length of an :func:`event_run`: its sounding time, one ramp per event and its ``n - 1`` gaps.

    Parameters
    ----------
    total_s : float
        Summed duration of the events before ramps, seconds.
    n : int
        Number of events.
    gap_s, ramp_s : float
        Gap and ramp, seconds.

    Returns
    -------
    float
        Seconds, first onset to last offset.

    Examples
    --------
    >>> round(run_span_s(0.5, 3, 0.1, 0.005), 6)
    0.715
    """
    return total_s + n * ramp_s + (n - 1) * gap_s


def end_s(sequence: dict) -> float:
    """When the last event of ``sequence`` ends.

    Parameters
    ----------
    sequence : dict
        A sequence (``onsets_s``, ``durations_s``).

    Returns
    -------
    float
        Seconds from the clip's start.
    """
    return sequence["onsets_s"][-1] + sequence["durations_s"][-1]


# the recipe keys every event of a sequence shares: a tone's spectrum, or a recording (Corpus.pick)
SPECTRAL_KEYS = ("kind", "freq_hz", "n_harmonics", "noise_seed", "color", *RECIPE_KEYS)


def sounds_of(sequence: dict) -> list[dict[str, Any]]:
    """The ``_sounds`` dicts of a sequence's events (noise event ``k`` seeded ``noise_seed + k``).

    Parameters
    ----------
    sequence : dict
        A sequence (spectral recipe and per-event timing and levels).

    Returns
    -------
    list of dict of str to Any
        One sound per event (``onset_s``, ``duration_s`` in seconds, ``level_db_spl`` in dB SPL).
    """
    spectral = {k: sequence[k] for k in SPECTRAL_KEYS if k in sequence}
    out = []
    for k, (t, d, lv) in enumerate(zip(sequence["onsets_s"], sequence["durations_s"], sequence["levels_db_spl"])):
        sound = {**spectral, "onset_s": t, "duration_s": d, "level_db_spl": lv}
        if "noise_seed" in spectral:
            sound["noise_seed"] = (int(spectral["noise_seed"]) + k) % 2**31
        out.append(sound)
    return out


def render_sequences(params: dict[str, Any]) -> list[np.ndarray]:
    """The clip ``[1, n]`` float32 of ``params['sequences']`` (one clip).

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz``, ``full_scale_db_spl``, ``clip_s``, ``ramp_s`` and ``sequences``.

    Returns
    -------
    list of ndarray
        One clip, shape (1, samples), float32.
    """
    sounds = [s for seq in params["sequences"] for s in sounds_of(seq)]
    return [_sounds.render_sounds({**params, "sounds": sounds})]


def check_spectrum(key: str, cfg, audio) -> None:
    """Stimuli known, harmonics below Nyquist, and the loudest event below full scale for the
    stimulus' crest factor.

    Parameters
    ----------
    key : str
        The task's config path, for messages.
    cfg : EventsConfig
        The task's config (with its ``level_db_spl``).
    audio : AudioConfig
        The audio settings the task renders with.

    Raises
    ------
    ParameterError
        A value is out of range (one line naming key, value and what is allowed).
    """
    _sounds.check_stimuli(f"{key}.stimuli", cfg.stimuli)
    recorded = _sounds.check_recorded(key, cfg, audio)
    require(cfg.n_harmonics >= 1, f"{key}.n_harmonics={cfg.n_harmonics} is too small; allowed: >= 1")
    sr = cfg.sample_rate or audio.sample_rate
    top = _sounds.max_of(_sounds.dist(f"{key}.freq_hz", cfg.freq_hz, low=1e-9)) * (
        cfg.n_harmonics if "harmonic" in cfg.stimuli else 1
    )
    require(
        recorded or top < sr / 2,
        f"{key}.freq_hz={cfg.freq_hz!r} reaches {top:.0f} Hz (highest tone or harmonic) at or above Nyquist "
        f"({sr / 2:.0f} Hz); allowed: below Nyquist",
    )
    loud = _sounds.max_of(_sounds.dist(f"{key}.level_db_spl", cfg.level_db_spl))
    max_ok = audio.full_scale_db_spl - 20 * math.log10(
        CREST["clip"] if recorded else max(CREST[s] for s in cfg.stimuli)
    )
    require(
        loud <= max_ok,
        f"{key}.level_db_spl={cfg.level_db_spl!r} reaches {loud:.1f} dB SPL, which clips at "
        f"full_scale_db_spl={audio.full_scale_db_spl}; allowed: at most {max_ok:.1f} dB SPL",
    )
    require(cfg.ramp_s > 0, f"{key}.ramp_s={cfg.ramp_s} is not positive; allowed: > 0 (events need ramps)")


def check_counts(key: str, cfg, *, largest_gap_s: float) -> float:
    """Counts, jitter, ramps and gaps of an event-run config; returns the longest run (s).

    Parameters
    ----------
    key : str
        The task's config path, for messages.
    cfg : CountsConfig
        The task's config.
    largest_gap_s : float
        The longest gap between events any level asks for, seconds.

    Returns
    -------
    float
        The longest run, seconds (:func:`run_span_s` at ``max_count``).
    """
    require(
        1 <= cfg.min_count < cfg.max_count,
        f"{key}.min_count={cfg.min_count}, max_count={cfg.max_count}; allowed: 1 <= min_count < max_count",
    )
    require(0 <= cfg.jitter < 1, f"{key}.jitter={cfg.jitter}; allowed: 0 <= jitter < 1")
    total = _sounds.dist(f"{key}.total_s", cfg.total_s, low=1e-9)
    shortest = _sounds.min_of(total) * (1 - cfg.jitter) / (cfg.max_count * (1 + cfg.jitter))
    require(
        2 * cfg.ramp_s <= shortest,
        f"{key}.ramp_s={cfg.ramp_s} is longer than half the shortest event ({shortest:.4f} s); allowed: 2*ramp_s <= "
        "shortest event",
    )
    return run_span_s(_sounds.max_of(total), cfg.max_count, largest_gap_s, cfg.ramp_s)
