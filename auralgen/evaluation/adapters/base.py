"""Model adapters: the :class:`Adapter` base class, the :data:`ADAPTERS` registry and :func:`build_adapter`.

An adapter has the toolkit's interface -- ``generate_inner(msg) -> str`` -- so an adapter
written for the STAR-Bench toolkit ports unchanged; the harness awaits ``agenerate(msg)``,
which defaults to ``generate_inner`` (the ``openai`` adapter overrides it to run
``concurrency`` requests at once). Messages never carry the answer: the harness removes
``meta.answer`` and ``meta.answer_letter`` before calling an adapter.

Built-in adapters (``model.kind``), one module each in this package
---------------------------------------------------------------------
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
               (these five: :mod:`.baselines`)
``dsp``        the reference DSP listener of :mod:`auralgen.validation.listener` (imported
               lazily; a clear error if it is absent) -- :mod:`.dsp`.
``command``    any executable reading one JSON request per line on stdin and writing one
               JSON reply carrying the request's id per line on stdout (see :mod:`.command`).
``openai``     any OpenAI-compatible chat-completions server (see :mod:`.openai`).

A new adapter is a new module of this package named after its ``kind``: :data:`ADAPTERS`
lists it without importing it, and imports it only when a run asks for that kind.

Errors: :class:`ModelError` -- no reply for this message (counted as an ``error`` answer, or
stops the run with ``eval.on_error=stop``); :class:`FatalModelError` -- the model cannot
answer anything (bad URL, rejected key, dead process): the run stops with one line.
"""

from __future__ import annotations

import os
import string
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

from auralgen.core.errors import AuralgenError, ParameterError
from auralgen.core.mapping import from_mapping
from auralgen.core.registry import Registry

__all__ = [
    "ADAPTERS",
    "Adapter",
    "FatalModelError",
    "RunFailedError",
    "ModelError",
    "build_adapter",
    "audio_paths",
    "check_model_config",
    "letter",
    "register",
    "strip_answer",
]


class ModelError(AuralgenError):
    """The model gave no reply to one message (after any retries)."""


class FatalModelError(AuralgenError):
    """The model cannot answer at all; the run stops."""


class RunFailedError(AuralgenError):
    """Too many questions got no reply (``eval.max_error_rate``): no score is published."""


# model keys that change how replies are fetched, not what the model answers
RUNTIME_MODEL_KEYS = (
    "base_url",
    "concurrency",
    "timeout_s",
    "max_retries",
    "backoff_s",
    "max_backoff_s",
    "retry_budget_s",
    "api_key_env",
    "cwd",
    "ray_address",
    "replicas",
    "num_cpus",
    "num_gpus",
)  # a served model is identified by its name, not by where it is served


# the baselines share one module; every other module of this package is the adapter of its name
BASELINES = ("constant", "noise", "random", "text_only", "text_prior")

# model.kind -> adapter class; each registers itself when its module is imported
ADAPTERS: Registry[type[Adapter]] = Registry(
    "model.kind",
    attr="kind",
    package=__package__,
    exclude=("base", "baselines"),
    modules=dict.fromkeys(BASELINES, f"{__package__}.baselines"),
)


def register(cls):
    """Class decorator: add an adapter to :data:`ADAPTERS` under its ``kind``.

    ``cls`` is an :class:`Adapter` subclass that sets ``kind``.

    Returns
    -------
    type
        ``cls`` itself, now registered.
    """
    return ADAPTERS.register(cls)


def letter(i: int) -> str:
    """The option letter of index ``i`` (``0 -> "A"``).

    Parameters
    ----------
    i : int
        A 0-based option index, 0..25.

    Returns
    -------
    str
        One upper-case letter.
    """
    return string.ascii_uppercase[i]


def strip_answer(msg: dict) -> dict:
    """A copy of ``msg`` without ``meta.answer`` / ``meta.answer_letter``.

    Parameters
    ----------
    msg : dict
        A toolkit message: ``{"meta": {...}, "prompts": [{"type", "value"}, ...]}``.

    Returns
    -------
    dict
        The same message, ``meta`` and every prompt copied, the answer keys removed.
    """
    meta = {k: v for k, v in msg["meta"].items() if k not in ("answer", "answer_letter")}
    return {"meta": meta, "prompts": [dict(p) for p in msg["prompts"]]}


def audio_paths(msg: dict) -> list[str]:
    """The WAV paths of a message's audio prompts, in the order shown.

    Parameters
    ----------
    msg : dict
        A toolkit message, as for :func:`strip_answer`.

    Returns
    -------
    list of str
        The ``value`` of every prompt of type ``"audio"``.
    """
    return [p["value"] for p in msg["prompts"] if p["type"] == "audio"]


