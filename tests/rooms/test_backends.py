"""compute_rir: the fast numba engine against pyroomacoustics, and argument checks."""

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.rooms.backends import BACKENDS, FastBackend, PraBackend, check_backend
from auralgen.rooms.receivers import FOA, Binaural, Mono, Tetrahedral
from auralgen.rooms.scene import spatial_rir
from auralgen.rooms.simulate import compute_rir
from auralgen.rooms.spec import RoomSpec, all_modes

pra = pytest.importorskip("pyroomacoustics")

FS = 16000
TETRA = 0.05 * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)


def _nerr(a, b):
    n = max(a.shape[-1], b.shape[-1])
    a = np.pad(a, [(0, 0), (0, n - a.shape[-1])])
    b = np.pad(b, [(0, 0), (0, n - b.shape[-1])])
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


GEOMETRIES = [
    pytest.param(
        RoomSpec((6.0, 5.0, 3.0), rt60_s=0.3),
        (1.5, 3.6, 1.3),
        np.array([3.0, 2.5, 1.5]) + TETRA,
        id="6x5x3-rt0.3-tetra",
    ),
    pytest.param(
        RoomSpec(
            (4.2, 3.4, 2.6),
            materials={"west": 0.05, "east": 0.4, "south": 0.2, "north": 0.6, "floor": 0.1, "ceiling": 0.8},
        ),
        (0.9, 2.7, 1.1),
        [[3.1, 0.8, 1.7], [2.2, 2.9, 0.4]],
        id="walls-differ",
    ),
    pytest.param(
        RoomSpec((9.0, 7.0, 3.2), rt60_s=0.5, max_order=12), (2.2, 1.3, 1.7), [[6.7, 5.1, 1.2]], id="classroom-order12"
    ),
    pytest.param(
        RoomSpec((2.5, 2.2, 2.2), rt60_s=0.12), (0.7, 0.8, 1.3), np.array([1.6, 1.2, 1.0]) + TETRA, id="booth"
    ),
    pytest.param(RoomSpec((8.0, 8.0, 4.0), max_order=0), (2.0, 2.0, 1.5), [[5.0, 6.0, 1.5]], id="anechoic"),
]


@pytest.mark.parametrize(("room", "src", "mics"), GEOMETRIES)
def test_fast_matches_pyroomacoustics(room, src, mics):
    fast = compute_rir(room, src, mics, sample_rate=FS, backend="fast")
    ref = compute_rir(room, src, mics, sample_rate=FS, backend="pra")
    assert fast.dtype == np.float64 and fast.shape[0] == np.asarray(mics).reshape(-1, 3).shape[0]
    assert fast.shape == ref.shape
    assert _nerr(fast, ref) <= 1e-3
    for f, r in zip(fast, ref, strict=True):  # also per microphone
        assert np.linalg.norm(f - r) / np.linalg.norm(r) <= 1e-3


def test_fast_matches_pyroomacoustics_at_other_rate_and_speed_of_sound():
    room = RoomSpec((5.0, 4.0, 3.0), rt60_s=0.25, c_m_s=340.0)
    args = dict(source_m=(1.2, 1.1, 1.4), mics_m=[[3.7, 2.9, 1.6]], sample_rate=48000)
    assert _nerr(compute_rir(room, **args), compute_rir(room, backend="pra", **args)) <= 1e-3


def test_pra_backend_restores_constants_and_threads():
    before = {k: pra.constants.get(k) for k in ("frac_delay_length", "num_threads", "rir_hpf_fc")}
    pra.constants.set("rir_hpf_fc", 30.0)
    try:
        room = RoomSpec((4.0, 3.0, 2.5), rt60_s=0.2)
        a = compute_rir(room, (1.0, 1.0, 1.0), [[3.0, 2.0, 1.5]], sample_rate=FS, backend="pra")
        b = compute_rir(room, (1.0, 1.0, 1.0), [[3.0, 2.0, 1.5]], sample_rate=FS, backend="fast")
        assert _nerr(a, b) <= 1e-3  # ran with the 10 Hz high-pass despite the global setting
        assert pra.constants.get("rir_hpf_fc") == 30.0
    finally:
        pra.constants.set("rir_hpf_fc", before["rir_hpf_fc"])
    assert pra.constants.get("num_threads") == before["num_threads"]


def test_pra_air_absorption_changes_response():
    room = RoomSpec((5.0, 4.0, 3.0), rt60_s=0.3, air_absorption=True)
    dry = RoomSpec((5.0, 4.0, 3.0), rt60_s=0.3)
    wet = compute_rir(room, (1.0, 1.0, 1.0), [[4.0, 3.0, 2.0]], sample_rate=FS, backend="pra")
    ref = compute_rir(dry, (1.0, 1.0, 1.0), [[4.0, 3.0, 2.0]], sample_rate=FS, backend="pra")
    assert 1e-3 < _nerr(wet, ref) < 0.5
    with pytest.raises(ParameterError, match="air_absorption=True is not modelled by backend='fast'"):
        compute_rir(room, (1.0, 1.0, 1.0), [[4.0, 3.0, 2.0]], sample_rate=FS, backend="fast")


