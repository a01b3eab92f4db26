"""``model.kind=dsp``: the reference DSP listener (:func:`auralgen.validation.listener.answer`)
as a model -- the ceiling a model that hears the cues can reach, and the ``noise`` control's
default inner model."""

from __future__ import annotations

import importlib

from auralgen.core.errors import AuralgenError, ParameterError

from ..items import read_wav
from .base import Adapter, ModelError, audio_paths, letter, register

NO_REPLY = "I cannot determine the answer from the audio."  # the listener measured nothing: a refusal, scored wrong

__all__ = ["DSPAdapter"]


@register
class DSPAdapter(Adapter):
    kind = "dsp"

    def __init__(self, cfg, **kw):
        super().__init__(cfg, **kw)
        try:
            listener = importlib.import_module("auralgen.validation.listener")
        except ImportError as exc:
            raise ParameterError(
                f"model.kind='dsp' needs auralgen.validation.listener, which is absent ({exc}); "
                "allowed: random, constant, text_only, noise (with model.inner), command, openai"
            ) from None
        if not hasattr(listener, "answer"):
            raise ParameterError(
                "model.kind='dsp': auralgen.validation.listener has no answer(); allowed: a listener module"
            )
        self.listener = listener

    def generate_inner(self, msg):
        meta = msg["meta"]
        clips, rate = [], int(meta.get("sample_rate") or 0)
        for path in audio_paths(msg):
            clip, rate = read_wav(path)
            clips.append(clip)
        try:
            layout = {"layout": meta["channel_layout"]} if meta.get("channel_layout") else {}
            idx = self.listener.answer(
                meta["task"], meta.get("question", ""), list(meta["options"]), clips, rate, **layout
            )
        except (AuralgenError, KeyError, NotImplementedError, ValueError) as exc:
            raise ModelError(f"dsp listener cannot answer task={meta['task']!r}: {exc}") from None
        if idx is None or idx < 0:
            return NO_REPLY
        return letter(int(idx))
