"""What the dataset audit expects of a task (:class:`AuditSpec`) and the audit-feature families tasks share."""

from __future__ import annotations

from dataclasses import dataclass

from auralgen.tasks._dataset_check import DatasetCheck


@dataclass(frozen=True)
class AuditSpec:
    """What the dataset audit expects of a task (``auralgen.validation``); every task declares one.

    ``target_features`` are :func:`fnmatch` patterns of the audit's features (``params`` paths,
    ``delta.*`` between sounds, ``audio.*`` measured, ``row.*`` columns) that legitimately predict
    the answer because they are, or are driven by, the probed attribute; every other feature must
    not predict it (the shortcut audit). ``listener_easiest`` says at which end of the level grid
    the reference listener must reach ``listener_floor``: "max" (the default: the largest level
    value is the easiest) or "min", or None where a DSP listener is not expected to solve even the
    easiest level -- then ``reason`` says why.

    ``cues_when`` declares cues of some items only: each entry ``(key, values, patterns)`` adds the
    audit-feature ``patterns`` to the declared cues of an item whose ``params[key]`` is one of
    ``values`` (e.g. level is the order's cue only where the process is one of level). The
    audio-nuisance control leaves those features out for those items alone.
    """

    target_features: tuple[str, ...]
    listener_easiest: str | None = "max"
    listener_floor: float = 0.8
    reason: str = ""
    # checks over all of the task's items, run by the audit (each a DatasetCheck subclass)
    dataset_checks: tuple[type[DatasetCheck], ...] = ()
    cues_when: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()

    def __post_init__(self):
        if self.listener_easiest not in ("max", "min", None):
            raise TypeError(f"AuditSpec.listener_easiest={self.listener_easiest!r}; allowed: 'max', 'min' or None")
        if self.listener_easiest is None and not self.reason:
            raise TypeError(
                "AuditSpec(listener_easiest=None) needs a reason; allowed: say why a DSP listener cannot solve the "
                "easiest level"
            )
        if not self.target_features:
            raise TypeError(
                "AuditSpec.target_features is empty; allowed: the patterns of the probed attribute's features"
            )
        for entry in self.cues_when:
            if len(entry) != 3 or not (isinstance(entry[0], str) and entry[1] and entry[2]):
                raise TypeError(
                    f"AuditSpec.cues_when entry {entry!r} is invalid; allowed: (params key, values, feature patterns)"
                )

    def item_cues(self, params: dict | None) -> tuple[str, ...]:
        """The feature patterns declared as cues of one item, beyond ``target_features``.

        Parameters
        ----------
        params : dict or None
            The item's ``params``; None (not known, e.g. a public export) declares every entry of
            ``cues_when``, the cautious reading.

        Returns
        -------
        tuple of str
            Audit-feature patterns (``fnmatch``), empty when no entry applies.
        """
        return tuple(
            pattern
            for key, values, patterns in self.cues_when
            if params is None or params.get(key) in values
            for pattern in patterns
        )


# audit feature families shared by several tasks (see AuditSpec.target_features)
RELATIVE_FEATURES = ("direction", "difference", "row.level")
# (a task adds its own margin field, margin_deg or margin_percent, where its params have one)
SPATIAL_FEATURES = ("row.level", "positions_m.*", "sounds.*.position_m.*")
DISTANCE_CUE_FEATURES = (
    "audio.rms_dbfs",
    "audio.peak_dbfs",
    "audio.active_s",
    "audio.last_offset_s",
    "audio.n_segments",
    "audio.first_onset_s",
    "row.flac_bytes",
)
