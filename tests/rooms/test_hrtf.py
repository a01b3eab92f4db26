"""KEMAR loading (restricted unpickler), Hrtf resampling and nearest-direction lookup, fetch."""

from __future__ import annotations

import bz2
import os
import pickle
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.measure.geometry import az_el_to_unit
from auralgen.rooms import hrtf as hrtf_mod
from auralgen.rooms.hrtf import (
    FETCH_COMMAND,
    Hrtf,
    HrtfMissingError,
    default_kemar_path,
    fetch,
    load_kemar,
    main,
)


@pytest.fixture(scope="session")
def kemar() -> Hrtf:
    """The KEMAR set; fetched once from PyPI (slab wheel) if it is not cached yet."""
    try:
        return load_kemar()
    except HrtfMissingError:
        try:
            fetch()
        except Exception as exc:  # no PyPI access
            pytest.skip(f"KEMAR HRTF unavailable and `{FETCH_COMMAND}` failed: {exc}")
        return load_kemar()


# --------------------------------------------------------------------------- the data


def test_kemar_shape_rate_and_grid(kemar):
    assert kemar.num_directions == 710
    assert kemar.hrirs.shape == (710, 2, 512)
    assert kemar.sample_rate == 44100
    az, el = kemar.directions_deg.T
    assert az.min() >= -180 and az.max() < 180
    assert el.min() == -40 and el.max() == 90
    assert len(np.unique(el)) == 14


def test_kemar_azimuth_convention_left_is_positive(kemar):
    """At az +90 (left) the left ear (channel 0) is louder and earlier; mirrored at -90."""
    for az, louder in ((90.0, 0), (-90.0, 1)):
        left, right = kemar.hrirs[int(kemar.nearest(az, 0.0))]
        assert np.isclose(kemar.directions_deg[int(kemar.nearest(az, 0.0))], [az, 0.0]).all()
        ears = (left, right)
        assert np.sum(ears[louder] ** 2) > 10 * np.sum(ears[1 - louder] ** 2)
        assert np.argmax(np.abs(ears[louder])) + 20 < np.argmax(np.abs(ears[1 - louder]))


def test_kemar_resampled_cached(kemar):
    r = kemar.resampled(16000)
    assert r is kemar.resampled(16000)
    assert kemar.resampled(44100) is kemar
    assert r.hrirs.shape == (710, 2, 186) and r.sample_rate == 16000
    np.testing.assert_array_equal(r.directions_deg, kemar.directions_deg)
    with pytest.raises(ParameterError, match="sample_rate=0"):
        kemar.resampled(0)


def test_nearest_maps_measured_directions_to_themselves(kemar):
    az, el = kemar.directions_deg.T
    np.testing.assert_array_equal(kemar.nearest(az, el), np.arange(710))
    assert kemar.nearest(az.reshape(71, 10), el.reshape(71, 10)).shape == (71, 10)
    # azimuth wraps: -180 and 179.99 are neighbours
    assert kemar.nearest(179.99, 0.0) == kemar.nearest(-180.0, 0.0)


@settings(max_examples=40, deadline=None)
@given(st.floats(-180, 180), st.floats(-90, 90))
def test_nearest_is_great_circle_nearest(az, el):
    h = _small_hrtf()
    idx = int(h.nearest(az, el))
    cos = az_el_to_unit(*h.directions_deg.T) @ az_el_to_unit(az, el)
    assert cos[idx] == pytest.approx(cos.max(), abs=1e-12)


