"""Reference DSP listener for the ``mixture`` task (``multi_source_relation``: :mod:`auralgen.listeners.multisource`).

What it can and cannot do (honestly):

- ``mixture`` / **count** ("how many distinct sounds"): the number of palette kinds found by one
  detector per kind (:mod:`auralgen.listeners.presence`), matched to the nearest option: 100 % at
  0 and 6 LU, 97 % at 12 LU (600 items). (Counting onsets over-counts: a click or knock train's
  pulses read as new sounds; naming one kind per window missed a sound that a louder one overlapped
  throughout.)
- ``mixture`` / **first**, **louder**, **overlap** with the synthesized palette (options name
  the kinds: "the harmonic tone", ...): the clip is cut into stretches that one sound fills or
  dominates, and :func:`~auralgen.listeners.kinds.classify` names each stretch's kind --
  *first*: from the first onset to the next energy rise (at most :data:`FIRST_MAX_S`);
  *louder*: the :data:`LOUD_WINDOW_S` window of highest power; *overlap*: the two stretches of
  sound separated by silence -- the pair's stretch starts with one kind and ends with the other,
  the lone sound fills the other stretch. Where the stretch is short (onsets 20 ms apart) or the
  sounds are near equal in level, it errs; that is the difficulty the levels set.
- With a labelled corpus (options name recorded classes) it answers
  :data:`~auralgen.listeners.common.NO_ANSWER`: naming recorded classes needs a trained classifier.
"""

from __future__ import annotations

import math
import re

import numpy as np

from auralgen.listeners.common import listener_doc, mono, no_answer
from auralgen.listeners.kinds import WORDS, classify
from auralgen.listeners.presence import kinds_present
from auralgen.measure import segments

FIRST_MAX_S = 0.3  # first: the first sound is classified on at most this much audio after its onset
LOUD_WINDOW_S = 0.3  # louder: the loudest sound is classified on the window of this length with most power
RISE_FRAME_S = 0.01  # first: power frames for the next onset
NEXT_RISE_DB = 3.0  # ... a frame this far above the mean of the 30 ms before it (past the first ramp)
EDGE_S = 0.03  # overlap: classified stretches start / end this far inside a stretch of sound
_INT = re.compile(r"^\s*(\d+)\s*$")


def sub_question(question: str) -> str | None:
    """The mixture sub-question named by the question text: count / louder / first / overlap.

    Examples
    --------
    >>> sub_question("How many distinct sounds are in this clip?")
    'count'
    >>> sub_question("Listen to the mixture. Which sound begins earliest?")
    'first'

    Parameters
    ----------
    question : str
        The item's question text.

    Returns
    -------
    str or None
        ``'count'``, ``'louder'``, ``'first'`` or ``'overlap'``; None when the text names none.
    """
    q = question.lower()
    if "how many" in q or "count" in q:
        return "count"
    if "loud" in q:
        return "louder"
    if "first" in q or "earliest" in q or "begin" in q:
        return "first"
    if "overlap" in q or "same time" in q:
        return "overlap"
    return None


def count_options(options) -> dict[int, int]:
    """``{option index: count}`` for options that are plain integers ("2", "3", "4").

    Parameters
    ----------
    options : sequence of str
        The option texts; any that is not a plain integer is left out.

    Returns
    -------
    dict of int to int
        Option index to the count it states.
    """
    out = {}
    for i, text in enumerate(options):
        m = _INT.match(text)
        if m:
            out[i] = int(m[1])
    return out


def count_kinds(x: np.ndarray, sample_rate: int) -> int:
    """Number of palette kinds heard: one detector per kind (:func:`~auralgen.listeners.presence.kinds_present`),
    each looking for what only its kind has, so a sound that others overlap throughout is still found.

    Parameters
    ----------
    x, sample_rate
        The mono clip and its sampling rate (Hz), as :func:`~auralgen.listeners.presence.kinds_present` takes them.

    Returns
    -------
    int
        How many of the palette's kinds are detected (0 to 5).
    """
    return len(kinds_present(x, sample_rate))


def option_kinds(options) -> list[tuple[str, ...]] | None:
    """The palette kinds each option names, in order of mention (``None`` if an option names none).

    Parameters
    ----------
    options : sequence of str
        The option texts; a kind is named by its word in :data:`~auralgen.listeners.kinds.WORDS`.

    Returns
    -------
    list of tuple of str or None
        For each option the kinds (:data:`~auralgen.listeners.kinds.KINDS`) it names,
        in order of mention; None when an option names none (e.g. recorded classes).
    """
    names = WORDS
    out = []
    for text in options:
        low = text.lower()
        found = sorted((low.index(n), k) for k, n in names.items() if n in low)
        if not found:
            return None
        out.append(tuple(k for _, k in found))
    return out


