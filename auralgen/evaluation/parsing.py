"""Option rotation and answer extraction for multiple-choice replies.

An item's ``options`` are stored in canonical order. The evaluator asks the item once per
rotation ``r`` (circular evaluation, as in STAR-Bench) and labels the presented options
``A, B, C, ...``. :func:`rotate_options` defines the rotation; :func:`extract_choice` reads
the letter or option the model chose out of a free-text reply, as an index into the
*presented* (rotated) order.

Precedence of :func:`extract_choice`
------------------------------------
The reply is cleaned first (full-width punctuation to ASCII; a JSON ``"answer": "c"`` field, or
else the last non-empty ``<conclusion>``/``<answer>``/``<final_answer>`` element, replaces the
whole reply, so the reasoning around it cannot decide; other tags such as ``<think>`` become line
breaks; ``'B'`` to ``B``; ``**B**`` and ``__B__`` to ``(B)``; LaTeX
``\\boxed``/``\\text``, ``$``, ``*`` and backticks removed). Then the first tier that yields
something decides. Throughout, a letter that is only *defined* (``A (if the first is
higher)``, ``'A' for 2``), *supposed* (in a sentence starting "If", "For example", or after an
unanswered "if"), *quoted* from the instructions, *negated* (``not A``, ``isn't A``,
``neither A nor B``) or listed over all the options (``choose A or B``) is not a choice; an
option text that is negated, weighed (``higher or lower``, ``which one is higher``) or
supposed is not stated. Paraphrases of an option's text are never read (no guessing).

1. **empty** -- ``None``, ``""`` or whitespace: ``unparseable``.
2. **whole reply** -- the reply *is* a choice (a run of letters only, ``B. B. B.``, is that
   letter; ``A. B.`` is ``multiple``): a letter in any dress (``B``, ``(B)``,
   ``[B]``, ``{B}``, ``<B>``, ``B.``, ``B)``, ``b``), a letter plus option text
   (``C: Lower``), an option text alone (``lower.``, case and punctuation ignored), or a
   list of letters (``A, B``; ``A and C``) -> ``multiple``.
2b. **last line** -- after a chain of thought, a last line that is a lone letter decides.
3. **answer statements** -- a keyword (``answer``, ``final answer``, ``answer is``,
   ``correct option is``, ``I choose/pick/select``, ``go with``, ``答案是``, ``答案：``,
   ``选``, ``选择``, ``选项是``, ``going with``, ``output``, ``it's``, ``I believe it is``,
   ``my best guess is``) followed by a letter (or a list of letters -> ``multiple``)
   or by an option text (to the end of its sentence: the decimal point of ``0.3 s`` does not
   end one); or a letter followed by ``is correct`` / ``is the answer``. A hedge before it
   ("I can't be sure, but my best guess is C") does not make it a refusal.
   The **last** statement in the reply wins, so a chain of thought that weighs options
   before concluding is read at its conclusion.
4. **leading letter** -- the reply starts with a letter followed by punctuation, the end,
   or a word (``B, because ...``). ``A`` and ``I`` followed by a lower-case word are read
   as the English article/pronoun (``A higher tone was played``), except before a few
   words that follow answer letters (``because``, ``is``, ``seems``, ...).
5. **capability refusal** -- "I cannot listen to audio", "As an AI ...", "no audio was
   provided", "I'm not capable of ...", "Please upload the audio", "I'm sorry ...": ``refusal``.
5b. **concluding sentence** -- the last sentence opening with "Therefore", "So", "Thus", "In
   conclusion", ... that states exactly one option text (rule 8 on that sentence alone).
6. **option/choice mentions** -- ``option C``, ``choice C``, ``选项C``; last wins.
7. **bracketed letters** anywhere in a short reply (at most 40 words; rules 7 and 10 are
   skipped in longer ones, where a letter named in passing is not an answer) -- ``(B)``, ``[B]``,
   ``{B}``, ``<B>``, bold ``**B**``;
   last wins; a bracketed list (``(A) and (C)``) -> ``multiple``; ``not (A)`` is skipped.
8. **option text mentions** -- exactly one option text occurs (whole words,
   case/punctuation-insensitive, longer options matched first so ``Front-left`` is not
   also read as ``Left``; an option holding punctuation, ``Near (0-1 m)``, is one mention).
   Not stated: a mention after a negation in its clause (``not``/``n't``/``never``: "the tone
   is not present in the first half"), weighed (``or``, ``nor``, ``whether``, ``which one``,
   ``between``), compared against (after ``than``: in "The second sound is closer than the
   first sound" only the subject is stated; a relative ", which is lower than the C" is not a
   question), or running straight into another option. Dashes separate clauses ("Neither
   higher nor lower -- the same"). Several different options stated -> no decision here.
9. **cannot determine** -- "unable to determine", "can't tell", "无法判断": if one option
   is itself a can't-tell option (its text contains ``determin``, ``cannot tell``,
   ``not sure`` or ``unknown``, e.g. ``Unable to determine``) the reply selects it
   (``ok``); otherwise ``refusal``.
10. **bare capital letters** anywhere, not inside words (``A4``, ``B-flat``, ``C#`` and
    ``A``/``I`` used as article/pronoun and letters after ``not`` are skipped); last wins;
    a list -> ``multiple``.
11. nothing -> ``unparseable``.

Letters outside the presented range (``E`` with four options) are never matched. When a
letter and the option text next to it disagree (``C: Higher`` where C is ``Lower``) the
letter wins. A ``multiple``, ``refusal`` or ``unparseable`` reply has ``index=None`` and is
scored wrong; it is never dropped from a denominator.
"""

