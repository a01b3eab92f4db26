"""Receivers: what listens in a room, and how image sources become a multichannel RIR.

Every receiver is a frozen dataclass with a ``position_m`` (room frame) and an orientation
``(yaw_deg, pitch_deg)`` as defined in :mod:`auralgen.measure.geometry` (yaw 0 looks along
+x; azimuth +90 = the receiver's left). ``render(images, ...)`` turns
:class:`auralgen.rooms.images.ImageSources` into a float64 RIR ``[num_channels, n_samples]``;
``layout`` is the item schema's ``channel_layout`` string.

Registry (config ``type`` -> class, ``layout``, channel order):

- ``mono`` -> :class:`Mono`, ``mono``: one omni.
- ``stereo`` -> :class:`StereoPair`, ``stereo``: omnis at +spacing/2 (left), -spacing/2 (right).
- ``tetra`` -> :class:`Tetrahedral`, ``tetra``: omnis FLU, FRD, BLD, BRU (A-format order).
- ``circular`` -> :class:`Circular`, ``circular_<n>``: omnis at azimuth 360*k/n, k = 0..n-1.
- ``foa`` -> :class:`FOA`, ``foa_acn_sn3d``: W, Y, Z, X (ACN order, SN3D normalisation).
- ``binaural`` -> :class:`Binaural`, ``binaural``: left ear, right ear (MIT KEMAR HRIRs).

Omni arrays (:class:`OmniArray`) are rendered mic by mic with
:func:`auralgen.rooms.images.render_omni` at :meth:`OmniArray.mic_positions_m`, so a room
backend (e.g. pyroomacoustics) can simulate them the same way.

FOA: each image contributes the same fractional-delay impulse as the omni RIR at the array
centre, times ``(1, sin(az)cos(el), sin(el), cos(az)cos(el))`` of its direction of arrival
relative to the receiver. Implemented as four ``render_omni`` calls with gains scaled by the
channel's weight, so W is exactly the omni RIR.

Binaural: the direction of arrival of each image relative to the head is mapped to the
**nearest measured** KEMAR direction (great circle; no interpolation; the grid is 5 deg in
azimuth at ear level, coarser towards the pole, nothing below -40 deg elevation). Each image
lands at the omni arrival time at the head centre with the omni amplitude and fractional delay
(:func:`~auralgen.rooms.images.render_omni`'s conventions) and is filtered by that direction's
HRIR pair; the 10 Hz high-pass runs once over the binaural response. The HRIRs are resampled
to the target rate (``scipy.signal.resample_poly``), shortened by their common leading silence
(the earliest onset over all directions and ears then lies 0.1 ms after the omni arrival time
at the head centre; a frontal source reaches both ears ~0.3 ms after it) and scaled to unit mean
energy over directions and ears (a diffuse-field energy normalisation: averaged over
directions, each ear receives the omni RIR's energy).

Implementation: the fractional-delay filter is a rank-8 combination of basis kernels
(:func:`auralgen.rooms.images._phase_basis`), so each (basis kernel, HRIR) pair is convolved
once per HRTF and rate (cached: ``710 * 2 * 8 * (taps + 80)`` float64, ~24 MB at 16 kHz,
~55 MB at 48 kHz) and a numba kernel adds each image's 8-term combination at its delay:
O(images * taps), no FFT per direction. The response is rendered 0.1 s (plus the filter
lengths) past ``n_samples``, high-passed once and cut, so the high-pass sees every image's
full filtered response and its end edge does not reach the output (its start edge lies in
the silence before the direct sound).

The former render (images grouped by direction, one ``render_omni`` per direction, each
high-passed over ``n_samples``, then one FFT convolution per direction) is kept in the tests
(``tests/support/binaural_reference.py``). This render equals it up to rounding (~1e-12) when the
reference high-passes the sum once, and to ~1e-7 when the reference's per-direction
high-passes run on zero-padded trains. Without the padding, the former render cut each
direction's zero-phase high-pass pre-response at sample 0 before the HRIR convolution (and
its post-response at ``n_samples``): an artefact of ~2-3e-3 normalised L2 on room responses,
almost all within the first HRIR length (< 3e-4 after it), which this render does not have.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.fft

from auralgen.core.errors import ParameterError, check_range
from auralgen.core.registry import Registry
from auralgen.measure.geometry import az_el_to_unit, direction_of, listener_to_room
from auralgen.rooms import _receiver_kernels as _rk
from auralgen.rooms import images as _images
from auralgen.rooms._receiver_checks import _KEY, _check_render_args, _finite, _fit, _store_length, _vector3
from auralgen.rooms.hrtf import Hrtf, load_kemar
from auralgen.rooms.images import render_omni

__all__ = [
    "FOA",
    "HRTF_SETS",
    "RECEIVERS",
    "Binaural",
    "Circular",
    "Mono",
    "OmniArray",
    "Receiver",
    "StereoPair",
    "TAIL_POINT_OFFSET_M",
    "Tetrahedral",
    "receiver_from_config",
]

HRTF_SETS: Registry[Callable[[], Hrtf]] = Registry("receiver.hrtf")  # name -> loader of the set
HRTF_SETS.register("mit_kemar")(load_kemar)
_MAX_MICS = 64
#: half the ear distance of a binaural head, and the radius of the FOA tail points (m)
TAIL_POINT_OFFSET_M = 0.0875


@dataclass(frozen=True, kw_only=True)
class Receiver:
    """Base class: a position and an orientation (see :mod:`auralgen.measure.geometry`).

    Parameters
    ----------
    position_m : (float, float, float)
        Centre of the receiver in the room frame, metres.
    yaw_deg : float
        Look direction, counter-clockwise from +x seen from above.
    pitch_deg : float in [-90, 90]
        Upward tilt of the look direction.
    """

    name: ClassVar[str] = ""

    position_m: tuple = (0.0, 0.0, 0.0)
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "position_m", _vector3("position_m", self.position_m))
        object.__setattr__(self, "yaw_deg", _finite("yaw_deg", self.yaw_deg))
        pitch = _finite("pitch_deg", self.pitch_deg)
        check_range(f"{_KEY}.pitch_deg", pitch, low=-90.0, high=90.0)
        object.__setattr__(self, "pitch_deg", pitch)

    @property
    def layout(self) -> str:
        """The ``channel_layout`` string of the item schema."""
        return self.name

    @property
    def num_channels(self) -> int:
        raise NotImplementedError

    def directions_of(self, points_m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(azimuth_deg, elevation_deg, distance_m)`` of room-frame points seen by this receiver.

        Parameters
        ----------
        points_m : array_like, shape (..., 3)
            Point(s) in the room frame, metres.

        Returns
        -------
        tuple of ndarray, each shape (...)
            Azimuth (degrees, counter-clockwise from the look direction), elevation (degrees, up) and distance (m).
        """
        return direction_of(points_m, self.position_m, self.yaw_deg, self.pitch_deg)

    def render(self, images, *, sample_rate: int, c_m_s: float, n_samples: int) -> np.ndarray:
        """Multichannel RIR of ``images``: float64 ``[num_channels, n_samples]``.

        Parameters
        ----------
        images : ImageSources
            The image sources to render.
        sample_rate : int
            Sample rate in Hz.
        c_m_s : float
            Speed of sound in m/s.
        n_samples : int
            Output length in samples.

        Returns
        -------
        ndarray, shape (num_channels, n_samples), float64
            The receiver's channels, in :attr:`layout` order.
        """
        raise NotImplementedError

    # -- capabilities: what a backend, the scene and the tasks may ask instead of the type --------
    def mic_positions_m(self) -> np.ndarray | None:
        """Omni mic positions ``[num_channels, 3]`` (room frame; an :class:`OmniArray`'s mics);
        None for a directional receiver (its channels are not pressures at points, so it is
        rendered from the image sources' directions)."""
        return None

    def ear_positions_m(self) -> np.ndarray | None:
        """The two ear points ``[2, 3]`` (left, right; room frame) of a head; None without ears
        (then the channels carry no interaural time/level difference to measure)."""
        return None

    def ambisonic_order(self) -> int | None:
        """Spherical-harmonic order of the channels (1 for FOA: W, Y, Z, X); None if not ambisonic."""
        return None

    def tail_points_m(self) -> np.ndarray:
        """Room-frame points ``[num_channels, 3]`` whose omni hybrid tails feed the channels
        (decorrelated late reverberation, one point per channel)."""
        raise NotImplementedError

    def diffuse_gains(self) -> np.ndarray:
        """Per-channel gain ``[num_channels]`` of an omni diffuse tail (1: the channel is a pressure).

        Returns
        -------
        ndarray, shape (num_channels,), float64
            Linear amplitude gains.
        """
        return np.ones(self.num_channels)

    def to_config(self) -> dict:
        """JSON-able mapping that :func:`receiver_from_config` turns back into this receiver.

        Returns
        -------
        dict
            ``type`` and every dataclass field (tuples as lists).
        """
        out = {"type": self.name}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True, kw_only=True)
