"""The study file of ``auralgen listen``: one YAML mapping, checked before the server starts.

Example (every key but ``out`` and one of ``fixed`` / ``adaptive`` is optional)::

    out: studies/pitch            # listen.sqlite, the experimenter key and reports go here
    seed: 0                       # item seed: the same items as a model run with this seed
    title: Pitch listening test
    instructions: Listen to each sound, then pick the answer that fits best.
    consent: I agree to take part; my answers are stored under a pseudonymous id.
    practice: 4                   # practice trials (with feedback), at the easy end of each task
    fixed:                        # items of a generated dataset, in a seeded order per participant
      data: data/pitch
      split: test
      tasks: [pitch_relative]
      max_items: 20               # per task
    adaptive:                     # QUEST+ tracks, interleaved; a task's config overrides as a mapping
      tasks: {pitch_relative: {}, audiogram: {freqs_hz: [1000, 4000]}}
      settings: {max_trials: 40}
    audio: {sample_rate: 48000, length_s: 5.0}

An invalid value ends in one line naming the key, the value and what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from auralgen.core.constants import PLAYBACK_SAMPLE_RATES
from auralgen.core.errors import ParameterError
from auralgen.core.random import is_number
from auralgen.evaluation.adaptive import QuestSettings
from auralgen.listen.screening import TRIAL_S

CALIBRATION_S = 2.0  # the volume step's calibration tone (seconds)

__all__ = ["AdaptiveBlock", "AudioFormat", "FixedBlock", "StudyConfig", "load_study", "study_from_dict"]

INSTRUCTIONS = (
    "You will hear short sounds and answer a question about each one. Use headphones in a quiet room. "
    "Press Play to hear the sound (you may play it again), then click the answer that fits best. "
    "There are no trick questions: when unsure, take your best guess."
)
CONSENT = (
    "Your answers and response times are stored under a pseudonymous participant id, with no name or "
    "contact detail, and are used for research on audio perception. You may stop at any time."
)


@dataclass(frozen=True)
class FixedBlock:
    """Items of the generated dataset ``data`` (split ``split``; ``tasks`` empty = every task; at most
    ``max_items`` per task), each participant in their own seeded order."""

    data: str
    split: str = "test"
    tasks: tuple[str, ...] = ()
    max_items: int | None = None


@dataclass(frozen=True)
class AdaptiveBlock:
    """One QUEST+ track per task (the audiogram: per frequency), with each task's config ``overrides``."""

    tasks: dict[str, dict] = field(default_factory=dict)
    settings: QuestSettings = QuestSettings()
    extend: float = 16.0


@dataclass(frozen=True)
class AudioFormat:
    """Every sound the browser gets: a WAV of ``channels`` x ``length_s`` s at ``sample_rate`` Hz, 32-bit float;
    a trial's clips one after the other, ``gap_s`` apart, then silence to the fixed length."""

    sample_rate: int = 48000
    length_s: float = 5.0
    gap_s: float = 0.5
    channels: int = 2
    calibration_db_spl: float = 70.0  # the volume step's 1 kHz tone (dB SPL under the full-scale convention)

    @property
    def n_samples(self) -> int:
        return int(round(self.length_s * self.sample_rate))


@dataclass(frozen=True)
class StudyConfig:
    out: str
    seed: int = 0
    title: str = "Listening test"
    instructions: str = INSTRUCTIONS
    consent: str = CONSENT
    screening: bool = True
    practice: int = 4
    fixed: FixedBlock | None = None
    adaptive: AdaptiveBlock | None = None
    audio: AudioFormat = AudioFormat()
    token: str | None = None  # the study token participant links carry (required off 127.0.0.1)
    finish_url: str | None = None  # a link shown at the end (e.g. a crowdsourcing platform's completion URL)

    @property
    def db_path(self) -> Path:
        return Path(self.out) / "listen.sqlite"


def _need(ok: bool, message: str) -> None:
    if not ok:
        raise ParameterError(message)


def _known(node: dict, cls, key: str) -> None:
    names = {f.name for f in fields(cls)}
    extra = sorted(set(node) - names)
    _need(not extra, f"{key}.{extra[0] if extra else ''} is unknown; allowed: {', '.join(sorted(names))}")


def _fixed(node: Any) -> FixedBlock | None:
    if node is None:
        return None
    _need(isinstance(node, dict) and "data" in node, f"fixed={node!r}; allowed: a mapping with data: <dataset dir>")
    _known(node, FixedBlock, "fixed")
    tasks = node.get("tasks") or ()
    _need(isinstance(tasks, (list, tuple)), f"fixed.tasks={tasks!r}; allowed: a list of task names")
    max_items = node.get("max_items")
    _need(
        max_items is None or (isinstance(max_items, int) and max_items > 0),
        f"fixed.max_items={max_items!r}; allowed: a positive integer or null",
    )
    return FixedBlock(str(node["data"]), str(node.get("split", "test")), tuple(map(str, tasks)), max_items)