from __future__ import annotations

import operator
import re
import string
from dataclasses import dataclass
from functools import lru_cache

from auralgen.core.errors import ParameterError

from ._option_text import concluded, hypothetical, norm, option_norms, option_prefix, text_mentions

__all__ = [
    "STATUSES",
    "ParseResult",
    "extract_choice",
    "option_letters",
    "presented_index",
    "rotate_options",
]

STATUSES = ("ok", "unparseable", "refusal", "multiple")
_MAX_OPTIONS = 26


@dataclass(frozen=True)
class ParseResult:
    """What a reply chose.

    Attributes
    ----------
    index : int or None
        Index of the chosen option in the presented (rotated) order; ``None`` unless
        ``status == "ok"``.
    status : str
        ``"ok"``, ``"unparseable"``, ``"refusal"`` or ``"multiple"``.
    matched : str
        The piece of the (cleaned) reply that decided, ``""`` when nothing did.
    """

    index: int | None
    status: str
    matched: str = ""


# --------------------------------------------------------------------------- rotation


def _check_n_options(k: int) -> None:
    if not 2 <= k <= _MAX_OPTIONS:
        raise ParameterError(f"number of options={k} is out of range; allowed: 2..{_MAX_OPTIONS}")


def option_letters(n_options: int) -> str:
    """Letters labelling ``n_options`` presented options.

    Parameters
    ----------
    n_options : int
        Number of options presented, at least 2.

    Returns
    -------
    str
        The first ``n_options`` capital letters, one per option in presented order.

    Examples
    --------
    >>> option_letters(4)
    'ABCD'
    """
    _check_n_options(n_options)
    return string.ascii_uppercase[:n_options]


