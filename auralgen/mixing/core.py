"""Compose clips with loudness control and temporal dislocation; the mix record is the recipe.

:func:`mix` measures each component, computes the gain that puts it at its target level,
places it at its onset, and applies **one** global gain to the sum when its peak would
exceed ``max_peak`` (never hard clipping). Everything it decided is returned in a
JSON-able :class:`MixInfo`; :func:`render_mix` applies a recorded :class:`MixInfo` to
the same components without measuring anything, so ``render_mix(components, info)`` is
bit-identical to the array ``mix`` returned (``mix`` itself renders through it).

Level rule (``level_mode``)
---------------------------
``"lufs"``
    ITU-R BS.1770 integrated loudness (:func:`auralgen.synth.levels.loudness_lufs`,
    pyloudnorm) of the component as it stands alone. pyloudnorm needs at least one
    400 ms gating block and at most 5 channels, so:

    * a component shorter than 0.4 s is measured **zero-padded symmetrically to 0.4 s**,
      i.e. its loudness is the BS.1770 *momentary* loudness of the 400 ms window centred
      on it (a listener's ~400 ms integration of a short event);
    * a component with more than 2 channels is measured on its **mono downmix** (mean of
      the channels): BS.1770 channel weights assume a 5.0 loudspeaker layout, which
      microphone arrays, FOA or tetra signals do not follow. 1 or 2 channels are
      measured as they are (BS.1770 mono / stereo, weight 1 per channel).
``"db"``
    RMS level in dBFS, ``20 log10(rms)`` over all samples and channels of the component.

Conventions: components are float arrays ``[channels, n]`` (or ``[n]`` for mono) at one
sampling rate; onsets are quantised to whole samples and recorded as
``onset_sample / sample_rate``; gains are in dB (``20 log10``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from auralgen.core.errors import ParameterError
from auralgen.mixing._loudness import lufs_mono
from auralgen.synth._checks import check_sample_rate
from auralgen.synth.levels import MIN_LOUDNESS_DURATION_S, loudness_lufs

LEVEL_MODES = ("lufs", "db")
DEFAULT_MAX_PEAK = 10.0 ** (-1.0 / 20.0)
"""-1 dBFS: the mix peak after global gain normalisation never exceeds this."""
MAX_BS1770_CHANNELS = 2


@dataclass(frozen=True)
class ComponentRecord:
    """What the mixer did with one component.

    Attributes
    ----------
    onset_s, offset_s : float
        Where the component starts and ends in the mix (s; sample-exact).
    gain_db : float
        Gain applied to the raw component before the global gain (dB).
    target_level : float
        Requested level (LUFS or dBFS RMS, see ``MixInfo.level_mode``).
    raw_level : float
        Level of the raw component, measured by the level rule.
    measured_level : float
        Level of the component after ``gain_db`` (equals ``target_level`` up to
        measurement precision); in the output mix it sits ``MixInfo.global_gain_db`` lower.
    """

    onset_s: float
    offset_s: float
    gain_db: float
    target_level: float
    raw_level: float
    measured_level: float


@dataclass(frozen=True)
class MixInfo:
    """The full recipe of a mix (JSON-able through :meth:`to_dict`).

    Attributes
    ----------
    sample_rate : int
        Sampling rate of the mix (Hz).
    n_samples, n_channels : int
        Length (samples) and channel count of the mix.
    level_mode : str
        The level rule, ``"lufs"`` or ``"db"`` (see the module docstring).
    max_peak : float
        Highest allowed absolute sample value of the mix (linear full scale, 0 < max_peak <= 1).
    peak_before : float
        Peak of the sum before the global gain (linear full scale).
    global_gain_db : float
        The one gain applied to the whole sum (dB, <= 0).
    components : tuple of ComponentRecord
        What was done with each component, in the order given.
    """

    sample_rate: int
    n_samples: int
    n_channels: int
    level_mode: str
    max_peak: float
    peak_before: float
    global_gain_db: float
    components: tuple[ComponentRecord, ...]

    @property
    def duration_s(self) -> float:
        """Length of the mix (s)."""
        return self.n_samples / self.sample_rate

    def output_levels(self) -> list[float]:
        """Each component's level as it sits in the output (after the global gain).

        Returns
        -------
        list of float
            One level per component (LUFS or dBFS RMS, by ``level_mode``), in component order.
        """
        return [c.measured_level + self.global_gain_db for c in self.components]

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-able values.

        Returns
        -------
        dict of str to Any
            The fields by name; ``components`` is a list of dicts of :class:`ComponentRecord` fields.
        """
        d = {f.name: getattr(self, f.name) for f in fields(self)}  # flat scalars: asdict's deep copy is not needed
        d["components"] = [{f.name: getattr(c, f.name) for f in fields(c)} for c in self.components]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MixInfo:
        """Rebuild a record from :meth:`to_dict` output (e.g. read back from an item's JSON params).

        Parameters
        ----------
        d : dict of str to Any
            The record's fields by name, ``components`` a list of dicts.

        Returns
        -------
        MixInfo
            The record, equal to the one ``d`` was made from.

        Raises
        ------
        ParameterError
            When a field is missing or unknown.
        """
        try:
            comps = tuple(ComponentRecord(**c) for c in d["components"])
            return cls(**{**d, "components": comps})
        except (KeyError, TypeError) as exc:
            raise ParameterError(
                f"mix info={d!r} is malformed ({exc}); allowed: a dict from MixInfo.to_dict()"
            ) from None