class OmniArray(Receiver):
    """Omnidirectional microphones at fixed offsets in the receiver frame (x ahead, y left, z up)."""

    #: the array's length fields and their upper bounds (m): each is checked in ``(0, high]`` and stored as float
    length_bounds_m: ClassVar[tuple[tuple[str, float], ...]] = ()

    def __post_init__(self):
        super().__post_init__()
        for key, high in self.length_bounds_m:
            _store_length(self, key, high=high)

    def local_offsets_m(self) -> np.ndarray:
        """Mic offsets ``[num_channels, 3]`` in the receiver frame, metres."""
        raise NotImplementedError

    @property
    def num_channels(self) -> int:
        return int(self.local_offsets_m().shape[0])

    def mic_positions_m(self) -> np.ndarray:
        """Mic positions ``[num_channels, 3]`` in the room frame (offsets rotated by yaw/pitch)."""
        return listener_to_room(self.local_offsets_m(), self.position_m, self.yaw_deg, self.pitch_deg)

    def tail_points_m(self) -> np.ndarray:
        """The mics themselves."""
        return self.mic_positions_m()

    def render(self, images, *, sample_rate: int, c_m_s: float, n_samples: int) -> np.ndarray:
        """One :func:`~auralgen.rooms.images.render_omni` per mic: ``[num_channels, n_samples]``.

        Examples
        --------
        >>> receiver = Mono(position_m=(2, 2, 1.5))
        >>> rir = receiver.render(images, sample_rate=16000, c_m_s=343.0, n_samples=4000)  # doctest: +SKIP
        """
        sample_rate, c_m_s, n_samples = _check_render_args(sample_rate, c_m_s, n_samples)
        rows = [
            _fit(render_omni(images, mic, sample_rate=sample_rate, c_m_s=c_m_s, n_samples=n_samples), n_samples)
            for mic in self.mic_positions_m()
        ]
        return np.stack(rows)