def rotate_options(options: list[str], r: int) -> tuple[list[str], list[int]]:
    """Circularly rotate ``options`` by ``r`` positions.

    Presented position ``j`` shows canonical option ``index_map[j] = (j - r) mod k``, so
    canonical option ``i`` appears at letter position ``(i + r) mod k`` (rotation ``r`` is
    ``options[-r:] + options[:-r]``, STAR-Bench's own rotation: its ``rotate_id = r`` and ours
    present the same order). Rotations ``0 .. k-1`` put every option at every letter once.

    Parameters
    ----------
    options : list of str, length k in 2..26
        Options in canonical order.
    r : int
        Rotation; any integer, taken modulo ``k``.

    Returns
    -------
    rotated_options : list of str
        Options in presented order.
    index_map : list of int
        ``index_map[j]`` is the canonical index of presented option ``j``.

    Examples
    --------
    >>> rotate_options(["Higher", "Lower", "Same"], 1)
    (['Same', 'Higher', 'Lower'], [2, 0, 1])
    """
    k = len(options)
    _check_n_options(k)
    try:
        r = operator.index(r)
    except TypeError:
        raise ParameterError(f"rotation r={r!r} is not an integer; allowed: any int") from None
    index_map = [(j - r) % k for j in range(k)]
    return [options[i] for i in index_map], index_map


def presented_index(canonical_index: int, r: int, n_options: int) -> int:
    """Letter position of canonical option ``canonical_index`` under rotation ``r``.

    Parameters
    ----------
    canonical_index : int
        Index of the option in canonical order, ``0 <= canonical_index < n_options``.
    r : int
        The rotation: option ``i`` is presented at position ``(i + r) % n_options``.
    n_options : int
        Number of options, at least 2.

    Returns
    -------
    int
        The presented position (0 = letter A).

    Examples
    --------
    >>> presented_index(0, 1, 4)  # option 0 moves to the second letter
    1
    """
    _check_n_options(n_options)
    if not 0 <= canonical_index < n_options:
        raise ParameterError(f"canonical_index={canonical_index} is out of range; allowed: 0..{n_options - 1}")
    return (canonical_index + r) % n_options


# --------------------------------------------------------------------------- patterns

_TRANSLATE = str.maketrans(
    {
        "：": ":",
        "（": "(",
        "）": ")",
        "【": "[",
        "】": "]",
        "，": ",",
        "。": ".",
        "＜": "<",
        "＞": ">",
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        **{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},  # full-width A..Z
    }
)
# a letter in Markdown bold, "**B**" or "__B.__", rewritten to "(B)"
_BOLD_LETTER = re.compile(r"(\*\*|__)\s*([A-Za-z])\s*[.:)]?\s*\1")
# a LaTeX wrapper's command, "\\boxed{B}" -> "{B}"
_LATEX = re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf)\s*")
# Markdown and LaTeX marks left over after the two above
_STRIP_CHARS = re.compile(r"[*`$]")
# a negation just before a letter: "not B", "isn't (B)", "nor option C"
_NOT_BEFORE = re.compile(r"(?i:(?:\bnot|n't|\bnor)\s+(?:option\s+|choice\s+)?[(\[{<]?\s*)$")
# a letter defined rather than chosen: "A (if the first is higher)", "A for 2", "A = first"
_DEFINITION_AFTER = re.compile(r"(?i:\s*[)\]}>]?\s*[:\-]?\s*\(?\s*(?:if|for|when|means|refers|to\s+mean|=)\b|\s*=)")
# a JSON-style answer field: {"answer": "B"}
_JSON_ANSWER = re.compile(
    r"""(?i)["'](?:final[_ ]?answer|answer|choice|prediction|option|selected)["']\s*:\s*["']([^"'\n]{0,200})["']"""
)
# an XML-style answer tag: <answer>B</answer>
_ANSWER_TAG = re.compile(r"(?is)<(conclusion|answer|final_answer)\s*>(.*?)</\1\s*>")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z_]+\s*>|<\|[^|>]*\|>")
_QUOTED_LETTER = re.compile(r"""(['"])([A-Za-z])\1""")
_LETTERS_ONLY_SEP = r"[\s.,;:)\]]"
_SHORT_REPLY_WORDS = 40
_SEP = r"\s*(?:,|;|&|/|\+|\band\b|\bor\b|和|或|、)\s*"
# a lower-case word after A / I that still reads as an answer letter ("A because ...")
_LETTER_FOLLOWERS = r"(?:because|since|as|is|was|seems|appears|would|should|fits|matches|corresponds|best)\b"