def as_component(x, key: str = "component") -> np.ndarray:
    """``x`` as a finite, non-empty float64 ``[channels, n]`` array (1-D is mono).

    Parameters
    ----------
    x : array_like, shape (samples,) or (channels, samples)
        One clip.
    key : str, optional
        Its name in error messages.

    Returns
    -------
    ndarray, shape (channels, samples), float64
        The clip; a 1-D input becomes one channel.

    Raises
    ------
    ParameterError
        When ``x`` is not 1-D or 2-D, is empty, or has a non-finite sample.
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ParameterError(f"{key} has shape {arr.shape}; allowed: [n] or [channels, n] with n >= 1")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{key} has non-finite samples; allowed: finite samples")
    return arr


def component_level(x, sample_rate: int, *, level_mode: str = "lufs") -> float:
    """Level of one component by the module's level rule (LUFS or dBFS RMS).

    Parameters
    ----------
    x : ndarray, shape (samples,) or (channels, samples)
        One component.
    sample_rate : int
        Sampling rate of ``x`` (Hz, > 0).
    level_mode : {"lufs", "db"}, optional
        ``"lufs"``: BS.1770 integrated loudness (LUFS); ``"db"``: RMS level (dBFS).

    Returns
    -------
    float
        The level in LUFS or dBFS; ``-inf`` for silence.

    Examples
    --------
    >>> from auralgen.synth import tone
    >>> round(component_level(tone(997.0, 0.1, sample_rate=16000), 16000), 2)  # padded to 0.4 s
    -9.1
    """
    if level_mode not in LEVEL_MODES:
        raise ParameterError(f"level_mode={level_mode!r} is unknown; allowed: {list(LEVEL_MODES)}")
    arr = as_component(x)
    if level_mode == "db":
        ms = float(np.mean(np.square(arr)))
        return 10.0 * math.log10(ms) if ms > 0 else -math.inf
    if arr.shape[0] > MAX_BS1770_CHANNELS:
        arr = arr.mean(axis=0, keepdims=True)
    need = int(math.ceil(MIN_LOUDNESS_DURATION_S * sample_rate))
    if arr.shape[1] < need:
        pad = need - arr.shape[1]
        arr = np.pad(arr, ((0, 0), (pad // 2, pad - pad // 2)))
    if arr.shape[0] == 1:  # pyloudnorm's number, bit for bit, without its per-call overhead
        return lufs_mono(arr[0], check_sample_rate(sample_rate))
    with np.errstate(divide="ignore"):
        return loudness_lufs(arr, sample_rate)


def _check_lengths(key: str, values, n: int) -> list[float]:
    vals = [float(v) for v in values]
    if len(vals) != n:
        raise ParameterError(f"{key} has {len(vals)} values; allowed: one per component ({n})")
    bad = [v for v in vals if not math.isfinite(v)]
    if bad:
        raise ParameterError(f"{key}={vals!r} has non-finite values; allowed: finite numbers")
    return vals


def mix(
    components,
    *,
    sample_rate: int,
    onsets_s,
    levels,
    level_mode: str = "lufs",
    duration_s: float | None = None,
    max_peak: float = DEFAULT_MAX_PEAK,
    raw_levels=None,
) -> tuple[np.ndarray, MixInfo]:
    """Mix ``components`` at ``levels`` starting at ``onsets_s``.

    Parameters
    ----------
    components : sequence of ndarray, each shape (channels, samples) or (samples,)
        Raw clips, same rate and channel count; not modified.
    sample_rate : int
        Sampling rate (Hz, > 0).
    onsets_s : sequence of float
        Start of each component in the mix (s, >= 0); rounded to whole samples.
    levels : sequence of float
        Target level of each component: LUFS (``level_mode="lufs"``) or dBFS RMS (``"db"``).
    level_mode : {"lufs", "db"}, optional
        Level rule (see the module docstring).
    duration_s : float or None, optional
        Mix length (s, > 0); default: up to the last offset. Every component must fit.
    max_peak : float, optional
        Linear full scale, 0 < max_peak <= 1 (default -1 dBFS). If the summed mix peaks above this, the
        whole mix is scaled down to it (recorded as ``MixInfo.global_gain_db``); otherwise the global gain is 0 dB.
    raw_levels : sequence of float or None, optional
        Each component's :func:`component_level` under ``level_mode``, if already measured (default: measured here).

    Returns
    -------
    mixed : ndarray, shape (channels, samples), float32
        The mix, its peak at most ``max_peak``.
    info : MixInfo
        The recipe: each component's onset, gain and levels, and the global gain.

    Raises
    ------
    ParameterError
        On a bad argument, a silent component, or a component that does not fit in ``duration_s``.

    Examples
    --------
    >>> from auralgen.synth import noise
    >>> rng = np.random.default_rng(0)
    >>> a, b = (noise(0.5, sample_rate=8000, rng=rng) for _ in range(2))
    >>> y, info = mix([a, b], sample_rate=8000, onsets_s=[0.0, 0.25], levels=[-20.0, -26.0])
    >>> y.shape, [c.onset_s for c in info.components], info.global_gain_db
    ((1, 6000), [0.0, 0.25], 0.0)
    """
    kwargs = dict(onsets_s=onsets_s, levels=levels, level_mode=level_mode, duration_s=duration_s, max_peak=max_peak)
    info = plan_mix(components, sample_rate=sample_rate, raw_levels=raw_levels, **kwargs)
    return render_mix(components, info), info


def plan_mix(
    components,
    *,
    sample_rate: int,
    onsets_s,
    levels,
    level_mode: str = "lufs",
    duration_s: float | None = None,
    max_peak: float = DEFAULT_MAX_PEAK,
    raw_levels=None,
) -> MixInfo:
    """The record :func:`mix` renders, without rendering the mix (for a caller that needs the record only;
    :func:`render_mix` of it gives the mix).

    Parameters
    ----------
    components, sample_rate, onsets_s, levels, level_mode, duration_s, max_peak, raw_levels
        As in :func:`mix`.

    Returns
    -------
    MixInfo
        The recipe: each component's onset, gain and levels, and the global gain.

    Raises
    ------
    ParameterError
        As :func:`mix`.

    Examples
    --------
    >>> from auralgen.synth import noise
    >>> a = noise(0.5, sample_rate=8000, rng=np.random.default_rng(0))
    >>> info = plan_mix([a], sample_rate=8000, onsets_s=[0.1], levels=[-20.0])
    >>> info.n_samples, round(info.output_levels()[0], 6)
    (4800, -20.0)
    """
    comps, onsets, targets = _checked_inputs(components, sample_rate, onsets_s, levels, level_mode, max_peak)
    raws = _raw_levels(raw_levels, len(comps))
    records = [_record(k, *a, sample_rate, level_mode) for k, a in enumerate(zip(comps, onsets, targets, raws))]
    return _mix_info(comps, records, sample_rate, duration_s, level_mode, max_peak)


def _mix_info(comps, records, sample_rate: int, duration_s, level_mode: str, max_peak: float) -> MixInfo:
    """The mix length, the peak of the dry sum and the one global gain that keeps it below ``max_peak``."""
    end = max(int(round(r.offset_s * sample_rate)) for r in records)
    total = end if duration_s is None else int(round(float(duration_s) * sample_rate))
    if total < end:
        raise ParameterError(
            f"duration_s={duration_s!r} ends before the last component ({end / sample_rate:g} s); "
            f"allowed: >= {end / sample_rate:g}"
        )
    dry = _sum(comps, records, sample_rate, total)
    peak = float(np.max(np.abs(dry)))
    global_gain_db = 20.0 * math.log10(max_peak / peak) if peak > max_peak else 0.0
    return MixInfo(
        sample_rate=int(sample_rate),
        n_samples=total,
        n_channels=comps[0].shape[0],
        level_mode=level_mode,
        max_peak=float(max_peak),
        peak_before=peak,
        global_gain_db=global_gain_db,
        components=tuple(records),
    )


def _checked_inputs(components, sample_rate, onsets_s, levels, level_mode, max_peak):
    """The components as ``[channels, n]`` arrays, onsets and target levels, or a ParameterError."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, np.integer)) or sample_rate <= 0:
        raise ParameterError(f"sample_rate={sample_rate!r} is invalid; allowed: an integer > 0")
    if level_mode not in LEVEL_MODES:
        raise ParameterError(f"level_mode={level_mode!r} is unknown; allowed: {list(LEVEL_MODES)}")
    if not (isinstance(max_peak, (int, float)) and 0 < max_peak <= 1):
        raise ParameterError(f"max_peak={max_peak!r} is out of range; allowed: 0 < max_peak <= 1")
    comps = [as_component(c, f"components[{k}]") for k, c in enumerate(components)]
    if not comps:
        raise ParameterError("components=[] is empty; allowed: at least one clip")
    return comps, _check_lengths("onsets_s", onsets_s, len(comps)), _check_lengths("levels", levels, len(comps))


