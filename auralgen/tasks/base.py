"""The task interface: ``sample -> render -> qa`` (+ ``check``), and the task registry.

A task is one small module that defines a :class:`TaskConfig` subclass and a
:class:`Task` subclass decorated with :func:`register`. ``params`` returned by
``sample`` is a JSON-able dict holding every sampled value: ``render(params)`` alone
reproduces the audio bit for bit. What a level is (values, units, items per level,
possible answers, split-disjoint parameter tuples, adaptive tracks) is the task's design,
declared by its ``Design`` class attribute (:mod:`auralgen.tasks.design`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from auralgen.core.constants import (  # noqa: F401  (SAMPLE_RATES: re-exported)
    DEFAULT_FULL_SCALE_DB_SPL,
    DEFAULT_SAMPLE_RATE,
    PRESENTATION_FULL_SCALE_DB_SPL,
    SAMPLE_RATES,
)
from auralgen.core.qa import QA, arrange, pick_question
from auralgen.core.random import Dist
from auralgen.core.registry import Registry
from auralgen.sounds.corpus import SOURCE_KINDS, SourceConfig
from auralgen.tasks._audit_spec import (  # noqa: F401  (re-exported: task modules import them from here)
    DISTANCE_CUE_FEATURES,
    RELATIVE_FEATURES,
    SPATIAL_FEATURES,
    AuditSpec,
)
from auralgen.tasks._config_checks import (  # noqa: F401  (re-exported: task modules import them from here)
    MAX_DURATION_S,
    check_durations,
    check_levels,
    check_unused,
    config_fields,
    dist_fields,
    require,
)
from auralgen.tasks._dataset_check import DatasetCheck  # noqa: F401  (re-exported)
from auralgen.tasks.design import Design, Level, LevelGrid, deal  # noqa: F401  (Level, deal: re-exported)

RECORDED_TOO = SOURCE_KINDS  # takes_sources of a task that draws recorded sounds as well


def check_task_complete(name: str, cls: type[Task]) -> None:
    """Refuse, at import, a task class missing a piece every task needs (TypeError naming what is missing).

    Parameters
    ----------
    name : str
        The task's registry name (its module name).
    cls : type of Task
        The task class being registered.
    """
    missing = [
        a
        for a in ("name", "sub_category", "attribute", "regime", "level_unit", "n_choices", "questions")
        if not hasattr(cls, a)
    ]
    if missing:
        raise TypeError(
            f"task {name}: class {cls.__name__} lacks {', '.join(missing)}; allowed: set them as class attributes"
        )
    if cls.name != name:
        raise TypeError(f"task {name}: class {cls.__name__}.name is {cls.name!r}; allowed: the module name {name!r}")
    if not callable(getattr(cls.Design, "of", None)):
        raise TypeError(
            f"task {name}: class {cls.__name__}.Design={cls.Design!r} is not a design kind; allowed: a subclass of "
            "auralgen.tasks.design.Design (LevelGrid, SameAtZero, SubQuestions, Cells)"
        )
    audit = cls.__dict__.get("audit")
    if not isinstance(audit, AuditSpec):
        raise TypeError(
            f"task {name}: class {cls.__name__} has no `audit = AuditSpec(...)` of its own; allowed: "
            "declare the features that may predict the answer and the listener's easiest level"
        )
    if "listener" not in cls.__dict__:
        raise TypeError(
            f"task {name}: class {cls.__name__} sets no `listener` of its own; allowed: "
            "`listener = staticmethod(<a function of auralgen.listeners>)`, or None with audit.reason saying why"
        )
    listener = cls.__dict__["listener"]
    listener = listener.__func__ if isinstance(listener, staticmethod) else listener
    if listener is None and not audit.reason:
        raise TypeError(
            f"task {name}: class {cls.__name__} has listener = None and no audit.reason; allowed: "
            "a listener function, or say in AuditSpec(reason=...) why none can answer"
        )
    if listener is not None and not callable(listener):
        raise TypeError(
            f"task {name}: class {cls.__name__}.listener={listener!r} is not callable; allowed: "
            "a function (question, options, clips, sample_rate[, layout]) -> option index, or None"
        )


# every module of auralgen.tasks not starting with "_" (and not this one) is the task of its name
TASKS: Registry[type[Task]] = Registry(
    "task", package="auralgen.tasks", exclude=("base", "design"), validate=check_task_complete
)


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
        """Split a task's measurement dict into checks (records with ``measured`` and ``expected``) and extra.

        Parameters
        ----------
        measured : Mapping of str to Any
            The task's measurements, optionally with a boolean ``valid`` (default True).

        Returns
        -------
        Measurement
            The same measurements, keeping their key order for :meth:`to_dict`.
        """
        checks = {k: v for k, v in measured.items() if k != "valid" and _is_check(v)}
        extra = {k: v for k, v in measured.items() if k != "valid" and k not in checks}
        return cls(checks, extra, measured.get("valid", True), tuple(measured))

    def to_dict(self) -> dict[str, Any]:
        """Checks, extra and ``valid`` merged at the top level, in the order the task wrote them.

        Returns
        -------
        dict of str to Any
            The ``measured`` column's content (JSON-able).
        """
        merged = {**self.checks, **self.extra, "valid": self.valid}
        keys = [k for k in self.order if k in merged] + [k for k in merged if k not in self.order]
        return {k: merged[k] for k in keys}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON with sorted keys.

        Returns
        -------
        str
            The ``measured`` column as it is stored.
        """
        return json.dumps(self.to_dict(), sort_keys=True)

    def worst_error(self) -> float:
        """Largest ``|measured - expected|`` over the numeric checks.

        Returns
        -------
        float
            The error, in the unit of its check; 0.0 without a numeric check.
        """
        errs = [
            abs(c["measured"] - c["expected"])
            for c in self.checks.values()
            if isinstance(c.get("measured"), (int, float)) and isinstance(c.get("expected"), (int, float))
        ]
        return max(errs, default=0.0)


