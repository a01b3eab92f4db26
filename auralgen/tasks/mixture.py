"""mixture: several distinct synthesized sounds mixed AIR-Bench style; one sub-question per item.

Sub-questions (``sub_questions``, each with its own difficulty list and unit):

==========  ====================================  ===================  ========================
sub         question                              difficulty list      level_value means
==========  ====================================  ===================  ========================
louder      which of 3 sounds is the loudest?     ``levels``           LU, loudest minus next
first       which of 3 sounds starts first?       ``onset_levels_s``   s, first onset to next
count       how many distinct sounds (2-4)?       ``count_levels_lu``  LU, quietest re loudest
overlap     which pair of 3 sounds overlaps?      ``overlap_levels_s`` s, overlap of the pair
==========  ====================================  ===================  ========================

Level scheme: the difficulty index runs over the enabled sub-questions in the order of
``sub_questions``, then over each one's list (like the audiogram's dB HL then probe
levels). So the sub-question is a function of the level, and every level has one unit,
as the row schema (``level_value`` / ``level_unit``) and per-unit psychometric curves
need. Every sub-question has 3 answerable options (``n_choices = 3``).

Everything not probed is drawn from the mixing spec (``MixSpec`` defaults, or a ``conf/mixing/*.yaml`` preset,
:class:`~auralgen.mixing.MixSpec`) independently of the answer: which sound types appear
and in which role, the reference loudness (roved), the other sounds' levels, durations
and (for louder / count) the timeline. In count items the sounds' levels sum (in power) to the
roved reference, so the mix's level does not grow with the count. Levels are set in LUFS by the mixer
(:func:`auralgen.mixing.plan_mix`), whose record is stored in ``params["mix"]``; ``render``
re-applies it without measuring, so ``render(params)`` reproduces the audio bit for bit.

Notes: equal LUFS is not equal perceived loudness across sound types; the label is
defined in LUFS. The overlap sub-question uses only continuous sounds (harmonic tone,
noise burst, sweep), whose extent is audible; its overlapping pair is adjacent in time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from auralgen.core.qa import QA
from auralgen.core.random import Uniform
from auralgen.listeners import mixture as listen
from auralgen.mixing import DEFAULT_MIXING, MixInfo, MixSpec, plan_mix, render_mix
from auralgen.sounds.corpus import NAMEABLE, load_corpus
from auralgen.sounds.events import CONTINUOUS, EVENTS, KINDS, MIN_SAMPLE_RATE, draw_sound, event_name
from auralgen.tasks import _mixture_memo as memo
from auralgen.tasks._compare import within
from auralgen.tasks._mixture_audit import MixtureRoles
from auralgen.tasks.base import AudioConfig, AuditSpec, Measurement, Task, TaskConfig, register, require
from auralgen.tasks.design import SubQuestions

SUB_QUESTIONS = ("louder", "first", "count", "overlap")
LEVEL_FIELDS = {
    "louder": "levels",
    "first": "onset_levels_s",
    "count": "count_levels_lu",
    "overlap": "overlap_levels_s",
}
INFO = {  # sub -> (attribute, level_unit)
    "louder": ("loudness", "LU"),
    "first": ("onset", "s"),
    "count": ("count", "LU"),
    "overlap": ("overlap", "s"),
}
TOL_LU = 0.5
TOL_S = 0.001
RESIDUAL_DB = -30.0  # count: energy left after removing the found sounds, re the mix

TEMPLATES = {
    "louder": (
        "Several sounds play in this clip. Which of these sounds is the loudest?",
        "Listen to the mixture. Which sound is loudest?",
        "Among the sounds in this recording, which one is the loudest?",
    ),
    "first": (
        "Several sounds play in this clip. Which of these sounds starts first?",
        "Listen to the mixture. Which sound begins earliest?",
        "Among the sounds in this recording, which one starts first?",
    ),
    "count": (
        "How many distinct sounds are in this clip?",
        "Listen to the mixture. How many different sounds can you hear?",
        "Count the distinct sound sources in this recording. How many are there?",
    ),
    "overlap": (
        "Three sounds play in this clip. Which two of them overlap in time?",
        "Listen to the mixture. Which pair of sounds is heard at the same time?",
        "In this recording, which two sounds overlap?",
    ),
}


@dataclass(frozen=True)
class MixtureConfig(TaskConfig):
    name: str = "mixture"
    sub_questions: tuple[str, ...] = SUB_QUESTIONS
    levels: tuple[float, ...] = (1, 2, 4, 8, 16)  # louder: LU, loudest minus the next
    onset_levels_s: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.4)  # first: s, first onset to the next
    count_levels_lu: tuple[float, ...] = (0, 6, 12)  # count: LU, quietest sound below the loudest
    overlap_levels_s: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4)  # overlap: s, overlap of the pair
    n_sounds: tuple[int, ...] = (2, 3, 4)  # count: the three possible answers
    kinds: tuple[str, ...] = KINDS
    onset_spread_s: float = 0.5  # first: the third sound starts up to this long after the second
    mixing: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_MIXING))

    def check_task(self, audio: AudioConfig, key: str) -> None:
        validate_config(self, audio, key)


def _grid(cfg: MixtureConfig) -> tuple[tuple[str, float], ...]:
    return tuple((sub, float(v)) for sub in cfg.sub_questions for v in getattr(cfg, LEVEL_FIELDS[sub]))


def _kinds(cfg: MixtureConfig, audio: AudioConfig, key: str) -> list[str]:
    """The sound kinds a mixture draws from: ``kinds``, or the classes of a labelled corpus."""
    if not audio.source.recorded:
        return list(cfg.kinds)
    require(
        cfg.kinds == KINDS,
        f"{key}.kinds={list(cfg.kinds)!r} does not apply with source={audio.source.kind} (the sounds are recordings); "
        f"allowed: the default {list(KINDS)}",
    )
    labels = [x for x in load_corpus(audio.source).labels if x]
    require(
        len(labels) >= max(3, *cfg.n_sounds),
        f"source={audio.source.kind} has {len(labels)} labelled classes; allowed: at least {max(3, *cfg.n_sounds)} for "
        f"{key}",
    )
    return labels


def validate_config(cfg: MixtureConfig, audio: AudioConfig, key: str) -> None:
    """The mixture config's checks (:meth:`MixtureConfig.check_task`): sub-questions, their level lists,
    sample rate, sound kinds (or the corpus' classes) and the mixing settings.

    Parameters
    ----------
    cfg : MixtureConfig
        The config.
    audio : AudioConfig
        The audio settings the task renders with.
    key : str
        The config path of the task, e.g. ``tasks.mixture``, for messages.

    Raises
    ------
    ParameterError
        A value is out of range (one line naming key, value and what is allowed).
    """
    from auralgen.tasks.base import check_levels

    subs = list(cfg.sub_questions)
    require(
        bool(subs) and len(set(subs)) == len(subs) and all(s in SUB_QUESTIONS for s in subs),
        f"{key}.sub_questions={subs!r} is invalid; allowed: distinct values from {list(SUB_QUESTIONS)}",
    )
    for sub in subs:
        name = LEVEL_FIELDS[sub]
        values = tuple(getattr(cfg, name))
        check_levels(f"{key}.{name}", values)
        low_ok = all(v >= 0 for v in values) if sub == "count" else all(v > 0 for v in values)
        require(
            low_ok,
            f"{key}.{name}={list(values)!r} has a value out of range; allowed: {'>= 0' if sub == 'count' else '> 0'}",
        )
    sr = cfg.sample_rate or audio.sample_rate
    require(sr >= MIN_SAMPLE_RATE, f"{key}.sample_rate={sr} is too low; allowed: >= {MIN_SAMPLE_RATE} Hz")
    kinds = _kinds(cfg, audio, key)
    require(
        len(set(kinds)) == len(kinds) >= 3 and (audio.source.recorded or all(k in KINDS for k in kinds)),
        f"{key}.kinds={kinds!r} is invalid; allowed: at least 3 distinct values from {list(KINDS)}",
    )
    n = list(cfg.n_sounds)
    require(
        len(set(n)) == len(n) == 3 and all(isinstance(v, int) and 1 <= v <= len(kinds) for v in n),
        f"{key}.n_sounds={n!r} is invalid; allowed: 3 distinct integers in 1..{len(kinds)} (len(kinds))",
    )
    require(
        "overlap" not in subs or audio.source.recorded or sum(k in CONTINUOUS for k in kinds) >= 3,
        f"{key}.kinds={kinds!r} has fewer than 3 continuous kinds for sub_questions 'overlap'; allowed: include "
        f"{list(CONTINUOUS)}",
    )
    require(cfg.onset_spread_s >= 0, f"{key}.onset_spread_s={cfg.onset_spread_s} is negative; allowed: >= 0")
    _check_timeline(cfg, key, subs, n)


def _check_timeline(cfg: MixtureConfig, key: str, subs: list[str], n: list[int]) -> None:
    """The mixing settings, and that every sub-question's timeline fits the clip (part of :func:`validate_config`)."""
    spec = MixSpec.from_config(f"{key}.mixing", cfg.mixing)
    spec.check_fits(f"{key}.mixing", max(n) if "count" in subs else 3)
    d_lo, d_hi = spec.duration_s.support()
    require(d_lo >= 0.1, f"{key}.mixing.duration_s={cfg.mixing['duration_s']!r} reaches {d_lo} s; allowed: >= 0.1 s")
    lead = spec.lead_s.support()[1]
    if "first" in subs:
        worst = lead + max(cfg.onset_levels_s) + cfg.onset_spread_s + d_hi
        require(
            worst <= spec.clip_s,
            f"{key}.onset_levels_s={list(cfg.onset_levels_s)!r} with onset_spread_s={cfg.onset_spread_s} needs "
            f"{worst:.3f} s; allowed: mixing.clip_s >= {worst:.3f}",
        )
    if "overlap" in subs:
        require(
            max(cfg.overlap_levels_s) < d_lo,
            f"{key}.overlap_levels_s={list(cfg.overlap_levels_s)!r} reaches the shortest duration ({d_lo} s); allowed: "
            f"< {d_lo}",
        )
        worst = lead + 3 * d_hi + spec.gap_s.support()[1] - min(cfg.overlap_levels_s)
        require(
            worst <= spec.clip_s,
            f"{key}.overlap_levels_s needs {worst:.3f} s with mixing.duration_s and gap_s; allowed: mixing.clip_s >= "
            f"{worst:.3f}",
        )


def _name(sound: dict[str, Any]) -> str:
    text = event_name(sound)
    return text[0].upper() + text[1:]


class MixtureQuestions(SubQuestions):
    """The mixture's design: one level per value of each sub-question's list (``sub_questions`` order).
    The plan deals the sound names (louder, first) and ordered pair texts (overlap, grouped by the
    unordered pair) equally often; count (fixed options) and recorded classes are not dealt."""

    @classmethod
    def of(cls, task: Task) -> MixtureQuestions:
        cfg = task.cfg
        texts = {}
        if not task.audio.source.recorded:
            names = {_name({"kind": k}): _name({"kind": k}) for k in cfg.kinds}
            pool = [k for k in cfg.kinds if k in CONTINUOUS]
            pairs = {
                f"{_name({'kind': a})} and {event_name({'kind': b})}": " + ".join(sorted((a, b)))
                for a in pool
                for b in pool
                if a != b
            }
            texts = {"louder": names, "first": names, "overlap": pairs}
        return cls(task.name, _grid(cfg), cfg.items_per_level, task.regime, INFO, texts)


@register
class Mixture(Task):
    name = "mixture"
    takes_sources = NAMEABLE  # options name the sounds: procedural kinds or a labelled corpus
    audit = AuditSpec(
        (
            "answer",
            "answer.*",
            "sub_question",
            "difference",
            "row.level",
            "row.question",
            "row.options",
            "sounds.*",
            "mix.*",
            "audio.*",
            "row.flac_bytes",
            "delta.*",
        ),
        listener_easiest=None,
        reason="the grid mixes four sub-questions and units, so no single end is easiest: the listener names the "
        "palette's kinds for first / louder / overlap (at least 95 % at each one's easiest level, tests/validation/"
        "test_listener_mixture.py) and counts the kinds its per-kind detectors find (listeners/presence.py); it "
        "does not name recorded classes (NO_ANSWER)",
        dataset_checks=(MixtureRoles,),
    )
    listener = staticmethod(listen.mixture)
    sub_category = "mixture_perception"
    attribute = "loudness"
    regime = "mixture"
    level_unit = "LU"
    n_choices = 3
    Config = MixtureConfig
    Design = MixtureQuestions
    questions = TEMPLATES["louder"]  # phrasings index every sub-question's templates alike

    def __init__(self, cfg: MixtureConfig, audio: AudioConfig):
        super().__init__(cfg, audio)
        self.spec = MixSpec.from_config("mixing", cfg.mixing)

    # -- sampling -----------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, level: int) -> dict[str, Any]:
        level = self.as_level(level)
        sub, value = self.design.sub(level), level.value  # the sub-question by grid index
        spec, clip_s = self.spec, self.spec.clip_s
        if sub == "count":
            n = int(self.cfg.n_sounds[int(rng.integers(3))])
        else:
            n = 3
        if self.audio.source.recorded:  # classes of the corpus; the decomposition keeps what it can confirm
            pool = [k for k in load_corpus(self.audio.source).labels]
        else:
            pool = [k for k in self.cfg.kinds if sub != "overlap" or k in CONTINUOUS]
        kinds = [pool[i] for i in rng.permutation(len(pool))[:n]]
        durations = spec.sample_durations(rng, n)
        levels, onsets, first_pair = self._timeline(rng, sub, value, n, durations, spec.sample_levels(rng, n))
        # timeline slot k goes to sound tperm[k], level k to sound lperm[k]: independent roles
        tperm, lperm = rng.permutation(n), rng.permutation(n)
        sounds: list[dict[str, Any]] = [{} for _ in range(n)]
        for k in range(n):
            i = int(tperm[k])
            sounds[i] = {**self._draw(rng, kinds[i], durations[k]), "onset_s": onsets[k]}
        for k in range(n):
            sounds[int(lperm[k])]["level"] = levels[k]
        for s in sounds:
            require(
                s["onset_s"] + s["duration_s"] <= clip_s + 1e-9,
                f"mixing.clip_s={clip_s} is too short for a sampled timeline; allowed: a longer clip_s",
            )
        params = {
            "sample_rate_hz": self.sample_rate,
            "clip_s": clip_s,
            "sub_question": sub,
            "difference": value,
            "answer": _answer(sub, n, tperm, lperm, first_pair),
            "sounds": sounds,
        }
        params["mix"] = self._mix_info(sounds)
        return params

    def _draw(self, rng, kind: str, duration_s: float) -> dict[str, Any]:
        """A sound of ``kind``: a synthesized event, or a recording of class ``kind``."""
        if self.audio.source.recorded:
            return EVENTS.draw(
                rng, "recording", duration_s=duration_s, corpus=load_corpus(self.audio.source), label=kind
            )
        return draw_sound(rng, kind, duration_s)

    def _timeline(self, rng, sub: str, value: float, n: int, durations, levels):
        """``(levels, onsets, first_pair)`` of the ``n`` timeline slots for sub-question ``sub``
        at difference ``value``; ``first_pair`` (overlap only) says which adjacent pair overlaps."""
        spec, ref, first_pair = self.spec, levels[0], False
        if sub == "louder":
            others = [ref - value, ref - value + float(spec.relative_level.sample(rng))]
            levels = [ref, *others]  # level 0 is the loudest
            onsets = spec.sample_onsets(rng, durations)
        elif sub == "count":
            levels = [ref, ref - value] + [ref - float(Uniform(0.0, value).sample(rng)) for _ in range(n - 2)]
            levels = count_levels(levels[:n], ref)
            onsets = spec.sample_onsets(rng, durations)
        elif sub == "first":
            t0 = float(spec.lead_s.sample(rng))
            onsets = [t0, t0 + value, t0 + value + float(Uniform(0.0, self.cfg.onset_spread_s).sample(rng))]
        else:  # overlap: three sounds in time; one adjacent pair overlaps by value, the other has a gap
            t0 = float(spec.lead_s.sample(rng))
            gap = float(spec.gap_s.sample(rng))
            first_pair = bool(rng.integers(2))
            steps = [-value, gap] if first_pair else [gap, -value]
            onsets = [t0]
            for k in range(2):
                onsets.append(onsets[-1] + durations[k] + steps[k])
        return levels, onsets, first_pair

    def _mix_info(self, sounds: list[dict[str, Any]]) -> dict[str, Any]:
        """The mixer's record of ``sounds`` (gains, peak), stored so render() replays it."""
        spec, sr = self.spec, self.sample_rate
        info = plan_mix(
            [memo.sound(s, sr) for s in sounds],
            sample_rate=sr,
            onsets_s=[s["onset_s"] for s in sounds],
            levels=[s["level"] for s in sounds],
            level_mode=spec.level_mode,
            duration_s=spec.clip_s,
            max_peak=spec.max_peak,
            raw_levels=[memo.raw_level(s, sr, spec.level_mode) for s in sounds],
        )
        return info.to_dict()

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        sr = int(params["sample_rate_hz"])
        return [render_mix([memo.sound(s, sr) for s in params["sounds"]], params["mix"])]

    # -- questions ----------------------------------------------------------------------
    def qa(self, params: dict[str, Any], rng: np.random.Generator, *, slot: int) -> QA:
        sub, sounds, ans = params["sub_question"], params["sounds"], params["answer"]
        if sub in ("louder", "first"):
            texts = [_name(s) for s in sounds]
            answer = texts[ans]
        elif sub == "count":
            texts = [str(v) for v in self.cfg.n_sounds]
            answer = str(ans)
        else:
            pairs = [(0, 1), (0, 2), (1, 2)]
            texts = [f"{_name(sounds[i])} and {event_name(sounds[j])}" for i, j in pairs]
            answer = texts[pairs.index(tuple(ans))]
        return self.make_qa(answer, texts, rng, slot=slot, templates=TEMPLATES[sub])

    # -- validation ---------------------------------------------------------------------
    def measure(self, params: dict[str, Any], clips: list[np.ndarray]) -> Measurement:
        return Measurement.from_dict(check_mixture(params, clips[0]))


def count_levels(levels: list[float], ref: float) -> list[float]:
    """The count sub-question's levels shifted together so their power sum is the drawn ``ref``:
    the mix's loudness follows the roved reference, not the number of sounds (otherwise the clip's
    RMS would rise ~1.8 dB per added sound, a level proxy of the count). Relative levels are unchanged.

    Parameters
    ----------
    levels : list of float
        The sounds' levels, LUFS (dB FS RMS under the mix's ``level_mode`` ``db``).
    ref : float
        The drawn reference level, same unit.

    Returns
    -------
    list of float
        The levels, each shifted by the same amount, same unit.

    Examples
    --------
    >>> [round(v, 2) for v in count_levels([-20.0, -20.0], -20.0)]
    [-23.01, -23.01]
    """
    shift = 10 * math.log10(sum(10 ** ((lv - ref) / 10) for lv in levels))
    return [lv - shift for lv in levels]


def check_mixture(params: dict[str, Any], clip: np.ndarray) -> dict[str, Any]:
    """Decompose the mix with the re-rendered sounds as references and test the label.

    Per sound: onset (cross-correlation) and output level (reference level plus the least-squares gain)
    must match ``params["mix"]`` within 1 ms and 0.5 LU; the answer is then recomputed from the *measured* values.

    Parameters
    ----------
    params : dict of str to Any
        The item's recipe (``sounds``, ``mix``, ``sub_question``, ``difference``, ``answer``, ``sample_rate_hz``).
    clip : ndarray, shape (channels, samples)
        The rendered mix.

    Returns
    -------
    dict of str to Any
        Onsets (s), levels (LUFS or dB), the checks (``difference`` in LU or s), ``label_ok`` and ``valid``.
    """
    from auralgen.measure import mixture_components

    sr = int(params["sample_rate_hz"])
    info = MixInfo.from_dict(params["mix"])
    refs = [memo.sound(s, sr) for s in params["sounds"]]
    found = mixture_components(clip, refs, sr)
    onsets = [c.onset_s for c in found]
    levels = [memo.raw_level(s, sr, info.level_mode) + c.gain_db for s, c in zip(params["sounds"], found, strict=True)]
    expected_levels = info.output_levels()
    onset_err = max(abs(a - r.onset_s) for a, r in zip(onsets, info.components, strict=True))
    level_err = max(abs(a - b) if math.isfinite(a) else math.inf for a, b in zip(levels, expected_levels, strict=True))
    out: dict[str, Any] = {
        "onsets_s": [round(v, 5) for v in onsets],
        "levels": [round(v, 3) if math.isfinite(v) else None for v in levels],
        "onset_error_s": within("onset_error_s", onset_err, 0.0, TOL_S),
        "level_error": within("level_error", level_err, 0.0, TOL_LU),
    }
    sub, value, ans = params["sub_question"], params["difference"], params["answer"]
    if sub == "louder":
        order = sorted(range(len(levels)), key=lambda i: -levels[i])
        out["difference"] = within("difference", levels[order[0]] - levels[order[1]], value, TOL_LU)
        label_ok = order[0] == ans
    elif sub == "first":
        order = sorted(range(len(onsets)), key=lambda i: onsets[i])
        out["difference"] = within("difference", onsets[order[1]] - onsets[order[0]], value, TOL_S)
        label_ok = order[0] == ans
    elif sub == "count":
        resid_db = _residual_db(clip, refs, found, sr)
        out["residual_db"] = round(resid_db, 2)
        out["difference"] = within("difference", max(levels) - min(levels), value, TOL_LU)
        label_ok = len(found) == ans and resid_db <= RESIDUAL_DB
    else:
        ends = [o + len(r) / sr for o, r in zip(onsets, refs, strict=True)]
        laps = {(i, j): min(ends[i], ends[j]) - max(onsets[i], onsets[j]) for i, j in ((0, 1), (0, 2), (1, 2))}
        overlapping = [list(p) for p, v in laps.items() if v > 0]
        out["overlapping"] = overlapping
        out["difference"] = within("difference", laps[tuple(ans)], value, TOL_S)
        label_ok = overlapping == [list(ans)]
    ok = all(out[k]["ok"] for k in ("onset_error_s", "level_error", "difference")) and label_ok
    out["label_ok"] = bool(label_ok)
    out["valid"] = bool(ok)
    return out


def _residual_db(clip: np.ndarray, refs: list[np.ndarray], found: list, sr: int) -> float:
    """Energy of the channel-averaged ``clip`` left after removing the ``found`` components of ``refs``
    (each at its onset and gain), dB re the clip's energy."""
    mono = np.asarray(clip, dtype=np.float64).mean(axis=0)
    model = np.zeros_like(mono)
    for r, c in zip(refs, found, strict=True):
        a = int(round(c.onset_s * sr))
        model[a : a + len(r)] += r * 10.0 ** (c.gain_db / 20.0)
    resid = float(np.sum((mono - model) ** 2)) / max(float(np.sum(mono**2)), 1e-30)
    return 10.0 * math.log10(max(resid, 1e-30))


__all__ = ["Mixture", "MixtureConfig", "check_mixture"]


def _answer(sub: str, n: int, tperm, lperm, first_pair: bool) -> Any:
    """The answer of a mixture item: the loudest / first sound's index, the count, or the overlapping pair."""
    if sub == "louder":
        return int(lperm[0])
    if sub == "first":
        return int(tperm[0])
    if sub == "count":
        return n
    pair = (tperm[0], tperm[1]) if first_pair else (tperm[1], tperm[2])
    return sorted(int(i) for i in pair)