def _raw_levels(raw_levels, n: int) -> list[float | None]:
    """The given raw levels of ``n`` components (None each when not given)."""
    raws = [None] * n if raw_levels is None else [float(v) for v in raw_levels]
    if len(raws) != n:
        raise ParameterError(f"raw_levels has {len(raws)} values; allowed: one per component ({n})")
    return raws


def _record(
    k: int, x: np.ndarray, onset: float, target: float, raw: float | None, sample_rate: int, level_mode: str
) -> ComponentRecord:
    """Measure component ``k`` (unless its level ``raw`` is given) and the gain that puts it at ``target``;
    its onset on the sample grid."""
    if onset < 0:
        raise ParameterError(f"onsets_s[{k}]={onset!r} is negative; allowed: >= 0")
    if raw is None:
        raw = component_level(x, sample_rate, level_mode=level_mode)
    if not math.isfinite(raw):
        raise ParameterError(f"components[{k}] is silent (level {raw}); allowed: an audible clip")
    gain_db = target - raw
    start = int(round(onset * sample_rate))
    measured = component_level(x * 10.0 ** (gain_db / 20.0), sample_rate, level_mode=level_mode)
    return ComponentRecord(
        onset_s=start / sample_rate,
        offset_s=(start + x.shape[1]) / sample_rate,
        gain_db=gain_db,
        target_level=target,
        raw_level=raw,
        measured_level=measured,
    )