MEASURED = """
Parameters
----------
params : dict of str to Any
    The item's recipe.
clips : list of ndarray
    The item's clips, as :meth:`Task.render` returns them; the first, shape (channels, samples), is measured.

Returns
-------
dict of str to Any
    {checks} and a boolean ``valid``, for :meth:`Measurement.from_dict`.
"""
"""The sections ending the docstring of a function that measures an item for :meth:`Task.measure`
(appended by :func:`auralgen.core.docstrings.sections`, ``checks`` naming the records it returns)."""


def task_audio(cls: type, audio: AudioConfig) -> AudioConfig:
    """The audio settings task class ``cls`` renders with: the run's own for a task about absolute level
    (``cls.calibrated_level``), else the same with ``full_scale_db_spl`` at the presentation full scale
    (``cls.presentation_full_scale_db_spl``: :data:`~auralgen.core.constants.PRESENTATION_FULL_SCALE_DB_SPL`
    unless the task needs more headroom).

    Parameters
    ----------
    audio : AudioConfig
        The run's audio settings.

    Returns
    -------
    AudioConfig
        ``audio``, or a copy with ``full_scale_db_spl`` (dB SPL of digital RMS 1.0) replaced.

    Examples
    --------
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
        own :meth:`check_task`. A bad value raises ParameterError: one line naming key, value and what is allowed.

        Parameters
        ----------
        audio : AudioConfig
            The audio settings the task renders with (see :func:`task_audio`).
        key : str
            The config path of the task, e.g. ``tasks.pitch_relative``.
        """
        check_durations(self, key)
        check_unused(self, key)
        self.check_task(audio, key)

    def check_task(self, audio: AudioConfig, key: str) -> None:
        """Task-specific validation, raising ParameterError as :meth:`check` (the base accepts everything).

        Parameters
        ----------
        audio : AudioConfig
            The audio settings the task renders with.
        key : str
            The config path of the task, e.g. ``tasks.pitch_relative``.
        """


def register(cls: type[Task]) -> type[Task]:
    """Class decorator: add task class ``cls`` to :data:`TASKS` under its ``name`` (vetted by
    :func:`check_task_complete`).

    Returns
    -------
    type of Task
        ``cls`` itself.
    """
    return TASKS.register(cls)


def task_names() -> list[str]:
    """Every task's name, without importing them: a task lives in the module of its name.

    Returns
    -------
    list of str
        The task names, e.g. ``pitch_relative``.
    """
    return TASKS.names()


def task_class(name: str) -> type[Task]:
    """The class of task ``name``, importing only its module (a tone run never loads the room code).

    Parameters
    ----------
    name : str
        A task name, e.g. ``pitch_relative``.

    Returns
    -------
    type of Task
        The registered class.
    """
    return TASKS.get(name)


