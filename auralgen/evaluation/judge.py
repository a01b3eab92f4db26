"""The LLM judge (``eval.judge``): reads replies the rule-based parser could not."""

from __future__ import annotations

import string
import sys
from pathlib import Path

from .adapters import ModelError, build_adapter
from .cache import ReplyCache
from .config import EvalSettings
from .items import Item
from .parsing import ParseResult, extract_choice
from .prompts import Presentation, cache_key

JUDGE_PROMPT = (
    "A model answered a multiple-choice question. Decide which single option its reply chose.\n"
    "Question: {question}\nOptions:\n{options}\nReply: {reply}\n"
    "Answer with the option letter only, or 'none' if the reply chose no single option."
)


class Judge:
    """Reads unparseable replies with an LLM (``eval.judge``, an ``openai`` model config).

    The judge's verdict goes through :func:`extract_choice` like any reply; its replies are
    cached in ``<out>/judge.jsonl`` under the same keys, so re-scoring asks nothing twice.
    """

    def __init__(self, model: dict, out: Path, *, seed: int):
        self._none = ParseResult(None, "unparseable", "")
        self.adapter = build_adapter(model, key="eval.judge", seed=seed, workdir=out)
        self.cache = ReplyCache(out / "judge.jsonl")

    def __call__(self, item: Item, p: Presentation, reply: str):
        key = cache_key(item.id, p.rotation)
        entry = self.cache.get(key)
        if entry is None or entry.get("reply_judged") != reply:
            options = "".join(f"{string.ascii_uppercase[i]}. {o}\n" for i, o in enumerate(p.options))
            text = JUDGE_PROMPT.format(question=item.question, options=options, reply=reply)
            msg = {
                "meta": {"id": item.id, "task": item.task, "options": p.options, "unique_id": key},
                "prompts": [{"type": "text", "value": text}],
            }
            try:
                verdict = self.adapter.generate_inner(msg)
            except ModelError as exc:
                print(f"warning: judge failed on {key}: {exc}", file=sys.stderr)
                return self._none
            entry = {"key": key, "reply_judged": reply, "verdict": verdict}
            self.cache.put(entry)
        parsed = extract_choice(entry["verdict"], p.options)
        return parsed if parsed.status == "ok" else self._none

    def close(self):
        """Close the judge's adapter and its reply cache."""
        self.adapter.close()
        self.cache.close()


def make_judge(settings: EvalSettings, out: Path) -> Judge | None:
    """The run's :class:`Judge`, or ``None`` without ``eval.judge``.

    Parameters
    ----------
    settings : EvalSettings
        The ``eval`` settings: ``judge`` (a model config or None) and ``seed``.
    out : Path
        The run's output folder; the judge's cache is ``<out>/judge.jsonl``.

    Returns
    -------
    Judge or None
        The judge, or None when ``settings.judge`` is None.
    """
    return None if settings.judge is None else Judge(settings.judge, out, seed=settings.seed)
