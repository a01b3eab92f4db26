"""Questions as STAR-Bench toolkit messages, one per (item, rotation).

A message is the dict a STAR-Bench toolkit adapter's ``generate_inner(msg)`` receives::

    {"meta": {"id", "task", "category", "sub-category", "options", "answer", "answer_letter",
              "rotate_id", "unique_id", "question", "sample_rate", ...},
     "prompts": [{"type": "audio", "value": "/abs/path/clip.wav"},
                 {"type": "text", "value": "question\\n<A>: ...\\n<B>: ...\\n"}]}

``meta.options`` are the *presented* options (after rotation) and ``answer_letter`` is
``"<B>"``-style as in the toolkit. Several clips are introduced by ``"Audio 1:"``,
``"Audio 2:"`` text parts; audio parts are WAV files with every channel kept.

Robust evaluation
-----------------
* **Option rotation** -- an ordinary item is asked under rotations ``r = 0 .. k-1`` (``k`` =
  number of options, or ``eval.rotations``); rotation ``r`` presents
  ``options[-r:] + options[:-r]`` (:func:`~auralgen.evaluation.parsing.rotate_options`), as the
  STAR-Bench toolkit does for ``rotate_id = r``. A holistic reasoning item (:func:`is_holistic`:
  the toolkit's ``sr`` and ``tr`` items) is asked :data:`HOLISTIC_RUNS` times, as the toolkit's
  ``run.py`` asks its reasoning items, whatever its number of options.
* **Clip reordering** -- a *reorder item* (several clips, every option a clip sequence such as
  ``"clip 2 -> clip 1 -> clip 3"``) is asked under ``eval.reorder_runs`` different clip orders;
  its options stay in one order, the toolkit's: each stored option with its clip numbers replaced
  by their rank in time (what the STAR-Bench export writes), each number read as a position in the
  order shown. The correct option is recomputed for each order (as the STAR-Bench toolkit does for
  its temporal reasoning items), the toolkit's own
  orders (:func:`reorder_clip_order`): run ``r`` shows the clips in the true temporal order
  permuted by the lexicographic permutation number ``(crc32(id) + r) mod n!``, so different
  items start at different orders and a rotation index means the same in both.
"""

from __future__ import annotations

import itertools
import re
import string
import zlib
from dataclasses import dataclass

from auralgen.core.errors import ParameterError

from .items import Item
from .parsing import rotate_options

_CLIP_SEQ = re.compile(r"^\s*(?:clip|audio)\s*(\d+)(?:\s*(?:->|→|,\s*then|,|then)\s*(?:clip|audio)\s*(\d+))+\s*$", re.I)
_CLIP_NUM = re.compile(r"(?:clip|audio)\s*(\d+)", re.I)


@dataclass(frozen=True)
class Presentation:
    """How one item is shown under run ``rotation``.

    Attributes
    ----------
    options : list of str
        Options in presented order (lettered A, B, ...).
    truth : int
        Index of the correct option in ``options``.
    clip_order : list of int
        ``clip_order[j]`` is the canonical clip shown at position ``j``.
    """

    rotation: int
    options: list[str]
    truth: int
    clip_order: list[int]


def _clip_sequence(option: str) -> list[int] | None:
    if not _CLIP_SEQ.match(option):
        return None
    return [int(n) for n in _CLIP_NUM.findall(option)]


def is_reorder(item: Item) -> bool:
    """True when the item has several clips and every option is a clip sequence.

    Parameters
    ----------
    item : Item
        An item of a dataset (:class:`~.items.Item`).

    Returns
    -------
    bool
        Whether every option names each clip ``1..n`` once (``"clip 2 -> clip 1 -> clip 3"``).
    """
    n = len(item.clips)
    if n < 2:
        return False
    seqs = [_clip_sequence(o) for o in item.options]
    return len(seqs) >= 2 and all(s is not None and sorted(s) == list(range(1, n + 1)) for s in seqs)


HOLISTIC_RUNS = 3  # STAR-Bench's run.py: "Reasoning tasks: fixed runs"


def is_holistic(item: Item) -> bool:
    """True for what STAR-Bench files as holistic reasoning: reorder items (``tr``) and spatial items
    of the spatio-temporal reasoning category (``sr``); the rest are its foundational ``pc`` items.

    Parameters
    ----------
    item : Item
        As in :func:`is_reorder`.

    Returns
    -------
    bool
        Whether the item is a holistic reasoning item.
    """
    from auralgen.tasks.base import task_class

    return is_reorder(item) or (item.category == "spatiotemporal_reasoning" and task_class(item.task).spatial)


def n_runs(item: Item, *, rotations: int | None, reorder_runs: int) -> int:
    """How many times the item is asked: ``rotations`` if set, else as STAR-Bench's toolkit asks it
    (a reorder item ``reorder_runs`` times, at most once per clip order; another holistic item
    :data:`HOLISTIC_RUNS` times; a foundational item once per option).

    Parameters
    ----------
    item : Item
        An item of a dataset.
    rotations : int or None
        ``eval.rotations``: runs per item that is not a reorder item; None asks as the toolkit does.
    reorder_runs : int
        ``eval.reorder_runs``: clip orders asked per reorder item.

    Returns
    -------
    int
        The number of presentations, >= 1.
    """
    if is_reorder(item):
        return min(reorder_runs, len(list(itertools.permutations(range(len(item.clips))))))
    if rotations is not None:
        return rotations
    return HOLISTIC_RUNS if is_holistic(item) else len(item.options)


