"""The per-image binaural render against the former per-direction grouped render.

``render_binaural_reference`` is the former ``Binaural.render`` (one ``render_omni`` and one
FFT convolution per HRIR direction). The new render high-passes once, at the end, over the
full filtered responses; it must equal the reference with the high-pass at the end (or with
per-direction high-passes on zero-padded trains), and differ from the former output by its
filter-edge artefact only (mostly within the first HRIR length). Timings: bench/bench_receivers.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.measure.geometry import az_el_to_unit, listener_to_room
from auralgen.rooms.hrtf import HrtfMissingError, fetch, load_kemar
from auralgen.rooms.images import ImageSources, _phase_basis, image_sources, rir_length
from auralgen.rooms.receivers import Binaural, _binaural_kernels
from auralgen.rooms.spec import RoomSpec
from tests.support.binaural_reference import render_binaural_reference

C = 343.0
HEAD = np.array([3.0, 2.5, 1.5])
ROOM = RoomSpec(dims_m=(6.0, 5.0, 3.0), rt60_s=0.5).validate()
SOURCE = (1.5, 3.6, 1.3)


@pytest.fixture(scope="module", autouse=True)
def kemar_available():
    try:
        load_kemar()
    except HrtfMissingError:
        try:
            fetch()
        except Exception as exc:  # no PyPI access
            pytest.skip(f"KEMAR HRTF unavailable and fetch failed: {exc}")


def _nl2(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def _room_images(max_order: int) -> ImageSources:
    return image_sources(ROOM, SOURCE, max_order=max_order)


CASES = [
    # (sample_rate, max_order, yaw_deg, pitch_deg, n_samples or None = farthest image's natural length)
    pytest.param(16000, 6, 20.0, 0.0, None, id="16k-377img-natural"),
    pytest.param(16000, 5, -135.0, 35.0, 1200, id="16k-231img-cut"),
    pytest.param(48000, 3, 70.0, -20.0, 2400, id="48k-63img-cut"),
]


@pytest.mark.parametrize(("fs", "order", "yaw", "pitch", "n"), CASES)
def test_render_matches_grouped_reference(fs, order, yaw, pitch, n):
    ims = _room_images(order)
    if n is None:
        n = rir_length(ROOM, fs, max_distance_m=float(np.linalg.norm(ims.positions_m - HEAD, axis=1).max()))
    rec = Binaural(position_m=HEAD, yaw_deg=yaw, pitch_deg=pitch)
    kw = dict(sample_rate=fs, c_m_s=C, n_samples=n)
    new = rec.render(ims, **kw)
    assert new.shape == (2, n) and new.dtype == np.float64
    # the former grouped render with the high-pass once at the end: equal up to rounding
    assert _nl2(new, render_binaural_reference(rec, ims, **kw, highpass="end")) < 1e-10
    # ... with per-direction high-passes on zero-padded trains (no filter edge in the output)
    assert _nl2(new, render_binaural_reference(rec, ims, **kw, highpass="per_direction_padded")) < 1e-6
    # the former output: its per-direction high-pass edges at samples 0 and n_samples leave
    # ~3e-3, almost all of it within the first HRIR length (before and at the direct sound)
    old = render_binaural_reference(rec, ims, **kw)
    taps = rec.hrtf_at(fs).num_taps
    assert 1e-4 < _nl2(new, old) < 5e-3
    assert np.linalg.norm(new[:, taps:] - old[:, taps:]) < 1e-3 * np.linalg.norm(old)
    assert np.linalg.norm(new) > 0.1


@settings(max_examples=15, deadline=None)
@given(
    az=st.floats(-180, 180),
    el=st.floats(-90, 90),
    dist=st.floats(0.05, 6.0),
    gain=st.floats(-2.0, 2.0).filter(lambda g: abs(g) > 1e-3),
    yaw=st.floats(-180, 180),
)
def test_single_image_matches_reference(az, el, dist, gain, yaw):
    rec = Binaural(position_m=HEAD, yaw_deg=yaw)
    pos = listener_to_room(dist * az_el_to_unit(az, el), HEAD, yaw)
    ims = ImageSources(positions_m=pos[None, :], gains=np.array([gain]), orders=np.zeros(1, dtype=int))
    kw = dict(sample_rate=16000, c_m_s=C, n_samples=900)
    new = rec.render(ims, **kw)
    ref = render_binaural_reference(rec, ims, **kw, highpass="end")
    np.testing.assert_allclose(new, ref, atol=1e-10 * np.abs(ref).max())
    assert np.abs(new).max() > 0


def test_kernels_are_basis_times_hrir():
    fs = 16000
    comb = _binaural_kernels("mit_kemar", fs)
    hrirs = Binaural().hrtf_at(fs).hrirs
    basis = _phase_basis()[1]
    assert comb.shape == (710, 2, basis.shape[0], hrirs.shape[-1] + basis.shape[-1] - 1)
    assert not comb.flags.writeable
    for d, ear, r in [(0, 0, 0), (123, 1, 3), (709, 0, 7)]:
        np.testing.assert_allclose(comb[d, ear, r], np.convolve(basis[r], hrirs[d, ear]), atol=1e-13)


def test_images_outside_output_and_zero_gains_are_silent():
    rec, kw = Binaural(position_m=HEAD), dict(sample_rate=16000, c_m_s=C, n_samples=400)
    far = HEAD + [9.0, 0.0, 0.0]  # first tap at sample 420 >= 400
    near = HEAD + [1.0, 0.5, 0.0]
    ims = ImageSources(np.array([far, near]), np.array([1.0, 0.0]), np.zeros(2, dtype=int))
    np.testing.assert_array_equal(rec.render(ims, **kw), np.zeros((2, 400)))
    empty = ImageSources(np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=int))
    np.testing.assert_array_equal(rec.render(empty, **kw), np.zeros((2, 400)))
    # a truncated tail: the image's filtered impulse is cut at n_samples, not dropped
    late = ImageSources(np.array([HEAD + [6.5, 0.0, 0.0]]), np.ones(1), np.zeros(1, dtype=int))
    out = rec.render(late, **kw)
    np.testing.assert_allclose(out, render_binaural_reference(rec, late, **kw, highpass="end"), atol=1e-12)
    assert np.abs(out[:, -10:]).max() > 1e-3


@pytest.mark.parametrize(
    ("positions", "gains", "kw", "match"),
    [
        ([[1.0, 1.0, 1.0]], [1.0, 0.5], {}, r"images\.gains has 2 entries for 1 positions"),
        ([HEAD + 1e-4], [1.0], {}, r"receiver\.position_m=\[3\.0, 2\.5, 1\.5\] coincides with an image source"),
        ([[1.0, 1.0, 1.0]], [1.0], {"sample_rate": 500}, r"sample_rate=500 is out of range; allowed: >= 1000"),
        ([[1.0, 1.0, 1.0]], [1.0], {"c_m_s": 1000.0}, r"c_m_s=1000\.0 is out of range; allowed: >= 200"),
    ],
)
def test_render_validation(positions, gains, kw, match):
    ims = ImageSources(np.asarray(positions, float), np.asarray(gains, float), np.zeros(len(positions), dtype=int))
    with pytest.raises(ParameterError, match=match):
        Binaural(position_m=HEAD).render(ims, **{"sample_rate": 16000, "c_m_s": C, "n_samples": 100, **kw})
    with pytest.raises(ParameterError, match=r"highpass='twice'; allowed: per_direction"):
        render_binaural_reference(Binaural(), ims, sample_rate=16000, c_m_s=C, n_samples=100, highpass="twice")
