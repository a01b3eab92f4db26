"""Reference DSP listener for the spatial tasks: answers from the audio and its channel layout.

The listener never reads ``params``. It finds each sound's *direct-sound onset* (the first
sharp energy rise; in a room the direct sound is the first arrival and reflections follow a
few ms later) and measures on a short window right after it (:data:`ONSET_WINDOW_S`):
GCC-PHAT over a whole reverberant sound is dominated by reflections, the first 8 ms is not.

What a naive DSP listener can and cannot hear (its accuracy is the physical-solvability curve
of such a listener, not of a human):

===================  =========================================================================
receiver             what is measured
===================  =========================================================================
``binaural``         with the HRTF set the clip was rendered with (``hrtf``: the upper bound of
                     what the audio carries) the cross relation of the direct sound
                     (:func:`binaural_direction`): left/right, front/back, and elevation away
                     from the median plane. Without it: onset ITD (GCC-PHAT) and ILD give
                     left/right only (front / ear level are guessed).
``foa_acn_sn3d``     :func:`~auralgen.measure.doa_foa` (active intensity) on the
                     onset window: azimuth and elevation.
``tetra``            pairwise onset TDOAs (GCC-PHAT) solved for the direction vector by least
                     squares, with the mic offsets the task passes (``tetra_offsets_m``: its
                     receiver at the default radius, 0.05 m): the layout name fixes the geometry,
                     a non-default radius is not visible in the row and is not supported.
===================  =========================================================================

Relative direction tasks compare the two onset windows (same dry signal in both): interaural
cues and the per-ear band spectra must agree within fixed just-noticeable differences
(:data:`SPATIAL_JND`). Distance listeners are in :mod:`auralgen.listeners.distance`.
"""

from __future__ import annotations

import math

import numpy as np

from auralgen.core.constants import SPEED_OF_SOUND_M_S
from auralgen.listeners.common import copy_search, listener_doc, no_answer, option_index
from auralgen.measure import doa_foa, itd_ild
from auralgen.measure.binaural import match_cross_relation
from auralgen.measure.geometry import az_el_to_unit, unit_to_az_el

ONSET_WINDOW_S = 0.008  # direction: the first 8 ms after the direct sound's onset
PRE_ONSET_S = 0.0005  # the window starts this long before the detected onset
RISE_FRAME_S = 0.0025  # envelope frames for onset detection
RISE_DB = 10.0  # an onset: the next 10 ms this far above the preceding background
DIRECT_WINDOW_S = 0.004  # binaural cross relation: the first 4 ms (before most first reflections)
DIRECT_PRE = 24  # ... starting this many samples before the detected onset (in the silence before it)
PAIR_WINDOW_S = 0.012  # binaural pairs: direct sound and the first reflections (the room's, the same for one position)
PAIR_MAX_LAG_S = 0.0025  # ... compared at lags within this of the aligned onsets (a misplaced onset)
SAME_CORRELATION = 0.9  # ... "same position" when both ears' waveforms correlate at least this well
ALIGN_TEMPLATE_S = 0.03  # relative tasks: template of the first sound used to align the second
ALIGN_SEARCH_S = 0.06  # ... searched this far before the detected onset
RISE_FALLBACK_DB = 3.0  # ... when fewer sounds than expected rise by RISE_DB
BACKGROUND_S = 0.1  # background = mean power over this span before a frame
MIN_SOUND_GAP_S = 0.5  # two sounds' onsets lie at least this far apart (source >= 0.5 s + gap)
SPATIAL_JND = {
    "itd_s": 6e-5,  # ~1 sample at 16 kHz; human ITD JND ~10-20 us
    "ild_db": 1.5,  # human ILD JND ~1 dB
    "angle_deg": 12.0,  # FOA / array: half the smallest default separation
}
ELEVATION_CLASS_DEG = 10.0  # FOA/tetra: |elevation| above this is above / below
BANDS_HZ = (500.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0, 6000.0, 7000.0)
# the receiver arguments of the direction listeners, documented once (:func:`~auralgen.listeners.common.listener_doc`)
LAYOUT_READ = """
layout : str or None, optional
    The row's channel layout; inferred from the channels when None
    (:func:`~auralgen.listeners.spatial.infer_layout`).
"""
TETRA = """
tetra_offsets_m : ndarray, shape (4, 3), optional
    The tetra array's mic offsets (m), bound by the task.
"""
HRTF = """
hrtf : Hrtf or callable or None, optional
    The HRTF set the clip was rendered with (or ``hrtf(sample_rate) -> Hrtf``).
"""