@dataclass(frozen=True, kw_only=True)
class Mono(OmniArray):
    """One omnidirectional microphone at ``position_m``."""

    name: ClassVar[str] = "mono"

    def local_offsets_m(self) -> np.ndarray:
        return np.zeros((1, 3))


@dataclass(frozen=True, kw_only=True)
class StereoPair(OmniArray):
    """Two omnis ``spacing_m`` apart on the receiver's left-right axis; left (+y) first.

    spacing_m : float in (0, 2]
    """

    name: ClassVar[str] = "stereo"
    length_bounds_m: ClassVar[tuple[tuple[str, float], ...]] = (("spacing_m", 2.0),)
    spacing_m: float = 0.2

    def local_offsets_m(self) -> np.ndarray:
        half = self.spacing_m / 2.0
        return np.array([[0.0, half, 0.0], [0.0, -half, 0.0]])


_TETRA_EL = math.degrees(math.atan(1.0 / math.sqrt(2.0)))  # 35.26 deg: cube-corner directions
_TETRA_AZ_EL = ((45.0, _TETRA_EL), (-45.0, -_TETRA_EL), (135.0, -_TETRA_EL), (-135.0, _TETRA_EL))


@dataclass(frozen=True, kw_only=True)
class Tetrahedral(OmniArray):
    """Four omnis on a regular tetrahedron of circumradius ``radius_m`` (A-format layout).

    Channel order FLU (az 45, el +35.26), FRD (-45, -35.26), BLD (135, -35.26), BRU (-135, +35.26).

    radius_m : float in (0, 1]
    """

    name: ClassVar[str] = "tetra"
    length_bounds_m: ClassVar[tuple[tuple[str, float], ...]] = (("radius_m", 1.0),)
    radius_m: float = 0.05

    def local_offsets_m(self) -> np.ndarray:
        az, el = np.array(_TETRA_AZ_EL).T
        return self.radius_m * az_el_to_unit(az, el)


