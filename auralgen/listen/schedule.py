"""What a study asks: its fixed items, adaptive tracks and practice, and the stimuli of any trial.

Everything here is a function of the study and the trial's coordinates, never of server state, so a
restarted server makes the same sound for the same stored trial:

* **fixed** -- the items of the study's dataset (checked against its manifest), in an order drawn per
  participant from ``(seed, participant)``;
* **adaptive** -- one track per task (the audiogram: per frequency, as in ``mode=adaptive``): a fresh
  :class:`~auralgen.evaluation.adaptive.QuestPlusProcedure` on the task's level domain, and trial ``i``
  of track ``name`` at value ``v`` is :func:`~auralgen.evaluation.adaptive.trials.make_trial_item`
  ``(task, v, seed, name, i)`` -- the item a model meets at that trial and value with the same seed;
* **practice** -- items made the same way, two thirds of the way to the easy end of each task's domain
  (track ``practice:<task>``);
* **screening** -- :func:`~.screening.screening_trial` from ``(seed, participant, trial)``.

The option order of every trial is a permutation drawn from ``(seed, participant, track, trial)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import stable_id
from auralgen.evaluation.adaptive import QuestPlusProcedure, domain_for
from auralgen.evaluation.adaptive.session import build_task
from auralgen.evaluation.adaptive.trials import make_trial_item
from auralgen.evaluation.items import Item, load_items
from auralgen.export.audio import decode_flac
from auralgen.tasks.base import Task
from auralgen.tasks.design import track_tasks

from . import screening
from .sound import trial_wav
from .study import StudyConfig

__all__ = ["PRACTICE_AT", "Schedule", "Stimulus", "adaptive_tracks", "new_procedure"]

PRACTICE_AT = 2 / 3  # practice level: this share of the way from the hardest to the easiest value (axis)


def adaptive_tracks(study: StudyConfig) -> dict[str, Task]:
    """The study's adaptive tracks by name (a task's, or one per audiogram frequency), in study order.

    Parameters
    ----------
    study : StudyConfig
        The checked study; without an adaptive block there are no tracks.

    Returns
    -------
    dict of str to Task
        Track name to the task (with the study's overrides) that makes its items.
    """
    tracks: dict[str, Task] = {}
    for name, overrides in study.adaptive.tasks.items() if study.adaptive else ():
        task = build_task(name, **{k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()})
        tracks.update(dict(track_tasks(task)))
    return tracks


def new_procedure(study: StudyConfig, task: Task) -> QuestPlusProcedure:
    """A fresh procedure of a track of ``task`` (as ``mode=adaptive`` builds it).

    Parameters
    ----------
    study : StudyConfig
        The checked study, with an adaptive block (its QUEST+ settings and domain ``extend``).
    task : Task
        The track's task; its level domain and number of choices set the procedure.

    Returns
    -------
    QuestPlusProcedure
        A procedure with no trial recorded, guessing rate ``1 / n_choices``.
    """
    block = study.adaptive
    return QuestPlusProcedure(
        domain_for(task, extend=block.extend), chance=1.0 / task.n_choices, settings=block.settings
    )


@dataclass(frozen=True)
class Stimulus:
    """One trial's content: what the browser gets (``question``, ``options`` in canonical order, ``wav``)
    and what it never gets (``answer_index``, ``level_value``, the item id)."""

    item_id: str
    task: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    level_value: float | None
    level_unit: str
    wav: bytes


class Schedule:
    """The trials a study can ask (see the module docstring); loading checks every fixed item fits the
    study's audio format and makes one practice item per task. A ``pid`` argument is a participant's id
    (:meth:`~auralgen.listen.store.Store.create_participant`)."""

    def __init__(self, study: StudyConfig):
        self.study = study
        self.fixed: dict[str, Item] = {}
        if study.fixed is not None:
            f = study.fixed
            items = load_items(f.data, split=f.split, tasks=list(f.tasks) or None, max_items=f.max_items)
            self.fixed = {it.id: it for it in items}
            for it in items:  # refuse a study whose sounds do not fit before anyone starts
                self._item_stimulus(it)
        self.tracks = adaptive_tracks(study)
        for name in self.tracks:
            self.procedure(name)  # the domain rule refuses a task that cannot run adaptively
        self.practice_tasks = self._practice_tasks()
        if study.practice and not self.practice_tasks:
            raise ParameterError(
                "practice > 0 but no study task has a level domain; allowed: practice: 0, or a relative task "
                "or the audiogram in the study"
            )
        for k in range(len(self.practice_tasks)):
            self.practice(k)

    def _practice_tasks(self) -> list[tuple[str, Task]]:
        out = dict(self.tracks)
        for name in sorted({it.task for it in self.fixed.values()}):
            task = build_task(name)
            for track, sub in track_tasks(task)[:1]:
                try:
                    domain_for(sub)
                except ParameterError:
                    continue
                out.setdefault(track, sub)
        return list(out.items())

    # -- orders ------------------------------------------------------------------------------
    def fixed_order(self, pid: str) -> list[str]:
        """The fixed items' ids in the order participant ``pid`` hears them.

        Parameters
        ----------
        pid : str
            Whose order it is (the id seeds the permutation).

        Returns
        -------
        list of str
            Every fixed item id once, in a permutation drawn from ``(seed, pid)``.
        """
        ids = sorted(self.fixed)
        rng = np.random.default_rng([self.study.seed, stable_id(pid), stable_id("fixed-order")])
        return [ids[k] for k in rng.permutation(len(ids))]

    def option_order(self, pid: str, track: str, trial: int, n: int) -> list[int]:
        """Canonical option indices in the order shown at trial ``trial`` of ``track`` to ``pid``.

        Parameters
        ----------
        pid : str
            Who sees the trial (the id seeds the permutation, with ``track`` and ``trial``).
        track : str
            The track (or block) name the trial belongs to.
        trial : int
            The trial's index in its track.
        n : int
            Number of options.

        Returns
        -------
        list of int
            A permutation of ``range(n)``: the canonical index shown at each position.
        """
        rng = np.random.default_rng([self.study.seed, stable_id(pid), stable_id(track), int(trial)])
        return [int(k) for k in rng.permutation(n)]

    def procedure(self, name: str) -> QuestPlusProcedure:
        """A fresh procedure of track ``name`` (as ``mode=adaptive`` builds it).

        Parameters
        ----------
        name : str
            An adaptive track's name.

        Returns
        -------
        QuestPlusProcedure
            A procedure with no trial recorded (see :func:`new_procedure`).
        """
        return new_procedure(self.study, self.tracks[name])

    # -- stimuli -----------------------------------------------------------------------------
    def _item_stimulus(self, item: Item, level_value: float | None = None) -> Stimulus:
        clips = [decode_flac(c)[0] for c in item.clips]
        wav = trial_wav(clips, item.sampling_rate, self.study.audio, where=f"item {item.id} of task {item.task}")
        value = item.level_value if level_value is None else level_value
        return Stimulus(item.id, item.task, item.question, item.options, item.answer_index, value, item.level_unit, wav)

    def fixed_item(self, item_id: str) -> Stimulus:
        """The stimulus of fixed item ``item_id``.

        Parameters
        ----------
        item_id : str
            The id of an item of the study's dataset.

        Returns
        -------
        Stimulus
            The item's question, options, answer, level and trial WAV.
        """
        return self._item_stimulus(self.fixed[item_id])

    def adaptive(self, name: str, value: float, trial: int) -> Stimulus:
        """The stimulus of trial ``trial`` of adaptive track ``name`` at level ``value``.

        Parameters
        ----------
        name : str
            An adaptive track's name.
        value : float
            The level the procedure asks for, in the task's level unit (e.g. cents, dB).
        trial : int
            The trial's index in the track.

        Returns
        -------
        Stimulus
            The item a model meets at that trial and value with the study's seed, with its trial WAV.
        """
        made = make_trial_item(self.tracks[name], value, seed=self.study.seed, track=name, trial=trial)
        return self._item_stimulus(made.item, value)

    def practice(self, k: int) -> Stimulus:
        """Practice trial ``k``: the tasks in turn, each at :data:`PRACTICE_AT` of the way from the hardest to
        the easiest value of its domain (on its axis: 165 cents for pitch, 70 dB HL for the default audiogram;
        easy, and short of the domain's loudest tones).

        Parameters
        ----------
        k : int
            The practice trial's index; task ``k mod (number of practice tasks)`` is used.

        Returns
        -------
        Stimulus
            The practice item, with its trial WAV and the level value it was made at.
        """
        name, task = self.practice_tasks[k % len(self.practice_tasks)]
        d = domain_for(task)
        hard, easy = d.to_axis(d.hard_value()), d.to_axis(d.easy_value())
        value = float(d.to_value(hard + PRACTICE_AT * (easy - hard)))
        made = make_trial_item(task, value, seed=self.study.seed, track=f"practice:{name}", trial=k)
        return self._item_stimulus(made.item, value)

    def screening(self, pid: str, k: int) -> Stimulus:
        """Headphone screening trial ``k`` of participant ``pid`` (:func:`~.screening.screening_trial`).

        Parameters
        ----------
        pid : str
            Who is screened (the id seeds the trial).
        k : int
            The screening trial's index.

        Returns
        -------
        Stimulus
            Task ``headphone_screening``: the three tones as a trial WAV, the answer the quiet tone's
            position, no level.
        """
        rng = np.random.default_rng([self.study.seed, stable_id(pid), stable_id("screening"), int(k)])
        clip, answer = screening.screening_trial(rng, self.study.audio.sample_rate)
        wav = trial_wav([clip], self.study.audio.sample_rate, self.study.audio, where="screening trial")
        return Stimulus(
            f"screening-{k}", "headphone_screening", screening.QUESTION, screening.OPTIONS, answer, None, "", wav
        )
