"""The task interface: ``sample -> render -> qa`` (+ ``check``), and the task registry.

A task is one small module that defines a :class:`TaskConfig` subclass and a
:class:`Task` subclass decorated with :func:`register`. ``params`` returned by
``sample`` is a JSON-able dict holding every sampled value: ``render(params)`` alone
reproduces the audio bit for bit.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from auralgen.core.constants import (  # noqa: F401  (SAMPLE_RATES: re-exported)
    DEFAULT_FULL_SCALE_DB_SPL,
    DEFAULT_SAMPLE_RATE,
    PRESENTATION_FULL_SCALE_DB_SPL,
    SAMPLE_RATES,
)
from auralgen.core.errors import ParameterError
from auralgen.core.mapping import is_num, plain
from auralgen.core.qa import QA, arrange, pick_question
from auralgen.core.random import Dist, owner
from auralgen.core.registry import Registry
from auralgen.sounds.corpus import SOURCE_KINDS, SourceConfig

RECORDED_TOO = SOURCE_KINDS  # takes_sources of a task that draws recorded sounds as well


def check_task_complete(name: str, cls: type[Task]) -> None:
    """Refuse, at import, a task class missing a piece every task needs (names what is missing)."""
    missing = [a for a in ("name", "sub_category", "attribute", "regime", "level_unit", "n_choices", "questions")
               if not hasattr(cls, a)]  # fmt: skip
    if missing:
        raise TypeError(
            f"task {name}: class {cls.__name__} lacks {', '.join(missing)}; allowed: set them as class attributes"
        )
    if cls.name != name:
        raise TypeError(f"task {name}: class {cls.__name__}.name is {cls.name!r}; allowed: the module name {name!r}")
    audit = cls.__dict__.get("audit")
    if not isinstance(audit, AuditSpec):
        raise TypeError(f"task {name}: class {cls.__name__} has no `audit = AuditSpec(...)` of its own; allowed: "
                        "declare the features that may predict the answer and the listener's easiest level")  # fmt: skip
    if "listener" not in cls.__dict__:
        raise TypeError(f"task {name}: class {cls.__name__} sets no `listener` of its own; allowed: "
                        "`listener = staticmethod(<a function of auralgen.listeners>)`, or None with audit.reason saying why")  # fmt: skip
    listener = cls.__dict__["listener"]
    listener = listener.__func__ if isinstance(listener, staticmethod) else listener
    if listener is None and not audit.reason:
        raise TypeError(f"task {name}: class {cls.__name__} has listener = None and no audit.reason; allowed: "
                        "a listener function, or say in AuditSpec(reason=...) why none can answer")  # fmt: skip
    if listener is not None and not callable(listener):
        raise TypeError(f"task {name}: class {cls.__name__}.listener={listener!r} is not callable; allowed: "
                        "a function (question, options, clips, sample_rate[, layout]) -> option index, or None")  # fmt: skip


# every module of auralgen.tasks not starting with "_" (and not this one) is the task of its name
TASKS: Registry[type[Task]] = Registry(
    "task", package="auralgen.tasks", exclude=("base",), validate=check_task_complete
)


class DatasetCheck:
    """A check the dataset audit runs over all items of one task (``AuditSpec.dataset_checks``).

    The audit makes one instance per task, calls :meth:`observe` with each item's ``params``
    and then :meth:`finish`, which returns the report entry (stored under ``name``) and one
    line per problem found (each becomes a flag of the audit).
    """

    name: ClassVar[str]

    def observe(self, params: dict[str, Any]) -> None:
        raise NotImplementedError

    def finish(self) -> tuple[dict[str, Any], list[str]]:
        raise NotImplementedError


@dataclass(frozen=True)
class AuditSpec:
    """What the dataset audit expects of a task (``auralgen.validation``); every task declares one.

    ``target_features`` are :func:`fnmatch` patterns of the audit's features (``params`` paths,
    ``delta.*`` between sounds, ``audio.*`` measured, ``row.*`` columns) that legitimately predict
    the answer because they are, or are driven by, the probed attribute; every other feature must
    not predict it (the shortcut audit). ``listener_easiest`` says at which end of the level grid
    the reference listener must reach ``listener_floor`` ("max" or "min" level value), or None
    where a DSP listener is not expected to solve even the easiest level -- then ``reason`` says why.
    """

    target_features: tuple[str, ...]
    listener_easiest: str | None
    listener_floor: float = 0.8
    reason: str = ""
    # checks over all of the task's items, run by the audit (each a DatasetCheck subclass)
    dataset_checks: tuple[type[DatasetCheck], ...] = ()

    def __post_init__(self):
        if self.listener_easiest not in ("max", "min", None):
            raise TypeError(f"AuditSpec.listener_easiest={self.listener_easiest!r}; allowed: 'max', 'min' or None")
        if self.listener_easiest is None and not self.reason:
            raise TypeError(
                "AuditSpec(listener_easiest=None) needs a reason; allowed: say why a DSP listener cannot solve the easiest level"
            )
        if not self.target_features:
            raise TypeError(
                "AuditSpec.target_features is empty; allowed: the patterns of the probed attribute's features"
            )


# audit feature families shared by several tasks (see AuditSpec.target_features)
RELATIVE_FEATURES = ("direction", "difference", "row.level")
# (a task adds its own margin field, margin_deg or margin_percent, where its params have one)
SPATIAL_FEATURES = ("row.level", "positions_m.*", "sounds.*.position_m.*")
DISTANCE_CUE_FEATURES = ("audio.rms_dbfs", "audio.peak_dbfs", "audio.active_s", "audio.last_offset_s",
                         "audio.n_segments", "audio.first_onset_s", "row.flac_bytes")  # fmt: skip

MAX_DURATION_S = 60.0  # longest value of any duration (``*_s``) field of a task config
MAX_SPLIT_DRAWS = 64  # per split: draws allowed to find a parameter tuple owned by this split


@dataclass(frozen=True)
class Level:
    """A difficulty level: its place on the task's grid and its value (in the task's ``level_unit``).

    Grid items carry an ``index`` (some tasks pick a sub-question or a frequency cell by it);
    an item off the grid (an adaptive trial at any value in the task's range) has ``index=None``.
    :meth:`Task.sample` reads ``value``, never ``cfg.levels[index]``.

    Examples
    --------
    >>> Level(2, 48.0)
    Level(index=2, value=48.0)
    """

    index: int | None
    value: float


@dataclass(frozen=True)
class Measurement:
    """What :meth:`Task.measure` found in the rendered audio (the ``measured`` column).

    ``checks`` are the measured-vs-expected records (``{"measured", "expected", "tolerance",
    "ok"}``), ``extra`` any other measured facts, ``valid`` the item's verdict. :meth:`to_dict`
    merges them at the top level, in the order the task wrote them, so the column is unchanged.

    Examples
    --------
    >>> m = Measurement.from_dict({"f0": {"measured": 441.0, "expected": 440.0, "tolerance": 2.0, "ok": True},
    ...                            "n": 2, "valid": True})
    >>> m.valid, m.worst_error(), m.to_json()
    (True, 1.0, '{"f0": {"expected": 440.0, "measured": 441.0, "ok": true, "tolerance": 2.0}, "n": 2, "valid": true}')
    """

    checks: Mapping[str, Mapping[str, Any]]
    extra: Mapping[str, Any] = field(default_factory=dict)
    valid: bool = True
    order: tuple[str, ...] = field(default=(), repr=False, compare=False)  # key order of to_dict()

    @classmethod
    def from_dict(cls, measured: Mapping[str, Any]) -> Measurement:
        """Split a task's measurement dict into checks (records with ``measured`` and ``expected``) and extra."""
        checks = {k: v for k, v in measured.items() if k != "valid" and _is_check(v)}
        extra = {k: v for k, v in measured.items() if k != "valid" and k not in checks}
        return cls(checks, extra, measured.get("valid", True), tuple(measured))

    def to_dict(self) -> dict[str, Any]:
        merged = {**self.checks, **self.extra, "valid": self.valid}
        keys = [k for k in self.order if k in merged] + [k for k in merged if k not in self.order]
        return {k: merged[k] for k in keys}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def worst_error(self) -> float:
        """Largest ``|measured - expected|`` over the numeric checks (0 without any)."""
        errs = [abs(c["measured"] - c["expected"]) for c in self.checks.values()
                if isinstance(c.get("measured"), (int, float)) and isinstance(c.get("expected"), (int, float))]  # fmt: skip
        return max(errs, default=0.0)


def task_audio(cls: type, audio: AudioConfig) -> AudioConfig:
    """The audio settings task class ``cls`` renders with: the run's own for a task about absolute level
    (``cls.calibrated_level``), else the same with ``full_scale_db_spl`` at the presentation full scale
    (``cls.presentation_full_scale_db_spl``: :data:`~auralgen.core.constants.PRESENTATION_FULL_SCALE_DB_SPL`
    unless the task needs more headroom).

    >>> task_audio(Task, AudioConfig()).full_scale_db_spl, AudioConfig().full_scale_db_spl
    (100.0, 136.0)
    """
    if getattr(cls, "calibrated_level", False):
        return audio
    full_scale = cls.presentation_full_scale_db_spl
    if audio.source.recorded:  # a recording's crest factor (up to 30 dB) needs more headroom than a tone's
        full_scale = getattr(cls, "presentation_full_scale_recorded_db_spl", full_scale)
    return replace(audio, full_scale_db_spl=float(full_scale))


def _is_check(value: Any) -> bool:
    return isinstance(value, Mapping) and "measured" in value and "expected" in value


@dataclass(frozen=True)
class AudioConfig:
    """Global audio settings, resolved per task (a task may set its own ``sample_rate``)."""

    sample_rate: int = DEFAULT_SAMPLE_RATE
    full_scale_db_spl: float = DEFAULT_FULL_SCALE_DB_SPL
    # where tasks that take a sound draw it (the ``source`` group; auralgen.sounds.corpus)
    source: SourceConfig = SourceConfig()


@dataclass(frozen=True)
class TaskConfig:
    """Fields every task has. Subclasses add their own (with defaults)."""

    name: str
    levels: tuple[float, ...] = ()
    items_per_level: int = 10
    sample_rate: int | None = None
    phrasings: tuple[int, ...] | None = None
    # fields a task inherits but never reads -> why; a value other than the default is refused,
    # so no override is silently ignored
    unused_fields: ClassVar[dict[str, str]] = {}

    def __post_init__(self) -> None:
        """A distribution field (annotated :class:`~auralgen.core.random.Dist`) given a plain value
        in Python, e.g. ``Config(name=..., tone_s=(0.5, 0.8))``, holds its parsed Dist."""
        for name in dist_fields(type(self)):
            value = getattr(self, name)
            if not isinstance(value, Dist):
                object.__setattr__(self, name, Dist.parse(name, value))

    def check(self, audio: AudioConfig, key: str) -> None:
        """Validate the config before any work; ``key`` is the config path for messages (e.g.
        ``tasks.pitch_relative``). Checks shared by every task (durations, see
        :func:`check_durations`; fields it does not use left at their defaults), then the task's
        own :meth:`check_task`."""
        check_durations(self, key)
        check_unused(self, key)
        self.check_task(audio, key)

    def check_task(self, audio: AudioConfig, key: str) -> None:
        """Task-specific validation (subclasses override it)."""


@functools.cache
def dist_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields of config class ``cls`` annotated :class:`~auralgen.core.random.Dist`."""
    hints = typing.get_type_hints(cls)
    return tuple(f.name for f in fields(cls) if hints[f.name] is Dist)


def _numbers(value) -> list:
    """Every number inside a config value: a number, a list, or a distribution (mapping or Dist)."""
    if isinstance(value, Dist):
        return _numbers(value.plain)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [value]
    if hasattr(value, "keys"):
        return [v for k in value.keys() if k != "dist" for v in _numbers(value[k])]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _numbers(item)]
    return []


def check_unused(cfg: TaskConfig, key: str) -> None:
    """Refuse a changed value in a field the task never reads (``cfg.unused_fields``)."""
    defaults = {f.name: f.default for f in fields(cfg)}
    for name, why in cfg.unused_fields.items():
        value = getattr(cfg, name)
        if plain(value) != plain(defaults[name]):
            raise ParameterError(
                f"{key}.{name}={value!r} is not used by {cfg.name} ({why}); allowed: leave it out (default {defaults[name]!r})"
            )


def check_durations(cfg: TaskConfig, key: str) -> None:
    """Every duration field (a name ending in ``_s``) holds finite values of at least 0 and at most
    :data:`MAX_DURATION_S`, so no clip asks for an absurd allocation (``clip_s=1e9`` would be
    116 TiB): a clip is a few such durations long, at most a few minutes of samples."""
    for f in fields(cfg):
        if not f.name.endswith("_s"):
            continue
        for v in _numbers(getattr(cfg, f.name)):
            require(
                not v < 0,
                f"{key}.{f.name}={getattr(cfg, f.name)!r} holds {v!r}, a negative duration; allowed: finite values within [0, {MAX_DURATION_S:g}] s",
            )
            require(
                math.isfinite(v) and v <= MAX_DURATION_S,
                f"{key}.{f.name}={getattr(cfg, f.name)!r} holds {v!r}, beyond the longest duration; allowed: finite values <= {MAX_DURATION_S:g} s",
            )


def register(cls: type[Task]) -> type[Task]:
    """Class decorator: add a task to :data:`TASKS` under its ``name``."""
    return TASKS.register(cls)


def task_names() -> list[str]:
    """Every task's name, without importing them: a task lives in the module of its name."""
    return TASKS.names()


def task_class(name: str) -> type[Task]:
    """The class of task ``name``, importing only its module (a tone run never loads the room code)."""
    return TASKS.get(name)


def load_tasks() -> Registry[type[Task]]:
    """Import every module of :mod:`auralgen.tasks` so each registers itself."""
    TASKS.load_all()
    return TASKS


class Task:
    """Base class. Subclasses set the class attributes and implement the four methods."""

    name: ClassVar[str]
    category: ClassVar[str] = "foundational_perception"
    sub_category: ClassVar[str]
    attribute: ClassVar[str]
    regime: ClassVar[str]
    level_unit: ClassVar[str]
    n_choices: ClassVar[int]  # options per item (every one can be the answer of some item)
    # the ``source`` kinds the task can draw its sounds from (auralgen.sounds.corpus.SOURCE_KINDS)
    # the published human threshold of the attribute, (value in level_unit, unit, source), shown beside
    # a model's adaptive threshold (auralgen.evaluation.adaptive.jnd); None where none is known
    human_threshold: ClassVar[tuple[float, str, str] | None] = None
    takes_sources: ClassVar[tuple[str, ...]] = ("procedural",)  # RECORDED_TOO: every kind
    Config: ClassVar[type[TaskConfig]] = TaskConfig
    questions: ClassVar[tuple[str, ...]]
    # params fields forming the "parameter tuple" kept disjoint across splits (None = all)
    key_fields: ClassVar[tuple[str, ...] | None] = None
    audit: ClassVar[AuditSpec]  # required: what the dataset audit expects (see check_task_complete)
    # required, in the task's own class body: its reference DSP listener (auralgen.listeners), or None
    listener: ClassVar[Callable[..., int] | None]
    spatial: ClassVar[bool] = False  # the answer is a direction, distance or motion (interop files it as spatial)
    analyses: ClassVar[tuple[str, ...]] = ()  # extra evaluation analyses, e.g. "thresholds_by_frequency"
    card_note: ClassVar[str] = ""  # what the task's labels mean, for the dataset card (markdown, one paragraph)
    # which end of the level values is easier for any listener, "larger" or "smaller" (a property of the task's
    # stimulus, used by mode=adaptive); None: the end audit.listener_easiest names ("max" larger, "min" smaller)
    easier: ClassVar[str | None] = None
    # the zero level (no difference) has an answer text of its own ("The same") that no other level has;
    # the other levels share the remaining n_choices - 1 texts. items_at then gives the zero level as many
    # items as each of those texts gets, so every text is the answer equally often over the task
    zero_level_answer: ClassVar[bool] = False
    # every clip must be heard (Task.check adds an ``audible`` record: no silent or near-silent clip);
    # False only where silence is a correct stimulus (the audiogram's absent tone, its level near threshold)
    clips_heard: ClassVar[bool] = True
    # the level convention (auralgen.synth.levels, "Presentation level"): True only where the attribute is
    # absolute level (the audiogram), which keeps the run's calibrated ``full_scale_db_spl``; every other task
    # renders at PRESENTATION_FULL_SCALE_DB_SPL, its sounds at a normal digital level (see :func:`task_audio`)
    calibrated_level: ClassVar[bool] = False
    # the presentation full scale of a task that is not calibrated (dB SPL of digital RMS 1.0)
    presentation_full_scale_db_spl: ClassVar[float] = PRESENTATION_FULL_SCALE_DB_SPL

    def __init__(self, cfg: TaskConfig, audio: AudioConfig):
        self.cfg = cfg
        self.audio = task_audio(type(self), audio)
        self.sample_rate = int(cfg.sample_rate or audio.sample_rate)

    # -- overridable -------------------------------------------------------
    def n_levels(self) -> int:
        return len(self.cfg.levels)

    def items_at(self, level: int) -> int:
        """Items at grid ``level``: ``items_per_level``; with :attr:`zero_level_answer`, the zero level
        holds ``items_per_level * (non-zero levels) / (n_choices - 1)`` (rounded up) instead.

        >>> t = Task.__new__(Task); t.cfg = TaskConfig(name="t", levels=(0, 10, 20), items_per_level=6)
        >>> t.zero_level_answer, t.n_choices = True, 3
        >>> [t.items_at(i) for i in range(3)]  # 'same' 6 times; 'up' and 'down' 6 times each over levels 1, 2
        [6, 6, 6]
        >>> t.cfg = TaskConfig(name="t", levels=(0, 10, 20, 40, 80), items_per_level=6); [t.items_at(i) for i in range(5)]
        [12, 6, 6, 6, 6]
        """
        n = self.cfg.items_per_level
        if not self.zero_level_answer or self.level_value(level) != 0:
            return n
        others = sum(1 for i in range(self.n_levels()) if self.level_value(i) != 0)
        return -(-n * others // (self.n_choices - 1)) if others else n

    def level_value(self, level: int) -> float:
        return float(self.cfg.levels[level])

    def level_info(self, level: int) -> tuple[str, str, str]:
        """``(attribute, regime, level_unit)`` of items at ``level``."""
        return self.attribute, self.regime, self.level_unit

    def as_level(self, level: int | Level) -> Level:
        """``level`` as a :class:`Level`: a grid index ``i`` becomes ``Level(i, level_value(i))``."""
        if isinstance(level, Level):
            return level
        return Level(int(level), self.level_value(level))

    def grid_index(self, level: Level) -> int:
        """The grid index of ``level``, for a task that picks what it asks by it (ParameterError off the grid)."""
        if level.index is None:
            raise ParameterError(
                f"task {self.name} level value {level.value!r} has no grid index; allowed: a level of tasks.{self.name}.levels"
            )
        return level.index

    def sample(self, rng: np.random.Generator, level: int | Level) -> dict[str, Any]:
        """The ``params`` of one item at ``level`` (a grid index or a :class:`Level`)."""
        raise NotImplementedError

    def sample_at(self, rng: np.random.Generator, level: int, k: int | None) -> dict[str, Any]:
        """:meth:`sample` for the ``k``-th item of grid level ``level`` (``None``: anywhere). Grid tasks override it."""
        return self.sample(rng, self.as_level(level))

    def sample_owned(
        self, rng: np.random.Generator, level: int, k: int | None, split: str, splits: tuple[str, ...]
    ) -> dict[str, Any]:
        """:meth:`sample_at` for an item of ``split``: redraws until its parameter tuple
        (:meth:`param_key`) is owned by ``split`` (:func:`auralgen.core.random.owner`), so no tuple
        appears in two splits. The item's place ``k`` steers the first draws. Tasks with a
        finite set of tuples override this to pick among their split's own tuples directly."""
        for attempt in range(MAX_SPLIT_DRAWS * len(splits)):
            params = self.sample_at(rng, level, k if attempt < MAX_SPLIT_DRAWS // 2 else None)
            if owner(self.param_key(params), tuple(splits)) == split:
                return params
        raise ParameterError(
            f"split={list(splits)!r}: task {self.name} level {level} ran out of parameter tuples not used by another split; allowed: fewer items per level or a wider parameter grid"
        )

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        raise NotImplementedError

    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        raise NotImplementedError

    def make_qa(self, answer: str, choices, rng: np.random.Generator, *, slot: int, templates=None) -> QA:
        """The item's QA: ``answer`` at ``slot`` among ``choices`` (the others shuffled around it) and a question drawn from ``templates`` (default: the task's)."""
        options, index = arrange(answer, [c for c in choices if c != answer], slot=slot, rng=rng)
        return QA(pick_question(templates or self.questions, self.cfg.phrasings, rng), options, index)

    def measure(self, params: dict[str, Any], clips: list[np.ndarray]) -> Measurement:
        """Measure the rendered audio against what ``params`` asked for (subclasses implement it)."""
        raise NotImplementedError

    def check(self, params: dict[str, Any], clips: list[np.ndarray]) -> dict[str, Any]:
        """:meth:`measure` as the JSON-able dict the ``measured`` column stores (with a boolean ``valid``),
        with the ``audible`` record of :func:`~auralgen.measure.level.clip_audibility` where
        :attr:`clips_heard`: an item with a silent or near-silent clip is not valid."""
        out = self.measure(params, clips).to_dict()
        if not self.clips_heard:
            return out
        from auralgen.measure.level import clip_audibility

        sr = int(params.get("sample_rate_hz", self.sample_rate))
        audible = clip_audibility(clips, sr, full_scale_db_spl=params.get("full_scale_db_spl"))
        return {**out, "audible": audible, "valid": bool(out["valid"]) and audible["ok"]}

    def channel_layout(self, params: dict[str, Any]) -> str:
        return "mono"

    def expected_answers(self, level_value: float, options: list[str]) -> set[str]:
        """The option texts that can be the answer of an item at ``level_value`` (the audit checks
        every answer is one, and balances them). Default: every option."""
        return set(options)

    def answer_texts(self, level: int) -> dict[str, str] | None:
        """For a level whose option texts vary from item to item (sound names): every text that can be
        the answer there, mapped to its group (e.g. a pair's unordered members, or a relation's side),
        so the plan deals the texts, and their groups, equally often (``generation/answers.py``).
        None (the default): such a level is not dealt."""
        return None

    def adaptive_tracks(self) -> list[tuple[str, Task]]:
        """The tracks ``mode=adaptive`` runs for this task, ``(track name, task)``: one, the task itself,
        unless a task measures several thresholds (the audiogram: one per frequency)."""
        return [(self.name, self)]

    def adaptive_axis(self) -> dict[str, Any] | None:
        """The level domain of an adaptive track when the task states its own (``low``, ``high``,
        ``scale``, ``easier``); None: the rule of :mod:`auralgen.evaluation.adaptive.domain`."""
        return None

    def eval_fields(self, params: dict[str, Any]) -> dict[str, float | str]:
        """Fields the evaluation adds to an item's record from its ``params``: ``difference`` and
        ``difference_unit`` (the physical stimulus difference, larger = easier) for a psychometric
        fit on it; ``frequency_hz`` and ``tone_position`` for a per-frequency analysis. None by default."""
        return {}

    def capacity_error(self, splits: tuple[str, ...], key: str) -> str | None:
        """Why some item of some split cannot find a parameter tuple owned by its split (see
        :func:`auralgen.core.random.owner`), as one line naming task, level, tuples available and needed
        and the override that fixes it; ``None`` when every item can. Called at plan time, before any
        rendering. The default (continuous parameters: tuples never run out) is ``None``."""
        return None

    # -- helpers ----------------------------------------------------------
    def param_key(self, params: dict[str, Any]) -> tuple:
        names = self.key_fields or tuple(sorted(params))
        return tuple(_freeze(params[k]) for k in names)


def _freeze(value):
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


def _score(split: str, key: tuple) -> bytes:
    blob = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(f"{split}|{blob}".encode()).digest()


def deal(keys, splits: tuple[str, ...]) -> dict[tuple, str]:
    """The owning split of each of a finite set of parameter tuples, balanced.

    Rendezvous hashing with bounded loads: each split may own ``n // S`` tuples (one more for
    the first ``n % S`` splits in hash order); taken in hash order, each tuple goes to the
    split of highest score (as in :func:`auralgen.core.random.owner`) that still has room. So every
    split owns at least one tuple when ``n >= S``, and a single split owns them all.

    Examples
    --------
    >>> sorted(deal([(1,), (2,), (3,)], ("train", "test")).values())
    ['test', 'train', 'train']
    """
    keys = sorted(set(keys), key=lambda key: _score("", key))
    ranked = sorted(splits, key=lambda s: hashlib.sha256(s.encode()).digest())
    room = {s: len(keys) // len(splits) + (i < len(keys) % len(splits)) for i, s in enumerate(ranked)}
    owners = {}
    for key in keys:
        best = max((s for s in splits if room[s] > 0), key=lambda s: _score(s, key))
        room[best] -= 1
        owners[key] = best
    return owners


def check_levels(key: str, levels: tuple) -> None:
    """Levels: a non-empty list of numbers, strictly monotonic (increasing or decreasing)."""
    if len(levels) == 0:
        raise ParameterError(f"{key}=[] is empty; allowed: a non-empty list of numbers")
    for v in levels:
        if not is_num(v) or not math.isfinite(v):
            raise ParameterError(f"{key}={list(levels)!r} holds {v!r}; allowed: finite numbers only")
    diffs = [b - a for a, b in zip(levels, levels[1:])]
    if not (all(d > 0 for d in diffs) or all(d < 0 for d in diffs)):
        raise ParameterError(
            f"{key}={list(levels)!r} is not monotonic; allowed: strictly increasing or decreasing values"
        )


def config_fields(cls: type[TaskConfig]) -> list[str]:
    return [f.name for f in fields(cls)]


def require(cond: bool, message: str) -> None:
    """Raise ParameterError(message) unless ``cond``; message names key, value and what is allowed."""
    if not cond:
        raise ParameterError(message)