# -- layout ----------------------------------------------------------------------------------
def infer_layout(clip: np.ndarray) -> str:
    """Channel layout of a spatial clip when the row's ``channel_layout`` is not given.

    2 channels: ``binaural``. 4 channels: ``foa_acn_sn3d`` when the X/Y/Z energies add up
    to no more than ~W's (SN3D: a plane wave gives exactly W's energy, a diffuse field the
    same), else ``tetra`` (four omnis of about equal energy: the sum is ~3x).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples)
        One clip.

    Returns
    -------
    str
        ``binaural``, ``foa_acn_sn3d``, ``tetra``, ``mono`` or ``unknown_<channels>``.
    """
    x = np.asarray(clip, dtype=np.float64)
    if x.shape[0] == 2:
        return "binaural"
    if x.shape[0] == 4:
        e = np.sum(x**2, axis=1)
        return "foa_acn_sn3d" if e[1:].sum() <= 2.0 * e[0] else "tetra"
    return "mono" if x.shape[0] == 1 else f"unknown_{x.shape[0]}"


# -- onsets ------------------------------------------------------------------------------------
def direct_onsets(clip: np.ndarray, sample_rate: int, *, want: int) -> list[int]:
    """Sample indices of the ``want`` strongest energy rises (the sounds' direct onsets), in order.

    A rise is a frame whose next 10 ms lie :data:`RISE_DB` above the mean power of the
    preceding :data:`BACKGROUND_S`; each is refined to where the trailing 1 ms power first
    exceeds that background by 6 dB (silence: 60 dB below the local peak). After a reverberant
    tail the start of a ramp is masked, so a later sound's onset may read a few ms late.

    Parameters
    ----------
    clip : ndarray, shape (channels, samples) or (samples,)
        One clip.
    sample_rate : int
        Sampling rate (Hz).
    want : int
        How many onsets to find.

    Returns
    -------
    list of int
        Onsets (samples), in time order; fewer than ``want`` when fewer sounds rise.
    """
    x = np.asarray(clip, dtype=np.float64)
    x = x[None] if x.ndim == 1 else x
    p = np.sum(x**2, axis=0)
    f = max(1, int(RISE_FRAME_S * sample_rate))
    nf = p.size // f
    if nf < 4:
        return []
    fp = p[: nf * f].reshape(nf, f).mean(axis=1)
    if fp.max() <= 0:
        return []
    k, ahead = max(1, int(BACKGROUND_S / RISE_FRAME_S)), 4  # background frames; 10 ms ahead
    c = np.concatenate([[0.0], np.cumsum(fp)])
    idx = np.arange(nf)
    lo = np.maximum(idx - k, 0)
    bg = (c[idx] - c[lo]) / np.maximum(idx - lo, 1)
    fwd = (c[np.minimum(idx + ahead, nf)] - c[idx]) / np.maximum(np.minimum(idx + ahead, nf) - idx, 1)
    floor = fp.max() * 1e-9
    rise = 10 * np.log10((fwd + floor) / (bg + floor))
    # candidates: strongest rises first, at least MIN_SOUND_GAP_S apart, loud enough
    gap = max(1, int(MIN_SOUND_GAP_S / RISE_FRAME_S))
    chosen: list[int] = []
    for min_rise in (RISE_DB, RISE_FALLBACK_DB):  # a sound masked by a long tail rises less
        for i in np.argsort(-rise, kind="stable"):
            if rise[i] < min_rise or len(chosen) == want:
                break
            if fwd[i] < fp.max() * 1e-4 or any(abs(i - j) < gap for j in chosen):
                continue
            chosen.append(int(i))
    return _refined_onsets(p, bg, sorted(chosen), f, ahead, sample_rate)