def _frames_db(x: np.ndarray, sample_rate: int, frame_s: float) -> np.ndarray:
    f = max(1, int(frame_s * sample_rate))
    n = x.size // f
    p = (x[: n * f] ** 2).reshape(n, f).mean(axis=1)
    return 10 * np.log10(p + max(p.max(), 1e-30) * 1e-12)


def first_stretch(x: np.ndarray, sample_rate: int) -> np.ndarray:
    """From the first onset to the next energy rise, at most :data:`FIRST_MAX_S`.

    Parameters
    ----------
    x, sample_rate
        The mix as one channel (the channel mean) and its sampling rate (Hz).

    Returns
    -------
    ndarray, shape (samples,)
        A view of ``x`` from the first onset; empty when no sound is found.
    """
    spans = segments(x, sample_rate, threshold_db=-50.0)
    if not spans:
        return x[:0]
    a = int(round(spans[0].onset_s * sample_rate))
    db = _frames_db(x[a:], sample_rate, RISE_FRAME_S)
    back = 3
    end = min(db.size, int(FIRST_MAX_S / RISE_FRAME_S))
    for i in range(back + 2, end):  # past the first ramp (20 ms)
        if db[i] >= 10 * np.log10(np.mean(10 ** (db[i - back : i] / 10))) + NEXT_RISE_DB:
            end = i
            break
    return x[a : a + int(end * RISE_FRAME_S * sample_rate)]


def loudest_window(x: np.ndarray, sample_rate: int) -> np.ndarray:
    """The :data:`LOUD_WINDOW_S` stretch of ``x`` with the most energy: where the louder sound dominates.

    Parameters
    ----------
    x, sample_rate
        As for :func:`first_stretch`.

    Returns
    -------
    ndarray, shape (samples,)
        A view of ``x``: the :data:`LOUD_WINDOW_S` window of highest power (all of ``x`` when shorter).
    """
    n = min(x.size, int(LOUD_WINDOW_S * sample_rate))
    c = np.concatenate([[0.0], np.cumsum(x**2)])
    start = int(np.argmax(c[n:] - c[:-n])) if n else 0
    return x[start : start + n]


def overlap_kinds(x: np.ndarray, sample_rate: int) -> tuple[str, ...] | None:
    """The two kinds heard together: the stretch of sound that starts with one kind and ends with
    another, else the two kinds other than the one filling a stretch alone (``None`` if unclear).

    Parameters
    ----------
    x, sample_rate
        The mono mix and its sampling rate (Hz), as for :func:`first_stretch`.

    Returns
    -------
    tuple of str or None
        The two kinds heard together; or ``('alone', kind)`` naming the kind heard alone
        (the other two overlap); None when unclear.
    """
    spans = segments(x, sample_rate, threshold_db=-50.0)
    edge, look = int(EDGE_S * sample_rate), int(0.2 * sample_rate)
    ends = []
    for sp in spans:
        a, b = int(round(sp.onset_s * sample_rate)) + edge, int(round(sp.offset_s * sample_rate)) - edge
        if b - a < 2 * edge:
            continue
        ends.append((classify(x[a : min(a + look, b)], sample_rate), classify(x[max(b - look, a) : b], sample_rate)))
    pairs = [frozenset(e) for e in ends if None not in e and e[0] != e[1]]
    if len(pairs) == 1:
        return tuple(pairs[0])
    alone = {e[0] for e in ends if e[0] is not None and e[0] == e[1]}
    return ("alone", *alone) if len(alone) == 1 else None


@listener_doc(
    question="; it names the sub-question (:func:`sub_question`)",
    none="nothing can be measured or the options name recorded classes",
)
def mixture(question, options, clips, sample_rate) -> int:
    """Answer one of the mixture's sub-questions (count, first, louder, overlap) from the clip."""
    sub = sub_question(question)
    if sub == "count":
        counts = count_options(options)
        n = count_kinds(mono(clips[0]), sample_rate)
        if not counts or n == 0:
            return no_answer(options)
        return min(counts, key=lambda i: (abs(math.log(counts[i] / n)), counts[i]))
    kinds = option_kinds(options)
    if kinds is None or sub is None:
        return no_answer(options)  # options name recorded classes: no classifier for those
    x = mono(clips[0])
    if sub == "overlap":
        heard = overlap_kinds(x, sample_rate)
        if heard is None:
            return no_answer(options)
        if heard[0] == "alone":
            match = [i for i, k in enumerate(kinds) if heard[1] not in k]
        else:
            match = [i for i, k in enumerate(kinds) if set(k) == set(heard)]
        return match[0] if len(match) == 1 else no_answer(options)
    kind = classify(first_stretch(x, sample_rate) if sub == "first" else loudest_window(x, sample_rate), sample_rate)
    match = [i for i, k in enumerate(kinds) if k == (kind,)]
    return match[0] if match else no_answer(options)
