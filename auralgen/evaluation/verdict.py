"""The one verdict: is a reply correct.

Every scoring record's ``correct`` comes from :func:`is_correct` -- a session's replies
(:func:`auralgen.evaluation.session.record`), an adaptive trial
(:func:`auralgen.evaluation.adaptive.trials.trial_record`) and a peer's prediction file
(:mod:`auralgen.evaluation.interop.common`). Nothing downstream re-derives it: scores, the
accounting, psychometric fits and the leaderboard count ``correct`` as recorded.

Two sources decide, in this order:

1. A *file's verdict* (``scorer=file`` or ``scorer=mmar``: the peer toolkit's own per-row
   verdict) is the verdict, whatever the parser read of the reply -- parsed or not.
2. Otherwise the parsed reply: correct only when the parser read one option (status ``ok``)
   and it is the presented answer. No reply (``parsed=None``), a refusal, several options or
   nothing readable is wrong.

Examples
--------
>>> from auralgen.evaluation.parsing import ParseResult
>>> is_correct(ParseResult(1, "ok"), 1)
True
>>> is_correct(ParseResult(None, "unparseable"), 1)
False
>>> is_correct(ParseResult(None, "unparseable"), 1, file_verdict=True)
True
>>> is_correct(None, 0)
False
"""

from __future__ import annotations

from .parsing import ParseResult

__all__ = ["is_correct"]


def is_correct(parsed: ParseResult | None, truth: int, *, file_verdict: bool | None = None) -> bool:
    """Whether a reply is correct.

    Parameters
    ----------
    parsed : ParseResult or None
        What the parser read of the reply (``None``: no reply at all).
    truth : int
        Index of the correct option in the *presented* order.
    file_verdict : bool or None
        A peer toolkit's own verdict for the row; when given it decides.

    Returns
    -------
    bool
        ``file_verdict`` when given; else True only for a parsed reply (status ``ok``) naming ``truth``.
    """
    if file_verdict is not None:
        return bool(file_verdict)
    return parsed is not None and parsed.status == "ok" and parsed.index == int(truth)
