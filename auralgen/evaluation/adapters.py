"""Model adapters: objects that answer STAR-Bench toolkit messages.

An adapter has the toolkit's interface -- ``generate_inner(msg) -> str`` -- so an adapter
written for the STAR-Bench toolkit ports unchanged; the harness awaits ``agenerate(msg)``,
which defaults to ``generate_inner`` (the ``openai`` adapter overrides it to run
``concurrency`` requests at once). Messages never carry the answer: the harness removes
``meta.answer`` and ``meta.answer_letter`` before calling an adapter.

Built-in adapters (``model.kind``)
----------------------------------
``random``     a seeded uniform choice of a letter (per item and rotation).
``constant``   always the same reply (``model.reply``, default ``"A"``).
``text_prior`` answers from the text alone: a fixed, seeded preference over option *texts*
               given the question (the same text wins under every rotation), a stand-in for
               a language model's priors.
``text_only``  wrapper: removes every audio part, then asks ``model.inner`` (default
               ``text_prior``) -- the caption-free control.
``noise``      wrapper: replaces every clip by Gaussian white noise with the clip's RMS level
               per channel (equal energy, same length and channels), then asks
               ``model.inner`` (default ``dsp``) -- the does-it-listen control.
``dsp``        the reference DSP listener of :mod:`auralgen.validation.listener` (imported
               lazily; a clear error if it is absent).
``command``    any executable reading one JSON request per line on stdin and writing one
               JSON reply carrying the request's id per line on stdout (see
               :mod:`auralgen.evaluation.command_adapter`).
``openai``     any OpenAI-compatible chat-completions server (see
               :mod:`auralgen.evaluation.openai_adapter`).

Errors: :class:`ModelError` -- no reply for this message (counted as an ``error`` answer, or
stops the run with ``eval.on_error=stop``); :class:`FatalModelError` -- the model cannot
answer anything (bad URL, rejected key, dead process): the run stops with one line.
"""

from __future__ import annotations

import importlib
import os
import string
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from auralgen.core.constants import UNABLE
from auralgen.core.mapping import from_mapping
from auralgen.core.registry import Registry
from auralgen.errors import AuralgenError, ParameterError

from .items import read_wav, write_wav

__all__ = [
    "ADAPTERS",
    "Adapter",
    "FatalModelError",
    "ModelError",
    "build_adapter",
    "check_model_config",
    "strip_answer",
]


class ModelError(AuralgenError):
    """The model gave no reply to one message (after any retries)."""


class FatalModelError(AuralgenError):
    """The model cannot answer at all; the run stops."""


# model.kind -> adapter class; the built-ins register below, the others in their own modules
ADAPTERS: Registry[type[Adapter]] = Registry(
    "model.kind",
    attr="kind",
    modules={"command": "auralgen.evaluation.command_adapter", "openai": "auralgen.evaluation.openai_adapter"},
)


def register(cls):
    """Class decorator: add an adapter to :data:`ADAPTERS` under its ``kind``."""
    return ADAPTERS.register(cls)


def _letter(i: int) -> str:
    return string.ascii_uppercase[i]


def strip_answer(msg: dict) -> dict:
    """A copy of ``msg`` without ``meta.answer`` / ``meta.answer_letter``."""
    meta = {k: v for k, v in msg["meta"].items() if k not in ("answer", "answer_letter")}
    return {"meta": meta, "prompts": [dict(p) for p in msg["prompts"]]}


def audio_paths(msg: dict) -> list[str]:
    return [p["value"] for p in msg["prompts"] if p["type"] == "audio"]


@dataclass(frozen=True)
class BaseConfig:
    kind: str
    label: str


class Adapter:
    """Base class: set ``kind`` and ``Config``; implement :meth:`generate_inner`."""

    kind: ClassVar[str]
    Config: ClassVar[type] = BaseConfig
    concurrency: int = 1

    def __init__(
        self, cfg, *, seed: int = 0, workdir: str | os.PathLike = ".", logdir: str | os.PathLike | None = None
    ):
        self.cfg = cfg
        self.seed = seed
        self.workdir = Path(workdir)  # scratch files (e.g. the noise control's WAVs)
        self.logdir = Path(logdir) if logdir is not None else self.workdir  # logs kept with the results

    def generate_inner(self, msg: dict) -> str:
        raise NotImplementedError

    async def agenerate(self, msg: dict) -> str:
        return self.generate_inner(msg)

    def __call__(self, msg: dict) -> str:
        return self.generate_inner(msg)

    def describe(self) -> dict:
        """The adapter's configuration, safe to write to disk (no secrets)."""
        return asdict(self.cfg)

    def late_errors(self) -> dict[str, str]:
        """``{unique_id: reason}`` of replies already returned that turned out invalid (e.g. answered twice)."""
        return {}

    def protocol_report(self) -> dict:
        """Counts of what the model sent besides its replies (written to ``results.json``)."""
        return {}

    def close(self) -> None:
        """Release processes and connections."""


# --------------------------------------------------------------------------- baselines


@register
class RandomAdapter(Adapter):
    kind = "random"

    @dataclass(frozen=True)
    class Config(BaseConfig):
        seed: int | None = None  # None = eval.seed

    def generate_inner(self, msg):
        seed = self.seed if self.cfg.seed is None else self.cfg.seed
        rng = np.random.default_rng([seed, zlib.crc32(msg["meta"]["unique_id"].encode())])
        return _letter(int(rng.integers(len(msg["meta"]["options"]))))


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
        return _letter(int(np.argmax(keys)))


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
        if idx is None:
            return UNABLE
        return _letter(int(idx))


# --------------------------------------------------------------------------- registry


def check_model_config(model: dict, key: str = "model", *, kinds=None):
    """Validate a model mapping into its adapter's ``Config`` (no process, no network)."""
    registry = ADAPTERS
    if not hasattr(model, "keys"):
        raise ParameterError(f"{key}={model!r} is not a mapping; allowed: a model config (model=random, ...)")
    kind = model.get("kind")
    allowed = kinds or registry.names()
    if kind not in registry or kind not in allowed:
        raise ParameterError(f"{key}.kind={kind!r} is unknown; allowed: {', '.join(allowed)}")
    data = dict(model)
    data.setdefault("label", kind)
    cfg = from_mapping(registry[kind].Config, data, key)
    if hasattr(registry[kind], "check_config"):
        registry[kind].check_config(cfg, key)
    if not cfg.label or any(c in cfg.label for c in "/\\ \n"):
        raise ParameterError(f"{key}.label={cfg.label!r} is invalid; allowed: a name without '/', '\\' or spaces")
    if isinstance(cfg, _Wrapper.Config) and cfg.inner is not None:
        inner = dict(cfg.inner)
        inner.setdefault("label", f"{cfg.label}.inner")
        check_model_config(inner, f"{key}.inner")
    return cfg


def build_adapter(model: dict, *, key: str = "model", seed: int = 0, workdir=".", logdir=None) -> Adapter:
    """Build the adapter a model mapping describes (``model.kind`` selects the class)."""
    cfg = check_model_config(model, key)
    return ADAPTERS.get(cfg.kind)(cfg, seed=seed, workdir=workdir, logdir=logdir)