def _adaptive(node: Any) -> AdaptiveBlock | None:
    if node is None:
        return None
    _need(isinstance(node, dict), f"adaptive={node!r}; allowed: a mapping with tasks: {{name: overrides}}")
    _known(node, AdaptiveBlock, "adaptive")
    tasks = node.get("tasks") or {}
    if isinstance(tasks, (list, tuple)):
        tasks = {str(t): {} for t in tasks}
    _need(isinstance(tasks, dict) and tasks, f"adaptive.tasks={tasks!r}; allowed: a non-empty list or mapping of tasks")
    for name, over in tasks.items():
        _need(isinstance(over or {}, dict), f"adaptive.tasks.{name}={over!r}; allowed: a mapping of config overrides")
    raw = node.get("settings") or {}
    _need(isinstance(raw, dict), f"adaptive.settings={raw!r}; allowed: a mapping of QUEST+ settings")
    _known(raw, QuestSettings, "adaptive.settings")
    settings = QuestSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    settings.check("adaptive.settings")
    extend = node.get("extend", 16.0)
    _need(_number(extend) and extend >= 1.0, f"adaptive.extend={extend!r}; allowed: a number >= 1")
    return AdaptiveBlock({str(k): dict(v or {}) for k, v in tasks.items()}, settings, float(extend))


def _number(value: Any) -> bool:
    """A finite int or float (not a bool, not a string)."""
    return is_number(value) and math.isfinite(value)


def _audio(node: Any) -> AudioFormat:
    node = node or {}
    _need(isinstance(node, dict), f"audio={node!r}; allowed: a mapping")
    _known(node, AudioFormat, "audio")
    a = AudioFormat(**node)
    rates = ", ".join(map(str, PLAYBACK_SAMPLE_RATES))
    _need(a.sample_rate in PLAYBACK_SAMPLE_RATES, f"audio.sample_rate={a.sample_rate!r}; allowed: {rates}")
    _need(
        _number(a.length_s) and CALIBRATION_S <= a.length_s <= 30.0,
        f"audio.length_s={a.length_s!r}; allowed: {CALIBRATION_S:g} .. 30 (the calibration tone lasts "
        f"{CALIBRATION_S:g} s)",
    )
    _need(_number(a.gap_s) and 0.0 <= a.gap_s <= 2.0, f"audio.gap_s={a.gap_s!r}; allowed: 0 .. 2")
    _need(
        _number(a.calibration_db_spl) and 40.0 <= a.calibration_db_spl <= 100.0,
        f"audio.calibration_db_spl={a.calibration_db_spl!r}; allowed: 40 .. 100",
    )
    _need(a.channels == 2, f"audio.channels={a.channels!r}; allowed: 2 (headphones; mono items play on both ears)")
    return a


def study_from_dict(node: dict) -> StudyConfig:
    """A checked :class:`StudyConfig` from a plain mapping (see the module docstring).

    Parameters
    ----------
    node : dict
        The study file's mapping.

    Returns
    -------
    StudyConfig
        The study, every value checked.

    Raises
    ------
    ParameterError
        On the first invalid or unknown key, naming the key, the value and what is allowed.
    """
    _need(isinstance(node, dict), f"study={node!r}; allowed: a mapping")
    _known(node, StudyConfig, "study")
    _need(bool(node.get("out")), "study.out is missing; allowed: a folder for listen.sqlite and the reports")
    practice = node.get("practice", 4)
    _need(isinstance(practice, int) and 0 <= practice <= 50, f"practice={practice!r}; allowed: 0 .. 50 trials")
    seed = node.get("seed", 0)
    _need(isinstance(seed, int) and seed >= 0, f"seed={seed!r}; allowed: an integer >= 0")
    token = node.get("token")
    _need(
        token is None or (isinstance(token, str) and len(token) >= 16 and token.isalnum()),
        "token=<hidden>; allowed: at least 16 letters or digits, or null (one is drawn when needed)",
    )
    study = StudyConfig(
        out=str(node["out"]),
        seed=seed,
        title=str(node.get("title", "Listening test")),
        instructions=str(node.get("instructions", INSTRUCTIONS)),
        consent=str(node.get("consent", CONSENT)),
        screening=bool(node.get("screening", True)),
        practice=practice,
        fixed=_fixed(node.get("fixed")),
        adaptive=_adaptive(node.get("adaptive")),
        audio=_audio(node.get("audio")),
        token=token,
        finish_url=node.get("finish_url"),
    )
    _need(
        not study.screening or study.audio.length_s >= TRIAL_S,
        f"audio.length_s={study.audio.length_s!r} is shorter than a headphone-screening trial ({TRIAL_S:g} s); "
        f"allowed: audio.length_s >= {TRIAL_S:g}, or screening: false",
    )
    _need(
        study.fixed is not None or study.adaptive is not None,
        "study has neither fixed nor adaptive; allowed: at least one block of test trials",
    )
    return study


def load_study(path: str | Path) -> StudyConfig:
    """The study of the YAML file ``path``.

    Parameters
    ----------
    path : str or Path
        A YAML study file.

    Returns
    -------
    StudyConfig
        The study, every value checked (:func:`study_from_dict`).

    Raises
    ------
    ParameterError
        If the file does not exist, is not YAML, or holds an invalid study.
    """
    path = Path(path)
    try:
        node = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ParameterError(f"study file {str(path)!r} does not exist; allowed: a YAML study file") from None
    except yaml.YAMLError as exc:
        raise ParameterError(f"study file {str(path)!r} is not YAML ({str(exc).splitlines()[0]})") from None
    return study_from_dict(node)