@dataclass(frozen=True, kw_only=True)
class Circular(OmniArray):
    """``n`` omnis evenly on a horizontal circle of ``radius_m``; mic k at azimuth ``360 k / n``.

    n : int in [2, 64]
    radius_m : float in (0, 1]
    """

    name: ClassVar[str] = "circular"
    n: int
    radius_m: float = 0.05

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or not 2 <= self.n <= _MAX_MICS:
            raise ParameterError(f"{_KEY}.n={self.n!r} is invalid; allowed: an integer in [2, {_MAX_MICS}]")
        object.__setattr__(self, "n", int(self.n))
        _store_length(self, "radius_m", high=1.0)

    @property
    def layout(self) -> str:
        return f"circular_{self.n}"

    def local_offsets_m(self) -> np.ndarray:
        az = 360.0 * np.arange(self.n) / self.n
        return self.radius_m * az_el_to_unit(az, np.zeros(self.n))


def foa_weights(az_deg, el_deg) -> np.ndarray:
    """ACN/SN3D first-order encoding gains ``[4, ...]`` (W, Y, Z, X) of directions in degrees.

    Parameters
    ----------
    az_deg, el_deg : float or array_like
        Azimuth (counter-clockwise from the front) and elevation (up) in degrees; same shape.

    Returns
    -------
    ndarray, shape (4, ...), float64
        Gains of W, Y, Z, X for each direction.
    """
    az, el = np.radians(az_deg), np.radians(el_deg)
    return np.stack([np.ones_like(az), np.sin(az) * np.cos(el), np.sin(el), np.cos(az) * np.cos(el)])


@dataclass(frozen=True, kw_only=True)
class FOA(Receiver):
    """First-order ambisonics at a point: channels W, Y, Z, X (ACN order, SN3D normalisation)."""

    name: ClassVar[str] = "foa"

    @property
    def layout(self) -> str:
        return "foa_acn_sn3d"

    @property
    def num_channels(self) -> int:
        return 4

    def ambisonic_order(self) -> int:
        return 1

    def tail_points_m(self) -> np.ndarray:
        """Four decorrelated points (W, Y, Z, X) on a small tetrahedron of radius
        :data:`TAIL_POINT_OFFSET_M` around ``position_m``."""
        local = TAIL_POINT_OFFSET_M * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / math.sqrt(3)
        return listener_to_room(local, self.position_m, self.yaw_deg, self.pitch_deg)

    def diffuse_gains(self) -> np.ndarray:
        """Diffuse field, SN3D: X, Y, Z carry a third of W's energy."""
        return np.array([1.0, 1 / math.sqrt(3), 1 / math.sqrt(3), 1 / math.sqrt(3)])

    def render(self, images, *, sample_rate: int, c_m_s: float, n_samples: int) -> np.ndarray:
        """``[4, n_samples]``: the omni RIR at ``position_m`` with per-image gains W, Y, Z, X."""
        sample_rate, c_m_s, n_samples = _check_render_args(sample_rate, c_m_s, n_samples)
        az, el, _ = self.directions_of(images.positions_m)
        weights = foa_weights(az, el)
        gains = np.asarray(images.gains, dtype=float)
        rows = []
        for w in weights:
            scaled = dataclasses.replace(images, gains=gains * w)
            rir = render_omni(scaled, self.position_m, sample_rate=sample_rate, c_m_s=c_m_s, n_samples=n_samples)
            rows.append(_fit(rir, n_samples))
        return np.stack(rows)


@functools.lru_cache(maxsize=8)
def _binaural_hrtf(hrtf: str, sample_rate: int) -> Hrtf:
    """The named HRTF at ``sample_rate``, onset-trimmed and energy-normalised (see module doc)."""
    at_rate = HRTF_SETS[hrtf]().resampled(sample_rate)
    h = at_rate.hrirs
    peak = np.abs(h).max(axis=-1, keepdims=True)
    onset = int(np.argmax(np.abs(h) >= 0.05 * peak, axis=-1).min())
    lead = max(onset - math.ceil(1e-4 * sample_rate), 0)
    h = h[..., lead:]
    h = h / math.sqrt(float(np.mean(np.sum(h**2, axis=-1))))
    return Hrtf(at_rate.directions_deg, h, sample_rate, at_rate.name)