def test_pra_hybrid_is_seeded_and_leaves_global_rngs_alone():
    room = RoomSpec((4.0, 3.0, 2.5), rt60_s=0.25)
    np.random.seed(7)
    state = np.random.get_state()[1].copy()
    pkg_rng = pra.random.get_rng()
    args = dict(sample_rate=8000, backend="pra", mode="hybrid")
    a = compute_rir(room, (1.0, 1.0, 1.0), [[3.0, 2.0, 1.5]], rng=np.random.default_rng(3), **args)
    b = compute_rir(room, (1.0, 1.0, 1.0), [[3.0, 2.0, 1.5]], rng=np.random.default_rng(3), **args)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    assert pra.random.get_rng() is pkg_rng


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"source_m": (7.0, 1.0, 1.0)}, r"source_m=\[7\.0, 1\.0, 1\.0\] is outside the room"),
        ({"mics_m": [[1.0, 1.0, 1.0], [1.0, 1.0, 2.95]]}, r"mics_m\[1\]=.*closer than 0\.1 m"),
        ({"mics_m": [[2.0, 2.0, 1.5]]}, r"mics_m\[0\]=.*from the source; allowed: >= 0\.01 m"),
        ({"mics_m": np.zeros((2, 2))}, r"mics_m has shape \(2, 2\)"),
        ({"backend": "gpu"}, r"backend='gpu' is unknown; allowed: fast, pra$"),
        ({"mode": "late"}, r"mode='late' is unknown; allowed: exact, hybrid$"),
        ({"mode": "hybrid"}, r"rng=None with mode='hybrid'"),
        ({"sample_rate": 10}, r"sample_rate=10 is out of range"),
    ],
)
def test_compute_rir_rejects(kwargs, match):
    args = dict(source_m=(2.0, 2.0, 1.5), mics_m=[[3.0, 2.5, 1.2]], sample_rate=FS)
    args.update(kwargs)
    with pytest.raises(ParameterError, match=match):
        compute_rir(RoomSpec((6.0, 5.0, 3.0), rt60_s=0.3), **args)


def test_single_mic_vector_is_accepted():
    room = RoomSpec((6.0, 5.0, 3.0), rt60_s=0.2)
    a = compute_rir(room, (2.0, 2.0, 1.5), (3.0, 2.5, 1.2), sample_rate=FS)
    b = compute_rir(room, (2.0, 2.0, 1.5), [[3.0, 2.5, 1.2]], sample_rate=FS)
    np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_fast_matches_pyroomacoustics_long_reverb():
    room = RoomSpec((6.0, 5.0, 3.0), rt60_s=1.0)
    args = dict(source_m=(1.5, 3.6, 1.3), mics_m=np.array([3.0, 2.5, 1.5]) + TETRA, sample_rate=FS)
    assert _nerr(compute_rir(room, **args), compute_rir(room, backend="pra", **args)) <= 1e-3


# --------------------------------------------------------------------------- the registry


def test_backends_registry_is_the_one_list_of_backends_and_modes():
    assert BACKENDS.names() == ["fast", "pra"]
    assert isinstance(BACKENDS.get("fast"), FastBackend) and isinstance(BACKENDS.get("pra"), PraBackend)
    assert [(b.name, b.modes) for b in BACKENDS.values()] == [
        ("fast", ("exact", "hybrid")),
        ("pra", ("exact", "hybrid")),
    ]
    assert all_modes() == ("exact", "hybrid")


ROOM = RoomSpec((6.0, 5.0, 3.0), rt60_s=0.3)
AIR = RoomSpec((6.0, 5.0, 3.0), rt60_s=0.3, air_absorption=True)
AT = (3.0, 2.5, 1.5)


@pytest.mark.parametrize(
    ("backend", "room", "receiver", "why"),
    [
        ("fast", ROOM, Binaural(position_m=AT), None),
        ("fast", ROOM, None, None),
        ("fast", AIR, Mono(position_m=AT), "air_absorption=True is not modelled by backend='fast'"),
        ("pra", AIR, Tetrahedral(position_m=AT), None),
        ("pra", ROOM, None, None),
        ("pra", ROOM, Binaural(position_m=AT), "backend='pra' cannot render a binaural receiver"),
        ("pra", ROOM, FOA(position_m=AT), "backend='pra' cannot render a foa_acn_sn3d receiver"),
    ],
)
def test_supports_says_why_not(backend, room, receiver, why):
    got = BACKENDS.get(backend).supports(room, receiver, "exact")
    assert got is None if why is None else got.startswith(why) and "; allowed: " in got


def test_check_backend_names_the_task_key():
    with pytest.raises(ParameterError, match=r"^task\.x\.backend='gpu' is unknown; allowed: fast, pra$"):
        check_backend("gpu", "exact", ROOM, key="task.x.")
    with pytest.raises(ParameterError, match=r"^task\.x\.mode='late' is unknown; allowed: exact, hybrid$"):
        check_backend("fast", "late", ROOM, key="task.x.")
    assert check_backend("pra", "hybrid", AIR, Mono(position_m=AT)) is BACKENDS.get("pra")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"backend": "pra"}, r"backend='pra' cannot render a binaural receiver; allowed: fast"),
        ({"mode": "late"}, r"mode='late' is unknown; allowed: exact, hybrid"),  # before: rendered as hybrid
        ({"backend": "gpu"}, r"backend='gpu' is unknown; allowed: fast, pra"),
    ],
)
def test_spatial_rir_refuses_what_the_backend_does_not_serve(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        spatial_rir(
            ROOM, (1.0, 1.0, 1.2), Binaural(position_m=AT), sample_rate=FS, rng=np.random.default_rng(0), **kwargs
        )


def test_spatial_rir_sends_omni_arrays_to_the_backend_mic_by_mic():
    rec = Tetrahedral(position_m=AT, yaw_deg=30.0)
    got = spatial_rir(ROOM, (1.0, 1.0, 1.2), rec, sample_rate=FS, mode="exact", backend="pra")
    want = compute_rir(ROOM, (1.0, 1.0, 1.2), rec.mic_positions_m(), sample_rate=FS, backend="pra")
    np.testing.assert_array_equal(got, want)
