"""The mixture's role audit: a :class:`~auralgen.tasks.base.DatasetCheck` the dataset audit runs.

In a mixture the answer names one of the sounds, so a shortcut is a *role* the named sound
plays more often than chance: the loudest sound being the first or the longest one, say. Per
sub-question and cue, the check counts the items whose answer sound holds the cue's extreme,
against the chance of a sound drawn at random holding it (binomial test, Bonferroni over the
cues tested), and flags it at the margin of the audit's one-feature shortcut test.
"""

from __future__ import annotations

from typing import Any

from scipy import stats

from auralgen.tasks.base import DatasetCheck

# the one-feature shortcut audit's thresholds (auralgen.validation.shortcuts), applied to roles
ROLE_MARGIN = 0.15  # the answer sound's share above chance by at least this ...
ROLE_ALPHA = 0.01  # ... with binomial p below this / number of cues tested
ROLE_MIN_ITEMS = 12  # items of a sub-question needed to test it

ROLE_CUES = {
    "louder": {
        "first": ("onset_s", min),
        "last": ("onset_s", max),
        "longest": ("duration_s", max),
        "shortest": ("duration_s", min),
    },
    "first": {
        "loudest": ("level", max),
        "quietest": ("level", min),
        "longest": ("duration_s", max),
        "shortest": ("duration_s", min),
    },
}


def _cue_row(sub: str, cue: str, field_: str, pick, items: list[dict], n_tests: int) -> dict[str, Any]:
    """How often the answer sound of ``items`` holds ``pick`` of ``field_``, against chance."""
    hits, chance = 0, 0.0
    for p in items:
        vals = [s[field_] for s in p["sounds"]]
        best = pick(vals)
        holders = [i for i, v in enumerate(vals) if v == best]
        hits += int(p["answer"] in holders)
        chance += len(holders) / len(vals)
    n, p0 = len(items), chance / len(items)
    pval = float(stats.binomtest(hits, n, p0, alternative="greater").pvalue)
    rate = hits / n
    flag = rate - p0 >= ROLE_MARGIN and pval < ROLE_ALPHA / n_tests
    return {
        "sub_question": sub,
        "cue": cue,
        "n": n,
        "rate": round(rate, 4),
        "chance": round(p0, 4),
        "p": pval,
        "flag": bool(flag),
    }


def role_audit(params_list: list[dict]) -> dict[str, Any]:
    """``{"cues": [row per sub-question and cue]}``, or ``{"skipped": why}`` with too few items.

    Parameters
    ----------
    params_list : list of dict
        Every mixture item's ``params``.

    Returns
    -------
    dict of str to Any
        The report entry: per row ``sub_question``, ``cue``, ``n``, ``rate``, ``chance``, ``p`` and ``flag``.
    """
    rows = []
    for sub, cues in ROLE_CUES.items():
        items = [p for p in params_list if p.get("sub_question") == sub and isinstance(p.get("answer"), int)]
        if len(items) < ROLE_MIN_ITEMS:
            continue
        for cue, (field_, pick) in cues.items():
            rows.append(_cue_row(sub, cue, field_, pick, items, len(cues) * len(ROLE_CUES)))
    return {"cues": rows} if rows else {"skipped": "too few named-sound mixture items"}


class MixtureRoles(DatasetCheck):
    """The role audit over every mixture item of a dataset; one flag line per flagged cue."""

    name = "mixture_roles"

    def __init__(self) -> None:
        self.params: list[dict] = []

    def observe(self, params: dict[str, Any]) -> None:
        self.params.append(params)

    def finish(self) -> tuple[dict[str, Any], list[str]]:
        roles = role_audit(self.params)
        flags = [
            f"the answer to '{r['sub_question']}' is the {r['cue']} sound in {r['rate']:.2f} of items vs "
            f"chance {r['chance']:.2f} (p={r['p']:.1e})"
            for r in roles.get("cues", [])
            if r["flag"]
        ]
        return roles, flags