def reorder_options(item: Item) -> list[str]:
    """A reorder item's options in the toolkit's order: each option's clip numbers replaced by their
    rank in time (stored clip ``c`` happened ``rank[c]``-th), read as positions in the order shown.

    Parameters
    ----------
    item : Item
        A reorder item (:func:`is_reorder`).

    Returns
    -------
    list of str
        The options, in stored order, renumbered.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> it = SimpleNamespace(options=("Audio 2, then Audio 1", "Audio 1, then Audio 2"), answer_index=0)
    >>> reorder_options(it)  # clip 2 happened first: it is "1" in time
    ['Audio 1, then Audio 2', 'Audio 2, then Audio 1']
    """
    rank = {c: j + 1 for j, c in enumerate(_clip_sequence(item.options[item.answer_index]))}

    def renumber(m: re.Match) -> str:
        return m.group(0)[: m.start(1) - m.start(0)] + str(rank[int(m.group(1))])

    return [_CLIP_NUM.sub(renumber, o) for o in item.options]


def reorder_clip_order(item_id: str, chronological: list[int], r: int) -> list[int]:
    """The clips (any labels) a reorder item shows in run ``r``, given them in the order they happened.

    STAR-Bench's temporal-reasoning loader shows, at each position ``j``, the segment
    ``perm[j]`` of the chronological list, ``perm`` the permutation number
    ``(subid + r mod 6 + 0) mod 6`` of ``itertools.permutations((1, 2, 3))``; auralgen's ids make
    ``subid = crc32(item_id)``, and ``n!`` permutations of ``n`` clips generalise the 6.

    Parameters
    ----------
    item_id : str
        The item's id (seeds the first permutation).
    chronological : list
        The clips, in the order they happened.
    r : int
        The run index (taken modulo ``n!``).

    Returns
    -------
    list
        The same clips in the order shown in run ``r``.

    Examples
    --------
    >>> reorder_clip_order("x", ["a", "b", "c"], 0), reorder_clip_order("x", ["a", "b", "c"], 1)
    (['b', 'c', 'a'], ['c', 'a', 'b'])
    """
    perms = list(itertools.permutations(range(len(chronological))))
    return [chronological[p] for p in perms[(zlib.crc32(item_id.encode()) + r % len(perms)) % len(perms)]]


def present(item: Item, r: int) -> Presentation:
    """Options, correct index and clip order of ``item`` under run ``r``.

    Parameters
    ----------
    item : Item
        An item of a dataset.
    r : int
        The run: an option rotation, or a clip order of a reorder item.

    Returns
    -------
    Presentation
        What the model is shown in that run.

    Raises
    ------
    ParameterError
        A reorder item has no option for the clip order shown.
    """
    n = len(item.clips)
    if is_reorder(item):
        true_seq = _clip_sequence(item.answer)  # canonical clip numbers in true temporal order
        order = [c - 1 for c in reorder_clip_order(item.id, true_seq, r)]
        shown = [order.index(c - 1) + 1 for c in true_seq]  # the same clips, numbered as presented
        options = reorder_options(item)
        for i, opt in enumerate(options):
            if _clip_sequence(opt) == shown:
                return Presentation(r, options, i, order)
        raise ParameterError(
            f"item id={item.id!r}: no option lists clip order {shown}; allowed: options covering every clip order"
        )
    options, index_map = rotate_options(list(item.options), r)
    return Presentation(r, options, index_map.index(item.answer_index), list(range(n)))


def build_message(item: Item, p: Presentation, clip_paths: list, *, instruction: str = "") -> dict:
    """The STAR-Bench toolkit message for ``item`` shown as ``p`` (see the module docstring).

    Parameters
    ----------
    item : Item
        An item of a dataset.
    p : Presentation
        How the item is shown (:func:`present`).
    clip_paths : list of str or Path
        WAV file per canonical clip (:func:`~.items.clip_wavs`).
    instruction : str, optional
        Text appended after the options (``eval.instruction``).

    Returns
    -------
    dict
        ``{"meta": {...}, "prompts": [...]}``, the audio parts in the order shown.
    """
    letters = string.ascii_uppercase
    text = item.question + "\n" + "".join(f"<{letters[i]}>: {opt}\n" for i, opt in enumerate(p.options))
    if instruction:
        text += instruction
    prompts: list[dict] = []
    shown = [clip_paths[c] for c in p.clip_order]
    if len(shown) == 1:
        prompts.append({"type": "audio", "value": str(shown[0])})
    else:
        for j, path in enumerate(shown):
            prompts += [{"type": "text", "value": f"Audio {j + 1}:"}, {"type": "audio", "value": str(path)}]
    prompts.append({"type": "text", "value": text})
    return {
        "meta": {
            "id": item.id,
            "task": item.task,
            "category": item.category,
            "sub-category": item.sub_category,
            "options": p.options,
            "answer": p.options[p.truth],
            "answer_letter": f"<{letters[p.truth]}>",
            "rotate_id": p.rotation,
            "unique_id": cache_key(item.id, p.rotation),
            "question": item.question,
            "sample_rate": item.sampling_rate,
            "channel_layout": item.channel_layout,
            "clip_order": p.clip_order,
        },
        "prompts": prompts,
    }


def cache_key(item_id: str, rotation: int) -> str:
    """``"<id>@r<rotation>"`` -- the key of one reply in the cache. The ``r`` marks the rotation
    convention shared with STAR-Bench: a key ``"<id>@<rotation>"`` (another convention) is never
    matched, so such a reply is asked again, never scored against another presentation.

    Parameters
    ----------
    item_id : str
        The item's id.
    rotation : int
        The run (:attr:`Presentation.rotation`).

    Returns
    -------
    str
        The cache key.
    """
    return f"{item_id}@r{rotation}"
