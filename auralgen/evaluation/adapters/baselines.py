"""The baseline adapters: ``random``, ``constant``, ``text_prior`` and the two controls that
wrap another model, ``text_only`` (no audio) and ``noise`` (every clip replaced by noise of
equal energy). See :mod:`.base` for what each answers.
"""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from ..items import read_wav, write_wav
from .base import Adapter, BaseConfig, build_adapter, check_model_config, letter, register

__all__ = ["ConstantAdapter", "NoiseAdapter", "RandomAdapter", "TextOnlyAdapter", "TextPriorAdapter"]


@register
class RandomAdapter(Adapter):
    kind = "random"

    @dataclass(frozen=True)
    class Config(BaseConfig):
        seed: int | None = None  # None = eval.seed

    def generate_inner(self, msg):
        seed = self.seed if self.cfg.seed is None else self.cfg.seed
        rng = np.random.default_rng([seed, zlib.crc32(msg["meta"]["unique_id"].encode())])
        return letter(int(rng.integers(len(msg["meta"]["options"]))))


@register
class ConstantAdapter(Adapter):
    kind = "constant"

    @dataclass(frozen=True)
    class Config(BaseConfig):
        reply: str = "A"

    def generate_inner(self, msg):
        return self.cfg.reply


@register
class TextPriorAdapter(Adapter):
    kind = "text_prior"

    @dataclass(frozen=True)
    class Config(BaseConfig):
        seed: int | None = None

    def generate_inner(self, msg):
        meta = msg["meta"]
        seed = self.seed if self.cfg.seed is None else self.cfg.seed
        question = meta.get("question", "")
        keys = [zlib.crc32(f"{seed}|{question}|{opt}".encode()) for opt in meta["options"]]
        return letter(int(np.argmax(keys)))


class _Wrapper(Adapter):
    """An adapter that transforms the message, then asks ``inner``."""

    default_inner: ClassVar[dict]

    @dataclass(frozen=True)
    class Config(BaseConfig):
        inner: dict | None = None

    def __init__(self, cfg, **kw):
        super().__init__(cfg, **kw)
        inner = dict(cfg.inner or self.default_inner)
        inner.setdefault("label", f"{cfg.label}.inner")
        self.inner = build_adapter(inner, key="model.inner", **kw)
        self.concurrency = self.inner.concurrency

    @classmethod
    def check_config(cls, cfg, key: str) -> None:
        """Validate the inner model's mapping too (``<key>.inner``)."""
        if cfg.inner is not None:
            inner = dict(cfg.inner)
            inner.setdefault("label", f"{cfg.label}.inner")
            check_model_config(inner, f"{key}.inner")

    def transform(self, msg: dict) -> dict:
        raise NotImplementedError

    def generate_inner(self, msg):
        return self.inner.generate_inner(self.transform(msg))

    async def agenerate(self, msg):
        return await self.inner.agenerate(self.transform(msg))

    def describe(self):
        return {**asdict(self.cfg), "inner": self.inner.describe()}

    def late_errors(self):
        return self.inner.late_errors()

    def take_usage(self):
        return self.inner.take_usage()

    def protocol_report(self):
        return self.inner.protocol_report()

    def close(self):
        self.inner.close()


@register
class TextOnlyAdapter(_Wrapper):
    kind = "text_only"
    default_inner: ClassVar[dict] = {"kind": "text_prior"}

    def transform(self, msg):
        prompts = [
            p
            for p in msg["prompts"]
            if p["type"] != "audio" and not (p["type"] == "text" and p["value"].startswith("Audio "))
        ]
        return {"meta": dict(msg["meta"]), "prompts": prompts}


@register
class NoiseAdapter(_Wrapper):
    kind = "noise"
    default_inner: ClassVar[dict] = {"kind": "dsp"}

    def transform(self, msg):
        uid = msg["meta"]["unique_id"]
        prompts, j = [], 0
        for p in msg["prompts"]:
            if p["type"] == "audio":
                clip, sr = read_wav(p["value"])
                rng = np.random.default_rng([self.seed, zlib.crc32(f"{uid}#{j}".encode())])
                rms = np.sqrt(np.mean(np.square(clip, dtype=np.float64), axis=1, keepdims=True))
                noise = rng.standard_normal(clip.shape) * rms
                peak = np.abs(noise).max() if noise.size else 0.0
                if peak >= 0.999:  # keep the WAV unclipped; only loud crest peaks get here
                    noise *= 0.999 / peak
                safe = uid.replace("/", "_").replace("@", "_r")
                path = write_wav(self.workdir / "noise" / f"{safe}-{j}.wav", noise.astype(np.float32), sr)
                prompts.append({"type": "audio", "value": str(path.resolve())})
                j += 1
            else:
                prompts.append(dict(p))
        return {"meta": dict(msg["meta"]), "prompts": prompts}