def _refined_onsets(
    p: np.ndarray, bg: np.ndarray, frames: list[int], f: int, ahead: int, sample_rate: int
) -> list[int]:
    """Each rise frame's onset (samples): where the trailing 1 ms of the power ``p`` first exceeds the frame's
    background ``bg`` by 6 dB, searched from ``ahead`` frames (of ``f`` samples) before it."""
    out = []
    m = max(1, int(0.001 * sample_rate))  # trailing 1 ms power
    cp = np.concatenate([[0.0], np.cumsum(p)])
    for i in frames:
        j = max(i - ahead, 0)  # the rise frame may lie inside a ramp: search from 10 ms before it
        a, b = j * f, min((i + 2 * ahead) * f, p.size)
        idx = np.arange(a, b)
        tp = (cp[idx + 1] - cp[np.maximum(idx + 1 - m, 0)]) / m
        thr = max(4.0 * bg[j], 1e-6 * float(tp.max()))  # 6 dB above the background (a tail, or silence)
        above = np.flatnonzero(tp > thr)
        out.append(max(a + int(above[0]) - m // 2, 0) if above.size else i * f)
    return out


def align_repeat(x: np.ndarray, first: int, second: int, sample_rate: int) -> int:
    """Refine the onset of a second copy of the same dry signal by cross-correlation.

    After a reverberant tail the start of the second sound's ramp is masked and its detected
    onset reads late; the relative tasks play the *same* source signal twice, so the first
    sound's first :data:`ALIGN_TEMPLATE_S` (channel sum) locates the second within
    [``second`` - :data:`ALIGN_SEARCH_S`, ``second`` + 2 ms].

    Parameters
    ----------
    x : ndarray, shape (channels, samples)
        The clip.
    first, second : int
        Onsets of the first sound and (as detected) of its copy (samples).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    int
        The refined onset of the copy (samples); ``second`` when there is nothing to match.
    """
    found = copy_search(
        x, first, second, sample_rate, template_s=ALIGN_TEMPLATE_S, before_s=ALIGN_SEARCH_S, after_s=0.002
    )
    if found is None:
        return second
    lo, seg, tpl = found
    cc = np.correlate(seg, tpl, mode="valid")
    return lo + int(np.argmax(cc))


def onset_windows(
    clip, sample_rate: int, *, want: int, length_s: float = ONSET_WINDOW_S, repeat: bool = False
) -> list[np.ndarray]:
    """``[channels, n]`` windows of ``length_s`` starting just before each direct onset.

    ``repeat``: the sounds share one dry signal; later onsets are aligned to the first
    (:func:`align_repeat`).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples)
        One clip.
    sample_rate : int
        Sampling rate (Hz).
    want : int
        How many sounds.
    length_s : float, optional
        Window length (s).
    repeat : bool, optional
        Align later onsets to the first (copies of one dry signal).

    Returns
    -------
    list of ndarray, each shape (channels, samples)
        One window per onset found, in time order.
    """
    x = np.asarray(clip, dtype=np.float64)
    pre, n = int(PRE_ONSET_S * sample_rate), int(length_s * sample_rate)
    ons = direct_onsets(x, sample_rate, want=want)
    if repeat and len(ons) >= 2:
        ons = [ons[0], *(align_repeat(x, ons[0], o, sample_rate) for o in ons[1:])]
    return [x[:, max(o - pre, 0) : max(o - pre, 0) + n] for o in ons]


def background_power(clip: np.ndarray, onset: int, sample_rate: int) -> float:
    """Mean power (over channels and samples) in the :data:`BACKGROUND_S` before ``onset`` (a tail, or silence).

    Parameters
    ----------
    clip : ndarray, shape (channels, samples)
        One clip.
    onset : int
        Onset of a sound (samples); the background is measured before it.
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    float
        Mean power (linear, full scale squared); 0 at the clip's start.
    """
    x = np.asarray(clip, dtype=np.float64)
    a = max(onset - int(BACKGROUND_S * sample_rate), 0)
    return float(np.mean(x[:, a:onset] ** 2)) if onset > a else 0.0


# -- cues ----------------------------------------------------------------------------------------
def binaural_cues(w: np.ndarray, sample_rate: int) -> dict[str, np.ndarray | float]:
    """Onset-window ITD (s, + = left leads), broadband ILD (dB) and per-ear band levels (dB).

    Parameters
    ----------
    w : ndarray, shape (2, samples)
        A binaural onset window (left, right).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    dict of str to float or ndarray
        ``itd_s`` (s), ``ild_db`` (dB) and ``bands_db``, shape (2, bands), in dB.
    """
    itd, ild = itd_ild(w[0], w[1], sample_rate)
    return {"itd_s": itd, "ild_db": ild, "bands_db": band_levels_db(w, sample_rate)}


def band_levels_db(w: np.ndarray, sample_rate: int) -> np.ndarray:
    """Per-channel band levels (dB) between the edges :data:`BANDS_HZ`, ``[channels, bands]``.

    Parameters
    ----------
    w : ndarray, shape (channels, samples)
        An onset window (:func:`onset_windows`).
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    ndarray, shape (channels, bands)
        Band levels (dB re full scale power), bands between consecutive :data:`BANDS_HZ` edges below Nyquist.
    """
    n = max(256, 1 << int(math.ceil(math.log2(w.shape[1]))))
    spec = np.abs(np.fft.rfft(w * np.hanning(w.shape[1] + 2)[1:-1], n, axis=-1)) ** 2
    freqs = np.fft.rfftfreq(n, 1.0 / sample_rate)
    edges = [e for e in BANDS_HZ if e < sample_rate / 2]
    out = [spec[:, (freqs >= lo) & (freqs < hi)].sum(axis=1) for lo, hi in zip(edges, edges[1:])]
    return 10 * np.log10(np.stack(out, axis=1) + 1e-30)


def direction(
    w: np.ndarray, sample_rate: int, layout: str, tetra_offsets_m: np.ndarray | None = None
) -> tuple[float, float] | None:
    """``(azimuth_deg, elevation_deg)`` of an onset window from an FOA or tetra receiver.

    Parameters
    ----------
    w, sample_rate
        As for :func:`band_levels_db`.
    layout : str
        The channel layout (``foa_acn_sn3d`` or ``tetra``; others give None).
    tetra_offsets_m : ndarray, shape (4, 3), optional
        The tetra array's mic offsets (m); without them a tetra window has no direction.

    Returns
    -------
    tuple of (float, float) or None
        ``(azimuth, elevation)`` in degrees (azimuth counter-clockwise from the front); None when unmeasurable.
    """
    if layout.startswith("foa"):
        try:
            return doa_foa(w, sample_rate, freq_range=(200.0, min(4000.0, sample_rate / 2 - 1)))
        except Exception:  # noqa: BLE001 - no directional energy: unmeasurable
            return None
    if layout == "tetra" and tetra_offsets_m is not None:
        return tetra_direction(w, sample_rate, tetra_offsets_m)
    return None


def binaural_direction(x: np.ndarray, onset: int, sample_rate: int, hrtf) -> tuple[float, float] | None:
    """``(azimuth_deg, elevation_deg)`` of a binaural sound from its direct sound, any source signal.

    The cross relation ``x_left * h_right(d) = x_right * h_left(d)``
    (:func:`~auralgen.measure.binaural.match_cross_relation`) against every direction of ``hrtf``
    (an object with ``hrirs`` [n, 2, taps] and ``directions_deg`` [n, 2] at ``sample_rate``), on the
    :data:`DIRECT_WINDOW_S` after the detected ``onset``, starting :data:`DIRECT_PRE` samples before it.

    Parameters
    ----------
    x : ndarray, shape (2, samples)
        A binaural clip (left, right).
    onset : int
        The sound's detected direct onset (samples).
    sample_rate : int
        Sampling rate (Hz).
    hrtf : Hrtf
        The HRTF set the clip was rendered with, at ``sample_rate``.

    Returns
    -------
    tuple of (float, float) or None
        ``(azimuth, elevation)`` in degrees (azimuth counter-clockwise from the front); None when unmeasurable.
    """
    w = np.asarray(x, dtype=np.float64)[:, max(onset - DIRECT_PRE, 0) : onset + int(DIRECT_WINDOW_S * sample_rate)]
    if w.shape[1] < 8 or not np.any(w):
        return None
    m = match_cross_relation(w, hrtf.hrirs, hrtf.directions_deg)
    return m.azimuth_deg, m.elevation_deg


def _hrtf_of(hrtf, sample_rate: int):
    """``hrtf`` as given, or called with the sample rate when it is a callable (a receiver's ``hrtf_at``)."""
    return hrtf(sample_rate) if callable(hrtf) else hrtf


def tetra_direction(w: np.ndarray, sample_rate: int, offsets_m: np.ndarray) -> tuple[float, float] | None:
    """Direction from the six pairwise TDOAs of a tetrahedral omni array (least squares).

    For a far source in unit direction ``u``, mic ``i`` leads mic ``j`` by
    ``(r_i - r_j) . u / c``; :func:`itd_ild` returns that lead (positive = first leads).

    Parameters
    ----------
    w : ndarray, shape (4, samples)
        A tetra onset window.
    sample_rate : int
        Sampling rate (Hz).
    offsets_m : ndarray, shape (4, 3)
        The mic offsets from the array centre (m).

    Returns
    -------
    tuple of (float, float) or None
        ``(azimuth, elevation)`` in degrees (azimuth counter-clockwise from the front); None when unmeasurable.
    """
    pos = np.asarray(offsets_m, dtype=np.float64)
    rows, lags = [], []
    max_s = 1.5 * np.max(np.linalg.norm(pos[:, None] - pos[None], axis=-1)) / SPEED_OF_SOUND_M_S
    for i in range(4):
        for j in range(i + 1, 4):
            try:
                lead, _ = itd_ild(w[i], w[j], sample_rate, max_itd_s=max(max_s, 1.5 / sample_rate))
            except Exception:  # noqa: BLE001
                return None
            rows.append((pos[i] - pos[j]) / SPEED_OF_SOUND_M_S)
            lags.append(lead)
    u = np.linalg.lstsq(np.asarray(rows), np.asarray(lags), rcond=None)[0]
    if not np.any(u):
        return None
    az, el = unit_to_az_el(u / np.linalg.norm(u))
    return float(az), float(el)


def _windows(clips, sample_rate, want, length_s: float = ONSET_WINDOW_S):
    ws = onset_windows(clips[0], sample_rate, want=want, repeat=want > 1, length_s=length_s)
    ok = len(ws) == want and all(w.shape[1] >= 16 and np.all(np.sum(w**2, axis=1) > 0) for w in ws)
    return ws if ok else None


def _angle_deg(a: tuple[float, float], b: tuple[float, float]) -> float:
    u, v = az_el_to_unit(*a), az_el_to_unit(*b)
    return math.degrees(math.acos(float(np.clip(np.dot(u, v), -1.0, 1.0))))


# -- direction tasks ---------------------------------------------------------------------------
def _quadrant(options, front: bool, left: bool) -> int:
    want = f"{'front' if front else 'back'} {'left' if left else 'right'}"
    return option_index(options, want)


def _binaural_single(clips, sample_rate, hrtf) -> tuple[float, float] | None:
    x = np.asarray(clips[0], dtype=np.float64)
    ons = direct_onsets(x, sample_rate, want=1)
    return binaural_direction(x, ons[0], sample_rate, _hrtf_of(hrtf, sample_rate)) if ons else None


@listener_doc("the first is measured", LAYOUT_READ, TETRA, HRTF)
def azimuth_absolute(question, options, clips, sample_rate, layout=None, *, tetra_offsets_m=None, hrtf=None) -> int:
    """The quadrant (front/back, left/right) of the sound's measured direction.

    Without ``hrtf`` a binaural clip's front/back is guessed "front".
    """
    layout = layout or infer_layout(clips[0])
    if layout == "binaural" and hrtf is not None:
        d = _binaural_single(clips, sample_rate, hrtf)
        return no_answer(options) if d is None else _quadrant(options, abs(d[0]) < 90.0, d[0] > 0)
    ws = _windows(clips, sample_rate, 1)
    if ws is None:
        return no_answer(options)
    if layout == "binaural":
        cue = binaural_cues(ws[0], sample_rate)
        left = cue["itd_s"] > 0 if abs(cue["itd_s"]) >= SPATIAL_JND["itd_s"] / 2 else cue["ild_db"] > 0
        return _quadrant(options, True, left)  # front/back: not measured, "front" guessed
    d = direction(ws[0], sample_rate, layout, tetra_offsets_m)
    if d is None:
        return no_answer(options)
    return _quadrant(options, abs(d[0]) < 90.0, d[0] > 0)


@listener_doc("the first is measured", LAYOUT_READ, TETRA, HRTF)
def elevation_absolute(question, options, clips, sample_rate, layout=None, *, tetra_offsets_m=None, hrtf=None) -> int:
    """Above, at or below ear level: the measured elevation against +-:data:`ELEVATION_CLASS_DEG`.

    Without ``hrtf`` a binaural clip is answered "ear level".
    """
    layout = layout or infer_layout(clips[0])
    if layout == "binaural":
        if hrtf is None:
            return option_index(options, "at ear level", "ear level")  # no elevation cue measured
        d = _binaural_single(clips, sample_rate, hrtf)
    else:
        ws = _windows(clips, sample_rate, 1)
        d = direction(ws[0], sample_rate, layout, tetra_offsets_m) if ws else None
    if d is None:
        return no_answer(options)
    if d[1] > ELEVATION_CLASS_DEG:
        return option_index(options, "above")
    if d[1] < -ELEVATION_CLASS_DEG:
        return option_index(options, "below")
    return option_index(options, "at ear level", "ear level")


def _same_or_different(options, different: bool | None) -> int:
    if different is None:
        return no_answer(options)
    return option_index(options, "different") if different else option_index(options, "same")


def binaural_differ(a: np.ndarray, b: np.ndarray, sample_rate: int) -> bool:
    """Do two binaural onset windows of one dry signal come from different positions?

    The two sounds share their dry signal, so from one position their direct sounds (and the
    first image sources, which the room fixes) reach the ears as the same two waveforms; from two
    positions each ear filters the signal through another head-related impulse response. The
    windows (:data:`PAIR_WINDOW_S` after the aligned onsets) are "the same" when the normalised
    correlation of both ears' waveforms at the best common lag within +-:data:`PAIR_MAX_LAG_S`
    reaches :data:`SAME_CORRELATION` (one lag for both ears: it re-aligns a misplaced onset, not
    an interaural difference). It reads lateral and spectral (pinna) differences alike,
    so it serves azimuth and median-plane pairs; on 120 noise pairs per task (40 per level)
    same-position pairs reached 0.96-0.99 (median), different ones at 30 deg at most 0.86; with the
    2.5 ms lag search 98 % of the validity suite's same pairs and 100 % of its different pairs are told apart.

    Parameters
    ----------
    a, b : ndarray, shape (2, samples)
        The two sounds' binaural windows.
    sample_rate : int
        Sampling rate (Hz).

    Returns
    -------
    bool
        True when the best correlation stays under :data:`SAME_CORRELATION` (different positions).
    """
    n = min(a.shape[1], b.shape[1])
    a, b = a[:, :n], b[:, :n]
    best, max_lag = 0.0, int(PAIR_MAX_LAG_S * sample_rate)
    for lag in range(-max_lag, max_lag + 1):
        x, y = (a[:, lag:], b[:, : n - lag]) if lag >= 0 else (a[:, : n + lag], b[:, -lag:])
        den = math.sqrt(float(np.sum(x * x)) * float(np.sum(y * y)))
        best = max(best, float(np.sum(x * y)) / den if den > 0 else 0.0)
    return best < SAME_CORRELATION


@listener_doc("the first holds the two sounds", LAYOUT_READ, TETRA)
def relative_direction(question, options, clips, sample_rate, layout=None, *, tetra_offsets_m=None) -> int:
    """Same or different position: the two sounds' onset windows compared (see :func:`binaural_differ`)."""
    layout = layout or infer_layout(clips[0])
    ws = _windows(clips, sample_rate, 2, PAIR_WINDOW_S if layout == "binaural" else ONSET_WINDOW_S)
    if ws is None:
        return no_answer(options)
    n = min(w.shape[1] for w in ws)
    a, b = ws[0][:, :n], ws[1][:, :n]
    if layout == "binaural":
        return _same_or_different(options, binaural_differ(a, b, sample_rate))
    da, db = direction(a, sample_rate, layout, tetra_offsets_m), direction(b, sample_rate, layout, tetra_offsets_m)
    if da is None or db is None:
        return no_answer(options)
    return _same_or_different(options, _angle_deg(da, db) > SPATIAL_JND["angle_deg"])


# -- distance tasks -----------------------------------------------------------------------------