def _sum(comps: list[np.ndarray], records, sample_rate: int, total: int) -> np.ndarray:
    channels = {c.shape[0] for c in comps}
    if len(channels) != 1:
        raise ParameterError(f"components have {sorted(channels)} channels; allowed: one channel count for all")
    out = np.zeros((comps[0].shape[0], total), dtype=np.float64)
    for k, (x, r) in enumerate(zip(comps, records, strict=True)):
        start = int(round(r.onset_s * sample_rate))
        if start + x.shape[1] > total:
            raise ParameterError(
                f"components[{k}] spans [{r.onset_s:g}, {(start + x.shape[1]) / sample_rate:g}] s; "
                f"allowed: within the mix (0 .. {total / sample_rate:g} s)"
            )
        out[:, start : start + x.shape[1]] += x * 10.0 ** (r.gain_db / 20.0)
    return out


def render_mix(components, info: MixInfo | dict) -> np.ndarray:
    """Re-render a mix from its record: recorded gains, onsets and global gain, nothing measured.

    Parameters
    ----------
    components : sequence of ndarray, each shape (channels, samples) or (samples,)
        The same raw components that were given to :func:`mix`.
    info : MixInfo or dict
        The record (``MixInfo.to_dict()`` output is accepted, e.g. from JSON params).

    Returns
    -------
    ndarray, shape (channels, samples), float32
        The mix, bit-identical to the array :func:`mix` returned with ``info``.
    """
    if not isinstance(info, MixInfo):
        info = MixInfo.from_dict(info)
    comps = [as_component(c, f"components[{k}]") for k, c in enumerate(components)]
    if len(comps) != len(info.components):
        raise ParameterError(f"components has {len(comps)} clips; allowed: {len(info.components)} (as recorded)")
    out = _sum(comps, info.components, info.sample_rate, info.n_samples)
    out *= 10.0 ** (info.global_gain_db / 20.0)
    # float rounding must never push a normalised peak above max_peak
    peak = float(np.max(np.abs(out))) if out.size else 0.0
    if peak > info.max_peak:
        out *= info.max_peak / peak
    return out.astype(np.float32)
