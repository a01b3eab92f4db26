"""Option texts in a reply, for :mod:`auralgen.evaluation.parsing`: which option a reply states in
words (rule 8 and the concluding sentence), and the sentence tests shared with the letter rules
(supposed, negated, weighed).

An option's text is found whole-word and case- and punctuation-insensitive, longest option
first, and replaced by a marker before the reply is cut into clauses, so an option that holds
punctuation itself ("Room: reverberation time between 0.3 s and 1.2 s", "Near (0-1 m)") stays
one mention. A mention is *not* a statement when it is negated ("not higher", "it is not in
the first half"), weighed ("higher or lower", "which one is higher", "neither higher nor
lower"), compared against ("the second sound is closer than *the first sound*", "compared with
..."), denied later in its clause ("*the first sound* is not closer"), asked ("Is it higher?"),
only supposed ("If it were higher ...") or runs straight into another option ("*not present* in
the first half": one phrase naming two options).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_WORD = r"0-9a-z\u4e00-\u9fff"
_NON_ALNUM = re.compile(rf"[^{_WORD}]+")
_NEGATED = re.compile(r"(?:\bnot|\bnever|\bno|\bn t)\s+(?:the\s+|a\s+|an\s+)?$")
# a negation earlier in the clause, with no "but" after it: "the tone is not present in <option>"
_NEGATED_IN_CLAUSE = re.compile(r"(?:\bnot|\bnever|\bn t)\b(?:(?!\bbut\b).)*$")
# a sentence that only supposes: "If the value were -16, ... B"; "For example, ..."
_HYPOTHETICAL_START = re.compile(
    r"(?i:^[\s\-]*(?:if|suppose|supposing|assuming|for\s+example|for\s+instance|e\.g\.?|例如|如果|假设|比如))"
)
# ... or supposes part-way: "the clip is, say, 3 s long, so the answer is A"; "if X, then A" (no "but" after)
_HYPOTHETICAL_INSIDE = re.compile(r"(?is:(?:,\s*say\s*,|\b(?:if|otherwise)\b)(?:(?!\bbut\b).)*$)")
# a clause in which an option text is only weighed or compared against: "which one is higher", "higher or
# lower", "closer than the first sound"
_WEIGHED_BEFORE = re.compile(
    r"(?i:\b(?:if|whether|which|or|either|nor|neither|between|than|compared\s+(?:with|to))\b[^,.;:!?\n]*$)"
)
# a negation later in the clause: "the first sound is not closer" does not state the first sound
_NEGATED_AFTER = re.compile(r"^(?:(?!\bbut\b).)*\b(?:not|never|n t)\b")
_WEIGHED_AFTER = re.compile(r"\s+(?:or|nor)\s")
_CANT_TELL_OPTION = re.compile(r"determin|cannot tell|can t tell|not sure|unknown")
_CLAUSE = re.compile(r"(?:[^,.;:!?\n]|[,.;:!?](?!\s|$))+")
_DASH = re.compile(r"\s[-–—]+\s|[–—]")
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")
_CONCLUSION = re.compile(
    r"(?i)(?:^|(?<=[.!?\n])\s*)(?:therefore|thus|hence|so|consequently|in\s+conclusion|to\s+conclude|in\s+summary"
    r"|in\s+short|overall)\b[,:]?"
)
_MARK = re.compile(r"zqx(\d+)zqx")


def norm(text: str) -> str:
    """Lower-case, punctuation to spaces, single-spaced."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class OptionNorms:
    """The option texts of one question, normalized for matching in a reply."""

    exact: dict[str, int]  # normalized text -> option index (the first option of a text)
    by_length: tuple[tuple[str, int], ...]  # (normalized text, index), longest text first
    cant_tell: int | None  # index of a "cannot determine" option, if one exists
    finders: tuple[tuple[re.Pattern, int], ...]  # (whole-word pattern of a text, index), longest first