def test_nearest_equals_the_kd_tree_on_paths_and_random_directions(kemar):
    """The lookup certified by the hull neighbours (most queries) gives the KD-tree's answer on every query:
    random directions (each a fresh start), slow paths (each query near the previous one, as a moving source's
    blocks), the measured directions and the points halfway between neighbours (ties broken by the tree)."""
    rng = np.random.default_rng(11)
    az = np.concatenate([rng.uniform(-180, 180, 3000), np.linspace(-180, 180, 4000), np.full(500, 30.0)])
    el = np.concatenate(
        [np.degrees(np.arcsin(rng.uniform(-1, 1, 3000))), np.linspace(-60, 89, 4000), np.linspace(-90, 90, 500)]
    )
    units = az_el_to_unit(*kemar.directions_deg.T)
    half = units[:-1] + units[1:]  # halfway between consecutive measured directions: equidistant from both
    half_az, half_el = (
        np.degrees(np.arctan2(half[:, 1], half[:, 0])),
        np.degrees(np.arctan2(half[:, 2], np.hypot(half[:, 0], half[:, 1]))),
    )
    az, el = (
        np.concatenate([az, kemar.directions_deg[:, 0], half_az]),
        np.concatenate([el, kemar.directions_deg[:, 1], half_el]),
    )
    got = kemar.nearest(az, el)
    want = kemar._cache["tree"].query(az_el_to_unit(az, el))[1]
    np.testing.assert_array_equal(got, want)
    certified = hrtf_mod._certified_nearest(
        np.ascontiguousarray(az_el_to_unit(az, el)), kemar._cache["units"], *kemar._cache["neighbours"]
    )
    assert np.mean(certified >= 0) > 0.9  # the certified path answered most queries
    assert np.all(certified[certified >= 0] == want[certified >= 0])


def test_nearest_without_a_hull_around_the_centre_asks_the_tree():
    """Directions all in one hemisphere (no hull around the centre) or repeated: nothing is certified, the
    KD-tree answers every query."""
    rng = np.random.default_rng(2)
    for dirs in (
        np.column_stack([rng.uniform(-60, 60, 40), rng.uniform(0, 60, 40)]),  # one side only
        np.repeat(np.column_stack([rng.uniform(-180, 180, 20), rng.uniform(-80, 80, 20)]), 2, axis=0),  # twice each
    ):
        h = Hrtf(dirs, rng.normal(size=(dirs.shape[0], 2, 8)), 8000)
        az, el = rng.uniform(-180, 180, 300), rng.uniform(-90, 90, 300)
        got = h.nearest(az, el)
        start, index = h._cache["neighbours"]
        assert index.size == 0
        np.testing.assert_array_equal(got, h._cache["tree"].query(az_el_to_unit(az, el))[1])


def _small_hrtf() -> Hrtf:
    rng = np.random.default_rng(0)
    dirs = np.column_stack([rng.uniform(-180, 180, 50), np.degrees(np.arcsin(rng.uniform(-1, 1, 50)))])
    return Hrtf(dirs, rng.normal(size=(50, 2, 16)), 8000)


def test_hrtf_validates_shapes():
    with pytest.raises(ParameterError, match=r"hrtf\.hrirs shape=\(3, 1, 8\)"):
        Hrtf(np.zeros((3, 2)), np.zeros((3, 1, 8)), 44100)
    with pytest.raises(ParameterError, match=r"hrtf\.directions_deg shape"):
        Hrtf(np.zeros((3, 3)), np.zeros((3, 2, 8)), 44100)


# --------------------------------------------------------------------------- loading


def _write_bz2_pickle(path, obj, monkeypatch=None, fake_modules=()):
    for name, mod in fake_modules:
        monkeypatch.setitem(sys.modules, name, mod)
    path.write_bytes(bz2.compress(pickle.dumps(obj, protocol=4)))
    return path