@dataclass(frozen=True)
class BaseConfig:
    """The settings every adapter has: its ``kind`` (``model.kind``) and ``label`` (names its results)."""

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

    @classmethod
    def build(cls, cfg, **kw) -> Adapter:
        """The adapter for ``cfg`` (an adapter kind may return another implementation, e.g. a pool).

        Parameters
        ----------
        cfg : BaseConfig
            The validated ``Config`` of this adapter kind.
        **kw
            ``seed``, ``workdir`` and ``logdir``, passed to the constructor.

        Returns
        -------
        Adapter
            A ready adapter.
        """
        return cls(cfg, **kw)

    @staticmethod
    def check_config(cfg, key: str = "model") -> None:
        """Refuse settings this adapter kind cannot run with, before any work (no process, no network).

        :func:`check_model_config` calls it once the mapping is read into ``Config``; the base
        accepts every setting.

        Parameters
        ----------
        cfg : BaseConfig
            The adapter kind's ``Config``.
        key : str, optional
            The config key the settings sit at, used in error messages (e.g. ``model.inner``).

        Raises
        ------
        ParameterError
            The setting that is wrong and what is allowed.
        """

    def generate_inner(self, msg: dict) -> str:
        """The model's reply to one message (the toolkit's interface); subclasses implement it.

        Parameters
        ----------
        msg : dict
            A toolkit message without the answer: ``{"meta": {...}, "prompts": [...]}``.

        Returns
        -------
        str
            The raw reply text, parsed into an option later.

        Raises
        ------
        ModelError
            No reply to this message.
        FatalModelError
            The model cannot answer anything (the run stops).
        """
        raise NotImplementedError

    async def agenerate(self, msg: dict) -> str:
        """The reply to one message, awaited by the harness; by default :meth:`generate_inner`.

        Parameters
        ----------
        msg : dict
            A toolkit message without the answer.

        Returns
        -------
        str
            The raw reply text.
        """
        return self.generate_inner(msg)

    def __call__(self, msg: dict) -> str:
        return self.generate_inner(msg)

    def describe(self) -> dict:
        """The adapter's configuration, safe to write to disk (no secrets).

        Returns
        -------
        dict
            The ``Config`` fields by name (a wrapper adds its inner model's).
        """
        return asdict(self.cfg)

    def late_errors(self) -> dict[str, str]:
        """Replies already returned that turned out invalid (e.g. answered twice).

        Returns
        -------
        dict of str to str
            ``unique_id`` of the message to the reason; empty by default.
        """
        return {}

    def take_usage(self) -> dict | None:
        """The tokens the server reported since the last call, then forgets them.

        Returns
        -------
        dict or None
            ``prompt_tokens``, ``completion_tokens`` and ``total_tokens``, summed; None when the
            model reports none.
        """
        return None

    def protocol_report(self) -> dict:
        """Counts of what the model sent besides its replies (written to ``results.json``).

        Returns
        -------
        dict
            Counter name to count (e.g. stray stdout lines); empty by default.
        """
        return {}

    def close(self) -> None:
        """Release processes and connections."""


# --------------------------------------------------------------------------- registry


def check_model_config(model: dict, key: str = "model", *, kinds=None):
    """Validate a model mapping into its adapter's ``Config`` (no process, no network).

    Parameters
    ----------
    model : dict
        The model mapping, e.g. ``{"kind": "openai", "base_url": ..., "name": ...}``.
    key : str, optional
        The config key ``model`` sits at, used in error messages (e.g. ``model.inner``).
    kinds : sequence of str or None, optional
        The ``kind`` values allowed here (default: every registered adapter).

    Returns
    -------
    BaseConfig
        The adapter kind's ``Config``, ``label`` defaulting to the kind.

    Raises
    ------
    ParameterError
        ``model`` is not a mapping, its kind is unknown or not allowed, or a value is out of range.
    """
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
    registry[kind].check_config(cfg, key)  # e.g. a wrapper checks its inner model here
    if not cfg.label or any(c in cfg.label for c in "/\\ \n"):
        raise ParameterError(f"{key}.label={cfg.label!r} is invalid; allowed: a name without '/', '\\' or spaces")
    return cfg


def build_adapter(model: dict, *, key: str = "model", seed: int = 0, workdir=".", logdir=None) -> Adapter:
    """Build the adapter a model mapping describes (``model.kind`` selects the class).

    Parameters
    ----------
    model : dict
        The model mapping (see :func:`check_model_config`).
    key : str, optional
        The config key ``model`` sits at, used in error messages.
    seed : int, optional
        The run's seed, for adapters that draw (``random``, ``text_prior``, ``noise``).
    workdir : str or PathLike, optional
        Folder for scratch files (e.g. the noise control's WAVs).
    logdir : str or PathLike or None, optional
        Folder for logs kept with the results (default: ``workdir``).

    Returns
    -------
    Adapter
        The adapter, ready to answer.
    """
    cfg = check_model_config(model, key)
    return ADAPTERS.get(cfg.kind).build(cfg, seed=seed, workdir=workdir, logdir=logdir)
