"""The distance family: the received level of a source in a room, predicted (direct plus diffuse
field) and measured, shared by distance_absolute, distance_relative and multi_source_relation."""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.docstrings import sections
from auralgen.rooms.scene import critical_distance_m
from auralgen.tasks import _sounds
from auralgen.tasks._spatial import room_of
from auralgen.tasks.base import MEASURED

TOLERANCE_DB = 4.0  # received level vs the statistical (direct + reverberant) prediction


def expected_received_db(params, sound) -> float:
    """Statistical received level (dB SPL): direct 1/r^2 plus the diffuse field (1/r_c^2) re 1 m.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (its room).
    sound : dict of str to Any
        One entry of ``params["sounds"]``: ``level_db_spl`` (dB SPL at 1 m) and ``distance_m`` (metres).

    Returns
    -------
    float
        dB SPL at the receiver.
    """
    rc = critical_distance_m(room_of(params))
    return sound["level_db_spl"] + 10 * math.log10(1 / sound["distance_m"] ** 2 + (0 if math.isinf(rc) else 1 / rc**2))


def received_db(params, clips, sound) -> float:
    """The sound's measured level in the clip over its dry duration from its onset (dB SPL, channels pooled).

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``sample_rate_hz``, ``full_scale_db_spl``).
    clips : list of ndarray
        The item's clips; the first, shape (channels, samples), is measured.
    sound : dict of str to Any
        One entry of ``params["sounds"]`` (``onset_s``, ``source.duration_s``).

    Returns
    -------
    float
        dB SPL.
    """
    from auralgen.measure import level_db_spl

    sr = params["sample_rate_hz"]
    a = _sounds.n_samples(sound["onset_s"], sr)
    seg = clips[0][:, a : a + _sounds.n_samples(sound["source"]["duration_s"], sr)].astype(np.float64)
    return level_db_spl(seg, full_scale_db_spl=params["full_scale_db_spl"])


@sections(MEASURED, checks="``received_level_db_spl`` (one check record per sound, dB SPL)")
def level_check(params, clips) -> dict:
    """Every sound's received level (:func:`received_db`) within :data:`TOLERANCE_DB` of the prediction
    (:func:`expected_received_db`)."""
    recs, ok = [], True
    for s in params["sounds"]:
        got, want = received_db(params, clips, s), expected_received_db(params, s)
        good = abs(got - want) <= TOLERANCE_DB
        ok &= good
        recs.append(
            {"measured": round(got, 3), "expected": round(want, 3), "tolerance": TOLERANCE_DB, "ok": bool(good)}
        )
    return {"received_level_db_spl": recs, "valid": bool(ok)}