@dataclass(frozen=True)
class ImageDirections:
    """Image sources as a head hears them (:meth:`Binaural._image_directions`)."""

    positions_m: np.ndarray  # shape (n, 3), metres
    gains: np.ndarray  # shape (n,)
    distances_m: np.ndarray  # shape (n,), from the head's centre
    directions: np.ndarray  # intp, shape (n,): the nearest HRIR direction of each image


@dataclass(frozen=True, kw_only=True)
class Binaural(Receiver):
    """A head at ``position_m`` (centre between the ears) wearing the ``hrtf`` set; left ear first.

    hrtf : str in HRTF_SETS (``"mit_kemar"``)
    """

    name: ClassVar[str] = "binaural"
    hrtf: str = "mit_kemar"

    def __post_init__(self):
        super().__post_init__()
        HRTF_SETS.get(self.hrtf, key=f"{_KEY}.hrtf")

    @property
    def num_channels(self) -> int:
        return 2

    def ear_positions_m(self) -> np.ndarray:
        """Left and right ear, :data:`TAIL_POINT_OFFSET_M` either side of ``position_m``."""
        local = np.array([[0.0, TAIL_POINT_OFFSET_M, 0.0], [0.0, -TAIL_POINT_OFFSET_M, 0.0]])
        return listener_to_room(local, self.position_m, self.yaw_deg, self.pitch_deg)

    def tail_points_m(self) -> np.ndarray:
        """The ears."""
        return self.ear_positions_m()

    def hrtf_at(self, sample_rate: int) -> Hrtf:
        """The HRIRs this receiver applies at ``sample_rate`` (resampled, trimmed, normalised).

        Parameters
        ----------
        sample_rate : int
            Sample rate in Hz.

        Returns
        -------
        Hrtf
            The set at ``sample_rate`` (cached per set and rate).
        """
        return _binaural_hrtf(self.hrtf, int(sample_rate))

    def render(self, images, *, sample_rate: int, c_m_s: float, n_samples: int) -> np.ndarray:
        """``[2, n_samples]`` (left, right): each image through its nearest direction's HRIR pair.

        Parameters
        ----------
        images : ImageSources
        sample_rate : int in [1000, 384000] (Hz)
        c_m_s : float in [200, 500] (m/s)
        n_samples : int > 0
            Output length. Images whose filtered impulse starts at or after it are left out;
            the others are rendered in full (0.1 s past the end), high-passed once, then cut.

        Examples
        --------
        >>> receiver = Binaural(position_m=(2, 2, 1.5))
        >>> rir = receiver.render(images, sample_rate=16000, c_m_s=343.0, n_samples=4000)  # doctest: +SKIP
        """
        out = self._render_before_highpass(images, sample_rate=sample_rate, c_m_s=c_m_s, n_samples=n_samples)
        return np.ascontiguousarray(_images._highpass(out, sample_rate)[:, :n_samples])

    def _render_before_highpass(self, images, *, sample_rate: int, c_m_s: float, n_samples: int) -> np.ndarray:
        """:meth:`render` before its high-pass and cut: ``[2, n_samples + margin]`` (a caller filters it)."""
        sample_rate, c_m_s, n_samples = _check_render_args(sample_rate, c_m_s, n_samples)
        seen = self._image_directions(images, sample_rate, c_m_s, n_samples)
        positions, gains, directions = seen.positions_m, seen.gains, seen.directions
        n_ext = n_samples + _highpass_margin(self.hrtf_at(sample_rate).num_taps, sample_rate)
        return _rk._render_binaural(
            positions,
            gains,
            directions,
            np.asarray(self.position_m, dtype=float),
            _images._phase_basis()[0],
            _binaural_kernels(self.hrtf, sample_rate),
            sample_rate,
            c_m_s,
            _images.FDL2,
            _images.SINC_LUT_GRANULARITY,
            n_samples,
            n_ext,
            (n_samples + 1) * c_m_s / sample_rate,  # farther images start at or after n_samples
        )

    def _image_directions(self, images, sample_rate, c_m_s, n_samples) -> ImageDirections:
        """The validated images and the nearest HRIR direction of each."""
        _images._check_render_args(self.position_m, sample_rate, c_m_s, n_samples)
        positions = np.ascontiguousarray(np.asarray(images.positions_m, dtype=float).reshape(-1, 3))
        gains = np.ascontiguousarray(np.asarray(images.gains, dtype=float).ravel())
        if positions.shape[0] != gains.shape[0]:
            raise ParameterError(
                f"images.gains has {gains.shape[0]} entries for {positions.shape[0]} positions; allowed: equal"
            )
        az, el, dist = self.directions_of(positions)
        if dist.size and dist.min() < 1e-3:
            raise ParameterError(
                f"{_KEY}.position_m={list(self.position_m)!r} coincides with an image source; allowed: distance >= 1 mm"
            )
        directions = np.ascontiguousarray(self.hrtf_at(sample_rate).nearest(az, el), dtype=np.intp)
        return ImageDirections(positions, gains, dist, directions)