_STRONG_KEYWORDS = r"""(?ix:
      \b(?:final\s+|correct\s+|right\s+|best\s+|my\s+)?answer\b
        (?:\s+(?:is|would\s+be|should\s+be|will\s+be|must\s+be|seems\s+to\s+be|appears\s+to\s+be))?
    | \b(?:correct|right|best|my)\s+(?:option|choice|letter)\b(?:\s+(?:is|would\s+be|should\s+be))?
    | \b(?:choose|chose|select|pick|go\s+with|going\s+with|opt\s+for|output)\b
    | \b(?:my\s+)?(?:best\s+|final\s+)?guess\b(?:\s+(?:is|would\s+be|will\s+be))?
    | \b(?:i\s+(?:believe|think|guess|would\s+say)\s+|i'd\s+say\s+)?it(?:'s|\s+is|\s+must\s+be)\b
    | 答案\s*(?:应该是|应为|是|为)?
    | 选项\s*(?:是|为)
    | 应?选择?
)"""
_FILLER = (
    r"(?ix:\s*(?:[:=>\-]\s*)*(?:as\s+)?(?:(?:probably|likely|clearly|definitely|therefore)\s+)?"
    r"(?:(?:option|choice|letter)\s*)?)"
)
_WEAK_KEYWORDS = r"(?i:\b(?:option|choice|letter)\b\s*[:#]?\s*|选项\s*)"
_POSTFIX = (
    r"(?ix:\s+(?:is|seems|appears|would\s+be)\s+(?:to\s+be\s+)?(?:the\s+)?"
    r"(?:correct|right|best|most\s+likely|answer)\b)"
)

_CAPABILITY_REFUSAL = re.compile(
    r"""(?ix)
      \bas\s+an?\s+(?:ai|language\s+model|text[-\s]based)\b
    | \b(?:can(?:not|'t|\s+not)|unable\s+to|not\s+able\s+to|(?:do|does)\s*(?:not|n't)\s+have\s+the\s+ability\s+to)
        \s+(?:directly\s+)?(?:listen|hear|play|process|access|analy[sz]e|perceive|open|receive)\b
        (?:\s+to)?\s+(?:the\s+|any\s+|this\s+|these\s+|your\s+)?(?:audio|sound|recording|clip|file|music|it\b)
    | \b(?:do|does)\s*(?:not|n't)\s+have\s+(?:access\s+to|any)\s+(?:the\s+|any\s+)?(?:audio|sound|recording|clip|file)
    | \bno\s+(?:audio|sound|recording|file)s?\s+(?:was|were|is|are|has\s+been)
        \s+(?:provided|attached|included|shared|given)
    | \b(?:i'm|i\s+am)\s+(?:sorry|afraid)\b
    | \bnot\s+capable\s+of\b|\btext[-\s]based\s+(?:ai|queries|model)
    | \bplease\s+(?:play|provide|upload|share|send|attach)
        \s+(?:the\s+|an\s+|your\s+|me\s+)?(?:audio|sound|recording|clip|file)
    | 请提供(?:音频|录音)
    | 无法(?:听|收听|处理|访问)|作为(?:一个)?(?:AI|人工智能)
    """
)
_CANNOT_DETERMINE = re.compile(
    r"""(?ix)
      \b(?:unable\s+to|can(?:not|'t|\s+not)|not\s+(?:able|possible)\s+to|impossible\s+to)
        \s+(?:reliably\s+|accurately\s+|definitively\s+|confidently\s+)?
        (?:determine|tell|say|judge|know|identify|distinguish)\b
    | 无法(?:确定|判断)
    """
)


@dataclass(frozen=True)
class _Patterns:
    token: re.Pattern
    letter_list: re.Pattern
    whole: re.Pattern
    leading: re.Pattern
    strong: re.Pattern
    postfix: re.Pattern
    weak: re.Pattern
    bracketed: re.Pattern
    bare: re.Pattern
    letters_only: re.Pattern
    k: int


