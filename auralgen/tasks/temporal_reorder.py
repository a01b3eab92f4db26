"""temporal_reorder: three clips cut from one continuous process, given in shuffled order.

A process (a rising sweep, a vessel filling with its resonance rising, an approaching
source growing louder and brighter, a bouncing object's decaying impacts, an ascending
scale of discrete notes) runs for ``3 * segment_s`` seconds and is cut into three equal
segments, presented as three separate clips in a shuffled order. The options are the six
chronological orders, as in STAR-Bench; the answer follows the stored shuffle.
Difficulty: the process's extent in percent of its full range (100 = easy, e.g. a 4-octave
sweep; 25 = a 1-octave sweep), so each segment carries less change at lower levels.

Level is the order's cue only where the process is one of level (:data:`LEVEL_CUE`: the
approaching source grows louder, the bouncing impacts decay), so only there the clips' level (and,
for the bouncing impacts, their timing) may follow the order (declared cues of those items). The
spectral processes (sweep, filling, scale, a recording) have every segment at the same integrated
loudness (BS.1770; at one RMS a higher segment would be louder), so their order is heard in the
spectrum alone. Every clip is ``segment_s + pad_s`` long, its segment placed at an offset drawn
from ``[0, pad_s]`` for each clip, so no silence or onset time says which segment it holds; exported,
every clip has the same FLAC byte size.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.core.random import Choice
from auralgen.listeners import temporal as listen
from auralgen.measure.common import sounding
from auralgen.sounds.corpus import load_corpus
from auralgen.sounds.processes import PROCESSES, REORDER, render_process
from auralgen.synth import apply_ramps, n_samples
from auralgen.synth.levels import loudness_lufs, set_level_db_spl
from auralgen.tasks.base import RECORDED_TOO, AudioConfig, AuditSpec, Measurement, Task, TaskConfig, register, require

ORDERS = tuple(itertools.permutations((1, 2, 3)))  # chronological order of the clips
FEATURE_DIRECTION = {"sweep": 1, "filling": 1, "approaching": 1, "bouncing": -1, "scale": 1, "recording": 1}
LEVEL_CUE = ("approaching", "bouncing")  # processes whose order is carried (also) by level
LEVEL_FACTS = ("audio.loudness_lufs", "audio.crest_db", "audio.delta_level_db")  # beyond RMS and peak
TIMING_FACTS = (
    "audio.active_s",
    "audio.span_s",
    "audio.first_onset_s",
    "audio.last_offset_s",
    "audio.n_segments",
    "audio.delta_duration_s",
)


def order_text(order: tuple[int, ...]) -> str:
    """The option text of a chronological order of the three clips.

    Parameters
    ----------
    order : tuple of int
        Clip numbers, 1-based, earliest first.

    Returns
    -------
    str
        E.g. ``Audio 2, then Audio 1, then Audio 3``.
    """
    return f"Audio {order[0]}, then Audio {order[1]}, then Audio {order[2]}"  # clips are labelled "Audio k:" when asked


@dataclass(frozen=True)
class TemporalReorderConfig(TaskConfig):
    name: str = "temporal_reorder"
    levels: tuple[float, ...] = (100, 50, 25)
    processes: tuple[str, ...] = PROCESSES
    segment_s: float = 1.2
    level_db_spl: tuple[float, float] = (60.0, 70.0)
    ramp_s: float = 0.01
    pad_s: float = 0.2  # each clip is segment_s + pad_s long, its segment at an offset drawn from [0, pad_s]

    def check_task(self, audio: AudioConfig, key: str) -> None:
        bad = [p for p in self.processes if p not in PROCESSES]
        require(
            self.processes and not bad,
            f"{key}.processes={list(self.processes)!r} is invalid; allowed: a non-empty list from {list(PROCESSES)}",
        )
        require(
            all(0 < v <= 100 for v in self.levels),
            f"{key}.levels={list(self.levels)!r} is out of range; allowed: 0 < percent <= 100",
        )
        require(
            0.3 <= self.segment_s <= 10,
            f"{key}.segment_s={self.segment_s} is out of range; allowed: 0.3 <= segment_s <= 10",
        )
        if audio.source.recorded:
            require(
                self.processes == PROCESSES,
                f"{key}.processes={list(self.processes)!r} does not apply with source={audio.source.kind} (the sound "
                f"is a recording); allowed: the default {list(PROCESSES)}",
            )
        require(
            0.05 <= self.pad_s <= 2.0,
            f"{key}.pad_s={self.pad_s} is out of range; allowed: 0.05 <= pad_s <= 2 (roved silence around a segment)",
        )
        sr = self.sample_rate or audio.sample_rate
        require(sr >= 16000, f"{key}.sample_rate={sr} is too low for the processes; allowed: >= 16000")
        require(
            len(self.level_db_spl) == 2
            and self.level_db_spl[0] <= self.level_db_spl[1] <= audio.full_scale_db_spl - 20,
            f"{key}.level_db_spl={list(self.level_db_spl)!r} is invalid; allowed: [low, high] with high <= "
            f"{audio.full_scale_db_spl - 20:g}",
        )


@register
class TemporalReorder(Task):
    name = "temporal_reorder"
    # level is the cue of the LEVEL_CUE processes: the clips' RMS and peak may follow the order there. Those
    # items declare every level fact of a clip; the bouncing impacts also come faster, so there every timing
    # fact (onsets, silences, segments) follows the order too. The spectral processes declare none of these.
    audit = AuditSpec(
        ("shuffle.*", "audio.rms_dbfs", "audio.peak_dbfs"),
        cues_when=(
            ("process", ("approaching",), LEVEL_FACTS),
            ("process", ("bouncing",), LEVEL_FACTS + TIMING_FACTS),
        ),
    )
    listener = staticmethod(listen.temporal_reorder)
    category = "spatiotemporal_reasoning"
    sub_category = "temporal_order"
    attribute = "order"
    regime = "relative"
    level_unit = "percent"
    n_choices = len(ORDERS)
    takes_sources = RECORDED_TOO  # a recording in three pitch steps; the order is measured as before
    Config = TemporalReorderConfig
    questions = (
        "The three clips are segments of one continuous sound, given in shuffled order. What is their chronological "
        "order?",
        "These clips were cut from a single recording and shuffled. In which order did they originally occur?",
        "Put the three clips in the order in which they happened.",
    )

    def sample(self, rng: np.random.Generator, level: int) -> dict[str, Any]:
        level = self.as_level(level)
        recorded = self.audio.source.recorded  # a recording stepped up in pitch (sounds.processes.RecordingSteps)
        process = "recording" if recorded else Choice(tuple(self.cfg.processes)).sample(rng)
        shuffle = [int(v) for v in rng.permutation(3)]  # clip k holds segment shuffle[k]
        more = {"corpus": load_corpus(self.audio.source)} if recorded else {}
        return {
            "sample_rate_hz": self.sample_rate,
            "full_scale_db_spl": self.audio.full_scale_db_spl,
            "process": process,
            "extent": level.value / 100.0,
            "segment_s": self.cfg.segment_s,
            "ramp_s": self.cfg.ramp_s,
            "level_db_spl": float(rng.uniform(*self.cfg.level_db_spl)),
            **REORDER.draw(rng, process, key="process", segment_s=self.cfg.segment_s, **more),  # start, seed / a file
            "shuffle": shuffle,
            "pad_s": self.cfg.pad_s,
            "offsets_s": [float(v) for v in rng.uniform(0.0, self.cfg.pad_s, 3)],  # of clip k's segment
        }

    def render(self, params: dict[str, Any]) -> list[np.ndarray]:
        sr = params["sample_rate_hz"]
        x = render_process(params)
        x = set_level_db_spl(x, params["level_db_spl"], full_scale_db_spl=params["full_scale_db_spl"])
        seg = n_samples(params["segment_s"], sr)
        parts = [apply_ramps(x[i * seg : (i + 1) * seg], sample_rate=sr, ramp_s=params["ramp_s"]) for i in range(3)]
        if params["process"] not in LEVEL_CUE:
            parts = equal_loudness(parts, sr)
        clips = [
            placed(parts[k], n_samples(params["offsets_s"][c], sr), seg + n_samples(params["pad_s"], sr))
            for c, k in enumerate(params["shuffle"])
        ]
        if max(float(np.max(np.abs(c))) for c in clips) >= 1.0:
            raise ParameterError(f"level_db_spl={params['level_db_spl']:.1f} clips; allowed: lower levels")
        return clips

    def chronological(self, params) -> tuple[int, ...]:
        """Clip numbers (1-based) in chronological order: segment j is in clip shuffle.index(j).

        Parameters
        ----------
        params : dict of str to Any
            The item's recipe (its ``shuffle``).

        Returns
        -------
        tuple of int
            Three clip numbers, earliest segment first.
        """
        return tuple(params["shuffle"].index(j) + 1 for j in range(3))

    def qa(self, params, rng, *, slot):
        answer = order_text(self.chronological(params))
        return self.make_qa(answer, [order_text(o) for o in ORDERS], rng, slot=slot)

    def measure(self, params, clips):
        sr = params["sample_rate_hz"]
        if params["process"] == "recording":  # each clip's pitch shift against clip 1 (any sound, not only pitched)
            from auralgen.measure.pitch import spectral_shift_cents

            feats = [spectral_shift_cents(clips[0][0], c[0], sr) for c in clips]
        else:
            spectral = params["process"] not in LEVEL_CUE  # a centroid of the segment alone; a level of the clip
            mono = [c[0].astype(np.float64) for c in clips]
            feats = [process_feature(params["process"], sounding(x) if spectral else x, sr) for x in mono]
        sign = FEATURE_DIRECTION[params["process"]]
        measured = tuple(int(k) + 1 for k in np.argsort([sign * f for f in feats], kind="stable"))
        return Measurement.from_dict(
            {
                "feature": [round(f, 4) for f in feats],
                "measured_order": list(measured),
                "expected_order": list(self.chronological(params)),
                "valid": measured == self.chronological(params),
            }
        )


def equal_loudness(parts: list[np.ndarray], sample_rate: int) -> list[np.ndarray]:
    """The segments scaled to their mean integrated loudness (BS.1770), so that loudness says nothing of
    the order (at one RMS a higher segment is louder: K-weighting rises above 1 kHz).

    Parameters
    ----------
    parts : list of ndarray, each shape (samples,)
        The segments, in chronological order.
    sample_rate : int
        Their sampling rate (Hz).

    Returns
    -------
    list of ndarray
        The same segments, each scaled by one gain.
    """
    loud = [loudness_lufs(p, sample_rate) for p in parts]
    if not all(math.isfinite(v) for v in loud):  # a segment under the absolute gate: level it by RMS
        loud = [10 * math.log10(float(np.mean(p**2)) + 1e-30) for p in parts]
    ref = float(np.mean(loud))
    return [p * 10 ** ((ref - v) / 20) for p, v in zip(parts, loud, strict=True)]


def placed(part: np.ndarray, offset: int, length: int) -> np.ndarray:
    """One clip: ``part`` at sample ``offset`` of ``length`` samples of silence, shape ``(1, length)`` float32.

    Parameters
    ----------
    part : ndarray, shape (samples,)
        A segment.
    offset, length : int
        Where it starts and how long the clip is, in samples (``offset + part.size <= length``).

    Returns
    -------
    ndarray, shape (1, length), float32
        The clip.
    """
    out = np.zeros((1, length), dtype=np.float32)
    out[0, offset : offset + part.size] = part
    return out


def process_feature(process: str, x: np.ndarray, sr: int) -> float:
    """A scalar that moves monotonically along the process: spectral centroid, or level.

    Parameters
    ----------
    process : str
        The process (one of the task's ``processes``).
    x : ndarray, shape (samples,)
        One mono clip.
    sr : int
        Sample rate, Hz.

    Returns
    -------
    float
        Mean power in dB re digital full scale for ``approaching`` and ``bouncing``, else log2 of the
        spectral centroid in Hz (octaves).
    """
    if process in ("approaching", "bouncing"):
        return 10 * math.log10(float(np.mean(x**2)) + 1e-30)
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / sr)
    return float(np.log2(np.sum(freqs * spec) / max(np.sum(spec), 1e-30) + 1e-9))