#: silence (s) rendered after the last possible HRIR tap so that the zero-phase high-pass's end-edge transient (it
#: runs backwards with the 10 Hz time constant) has died out by ``n_samples``: within ~1e-7 (normalised L2) of none
_HIGHPASS_MARGIN_S = 0.1


def _highpass_margin(num_taps: int, sample_rate: int) -> int:
    """Samples rendered past ``n_samples`` so that the high-pass sees the responses' full tails."""
    return num_taps + _images.FRAC_DELAY_LENGTH + math.ceil(_HIGHPASS_MARGIN_S * sample_rate)


@functools.lru_cache(maxsize=4)
def _binaural_kernels(hrtf: str, sample_rate: int) -> np.ndarray:
    """Basis kernels convolved with the HRIRs: read-only ``[n_directions, 2, rank, taps + fdl - 1]``.

    ``out[d, ear, r] = conv(basis[r], hrir[d, ear])`` (full length) for the rank-8 basis of
    the fractional-delay filters (:func:`auralgen.rooms.images._phase_basis`).
    """
    h = _binaural_hrtf(hrtf, sample_rate).hrirs
    basis = _images._phase_basis()[1]
    n_out = h.shape[-1] + basis.shape[-1] - 1
    n_fft = scipy.fft.next_fast_len(n_out, real=True)
    h_f = scipy.fft.rfft(h, n_fft, axis=-1)
    out = np.empty((h.shape[0], h.shape[1], basis.shape[0], n_out))
    for r, kernel in enumerate(basis):
        out[:, :, r] = scipy.fft.irfft(h_f * scipy.fft.rfft(kernel, n_fft), n_fft, axis=-1)[..., :n_out]
    out.flags.writeable = False
    return out


RECEIVERS: Registry[type[Receiver]] = Registry("receiver.type", sort=False)  # in the order messages list them
for _cls in (Mono, StereoPair, Tetrahedral, FOA, Circular, Binaural):
    RECEIVERS.register(_cls)


def receiver_from_config(mapping, *, key: str = _KEY) -> Receiver:
    """Build a receiver from ``{"type": <name>, <field>: <value>, ...}`` (e.g. a Hydra node).

    ``type`` is a key of :data:`RECEIVERS`; the other keys are the dataclass fields
    (``position_m``, ``yaw_deg``, ``pitch_deg`` and the type's own). Any invalid entry raises
    :class:`~auralgen.core.errors.ParameterError` naming ``<key>.<field>``, the value and what is allowed.

    Parameters
    ----------
    mapping : Mapping
        The receiver's config: ``type`` and field values.
    key : str, optional
        The config key named in errors.

    Returns
    -------
    Receiver
        The validated receiver.

    Examples
    --------
    >>> receiver_from_config({"type": "circular", "n": 6, "position_m": [1, 2, 1.5]}).layout
    'circular_6'
    """
    if not isinstance(mapping, Mapping):
        raise ParameterError(
            f"{key}={mapping!r} is not a mapping; allowed: {{type: one of {', '.join(RECEIVERS)}, ...}}"
        )
    kind = mapping.get("type")
    cls = RECEIVERS.get(kind, key=f"{key}.type")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in mapping.items() if k != "type"}
    for k, v in kwargs.items():
        if k not in fields:
            raise ParameterError(f"{key}.{k}={v!r} is not a field of {kind!r}; allowed: {', '.join(fields)}")
    for name, f in fields.items():
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING and name not in kwargs:
            raise ParameterError(f"{key}.{name} is missing; required for type {kind!r}")
    try:
        return cls(**kwargs)
    except ParameterError as exc:
        msg = str(exc)
        if key != _KEY and msg.startswith(f"{_KEY}."):
            msg = key + msg[len(_KEY) :]
        raise ParameterError(msg) from None