@lru_cache(maxsize=32)
def _patterns(k: int) -> _Patterns:
    up = string.ascii_uppercase[:k]
    lo = up.lower()
    bracket = rf"[(\[{{<]\s*[{up}{lo}]\s*[)\]}}>]"
    bare_up = rf"(?<![A-Za-z0-9])[{up}](?![A-Za-z0-9'#♯♭]|-[A-Za-z])"
    bare_lo = rf"(?<![A-Za-z0-9])[{lo}](?=\s*(?:$|[.,;:!?)\]}}]))"
    token = rf"(?:{bracket}|{bare_up}|{bare_lo})"
    letter_list = rf"{token}(?:{_SEP}{token})*"
    return _Patterns(
        token=re.compile(rf"[{up}{lo}]"),
        letter_list=re.compile(letter_list),
        whole=re.compile(
            rf"(?P<tok>{bracket}|[{up}{lo}](?![A-Za-z0-9]))\s*(?P<sep>[.:)\]\-–—,]\s*)?(?P<rest>.*)", re.S
        ),
        leading=re.compile(
            rf"\s*(?:(?P<br>{bracket})|(?P<lo>[{lo}])\s*[.):]|(?P<up>[{up}])(?![A-Za-z0-9'#♯♭]|-[A-Za-z]))"
        ),
        strong=re.compile(rf"{_STRONG_KEYWORDS}{_FILLER}"),
        postfix=re.compile(rf"(?P<list>{letter_list}){_POSTFIX}"),
        weak=re.compile(rf"{_WEAK_KEYWORDS}(?P<list>{letter_list})"),
        bracketed=re.compile(rf"{bracket}(?:{_SEP}{bracket})*"),
        bare=re.compile(rf"{bare_up}(?:{_SEP}{bare_up})*"),
        letters_only=re.compile(rf"(?:{token}){_LETTERS_ONLY_SEP}+(?:(?:{token}){_LETTERS_ONLY_SEP}*)+"),
        k=k,
    )


# --------------------------------------------------------------------------- extraction


def _letters_in(span: str, pats: _Patterns) -> list[int]:
    """Distinct letter indices in a matched letter token or list, in order."""
    found: list[int] = []
    for m in pats.letter_list.finditer(span):
        for ch in pats.token.findall(m.group(0)):
            idx = ord(ch.upper()) - 65
            if idx not in found:
                found.append(idx)
    return found


def _from_letters(letters: list[int], matched: str) -> ParseResult:
    if len(letters) == 1:
        return ParseResult(letters[0], "ok", matched)
    return ParseResult(None, "multiple", matched)


def _article_like(text: str, pos: int, letter: str) -> bool:
    """True when ``A``/``I`` at ``pos`` reads as an English word, not an answer letter."""
    if letter not in "AI":
        return False
    rest = text[pos + 1 :]
    return re.match(r"\s+[a-z]", rest) is not None and re.match(rf"\s+{_LETTER_FOLLOWERS}", rest) is None


def _last_list(pattern: re.Pattern, text: str, pats: _Patterns, *, skip_article: bool = False) -> ParseResult | None:
    last = None
    for m in pattern.finditer(text):
        span = m.group(0)
        if skip_article and len(span) == 1 and _article_like(text, m.start(), span):
            continue
        if _NOT_BEFORE.search(text, 0, m.start()) or _not_a_choice(text, m.start(), m.end()):
            continue
        last = span
    if last is None:
        return None
    return _from_letters(_letters_in(last, pats), last.strip())


def _quoted(text: str, pos: int) -> bool:
    """True inside a double-quoted passage (a reply quoting the instructions)."""
    return text.count('"', 0, pos) % 2 == 1


def _not_a_choice(text: str, start: int, end: int) -> bool:
    """A letter at ``text[start:end]`` that is defined ("A for 2") or only supposed ("If ..., B")."""
    return _DEFINITION_AFTER.match(text, end) is not None or hypothetical(text, start)