def load_tasks() -> Registry[type[Task]]:
    """Import every module of :mod:`auralgen.tasks` so each registers itself.

    Returns
    -------
    Registry of type of Task
        :data:`TASKS`, now holding every task.
    """
    TASKS.load_all()
    return TASKS


class Task:
    """Base class of a task: the stimulus side. Subclasses set the class attributes and implement
    ``sample``, ``render``, ``qa`` and ``measure``; the task's levels, items per level, expected
    answers and split-disjoint parameter tuples are its :attr:`design` (built from the class
    attribute ``Design``, see :mod:`auralgen.tasks.design`)."""

    name: ClassVar[str]
    category: ClassVar[str] = "foundational_perception"
    sub_category: ClassVar[str]
    attribute: ClassVar[str]
    regime: ClassVar[str]
    level_unit: ClassVar[str]
    n_choices: ClassVar[int]  # options per item (every one can be the answer of some item)
    # the published human threshold of the attribute, (value in level_unit, unit, source), shown beside
    # a model's adaptive threshold (auralgen.evaluation.adaptive.jnd); None where none is known
    human_threshold: ClassVar[tuple[float, str, str] | None] = None
    # the ``source`` kinds the task can draw its sounds from (auralgen.sounds.corpus.SOURCE_KINDS)
    takes_sources: ClassVar[tuple[str, ...]] = ("procedural",)  # RECORDED_TOO: every kind
    Config: ClassVar[type[TaskConfig]] = TaskConfig
    # the design kind: levels, items per level, expected answers, parameter tuples (auralgen.tasks.design)
    Design: ClassVar[type[Design]] = LevelGrid
    questions: ClassVar[tuple[str, ...]]
    audit: ClassVar[AuditSpec]  # required: what the dataset audit expects (see check_task_complete)
    # required, in the task's own class body: its reference DSP listener (auralgen.listeners), or None
    listener: ClassVar[Callable[..., int] | None]
    spatial: ClassVar[bool] = False  # the answer is a direction, distance or motion (interop files it as spatial)
    analyses: ClassVar[tuple[str, ...]] = ()  # extra evaluation analyses, e.g. "thresholds_by_frequency"
    card_note: ClassVar[str] = ""  # what the task's labels mean, for the dataset card (markdown, one paragraph)
    # which end of the level values is easier for any listener, "larger" or "smaller" (a property of the task's
    # stimulus, used by mode=adaptive); None: the end audit.listener_easiest names ("max" larger, "min" smaller)
    easier: ClassVar[str | None] = None
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
        self.design = self.Design.of(self)

    def as_level(self, level: int | Level) -> Level:
        """``level`` as a :class:`Level`: a grid index ``i`` becomes the design's ``Level(i, value)``.

        Parameters
        ----------
        level : int or Level
            A grid index, or a :class:`Level` (returned as is).

        Returns
        -------
        Level
            The level with its value in the task's ``level_unit``.
        """
        if isinstance(level, Level):
            return level
        return self.design.level(int(level))

    def sample(self, rng: np.random.Generator, level: int | Level) -> dict[str, Any]:
        """The ``params`` of one item at ``level`` (subclasses implement it).

        Parameters
        ----------
        rng : numpy.random.Generator
            The item's random stream; the only source of randomness.
        level : int or Level
            A grid index or a :class:`Level` (see :meth:`as_level`; ``index`` is None off the grid, in an
            adaptive trial); read ``value``, in ``level_unit``, never ``cfg.levels[index]``.

        Returns
        -------
        dict of str to Any
            The JSON-able recipe: every sampled value, with units in the names (``*_hz``, ``*_s``, ``*_db``,
            ``*_m``, ``*_deg``) and ``sample_rate_hz``; :meth:`render` needs nothing else.
        """
        raise NotImplementedError

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        """The item's audio from its recipe alone, bit for bit the same every time (subclasses implement it).

        Parameters
        ----------
        params : dict of str to Any
            The recipe :meth:`sample` returned.

        Returns
        -------
        list of ndarray
            One or more clips, each shape (channels, samples), float32, within digital full scale
            [-1, 1] (``params["full_scale_db_spl"]`` is the dB SPL of RMS 1.0), at
            ``params["sample_rate_hz"]``; channels as :meth:`channel_layout` names them.

        Raises
        ------
        auralgen.core.errors.Redraw
            This draw cannot become a valid item (e.g. it would clip); the generator draws it again.
        """
        raise NotImplementedError

    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        """The item's question, options and answer (subclasses implement it, usually with :meth:`make_qa`).

        Parameters
        ----------
        params : dict of str to Any
            The recipe :meth:`sample` returned.
        rng : numpy.random.Generator
            The item's random stream (after :meth:`sample`): picks the phrasing and the distractors' order.
        slot : int
            The answer's index among the options, in ``[0, n_choices)``, assigned by the pipeline.

        Returns
        -------
        QA
            ``n_choices`` options with the answer at ``slot``; the answer text follows from ``params``
            alone (the plan probes it with ``slot=0`` to deal answer texts).
        """
        raise NotImplementedError

    def make_qa(self, answer: str, choices, rng: np.random.Generator, *, slot: int, templates=None) -> QA:
        """The item's QA: ``answer`` at ``slot`` among ``choices`` (the others shuffled around it) and a question
        drawn from ``templates`` (default: the task's).

        Parameters
        ----------
        answer : str
            The answer text.
        choices : iterable of str
            The option texts; ``answer`` may be among them (it is placed once).
        rng : numpy.random.Generator
            Shuffles the distractors and picks the question.
        slot : int
            The answer's index among the options.
        templates : sequence of str, optional
            Question texts to pick from (default: ``questions``, limited by ``cfg.phrasings``).

        Returns
        -------
        QA
            Question, options and answer index.
        """
        options, index = arrange(answer, [c for c in choices if c != answer], slot=slot, rng=rng)
        return QA(pick_question(templates or self.questions, self.cfg.phrasings, rng), options, index)

    def measure(self, params: dict[str, Any], clips: list[np.ndarray]) -> Measurement:
        """Measure the rendered audio against what ``params`` asked for (subclasses implement it).

        Parameters
        ----------
        params : dict of str to Any
            The recipe.
        clips : list of ndarray
            :meth:`render`'s clips, each shape (channels, samples), float32.

        Returns
        -------
        Measurement
            The measured-vs-expected records (``measured``, ``expected``, ``tolerance`` in the unit its key
            names, ``ok``) and the verdict: valid only when the measurement confirms the label.
        """
        raise NotImplementedError

    def check(self, params: dict[str, Any], clips: list[np.ndarray]) -> dict[str, Any]:
        """:meth:`measure` as the JSON-able dict the ``measured`` column stores (with a boolean ``valid``),
        with the ``audible`` record of :func:`~auralgen.measure.level.clip_audibility` where
        :attr:`clips_heard`: an item with a silent or near-silent clip is not valid.

        Parameters
        ----------
        params : dict of str to Any
            As in :meth:`measure`.
        clips : list of ndarray
            As in :meth:`measure`.

        Returns
        -------
        dict of str to Any
            The ``measured`` column, with a boolean ``valid``.
        """
        out = self.measure(params, clips).to_dict()
        if not self.clips_heard:
            return out
        from auralgen.measure.level import clip_audibility

        sr = int(params.get("sample_rate_hz", self.sample_rate))
        audible = clip_audibility(clips, sr, full_scale_db_spl=params.get("full_scale_db_spl"))
        return {**out, "audible": audible, "valid": bool(out["valid"]) and audible["ok"]}

    def channel_layout(self, params: dict[str, Any]) -> str:
        """The channel layout of the item's clips (the ``channel_layout`` column).

        Parameters
        ----------
        params : dict of str to Any
            The recipe.

        Returns
        -------
        str
            ``mono`` here; a spatial task names its receiver's (``stereo``, ``binaural``, ``foa_acn_sn3d``, ...).
        """
        return "mono"

    def eval_fields(self, params: dict[str, Any]) -> dict[str, float | str]:
        """Fields the evaluation adds to an item's record from its ``params``: ``difference`` and
        ``difference_unit`` (the physical stimulus difference, larger = easier) for a psychometric
        fit on it; ``frequency_hz`` and ``tone_position`` for a per-frequency analysis.

        Parameters
        ----------
        params : dict of str to Any
            The item's recipe.

        Returns
        -------
        dict of str to float or str
            The fields; empty here.
        """
        return {}
