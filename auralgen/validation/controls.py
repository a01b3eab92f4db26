"""Learned controls: can a model that never hears the attribute answer the items?

Each control is trained on one dataset (seed A, or a train split) and tested on another (seed B),
task by task; none of them sees the audio content:

- ``text_prior`` (a): the option text most often right in training, per task and question template
  (the question with its numbers masked; the level is not visible to a model, so it is not used);
- ``option_text`` (b): a conditional-logit model on token features of the question and each option
  string (option words, the whole option, question word x option word pairs), L2-regularised;
- ``metadata`` (c): k nearest neighbours (k chosen by leave-one-out on the training set) on
  everything but the audio content -- number of clips, sample rate, channels, total FLAC bytes, and
  per clip its duration (clip length), FLAC byte size, RMS and peak level, plus the clips' ranks by
  each of these -- voting for the answer text. The container features (counts, rate, channels,
  lengths, byte sizes) are always used. RMS and peak are measurements *of* the audio content: where
  the task's :class:`~auralgen.tasks.base.AuditSpec` declares the matching audit feature
  (``audio.rms_dbfs``, ``audio.peak_dbfs``; fnmatch patterns such as ``audio.*`` count) a target
  feature -- level is, or is driven by, the probed cue (loudness, tone presence, distance, a sound's
  energy over its duration, a process that grows louder) -- a model reading it is listening, not
  cheating, and the control leaves it out (:func:`content_features`); otherwise it is in. A task
  the registry does not know keeps every feature;
- ``position_prior`` (d): the answer position most often right in training;
- ``nuisance`` (e): the same k-nearest-neighbour vote on the audio's nuisance facts, per clip and per
  part (first and last sounding segment): RMS, peak, crest factor, LUFS, sounding time, span, lead and
  trail silence, number of segments (:mod:`auralgen.validation.nuisance`), leaving out those the task
  declares as its cue in its ``AuditSpec`` (a level in a loudness task, a decay's length in a
  reverberation task). Everything that is not the attribute is roved, so it must be at honest chance.

Per task the report gives each control's test accuracy with its 95 % Wilson interval, the stated
chance (mean ``1/options``), the *balanced* chance (mean ``1/k``, k = the item's options whose text is
ever right in training: what a prior reaches when the texts that can be right are balanced), the
*honest* chance (the best of (a), (d) and the stated chance: the accuracy of the best audio-free
rule), ``n`` and the minimum detectable effect at that ``n`` (the accuracy above the honest chance the
flag rule below detects with 80 % power: ``MARGIN`` plus what a one-sided binomial test at
``ALPHA / 4``, Holm's first step, sees above chance + ``MARGIN``). Flags, with ``n >= MIN_ITEMS``:

- ``control``: (b) or (c) exceeds the honest chance by more than ``MARGIN`` (a learned shortcut);
- ``prior``: (a) or (d) exceeds the stated chance by more than ``MARGIN``: the answer texts or
  positions are unbalanced, or some options are never right, so the stated chance is not the real
  one (the balanced chance column tells the two causes apart: a prior at the balanced chance means
  only never-right options);

each only when the test says so: a one-sided binomial test of "the control's accuracy is at most
its chance + ``MARGIN``" (the rule "more than 2 pp above chance" as the null hypothesis),
Holm-corrected over the task's five controls at family level ``ALPHA``. Testing against chance
itself, uncorrected, flagged about one in 40 clean control tests: 2 of 116 on the validity suite
(pitch_relative metadata 38.8 %, texture_relative text prior 39.2 %; at 1,000 items both sit at
chance); the MDE column says what the test can see at the task's ``n``. A task with fewer than ``MIN_ITEMS``
test items is reported as "too few items to call clean", never as clean.

Examples
--------
>>> report = audit_controls("data/seed0", "data/seed1")   # doctest: +SKIP
>>> print(report.table())                                  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from auralgen.validation._control_models import (  # noqa: F401 - re-exported
    CONTENT,
    K_CHOICES,
    L2,
    MODELS,
    Metadata,
    Nuisance,
    OptionText,
    PositionPrior,
    Sample,
    TextPrior,
    content_features,
    usable,
)
from auralgen.validation.nuisance import declared_for, nuisance_features
from auralgen.validation.read import Decoded, iter_decoded
from auralgen.validation.stats import ALPHA, POWER, holm, min_detectable_effect, p_above, wilson

CONTROLS = ("text_prior", "option_text", "metadata", "position_prior", "nuisance")
PRIORS = ("text_prior", "position_prior")  # judged against the stated chance (audit "prior"); the others: "control"
MARGIN = 0.02  # a control may exceed its chance by this much (2 pp) ...
MIN_ITEMS = 200  # test items per task below which a task is never called clean


def metadata(item: Decoded) -> dict[str, float]:
    """Everything about an item but its audio content: clip count, rate, channels, and per clip
    ``dur_s``, ``bytes`` (FLAC), ``rms_db``, ``peak_db`` and the clip's rank by each of them.

    Parameters
    ----------
    item : Decoded
        The row with its decoded clips (each shape ``(channels, samples)``).

    Returns
    -------
    dict of str to float
        ``n_clips``, ``sample_rate`` (Hz), ``bytes``, ``channels``, and per clip i ``clip<i>.dur_s``
        (seconds), ``clip<i>.bytes``, ``clip<i>.rms_db`` and ``clip<i>.peak_db`` (dB FS, -300 for
        silence), each with its ``_rank`` among the clips (0 = smallest).
    """
    clips = item.clips or []
    out = {
        "n_clips": float(len(clips)),
        "sample_rate": float(item.sample_rate),
        "bytes": float(item.flac_bytes),
        "channels": float(clips[0].shape[0]) if clips else 0.0,
    }
    per = defaultdict(list)
    for i, x in enumerate(clips):
        y = np.asarray(x, np.float64)
        per["dur_s"].append(y.shape[-1] / max(item.sample_rate, 1))
        per["bytes"].append(float(item.clip_bytes[i]) if i < len(item.clip_bytes) else 0.0)
        rms, peak = float(np.sqrt(np.mean(y**2))) if y.size else 0.0, float(np.max(np.abs(y))) if y.size else 0.0
        per["rms_db"].append(20 * math.log10(rms) if rms > 0 else -300.0)
        per["peak_db"].append(20 * math.log10(peak) if peak > 0 else -300.0)
    for name, values in per.items():
        ranks = np.argsort(np.argsort(values, kind="stable"), kind="stable")
        for i, (v, r) in enumerate(zip(values, ranks, strict=True)):
            out[f"clip{i}.{name}"] = float(v)
            out[f"clip{i}.{name}_rank"] = float(r)
    return out


def samples(path) -> list[Sample]:
    """Every item of the dataset at ``path`` as a :class:`Sample` (audio decoded once, then dropped).

    An item's audio-nuisance features leave out those its task declares as cues of that item alone
    (``AuditSpec.cues_when``, :func:`auralgen.validation.nuisance.declared_for`); the model reads a
    left-out feature as 0 there.

    Parameters
    ----------
    path : str or os.PathLike
        An exported dataset directory, as :func:`auralgen.validation.read.iter_decoded` reads it.

    Returns
    -------
    list of Sample
        In shard order, with their metadata and audio-nuisance features.
    """
    out = []
    for item in iter_decoded(path):
        row = item.row
        item_cues = declared_for(row["task"], _params(row))
        audio = nuisance_features(item.clips, item.sample_rate)
        out.append(
            Sample(
                row["task"],
                row["question"] or "",
                tuple(row["options"]),
                int(row["answer_index"]),
                metadata(item),
                {k: v for k, v in audio.items() if k.split(".", 1)[-1] not in item_cues},
            )
        )
    return out


def _params(row: dict) -> dict | None:
    """The row's ``params`` (only to apply the task's per-item cue declarations), None where absent or unreadable."""
    try:
        params = json.loads(row.get("params") or "null")
    except (TypeError, ValueError):
        return None
    return params if isinstance(params, dict) else None


# --- the audit -----------------------------------------------------------------------------------


@dataclass
class ControlsReport:
    """Result of :func:`audit_controls`: one row per task (see the module docstring), the flags
    (``{audit, task, detail}``, audit = ``control`` or ``prior``) and the verdict."""

    train: str
    test: str
    tasks: list[dict] = field(default_factory=list)
    flags: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``fail`` (a flag), ``too few items`` (a task with n < MIN_ITEMS, no flag) or ``clean``."""
        if self.flags:
            return "fail"
        if not self.tasks or any(t["status"] == "too few items" for t in self.tasks):
            return "too few items"
        return "clean"

    @property
    def ok(self) -> bool:
        return self.verdict == "clean"

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data.

        Returns
        -------
        dict of str to object
            Every field, with ``verdict`` and ``ok``.
        """
        return {
            "train": self.train,
            "test": self.test,
            "verdict": self.verdict,
            "ok": self.ok,
            "tasks": self.tasks,
            "flags": self.flags,
            "notes": self.notes,
        }

    def table(self) -> str:
        """The per-task table: controls' accuracy against the chance levels, n and MDE.

        Returns
        -------
        str
            The headline with the verdict, one line per task, the flags, notes and a column legend.
        """
        short = {
            "text_prior": "text",
            "option_text": "words",
            "metadata": "meta",
            "position_prior": "pos",
            "nuisance": "audio",
        }
        head = (
            f"{'task':<22} {'n':>5} {'1/opt':>6} {'bal':>6} {'honest':>6} {'MDE':>6} "
            + " ".join(f"{short[c]:>14}" for c in CONTROLS)
            + "  status"
        )
        out = [f"learned controls: trained on {self.train}, tested on {self.test} -> {self.verdict.upper()}", head]
        for t in self.tasks:
            cells = []
            for c in CONTROLS:
                r = t["controls"][c]
                cells.append(f"{r['accuracy']:>5.1%} [{r['ci'][0]:.0%},{r['ci'][1]:.0%}]".rjust(14))
            out.append(
                f"{t['task']:<22} {t['n']:>5} {t['stated_chance']:>6.1%} {t['balanced_chance']:>6.1%} "
                f"{t['honest_chance']:>6.1%} {t['mde']:>6.1%} " + " ".join(cells) + f"  {t['status']}"
            )
        out += [f"flag [{f['audit']}] {f['task']}: {f['detail']}" for f in self.flags]
        out += [f"note: {n}" for n in self.notes]
        out.append(
            f"columns: text=(a) answer-text prior, words=(b) option-text model, meta=(c) metadata kNN, "
            f"pos=(d) position prior, audio=(e) audio-nuisance kNN (level, loudness, span, silences, segments); "
            f"bal = 1/(options ever right in training); honest = best of text, "
            f"pos, 1/opt; MDE at alpha {ALPHA:g}, power {POWER:.0%}; flags need n >= {MIN_ITEMS}"
        )
        return "\n".join(out)


def audit_controls(train_dir, test_dir, *, min_items: int = MIN_ITEMS) -> ControlsReport:
    """Train the audio-free controls on the dataset at ``train_dir`` and test them on ``test_dir``, per task.

    Parameters
    ----------
    train_dir, test_dir : str or os.PathLike
        Exported dataset directories (two seeds of one config).
    min_items : int
        Test items a task needs before a flag (or "clean") is called.

    Returns
    -------
    ControlsReport
        One row per task (accuracies, intervals, chance levels, MDE) and the flags.

    Raises
    ------
    ParameterError
        If either path is not a dataset directory.
    """
    train, test = samples(train_dir), samples(test_dir)
    report = ControlsReport(str(train_dir), str(test_dir))
    by_task = defaultdict(list)
    for s in train:
        by_task[s.task].append(s)
    for name in sorted({s.task for s in test}):
        held = [s for s in test if s.task == name]
        if not by_task.get(name):
            report.notes.append(f"task {name!r} has no training items in {train_dir}: not tested")
            continue
        report.tasks.append(task_controls(name, by_task[name], held, report, min_items=min_items))
    return report


def task_controls(
    name: str, train: list[Sample], test: list[Sample], report: ControlsReport, *, min_items: int = MIN_ITEMS
) -> dict:
    """One task's row of the report (and its flags added to ``report``).

    Parameters
    ----------
    name : str
        The task name.
    train, test : list of Sample
        The task's training and test items.
    report : ControlsReport
        Receives the task's flags.
    min_items : int, optional
        Test items needed before a flag (or "clean") is called.

    Returns
    -------
    dict
        ``task``, ``n``, ``n_train``, the stated, balanced and honest chance and ``mde`` (fractions),
        ``controls`` (per control: correct, accuracy, 95 % ``ci``, chance, excess, ``p`` before Holm) and
        ``status`` (``fail``, ``too few items`` or ``clean``).
    """
    n = len(test)
    correct = {
        c: sum(m.predict(s) == s.answer for s in test) for c, m in ((c, MODELS[c]().fit(train)) for c in CONTROLS)
    }
    stated = float(np.mean([1 / len(s.options) for s in test]))
    ever = {s.options[s.answer] for s in train}
    balanced = float(np.mean([1 / max(1, sum(o in ever for o in s.options)) for s in test]))
    honest = max(correct["text_prior"] / n, correct["position_prior"] / n, stated)
    row = {
        "task": name,
        "n": n,
        "n_train": len(train),
        "stated_chance": stated,
        "balanced_chance": balanced,
        "honest_chance": honest,
        "mde": MARGIN + min_detectable_effect(n, min(honest + MARGIN, 1.0), alpha=ALPHA / len(CONTROLS)),
        "controls": {},
    }
    for c in CONTROLS:
        ref = stated if c in PRIORS else honest
        acc = correct[c] / n
        row["controls"][c] = {
            "correct": correct[c],
            "accuracy": acc,
            "ci": list(wilson(correct[c], n)),
            "chance": ref,
            "excess": acc - ref,
            "p": p_above(correct[c], n, ref + MARGIN),
        }
    flagged = holm({c: v["p"] for c, v in row["controls"].items()}) if n >= min_items else set()
    _add_flags(report, row, flagged)
    row["status"] = "fail" if flagged else ("too few items" if n < min_items else "clean")
    return row


def _add_flags(report: ControlsReport, row: dict, flagged: set[str]) -> None:
    """Add a flag to ``report`` for each control of the task's ``row`` in ``flagged``, in :data:`CONTROLS` order."""
    name, n = row["task"], row["n"]
    for c in CONTROLS:
        if c in flagged:
            v, audit = row["controls"][c], "prior" if c in PRIORS else "control"
            report.flags.append(
                {
                    "audit": audit,
                    "task": name,
                    "detail": f"{c} {v['accuracy']:.1%} on {n} items vs "
                    f"{'stated' if audit == 'prior' else 'honest'} chance {v['chance']:.1%} "
                    f"+ {MARGIN:.0%} (Holm p={v['p']:.2g})",
                }
            )