def _strong_statements(text: str, pats: _Patterns, by_length) -> ParseResult | None:
    best: tuple[int, ParseResult] | None = None
    for m in pats.strong.finditer(text):
        if hypothetical(text, m.start()) or _quoted(text, m.start()):
            continue
        tail = text[m.end() :]
        lm = pats.letter_list.match(tail)
        if lm:
            letters = _letters_in(lm.group(0), pats)
            # "choose A or B" over all the options restates the instructions; "A for 2" defines a letter
            if (len(letters) > 1 and len(letters) == pats.k) or _DEFINITION_AFTER.match(tail, lm.end()):
                continue
            res = _from_letters(letters, text[m.start() : m.end() + lm.end()].strip())
        else:
            idx = option_prefix(tail, by_length)
            if idx is None:
                continue
            res = ParseResult(idx, "ok", text[m.start() : m.end()].strip() + " " + tail.strip()[:40])
        best = (m.start(), res)
    for m in pats.postfix.finditer(text):
        if (best is None or m.start() > best[0]) and not (
            hypothetical(text, m.start()) or _quoted(text, m.start()) or _NOT_BEFORE.search(text, 0, m.start())
        ):
            best = (m.start(), _from_letters(_letters_in(m.group("list"), pats), m.group(0).strip()))
    return None if best is None else best[1]


def _clean(reply: str) -> str:
    s = reply.translate(_TRANSLATE)
    found = _JSON_ANSWER.findall(s) or [m.group(2) for m in _ANSWER_TAG.finditer(s) if m.group(2).strip()]
    if found:  # {"answer": "c", "explanation": "..."}, <conclusion> c </conclusion>: the answer alone decides
        s = found[-1]
    s = _TAG.sub("\n", s)
    s = _QUOTED_LETTER.sub(r" \2 ", s)
    s = _LATEX.sub("", s)
    s = _BOLD_LETTER.sub(r"(\2)", s)
    return _STRIP_CHARS.sub("", s).strip()


def extract_choice(reply: str | None, options: list[str]) -> ParseResult:
    """Read which presented option a free-text reply chose.

    Parameters
    ----------
    reply : str or None
        The model's reply.
    options : list of str, length 2..26
        Options in the order they were *presented* (after :func:`rotate_options`),
        labelled ``A, B, C, ...``.

    Returns
    -------
    ParseResult
        ``index`` into ``options`` (presented order) and a status; see the module
        docstring for the precedence of the rules.

    Examples
    --------
    >>> extract_choice("The correct option is C: Lower", ["Higher", "Same", "Lower"])
    ParseResult(index=2, status='ok', matched='correct option is C')
    >>> extract_choice("A and C", ["Higher", "Lower", "Same"]).status
    'multiple'
    """
    k = len(options)
    _check_n_options(k)
    if reply is None:
        return ParseResult(None, "unparseable", "")
    if not isinstance(reply, str):
        raise ParameterError(f"reply={reply!r} is not a string; allowed: str or None")
    text = _clean(reply)
    if not text:
        return ParseResult(None, "unparseable", "")
    pats = _patterns(k)
    norms = option_norms(tuple(options))
    stripped = text.strip(" \t\n\"'.!。")
    for rule in (
        lambda: _whole_reply(stripped, pats, norms.exact),  # 2. the whole reply is a choice
        lambda: _last_line(text, pats),  # 2b. the last line is a lone letter (after a chain of thought)
        lambda: _strong_statements(text, pats, norms.by_length),  # 3. explicit answer statements, last one wins
        lambda: _leading_letter(text, pats),  # 4. leading letter
        lambda: _late_rules(text, pats, norms.finders, norms.cant_tell),  # 5.-10.
    ):
        res = rule()
        if res is not None:
            return res
    return ParseResult(None, "unparseable", "")


