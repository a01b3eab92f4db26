"""The timbre family: instrument notes (:mod:`auralgen.synth.instruments`) with their natural roving,
config checks, rendering and the notes' samples, shared by timbre_relative and timbre_absolute."""

from __future__ import annotations

from typing import Any

import numpy as np

from auralgen.synth import instruments
from auralgen.synth.signals import n_samples, place
from auralgen.tasks import _sounds
from auralgen.tasks.base import AudioConfig, require

ROVING_DB = 0.05  # natural roving of an instrument's envelope: per cepstral coefficient (dB, Gaussian SD)

TOLERANCE_LU = 0.2  # each note's measured loudness vs the recipe's

MAX_F0_HZ = 180.0

LOUDEST_LUFS = -30.0


def check_notes(cfg, audio: AudioConfig, key: str, rove_db: float = 0.0) -> None:
    """Excitations known, f0 in the range where every mel band holds a partial, the note long
    enough for BS.1770 loudness, Nyquist above the top band, loudness below clipping.

    Parameters
    ----------
    cfg : TaskConfig
        A timbre task's config (``excitations``, ``f0_hz``, ``note_s``, ``loudness_lufs``).
    audio : AudioConfig
        The audio settings the task renders with.
    key : str
        The task's config path, for messages.
    rove_db : float, optional
        How far a note's loudness may be roved above ``loudness_lufs``, dB.

    Raises
    ------
    ParameterError
        A value is out of range (one line naming key, value and what is allowed).
    """
    bad = [e for e in cfg.excitations if e not in instruments.EXCITATIONS]
    require(
        cfg.excitations and not bad,
        f"{key}.excitations={list(cfg.excitations)!r} is invalid; allowed: a non-empty list from "
        f"{list(instruments.EXCITATIONS)}",
    )
    f0 = _sounds.dist(f"{key}.f0_hz", cfg.f0_hz, low=1e-9)
    require(
        _sounds.min_of(f0) >= 50.0 and _sounds.max_of(f0) <= MAX_F0_HZ,
        f"{key}.f0_hz={cfg.f0_hz!r} leaves 50..{MAX_F0_HZ:g} Hz; allowed: 50 <= f0_hz <= {MAX_F0_HZ:g} (partials "
        "enough in the lowest mel bands)",
    )
    sr = cfg.sample_rate or audio.sample_rate
    require(
        sr > 2 * instruments.FMAX_HZ,
        f"{key}.sample_rate={sr} puts Nyquist below {instruments.FMAX_HZ} Hz; allowed: > {2 * instruments.FMAX_HZ:g}",
    )
    require(
        0.4 <= cfg.note_s <= 4.0,
        f"{key}.note_s={cfg.note_s} is out of range; allowed: 0.4 <= note_s <= 4 (BS.1770 needs 0.4 s)",
    )
    loud = _sounds.max_of(_sounds.dist(f"{key}.loudness_lufs", cfg.loudness_lufs)) + rove_db
    require(
        loud <= LOUDEST_LUFS,
        f"{key}.loudness_lufs={cfg.loudness_lufs!r} may clip; allowed: at most {LOUDEST_LUFS - rove_db:g} LUFS",
    )


def note_recipe(
    rng: np.random.Generator, excitation: str, f0: float, dur: float, ceps, lufs: float, shape_seed: int | None = None
) -> dict[str, Any]:
    """A note of an instrument (``ceps``) with its natural roving: an envelope jitter of
    :data:`ROVING_DB` per coefficient and its own excitation seed (fine structure). Draws: the
    jitter, then the seed. ``shape_seed`` (the excitation's course in time) is stored when given.

    Parameters
    ----------
    rng : numpy.random.Generator
        The item's random stream.
    excitation : str
        One of :data:`auralgen.synth.instruments.EXCITATIONS`.
    f0 : float
        Fundamental frequency, Hz.
    dur : float
        Duration, seconds.
    ceps : array_like, shape (N_CEPS,)
        The instrument's mel-cepstral envelope, coefficients 1..N_CEPS in dB.
    lufs : float
        The note's loudness, LUFS.
    shape_seed : int or None, optional
        Seed of the excitation's course in time.

    Returns
    -------
    dict of str to Any
        The note's recipe (``f0_hz``, ``duration_s``, ``seed``, roved ``ceps``, ``loudness_lufs``, ...), no onset.
    """
    rov = np.asarray(ceps) + rng.normal(0.0, ROVING_DB, instruments.N_CEPS)
    shape = {} if shape_seed is None else {"shape_seed": int(shape_seed)}
    return {
        "excitation": excitation,
        "f0_hz": f0,
        "duration_s": dur,
        "seed": int(rng.integers(2**31)),
        **shape,
        "ceps": [round(float(c), 6) for c in rov],
        "loudness_lufs": lufs,
    }


def render_notes(params: dict[str, Any]) -> list[np.ndarray]:
    """The clip ``[1, n]`` float32 of ``params['notes']`` placed at their ``onset_s``.

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz``, ``clip_s`` (seconds) and ``notes`` (each with its ``onset_s``, seconds).

    Returns
    -------
    list of ndarray
        One clip, shape (1, samples), float32.
    """
    sr = int(params["sample_rate_hz"])
    segs = [(instruments.render_note(nt, sr), n_samples(nt["onset_s"], sr)) for nt in params["notes"]]
    return [place(segs, n_samples(params["clip_s"], sr))[None, :].astype(np.float32)]


def note_samples(params: dict[str, Any], clip: np.ndarray) -> list[np.ndarray]:
    """Each note's samples in ``clip`` (from its recipe's onset and duration).

    Parameters
    ----------
    params : dict of str to Any
        ``sample_rate_hz`` and ``notes`` (``onset_s``, ``duration_s``, seconds).
    clip : ndarray, shape (1, samples)
        The rendered clip (flattened).

    Returns
    -------
    list of ndarray
        One float64 array, shape (samples,), per note.
    """
    sr = int(params["sample_rate_hz"])
    x = np.asarray(clip, dtype=np.float64).reshape(-1)
    out = []
    for nt in params["notes"]:
        a = n_samples(nt["onset_s"], sr)
        out.append(x[a : a + n_samples(nt["duration_s"], sr)])
    return out