def test_loader_reads_slab_structure_without_slab(tmp_path, monkeypatch):
    """A tiny pickle with slab's class names and state layout loads with the conventions applied."""
    hrtf_m, filter_m = types.ModuleType("slab.hrtf"), types.ModuleType("slab.filter")

    class HRTF:  # stand-ins only for writing the fixture file
        pass

    class Filter:
        pass

    HRTF.__module__, Filter.__module__ = "slab.hrtf", "slab.filter"
    HRTF.__qualname__, Filter.__qualname__ = "HRTF", "Filter"
    hrtf_m.HRTF, filter_m.Filter = HRTF, Filter
    filters = []
    for k in range(2):
        f = Filter()
        f.__dict__.update(data=np.arange(16.0).reshape(8, 2) + k, samplerate=44100.0, fir=True)
        filters.append(f)
    h = HRTF()
    h.__dict__.update(samplerate=44100.0, data=filters, sources=np.array([[270.0, 10.0, 1.4], [45.0, -40.0, 1.4]]))
    fakes = [("slab", types.ModuleType("slab")), ("slab.hrtf", hrtf_m), ("slab.filter", filter_m)]
    path = _write_bz2_pickle(tmp_path / "tiny.bz2", h, monkeypatch, fakes)
    for name, _ in fakes:
        monkeypatch.delitem(sys.modules, name)
    out = load_kemar(path)
    np.testing.assert_array_equal(out.directions_deg, [[-90.0, 10.0], [45.0, -40.0]])
    np.testing.assert_array_equal(out.hrirs[1, 0], np.arange(0.0, 16.0, 2) + 1)  # left = column 0
    np.testing.assert_array_equal(out.hrirs[1, 1], np.arange(1.0, 16.0, 2) + 1)
    assert out.sample_rate == 44100 and out.name == "tiny"


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > evil_marker",))


@pytest.mark.parametrize(
    ("payload", "name"),
    [(_Evil(), r"(posix|nt)\.system"), ({"a": __import__("collections").OrderedDict()}, r"collections\.OrderedDict")],
)
def test_restricted_unpickler_refuses_unexpected_class(tmp_path, monkeypatch, payload, name):
    monkeypatch.chdir(tmp_path)
    path = _write_bz2_pickle(tmp_path / "bad.bz2", payload)
    with pytest.raises(pickle.UnpicklingError, match=rf"refusing to unpickle {name}; allowed: slab\.hrtf\.HRTF"):
        load_kemar(path)
    assert not (tmp_path / "evil_marker").exists()


def test_loader_rejects_wrong_top_level_object(tmp_path):
    path = _write_bz2_pickle(tmp_path / "arr.bz2", np.zeros(3))
    with pytest.raises(ParameterError, match=r"top-level object is ndarray; allowed: slab\.hrtf\.HRTF"):
        load_kemar(path)


def test_missing_file_names_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv("AURALGEN_CACHE_DIR", str(tmp_path))
    assert default_kemar_path() == tmp_path / "hrtf" / "mit_kemar_normal_pinna.bz2"
    with pytest.raises(HrtfMissingError, match=r"run `python -m auralgen\.rooms\.hrtf fetch`") as info:
        load_kemar()
    assert isinstance(info.value, FileNotFoundError)


def test_default_file_checksum_enforced(tmp_path, monkeypatch):
    monkeypatch.setenv("AURALGEN_CACHE_DIR", str(tmp_path))
    _write_bz2_pickle(default_kemar_path().parent.mkdir(parents=True) or default_kemar_path(), np.zeros(3))
    with pytest.raises(ParameterError, match=r"sha256=[0-9a-f]{64}; allowed: 61f562a6"):
        load_kemar()


# --------------------------------------------------------------------------- fetch


def test_fetch_skips_download_when_valid_file_present(kemar, tmp_path, monkeypatch):
    dest = tmp_path / "k.bz2"
    shutil.copyfile(default_kemar_path(), dest)

    def no_network(*args, **kwargs):
        raise AssertionError("fetch must not run pip when the file is valid")

    monkeypatch.setattr(hrtf_mod.subprocess, "run", no_network)
    assert fetch(dest) == dest
    assert main(["fetch", "--dest", str(dest)]) == 0


def test_fetch_reports_pip_failure(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(
        hrtf_mod.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, "", "ERROR: no network\n")
    )
    assert main(["fetch", "--dest", str(tmp_path / "k.bz2")]) == 1
    assert "no network" in capsys.readouterr().err and not (tmp_path / "k.bz2").exists()


@pytest.mark.slow
def test_fetch_downloads_from_pypi(tmp_path):
    dest = fetch(tmp_path / "sub" / "k.bz2", force=True)
    assert load_kemar(dest).num_directions == 710
