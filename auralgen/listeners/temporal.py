"""Reference DSP listener for the time-course tasks: ``temporal_reorder`` and ``trajectory``.

Like every listener of :mod:`auralgen.listeners`, these see the
question, the option texts, the decoded clips and the channel layout -- never ``params``.

``temporal_reorder``
    The listener does not know which process it hears (sweep, filling vessel, approaching
    source, bouncing object, scale). Each clip is cut into sub-windows and three features
    are measured on each (:data:`REORDER_FEATURES`: log spectral centroid, level, and the
    peak level of short frames, which follows decaying impacts). For a continuous monotonic
    process, the three clips in their true order, each with its sub-windows in time order,
    form one monotonic sequence: the within-clip trends fix the direction and the clip
    values fix the order. So every (feature, order) pair is scored by the rank correlation
    of the concatenated sequence with time, and the best pair wins. A reversed order scores
    lower because its within-clip trends run against the between-clip steps.

``trajectory``
    The sound's span runs from the steepest rise to the steepest later drop of the smoothed
    energy envelope (so the reverberant tail is left out), and its first and last
    :data:`EDGE_FRACTION` are compared on short windows (:data:`TRAJ_WINDOW_S`, median
    over windows: reflections corrupt long-window GCC-PHAT less when the median is taken
    over many short ones). The lateral cue is the interaural time difference (binaural) or
    the FOA lateral component ``<W Y> / <W W>``; the radial cue is the peak 2.5 ms-frame
    level per window (a click's direct part; for noise it follows the level). Each change
    is divided by a fixed scale (:data:`TRAJ_SCALE`: roughly what the slowest level moves
    each cue by), and the larger normalised change decides lateral vs radial; its sign
    decides the direction. A radial path at the side keeps its lateral cue on one side and
    only moves it toward the midline as the (centred) reverberant field grows against the
    direct sound, while a pass crosses the midline: a lateral change with both ends on one
    side counts :data:`SAME_SIDE_WEIGHT` as much. Click trains are read click by click
    (:func:`click_cues`: each click's first 3 ms is its direct sound). Other layouts (tetra,
    mono) get the level trend only, so a pass is always answered as approaching or receding
    there. On 50 items per level (seed 0): 98, 96, 88, 88, 72 % at 2, 1.4, 1, 0.6, 0.3 m/s:
    slow radial paths move the received level by ~1-2 dB.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

import numpy as np

from auralgen.listeners.common import listener_doc, no_answer, option_index
from auralgen.listeners.spatial import LAYOUT_READ, infer_layout
from auralgen.measure import itd_ild
from auralgen.measure.common import sounding

# -- temporal_reorder ------------------------------------------------------------------------
REORDER_FEATURES = ("centroid", "level", "peak")
REORDER_SUBWINDOWS = {"centroid": 4, "level": 4, "peak": 2}  # sub-windows per clip
REORDER_EDGE_S = 0.02  # trimmed from each clip's ends (its ramps)
PEAK_FRAME_S = 0.01
SILENT_DB = -120.0
HIGHPASS_HZ = 100.0
_ORDER = re.compile(r"audio\s*(\d+)\D+?audio\s*(\d+)\D+?audio\s*(\d+)", re.IGNORECASE)


def parse_order(text: str) -> tuple[int, int, int] | None:
    """Clip numbers (1-based) named by an option like "Audio 2, then Audio 3, then Audio 1".

    Examples
    --------
    >>> parse_order("Audio 2, then Audio 3, then Audio 1")
    (2, 3, 1)
    >>> parse_order("Unable to determine") is None
    True

    Parameters
    ----------
    text : str
        One option text.

    Returns
    -------
    tuple of (int, int, int) or None
        The three clip numbers in the order named; None when the text names none.
    """
    m = _ORDER.search(text)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def window_feature(x: np.ndarray, sample_rate: int, feature: str) -> float:
    """One scalar of a mono window: ``centroid`` (log2 Hz), ``level`` or ``peak`` (dB).

    Parameters
    ----------
    x : ndarray, shape (samples,)
        A mono window.
    sample_rate : int
        Sampling rate (Hz).
    feature : {'centroid', 'level', 'peak'}
        Which scalar to measure.

    Returns
    -------
    float
        Centroid in log2 Hz (nan on silence), or level / peak short-frame level in dB re full scale.
    """
    if feature == "level":
        return 10.0 * math.log10(float(np.mean(x**2)) + 1e-30)
    if feature == "peak":
        f = max(1, int(PEAK_FRAME_S * sample_rate))
        nf = x.size // f
        if nf < 1:
            return SILENT_DB
        return 10.0 * math.log10(float(np.max(np.mean(x[: nf * f].reshape(nf, f) ** 2, axis=1))) + 1e-30)
    spec = np.abs(np.fft.rfft(x * np.hanning(x.size))) ** 2
    freqs = np.fft.rfftfreq(x.size, 1.0 / sample_rate)
    total = float(np.sum(spec))
    return math.log2(float(np.sum(freqs * spec)) / total + 1e-9) if total > 0 else math.nan


def feature_tracks(clip: np.ndarray, sample_rate: int) -> dict[str, np.ndarray] | None:
    """``{feature: values of the clip's sub-windows in time order}``; ``None`` if too short.

    The clip is high-passed at :data:`HIGHPASS_HZ` first: the sub-audio content of pink
    noise makes short-window levels and centroids swing by several dB / octaves. A silent
    clip (a process that has died out) reads :data:`SILENT_DB` and has no centroid.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip; its channels are averaged.
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    dict of str to ndarray or None
        Each of :data:`REORDER_FEATURES` to its sub-window values, shape
        (sub-windows,); None when the clip is too short.
    """
    from scipy.signal import butter, sosfilt

    x = np.asarray(clip, dtype=np.float64)
    x = sounding(x.mean(axis=0) if x.ndim == 2 else x)  # the silence around the segment cut
    e = int(REORDER_EDGE_S * sample_rate)
    if x.size - 2 * e < 64 * max(REORDER_SUBWINDOWS.values()):
        return None
    x = sosfilt(butter(4, HIGHPASS_HZ, btype="highpass", fs=sample_rate, output="sos"), x)[e : x.size - e]
    out = {}
    for feat in REORDER_FEATURES:
        parts = np.array_split(x, REORDER_SUBWINDOWS[feat])
        vals = [
            window_feature(p, sample_rate, feat) if np.any(p) else (math.nan if feat == "centroid" else SILENT_DB)
            for p in parts
        ]
        out[feat] = np.maximum(np.array(vals), SILENT_DB)
    return out


def monotonicity(v: np.ndarray) -> float:
    """|Spearman correlation| of ``v`` with its index (ties: average ranks), plus a 1e-3 Pearson tie-break.

    Parameters
    ----------
    v : ndarray, shape (n,)
        A sequence of feature values.

    Returns
    -------
    float
        In [0, 1.001]; 0 for fewer than 3 values, a non-finite value or a constant sequence.
    """
    from scipy.stats import rankdata

    if v.size < 3 or not np.all(np.isfinite(v)) or np.ptp(v) == 0:
        return 0.0
    t = np.arange(v.size, dtype=np.float64)
    rho = np.corrcoef(rankdata(v), t)[0, 1]
    r = np.corrcoef(v, t)[0, 1]
    return float(abs(rho) + 1e-3 * abs(r))


def reorder(clips: Sequence[np.ndarray], sample_rate: int) -> tuple[tuple[int, ...], str, float] | None:
    """Best chronological order (0-based clip indices), the feature that set it and its score.

    Parameters
    ----------
    clips : sequence of ndarray, each shape (channels, samples)
        The item's clips.
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    tuple of (tuple of int, str, float) or None
        The order (0-based clip indices, earliest first), the feature
        that set it and its :func:`monotonicity` score; None when a clip is too short.
    """
    tracks = [feature_tracks(c, sample_rate) for c in clips]
    if len(tracks) < 2 or any(t is None for t in tracks):
        return None
    best: tuple[float, tuple[int, ...], str] | None = None
    for feat in REORDER_FEATURES:
        for order in itertools.permutations(range(len(tracks))):
            score = monotonicity(np.concatenate([tracks[k][feat] for k in order]))
            if best is None or score > best[0]:
                best = (score, order, feat)
    return best[1], best[2], best[0]


SHIFT_MATCH = 0.5  # shifted_copies: log-spectra this correlated at their best lag are one sound, moved
SHIFT_MIN_CENTS = 20.0  # ... and their shifts must differ this much to set an order


def shifted_copies(clips: Sequence[np.ndarray], sample_rate: int) -> tuple[int, ...] | None:
    """The order (0-based, lowest first) of clips that are one sound moved in pitch -- each clip's
    log-spectrum matches the first's, shifted (:func:`auralgen.measure.pitch.spectral_shift`) --
    or None when they are not (a level process, or different sounds).

    Parameters
    ----------
    clips, sample_rate
        As for :func:`reorder`.

    Returns
    -------
    tuple of int or None
        0-based clip indices, lowest pitch first; None when the clips are not shifted copies.
    """
    from auralgen.measure.pitch import spectral_shift

    mono = [
        np.asarray(c, dtype=np.float64).mean(axis=0) if np.ndim(c) == 2 else np.asarray(c, dtype=np.float64)
        for c in clips
    ]
    found = [(0.0, 1.0)] + [spectral_shift(mono[0], x, sample_rate) for x in mono[1:]]
    shifts = sorted(c for c, _ in found)
    if min(m for _, m in found) < SHIFT_MATCH or min(b - a for a, b in zip(shifts, shifts[1:])) < SHIFT_MIN_CENTS:
        return None
    return tuple(int(k) for k in np.argsort([c for c, _ in found], kind="stable"))


@listener_doc("three, each a part of the process", none="no order is measured or no option names it")
def temporal_reorder(question, options, clips, sample_rate) -> int:
    """The option naming the clips' chronological order: pitch-shifted copies by their shift, else by feature trends."""
    copies = shifted_copies(clips, sample_rate)
    found = (copies,) if copies is not None else reorder(clips, sample_rate)
    if found is None:
        return no_answer(options)
    want = tuple(k + 1 for k in found[0])
    for i, text in enumerate(options):
        if parse_order(text) == want:
            return i
    return no_answer(options)


# -- trajectory --------------------------------------------------------------------------------
EDGE_FRACTION = 0.3  # start / end: this fraction of the sound's active span each
TRAJ_WINDOW_S = 0.04  # analysis windows (s), hop half a window
EDGE_SMOOTH_S = 0.1  # envelope smoothing for the sound's edges (bridges click gaps)
TRAJ_ACTIVE_DB = -25.0  # windows this far below the loudest are skipped (gaps between clicks)
CLICK_CREST_DB = 12.0  # click_cues: an impulsive sound's loudest 1 ms frames over its median frame
CLICK_GAP_S = 0.04  # ... clicks at least this far apart (trains up to 25 Hz)
CLICK_WINDOW_S = 0.003  # ... each click's direct sound (before the first reflection in most rooms)
SAME_SIDE_MIN = 1.0  # |lateral cue| / scale at both ends for "one side throughout"
SAME_SIDE_WEIGHT = 0.3  # ... then the lateral change counts this much against the level change
TRAJ_SCALE = {
    "itd_s": 1e-4,  # a 0.3 m/s pass moves the ITD by ~0.1-0.2 ms
    "foa_lateral": 0.1,  # ... the FOA lateral component by ~0.1-0.3
    "level_db": 1.5,  # a 0.3 m/s radial path moves the level by ~1.5-2.5 dB
}


def active_span(x: np.ndarray, sample_rate: int) -> tuple[int, int] | None:
    """Onset and offset (samples) of the sound itself, without its reverberant tail.

    The energy envelope is smoothed over :data:`EDGE_SMOOTH_S` (a click train reads as a
    continuous sound) and the steepest rise and the steepest later drop are the edges: when
    the source stops, the direct sound stops at once and only the decaying tail is left.

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    tuple of (int, int) or None
        Onset and offset (samples); None when no span of at least four windows is found.
    """
    p = np.sum(x**2, axis=0)
    f = max(1, int(0.005 * sample_rate))
    nf = p.size // f
    k = max(1, int(EDGE_SMOOTH_S / 0.005))
    if nf < 4 * k or p.max() <= 0:
        return None
    fp = p[: nf * f].reshape(nf, f).mean(axis=1)
    env = 10 * np.log10(np.convolve(fp, np.ones(k) / k, mode="valid") + fp.max() * 1e-12)  # env[i]: frames i..i+k-1
    step = env[k:] - env[:-k]  # step[i]: change across the boundary at frame i + k (inside the clip only)
    on = int(np.argmax(step))
    if on + 2 * k >= step.size:
        return None
    off = on + 2 * k + int(np.argmin(step[on + 2 * k :]))
    a, b = (on + k) * f, (off + k) * f
    return (a, b) if b - a >= 4 * int(TRAJ_WINDOW_S * sample_rate) else None


def _windows(x: np.ndarray, span: tuple[int, int], sample_rate: int) -> list[np.ndarray]:
    w = int(TRAJ_WINDOW_S * sample_rate)
    out = [x[:, a : a + w] for a in range(span[0], span[1] - w + 1, max(1, w // 2))]
    if not out:
        return []
    e = np.array([float(np.mean(seg**2)) for seg in out])
    keep = e >= e.max() * 10 ** (TRAJ_ACTIVE_DB / 10) if e.max() > 0 else np.zeros(e.size, bool)
    return [seg for seg, k in zip(out, keep) if k and np.all(np.sum(seg**2, axis=1) > 0)]


def _lateral(seg: np.ndarray, sample_rate: int, layout: str) -> float:
    """Left-ness of a window: ITD (s, + = left leads) or the FOA lateral component <W Y>/<W W>."""
    if layout == "binaural":
        return float(itd_ild(seg[0], seg[1], sample_rate)[0])
    return float(np.sum(seg[0] * seg[1]) / max(float(np.sum(seg[0] ** 2)), 1e-30))


def motion_cues(clip: np.ndarray, sample_rate: int, layout: str) -> dict[str, float] | None:
    """End-minus-start changes of the lateral cue and the level over the sound's edges.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        The clip.
    sample_rate : int
        Sampling rate (Hz).
    layout : str
        ``binaural``, ``foa`` (every FOA layout, as :func:`trajectory` passes it) or another (level cue only).

    Returns
    -------
    dict of str to float or None
        End minus start of the lateral cue (``lateral``: ITD in s, + = left ear leads, or the FOA lateral
        component) and of the level (``level_db``, dB), and the lateral cue at each end (``lateral_start``,
        ``lateral_end``); the lateral values are nan for layouts without a lateral cue. None when no sound is found.
    """
    x = np.asarray(clip, dtype=np.float64)
    x = x[None] if x.ndim == 1 else x
    clicks = click_cues(x, sample_rate, layout)
    if clicks is not None:
        return clicks
    span = active_span(x, sample_rate)
    if span is None:
        return None
    edge = int(EDGE_FRACTION * (span[1] - span[0]))
    first = _windows(x, (span[0], span[0] + edge), sample_rate)
    last = _windows(x, (span[1] - edge, span[1]), sample_rate)
    if not first or not last:
        return None

    f = max(1, int(PEAK_FRAME_S * sample_rate / 4))

    def level(ws):  # peak short-frame power per window (a click's direct part), median over windows
        vals = []
        for w in ws:
            p = np.mean((w[:1] if layout == "foa" else w) ** 2, axis=0)
            nf = p.size // f
            vals.append(10 * math.log10(float(np.max(p[: nf * f].reshape(nf, f).mean(axis=1))) + 1e-30))
        return float(np.median(vals))

    return _cues(first, last, level, sample_rate, layout)


def _cues(first, last, level, sample_rate: int, layout: str) -> dict[str, float]:
    """End-minus-start changes of the lateral cue and the level, and the lateral cue at each end."""
    ends = [math.nan, math.nan]
    if layout in ("binaural", "foa"):
        ends = [float(np.median([_lateral(w, sample_rate, layout) for w in ws])) for ws in (first, last)]
    return {
        "lateral": ends[1] - ends[0],
        "level_db": level(last) - level(first),
        "lateral_start": ends[0],
        "lateral_end": ends[1],
    }


def click_cues(x: np.ndarray, sample_rate: int, layout: str) -> dict[str, float] | None:
    """:func:`motion_cues` of an impulsive sound (a click train), click by click; None if not impulsive.

    Over a long window a click's reverberation outweighs its direct sound; each click's first
    :data:`CLICK_WINDOW_S` holds the direct sound alone. A sound is impulsive when its loudest
    1 ms frames stand :data:`CLICK_CREST_DB` above the clip's median frame (frames within 60 dB of
    the loudest; a reverberant tail decays smoothly and has no such peaks). Clicks are the frames
    :data:`CLICK_CREST_DB` above the median, at least :data:`CLICK_GAP_S` apart; the cues are the
    medians over the first and last :data:`EDGE_FRACTION` of them.

    Parameters
    ----------
    x, sample_rate, layout
        As for :func:`motion_cues` (``x`` of shape (channels, samples)).

    Returns
    -------
    dict of str to float or None
        As :func:`motion_cues`; None when the sound is not impulsive or has fewer than four clicks.
    """
    f = max(1, int(0.001 * sample_rate))
    p = np.mean(x**2, axis=0)
    nf = p.size // f
    fp = p[: nf * f].reshape(nf, f).mean(axis=1)
    live = fp[fp > fp.max() * 1e-6]
    med = float(np.median(live)) if live.size else 0.0
    if nf < 8 or med <= 0 or 10 * math.log10(float(np.percentile(fp, 99)) / med) < CLICK_CREST_DB:
        return None
    gap = int(CLICK_GAP_S / 0.001)
    peaks: list[int] = []
    for i in np.argsort(-fp, kind="stable"):
        if fp[i] < med * 10 ** (CLICK_CREST_DB / 10):
            break
        if all(abs(int(i) - j) >= gap for j in peaks):
            peaks.append(int(i))
    peaks.sort()
    if len(peaks) < 4:
        return None
    n, pre = int(CLICK_WINDOW_S * sample_rate), int(0.0005 * sample_rate)
    wins = [x[:, max(i * f - pre, 0) : max(i * f - pre, 0) + n] for i in peaks]
    wins = [w for w in wins if w.shape[1] == n and np.all(np.sum(w**2, axis=1) > 0)]
    k = max(2, int(EDGE_FRACTION * len(wins)))
    if len(wins) < 4:
        return None
    first, last = wins[:k], wins[-k:]

    def level(ws):
        return float(np.median([10 * math.log10(float(np.mean((w[:1] if layout == "foa" else w) ** 2))) for w in ws]))

    return _cues(first, last, level, sample_rate, layout)


@listener_doc("the first is measured", LAYOUT_READ)
def trajectory(question, options, clips, sample_rate, layout=None) -> int:
    """Left to right, right to left, approaching or receding: the larger normalised change of the motion cues."""
    layout = layout or infer_layout(clips[0])
    layout = "foa" if layout.startswith("foa") else layout
    cues = motion_cues(clips[0], sample_rate, layout)
    if cues is None or not math.isfinite(cues["level_db"]):
        return no_answer(options)
    lat_scale = TRAJ_SCALE["itd_s" if layout == "binaural" else "foa_lateral"]
    lateral = cues["lateral"] / lat_scale if math.isfinite(cues["lateral"]) else 0.0
    a, b = cues["lateral_start"] / lat_scale, cues["lateral_end"] / lat_scale
    if a * b > 0 and min(abs(a), abs(b)) >= SAME_SIDE_MIN:
        # both ends on one side: a pass crosses the midline, a radial path at the side only moves
        # toward it as the reverberant field (centred) grows against the direct sound
        lateral *= SAME_SIDE_WEIGHT
    radial = cues["level_db"] / TRAJ_SCALE["level_db"]
    if abs(lateral) > abs(radial):
        return option_index(options, "right to left" if lateral > 0 else "left to right")
    return option_index(options, "approach" if radial > 0 else "reced")