def _last_line(text: str, pats: _Patterns) -> ParseResult | None:
    """Rule 2b: the last non-empty line is one letter in any dress (``B``, ``(B)``, ``b.``)."""
    lines = [ln.strip(" \t\"'.!") for ln in text.splitlines() if ln.strip(" \t\"'.!")]
    if len(lines) > 1 and pats.whole.fullmatch(lines[-1]) and not pats.whole.fullmatch(lines[-1]).group("rest"):
        return _from_letters(_letters_in(lines[-1], pats), lines[-1])
    return None


def _whole_reply(stripped: str, pats: _Patterns, exact: dict[str, int]) -> ParseResult | None:
    """Rule 2: the whole (stripped) reply is a letter list, a letter with its option text, or an option text."""
    if pats.letter_list.fullmatch(stripped) or pats.letters_only.fullmatch(stripped):
        # "B. B. B." repeats one letter; "A. B." or "A B A" names several
        return _from_letters(sorted(set(_letters_in(stripped, pats))), stripped)
    m = pats.whole.fullmatch(stripped)
    if m:
        rest = norm(m.group("rest"))
        if not rest or rest in exact:
            letter_idx = ord(pats.token.search(m.group("tok")).group(0).upper()) - 65
            # "A higher" without punctuation reads as an article before the option text
            if rest and exact[rest] != letter_idx and not m.group("sep") and len(m.group("tok")) == 1:
                return ParseResult(exact[rest], "ok", stripped)
            return ParseResult(letter_idx, "ok", stripped)
    norm_all = norm(stripped)
    if norm_all in exact:
        return ParseResult(exact[norm_all], "ok", stripped)
    return None


def _leading_letter(text: str, pats: _Patterns) -> ParseResult | None:
    """Rule 4: the reply starts with a letter (or letter list) that is not an article."""
    m = pats.leading.match(text)
    if m:
        tok = m.group("br") or m.group("lo") or m.group("up")
        letter = pats.token.search(tok).group(0).upper()
        if not (m.group("up") and _article_like(text, m.start("up"), letter)):
            lm = pats.letter_list.match(text, m.start())
            if _DEFINITION_AFTER.match(text, lm.end()):  # "A (if the first is higher) or B (...)"
                return None
            return _from_letters(_letters_in(lm.group(0), pats), lm.group(0).strip())
    return None


def _late_rules(text: str, pats: _Patterns, finders, cant_tell: int | None) -> ParseResult | None:
    """Rules 5-10, in order: refusal, a concluding sentence's option, "option C" mentions, bracketed
    letters, one option text, "cannot determine", bare capital letters."""
    # 5. refusal to engage with the audio
    m = _CAPABILITY_REFUSAL.search(text)
    if m:
        return ParseResult(None, "refusal", m.group(0))
    # 5b. the one option a concluding sentence ("Therefore, the second clip ...") states
    idx = concluded(text, finders)
    if idx is not None:
        return ParseResult(idx, "ok", "concluding sentence")
    # 6. "option C" mentions, last wins
    last = None
    for m in pats.weak.finditer(text):
        if not _not_a_choice(text, m.start(), m.end()):
            last = m
    if last is not None:
        return _from_letters(_letters_in(last.group("list"), pats), last.group(0).strip())
    # 7. bracketed letters, last wins (short replies only: in a long chain of thought a letter
    # in passing is not an answer); 8. exactly one option text mentioned
    short = len(text.split()) <= _SHORT_REPLY_WORDS
    res = _last_list(pats.bracketed, text, pats) if short else None
    if res is None and (idx := text_mentions(text, finders)) is not None:
        res = ParseResult(idx, "ok", "option text")
    if res is not None:
        return res
    # 9. "cannot determine"
    m = _CANNOT_DETERMINE.search(text)
    if m:
        if cant_tell is not None:
            return ParseResult(cant_tell, "ok", m.group(0))
        return ParseResult(None, "refusal", m.group(0))
    # 10. bare capital letters (short replies only)
    return _last_list(pats.bare, text, pats, skip_article=True) if short else None
