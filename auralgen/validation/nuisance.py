"""The audio-nuisance control's features: level, loudness and timing facts of the audio that are not
the probed attribute, per clip and per part (the first and the last sounding segment of a clip).

A model that reads only these (the ``nuisance`` control of :mod:`auralgen.validation.controls`, a
k-nearest-neighbour vote like the metadata control) must be at honest chance on a seed it was not
trained on, except for the features a task declares as its cue: each feature measures one audit
feature (:data:`AUDIT_FEATURE`), and a feature whose audit feature matches one of the task's
``AuditSpec.target_features`` (physically inseparable from the attribute, with the reason stated
beside the spec) is left out.

=====================  ==================================================  ==========================
feature (per clip k)   what                                                audit feature
=====================  ==================================================  ==========================
``rms_dbfs``           whole-clip RMS level                                ``audio.rms_dbfs``
``peak_dbfs``          whole-clip peak level                               ``audio.peak_dbfs``
``crest_db``           peak minus RMS                                      ``audio.crest_db``
``lufs``               integrated loudness (BS.1770)                       ``audio.loudness_lufs``
``active_s``           sounding time (sum of the segments)                 ``audio.active_s``
``span_s``             first onset to last offset                          ``audio.span_s``
``lead_s``             silence before the first onset                      ``audio.first_onset_s``
``trail_s``            silence after the last offset                       ``audio.last_offset_s``
``n_segments``         sounding segments (-60 dB re the clip's loudest)    ``audio.n_segments``
``part{0,1}_rms_dbfs`` RMS of the first / last segment, and their delta   ``audio.delta_level_db``
``part{0,1}_peak_dbfs``  peak of the first / last segment, and delta      ``audio.delta_level_db``
``part{0,1}_s``        length of the first / last segment, and delta      ``audio.delta_duration_s``
=====================  ==================================================  ==========================
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fnmatch import fnmatch
from functools import cache

import numpy as np

from auralgen.core.errors import AuralgenError, ParameterError
from auralgen.measure import loudness_lufs, segments
from auralgen.tasks.base import AuditSpec, task_class

SEGMENT_DB = -60.0  # a segment sounds above this level re the clip's loudest (the shortcut audit's threshold)
FLOOR = -300.0  # the level of digital silence, as a number

AUDIT_FEATURE = {
    "rms_dbfs": "audio.rms_dbfs",
    "peak_dbfs": "audio.peak_dbfs",
    "crest_db": "audio.crest_db",
    "lufs": "audio.loudness_lufs",
    "active_s": "audio.active_s",
    "span_s": "audio.span_s",
    "lead_s": "audio.first_onset_s",
    "trail_s": "audio.last_offset_s",
    "n_segments": "audio.n_segments",
    "part0_rms_dbfs": "audio.delta_level_db",
    "part1_rms_dbfs": "audio.delta_level_db",
    "delta_rms_db": "audio.delta_level_db",
    "part0_peak_dbfs": "audio.delta_level_db",
    "part1_peak_dbfs": "audio.delta_level_db",
    "delta_peak_db": "audio.delta_level_db",
    "part0_s": "audio.delta_duration_s",
    "part1_s": "audio.delta_duration_s",
    "delta_s": "audio.delta_duration_s",
}


def _db(power: float) -> float:
    return 10.0 * math.log10(power) if power > 0 else FLOOR


def clip_features(x: np.ndarray, sample_rate: int) -> dict[str, float]:
    """The nuisance features of one clip (channels averaged), see the module table.

    Parameters
    ----------
    x : np.ndarray, shape (channels, n)
        The clip.
    sample_rate : int
        Sample rate (Hz).

    Returns
    -------
    dict of str to float
        Levels in dB (``*_dbfs``, ``lufs``), times in seconds (``*_s``), ``n_segments``.
    """
    y = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1]).mean(axis=0)
    n, sr = y.size, int(sample_rate)
    rms, peak = _db(float(np.mean(y**2))), _db(float(np.max(np.abs(y))) ** 2)
    out = {"rms_dbfs": rms, "peak_dbfs": peak, "crest_db": peak - rms}
    try:
        lufs = loudness_lufs(y, sr)
    except ParameterError:  # shorter than one BS.1770 block
        lufs = FLOOR
    out["lufs"] = lufs if math.isfinite(lufs) else FLOOR
    segs = segments(y, sr, threshold_db=SEGMENT_DB) if np.any(y) else []
    out["n_segments"] = float(len(segs))
    if not segs:
        return out | {"active_s": 0.0, "span_s": 0.0, "lead_s": n / sr, "trail_s": 0.0}
    first, last = segs[0], segs[-1]
    out |= {
        "active_s": sum(s.duration_s for s in segs),
        "span_s": last.offset_s - first.onset_s,
        "lead_s": first.onset_s,
        "trail_s": n / sr - last.offset_s,
    }
    for i, s in enumerate((first, last)):
        part = y[int(s.onset_s * sr) : int(s.offset_s * sr) + 1]
        out[f"part{i}_rms_dbfs"] = _db(float(np.mean(part**2))) if part.size else FLOOR
        out[f"part{i}_peak_dbfs"] = _db(float(np.max(np.abs(part))) ** 2) if part.size else FLOOR
        out[f"part{i}_s"] = s.duration_s
    out["delta_rms_db"] = out["part1_rms_dbfs"] - out["part0_rms_dbfs"]
    out["delta_peak_db"] = out["part1_peak_dbfs"] - out["part0_peak_dbfs"]
    out["delta_s"] = out["part1_s"] - out["part0_s"]
    return out


def nuisance_features(clips, sample_rate: int) -> dict[str, float]:
    """``clip{k}.<feature>`` for every clip of an item (see :func:`clip_features`).

    Parameters
    ----------
    clips : sequence of np.ndarray, each shape (channels, n)
        The item's clips.
    sample_rate : int
        Sample rate (Hz).

    Returns
    -------
    dict of str to float
        :func:`clip_features` of clip k under ``clip{k}.<feature>``; empty for no clips.

    Examples
    --------
    >>> x = np.zeros((1, 16000)); x[0, 4000:8000] = 0.1
    >>> f = nuisance_features([x], 16000)
    >>> round(f["clip0.rms_dbfs"], 2), round(f["clip0.lead_s"], 2), f["clip0.n_segments"]
    (-26.02, 0.25, 1.0)
    """
    out: dict[str, float] = {}
    for k, x in enumerate(clips or []):
        out |= {f"clip{k}.{name}": float(v) for name, v in clip_features(x, sample_rate).items()}
    return out


@cache
def declared(task: str) -> frozenset[str]:
    """The nuisance features (names of :data:`AUDIT_FEATURE`) ``task`` declares as its cue: those whose
    audit feature matches one of its ``AuditSpec.target_features`` (none for a task the registry does not know).

    Parameters
    ----------
    task : str
        The task name.

    Returns
    -------
    frozenset of str
        Keys of :data:`AUDIT_FEATURE`.

    Examples
    --------
    >>> sorted(declared("pitch_relative"))
    []
    >>> {"rms_dbfs", "peak_dbfs"} <= declared("loudness_relative")
    True
    """
    spec = audit_spec(task)
    return matching(AUDIT_FEATURE, spec.target_features) if spec else frozenset()


def declared_for(task: str, params: dict | None) -> frozenset[str]:
    """The nuisance features one item of ``task`` declares as its cue beyond :func:`declared`: those of its
    ``AuditSpec.cues_when`` entries that apply to the item's ``params``.

    Parameters
    ----------
    task : str
        The item's task name.
    params : dict or None
        The item's ``params``; None declares every entry (the cautious reading).

    Returns
    -------
    frozenset of str
        Names of :data:`AUDIT_FEATURE` (e.g. ``"lufs"``); empty for a task the registry does not know.

    Examples
    --------
    >>> sorted(declared_for("temporal_reorder", {"process": "sweep"}))
    []
    >>> "lufs" in declared_for("temporal_reorder", {"process": "approaching"})
    True
    """
    spec = audit_spec(task)
    return matching(AUDIT_FEATURE, spec.item_cues(params)) if spec else frozenset()


def audit_spec(task: str) -> AuditSpec | None:
    """The ``AuditSpec`` of ``task``, None for a task the registry does not know.

    Parameters
    ----------
    task : str
        A task name, as a dataset row gives it.

    Returns
    -------
    AuditSpec or None
        The task's audit spec.
    """
    try:
        return task_class(task).audit
    except (AuralgenError, KeyError, ImportError):
        return None


def matching(features: Mapping[str, str], patterns: Iterable[str]) -> frozenset[str]:
    """The features whose audit feature matches one of ``patterns``.

    Parameters
    ----------
    features : mapping of str to str
        Feature name to the audit feature it measures (e.g. :data:`AUDIT_FEATURE`).
    patterns : iterable of str
        :func:`fnmatch` patterns of audit features (an ``AuditSpec``'s declared cues).

    Returns
    -------
    frozenset of str
        Keys of ``features``.
    """
    patterns = tuple(patterns)
    return frozenset(k for k, f in features.items() if any(fnmatch(f, p) for p in patterns))


def usable(task: str, name: str) -> bool:
    """Whether feature ``name`` (e.g. ``clip1.lead_s``) may be used by the nuisance control for ``task``.

    Parameters
    ----------
    task : str
        The task name.
    name : str
        A key of :func:`nuisance_features`.

    Returns
    -------
    bool
        False when the feature is one the task declares as its cue (:func:`declared`).
    """
    return name.split(".", 1)[-1] not in declared(task)