@lru_cache(maxsize=4096)
def option_norms(options: tuple[str, ...]) -> OptionNorms:
    """The normalized option texts of ``options`` (cached: a question's options are parsed many times)."""
    exact: dict[str, int] = {}
    for i, opt in enumerate(options):
        n = norm(opt)
        if n:
            exact.setdefault(n, i)
    by_length = tuple(sorted(((n, i) for n, i in exact.items()), key=lambda t: -len(t[0])))
    cant_tell = next((i for n, i in by_length if _CANT_TELL_OPTION.search(n)), None)
    finders = tuple(
        (re.compile(rf"(?<![{_WORD}])" + rf"[^{_WORD}]+".join(map(re.escape, n.split())) + rf"(?![{_WORD}])"), i)
        for n, i in by_length
    )
    return OptionNorms(exact, by_length, cant_tell, finders)


def hypothetical(text: str, pos: int) -> bool:
    """True when the sentence holding ``pos`` starts with "If", "For example", "Suppose", ..."""
    start = max(text.rfind(c, 0, pos) for c in ".!?\n") + 1
    return (
        _HYPOTHETICAL_START.match(text, start) is not None or _HYPOTHETICAL_INSIDE.search(text, start, pos) is not None
    )


def option_prefix(text: str, by_length) -> int | None:
    """Index of the option the text starts with (up to the end of its sentence; a decimal point
    such as ``0.3 s`` does not end it)."""
    head = norm(_SENTENCE_END.split(text, maxsplit=1)[0])
    for n, i in by_length:
        if head == n or (head.startswith(n + " ") and not _WEIGHED_AFTER.match(head, len(n))):
            return i
    return None


def _marked(text: str, finders) -> str:
    """``text`` lower-cased with every option mention replaced by ``zqx<i>zqx`` (longest option first)."""
    low = text.lower()
    for pattern, i in finders:
        low = pattern.sub(f" zqx{i}zqx ", low)
    return _DASH.sub("; ", low)


def _stated_in(clause: str, relative: bool) -> list[int]:
    """Options a normalized clause states (see the module docstring)."""
    padded = " " + clause + " "
    if relative:  # ", which is lower than ...": a relative clause, not a question
        padded = re.sub(r"^ which\b", " ", padded)
    marks = list(_MARK.finditer(padded))
    out = []
    for k, m in enumerate(marks):
        before = padded[: m.start()]
        adjacent = (k and not padded[marks[k - 1].end() : m.start()].strip()) or (
            k + 1 < len(marks) and not padded[m.end() : marks[k + 1].start()].strip()
        )
        if not (
            adjacent
            or _NEGATED.search(before)
            or _NEGATED_IN_CLAUSE.search(before)
            or _WEIGHED_BEFORE.search(before)
            or _WEIGHED_AFTER.match(padded, m.end())
            or _NEGATED_AFTER.search(padded[m.end() :])
        ):
            out.append(int(m.group(1)))
    return out


def text_mentions(text: str, finders) -> int | None:
    """Rule 8: index of the one option whose text is stated, clause by clause (see the module docstring)."""
    marked = _marked(text, finders)
    chosen: list[int] = []
    for cm in _CLAUSE.finditer(marked):
        end = _SENTENCE_END.search(marked, cm.end())
        if hypothetical(marked, cm.end()) or (end is not None and end.group(0) == "?"):
            continue  # supposed, or asked: "Is the second sound closer than the first?"
        relative = re.match(r"\s*which\b", cm.group(0)) is not None and marked[: cm.start()].rstrip().endswith(",")
        chosen += [i for i in _stated_in(norm(cm.group(0)), relative) if i not in chosen]
    return chosen[0] if len(chosen) == 1 else None


def concluded(text: str, finders) -> int | None:
    """Index of the one option stated in the last sentence that opens with "Therefore", "So", "In conclusion", ..."""
    last = None
    for last in _CONCLUSION.finditer(text):  # noqa: B007 - the last one
        pass
    if last is None or hypothetical(text, last.end()):
        return None
    end = _SENTENCE_END.search(text, last.end())
    return text_mentions(text[last.end() : end.end() if end else len(text)], finders)
