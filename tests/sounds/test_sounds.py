"""Sound kinds and palettes: lookups, one-line errors, and the four catalogues reproduced bit for bit.

The tasks draw their recipes from the palettes (``tasks/_spatial.py``, ``tasks/temporal_reorder.py``):
the recipes are checked against the generator draws they stand for, the signals against pinned samples.
"""

import numpy as np
import pytest
import soundfile as sf

from auralgen.core.errors import ParameterError
from auralgen.core.random import Uniform
from auralgen.sounds import PALETTES, SoundKind, palette, register_sound_kind
from auralgen.sounds.events import CONTINUOUS, KINDS, NAMES, draw_sound, synth_sound
from auralgen.sounds.files import read_source_file
from auralgen.sounds.processes import PROCESSES, render_process
from auralgen.sounds.spatial import SYNTH_KINDS, source_signal
from auralgen.sounds.tones import PITCHED, STIMULI
from auralgen.tasks import _sounds as S
from auralgen.tasks.base import AudioConfig, task_class

SR = 16000


def test_palettes_hold_todays_kinds_in_order():
    assert {name: tuple(palette(name)) for name in PALETTES} == {
        "events": ("harmonic", "noise", "sweep", "clicks", "knocks", "recording"),
        "reorder": ("sweep", "filling", "approaching", "bouncing", "scale", "recording"),
        "spatial": ("noise", "harmonic", "chirp", "clicks", "file", "recording"),
        "tones": ("pure", "harmonic", "noise", "clip"),
    }
    assert (STIMULI, PITCHED) == (("pure", "harmonic", "noise"), ("pure", "harmonic"))
    assert CONTINUOUS == ("harmonic", "noise", "sweep") and KINDS == tuple(NAMES)
    assert NAMES["sweep"] == "the rising sweep" and NAMES["knocks"] == "the knocking sequence"


def test_same_kind_is_a_different_source_in_each_palette():
    sources = {name: palette(name)["harmonic"] for name in ("tones", "events", "spatial")}
    assert len({type(s) for s in sources.values()}) == 3
    assert [s.palettes for s in sources.values()] == [("tones",), ("events",), ("spatial",)]


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: palette("drums"), r"^sound palette='drums' is unknown; allowed: events, reorder, spatial, tones$"),
        (
            lambda: draw_sound(np.random.default_rng(0), "gong", 1.0),
            r"^kind='gong' is unknown; allowed: harmonic, noise",
        ),
        (lambda: synth_sound({"kind": "gong", "duration_s": 1.0}, SR), r"^sound\.kind='gong' is unknown; allowed: "),
        (lambda: synth_sound({"kind": "noise", "duration_s": 1.0}, 8000), r"^sample_rate=8000 is too low"),
        (
            lambda: render_process({"process": "rain", "sample_rate_hz": SR}),
            r"^process='rain' is unknown; allowed: sweep",
        ),
        (lambda: source_signal({"kind": "hum", "duration_s": 1, "seed": 0}, SR, ramp_s=0.01), r"^source\.kind='hum'"),
        (lambda: palette("spatial").draw(np.random.default_rng(0), "file", duration_s=1.0), r"needs files"),
    ],
)
def test_errors_are_one_line_naming_what_is_allowed(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_a_new_source_is_one_class_and_refuses_a_taken_kind():
    @register_sound_kind
    class Hum(SoundKind):
        kind = "hum"
        palettes = ("tones",)

        def draw(self, rng, **_):
            return {"kind": "hum", "freq_hz": 50.0}

        def render(self, spec, sample_rate, **_):
            return np.full(int(spec["duration_s"] * sample_rate), 0.5)

    try:
        assert palette("tones").kinds() == ("pure", "harmonic", "noise", "clip", "hum")
        x = S.synth_sound({**Hum().draw(None), "duration_s": 0.1, "level_db_spl": 60.0}, SR, 136.0, 0.01)
        assert x.shape == (1600,) and x[800] == pytest.approx(
            10 ** ((60.0 - 136.0) / 20), rel=1e-9
        )  # a constant: RMS = value
    finally:
        palette("tones").remove("hum")

    class Other(SoundKind):
        kind = "pure"
        palettes = ("tones",)

    with pytest.raises(ParameterError, match=r"^tones sound kind='pure' is already registered"):
        register_sound_kind(Other)


# -- catalogue (1): tones, as tasks/_sounds.py drew and rendered them before the move ---------------------
def _tone_reference(sound, sr):
    from auralgen.synth import harmonic_complex, noise, tone

    if sound["kind"] == "pure":
        return tone(sound["freq_hz"], sound["duration_s"], sample_rate=sr)
    if sound["kind"] == "harmonic":
        return harmonic_complex(sound["freq_hz"], sound["duration_s"], sample_rate=sr, n_harmonics=sound["n_harmonics"])
    rng = np.random.default_rng(sound["noise_seed"])
    return noise(sound["duration_s"], sample_rate=sr, rng=rng, color=sound.get("color", "white"))


@pytest.mark.parametrize("seed", range(6))
def test_tones_draw_and_render_as_before(seed):
    rng = np.random.default_rng(seed)
    sound = S.draw_sound(rng, STIMULI, Uniform(200.0, 1000.0), 7)
    ref = np.random.default_rng(seed)
    kind = STIMULI[int(ref.integers(3))]
    assert sound["kind"] == kind
    if kind == "noise":
        assert sound == {"kind": "noise", "noise_seed": int(ref.integers(2**31)), "color": "pink"}
    else:
        freq = float(ref.uniform(200.0, 1000.0))
        assert sound == {"kind": kind, "freq_hz": freq, "n_harmonics": 7 if kind == "harmonic" else 1}
    assert rng.random() == ref.random()  # the generator is left where it was
    sound = {**sound, "duration_s": 0.25}
    np.testing.assert_array_equal(palette("tones").render(sound, SR), _tone_reference(sound, SR))


# -- catalogue (3): spatial sources vs tasks/_spatial.py ----------------------------------------------------
@pytest.fixture(scope="module")
def spatial_task(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sources")
    t = np.arange(22050) / 22050.0
    sf.write(folder / "a.wav", np.stack([np.sin(2 * np.pi * 440 * t), 0.5 * t], axis=1), 22050)
    sf.write(folder / "b.flac", 0.3 * np.sin(2 * np.pi * 97 * t), 22050)
    cls = task_class("azimuth_relative")
    return cls(cls.Config(sources_dir=str(folder)), AudioConfig())


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("duration_s", [None, 0.4])
def test_spatial_recipes_match_the_task(spatial_task, seed, duration_s):
    want = spatial_task.draw_source(np.random.default_rng(seed), duration_s)
    rng = np.random.default_rng(seed)
    kinds = tuple(spatial_task.cfg.sources) + ("file",)
    kind = kinds[int(rng.integers(len(kinds)))]
    got = palette("spatial").draw(
        rng, kind, duration_s=float(duration_s or spatial_task.source_s.sample(rng)), files=spatial_task.files
    )
    assert got == want and list(got) == list(want)


@pytest.mark.parametrize("sr", [22050, 44100])
def test_file_sources_are_the_mono_downmix_at_the_rate(spatial_task, sr):
    path = spatial_task.files[0]  # a.wav: 1 s at 22050 Hz, a 440 Hz sine and a ramp
    data, file_sr = sf.read(path, dtype="float64", always_2d=True)
    x = read_source_file(path, sr, 1.5)
    assert x.shape == (round(1.5 * sr),) and not np.any(x[round(1.01 * sr) :])  # zero-padded after the file
    if sr == file_sr:
        np.testing.assert_array_equal(x[:file_sr], data.mean(axis=1))
    else:  # twice the rate: every other sample is the file's (resample_poly 2/1 keeps them up to its filter)
        np.testing.assert_allclose(x[2000:40000:2], data.mean(axis=1)[1000:20000], atol=2e-3)
    spec = {"kind": "file", "duration_s": 1.5, "seed": 0, "path": path}
    y = source_signal(spec, sr, ramp_s=0.01)  # the file source: ramped, unit RMS
    assert y[0] == 0.0 and np.sqrt(np.mean(y**2)) == pytest.approx(1.0, rel=1e-12)


# -- catalogue (4): processes, as tasks/temporal_reorder.py draws them ---------------------------------------
@pytest.mark.parametrize("process", PROCESSES)
@pytest.mark.parametrize("extent", [1.0, 0.25])
def test_processes_draw_in_the_task_order_and_render(process, extent):
    cls = task_class("temporal_reorder")
    task = cls(cls.Config(), AudioConfig())
    p = task.sample(np.random.default_rng(3), 0)
    rng = np.random.default_rng(3)
    rng.integers(len(task.cfg.processes)), rng.permutation(3), rng.uniform(*task.cfg.level_db_spl)
    assert (p["start"], p["seed"]) == (float(rng.uniform()), int(rng.integers(2**31)))
    assert list(p)[-5:] == ["start", "seed", "shuffle", "pad_s", "offsets_s"]  # the clips' offsets drawn last
    p = {**p, "process": process, "extent": extent}
    x = render_process(p)
    assert x.shape == (round(3 * p["segment_s"] * p["sample_rate_hz"]),) and np.max(np.abs(x)) > 0
    clips = task.render(p)
    seg = round(p["segment_s"] * p["sample_rate_hz"])
    k = p["shuffle"].index(1)  # the clip holding the middle segment: its samples come from render_process
    at = round(p["offsets_s"][k] * p["sample_rate_hz"])  # where that clip places its segment
    mid = clips[k][0, at : at + seg].astype(np.float64)
    ref = x[seg : 2 * seg]
    corr = float(np.dot(mid, ref) / (np.linalg.norm(mid) * np.linalg.norm(ref)))
    assert corr > 0.99


# -- pinned samples: stay meaningful once the task modules call the palettes ---------------------------------
def _digest(signals) -> str:
    import hashlib

    m = hashlib.sha256()
    for x in signals:
        m.update(np.round(np.asarray(x, dtype=np.float64), 9).tobytes())
    return m.hexdigest()[:16]


def test_every_palette_renders_its_pinned_samples():
    rng = np.random.default_rng(5)
    events = [synth_sound(palette("events").draw(rng, k, duration_s=0.5), SR) for k in KINDS]
    rng = np.random.default_rng(5)
    spatial = [source_signal(palette("spatial").draw(rng, k, duration_s=0.5), SR, ramp_s=0.01) for k in SYNTH_KINDS]
    p = {"sample_rate_hz": SR, "segment_s": 0.4, "extent": 0.5, "start": 0.3, "seed": 9}
    reorder = [render_process({**p, "process": k}) for k in PROCESSES]
    assert [_digest(events), _digest(spatial), _digest(reorder)] == [
        "4154c2da3163de98",
        "c24d84d48b174d83",  # the harmonic kind by angle addition (< 3e-12 of its peak from a sine per sample)
        "487d09542c373bb9",  # temporal_reorder's bouncing impacts run to the end of the process (0.2.1)
    ]


@pytest.mark.parametrize(("duration_s", "fast"), [(1.5, True), (23879 / 16000, False), (16785 / 16000, False)])
def test_spatial_noise_is_shaped_at_a_fast_fft_length_and_cut(duration_s, fast):
    """The spatial noise of n samples is the same pink band noise drawn at next_fast_len(n) and cut: a
    length that is already fast (1.5 s at 16 kHz) gives synth.noise's very samples; a prime one (23879)
    or one with a large prime factor (16785 = 9 * 5 * 373) keeps its band and unit RMS."""
    import scipy.fft

    from auralgen.synth import noise
    from auralgen.synth.palette import spatial_noise_band

    sr, n = 16000, round(duration_s * 16000)
    spec = {"kind": "noise", "duration_s": duration_s, "seed": 11}
    x = source_signal(spec, sr, ramp_s=0.0)
    band = spatial_noise_band(sr)
    m = scipy.fft.next_fast_len(n, real=True)
    assert (m == n) == fast
    cut = noise(m / sr, sample_rate=sr, rng=np.random.default_rng(11), color="pink", band_hz=band)[:n]
    assert x.shape == (n,)
    np.testing.assert_allclose(x, cut / np.sqrt(np.mean(cut**2)), rtol=0, atol=1e-12)
    if fast:  # unchanged where the length was already fast
        direct = noise(duration_s, sample_rate=sr, rng=np.random.default_rng(11), color="pink", band_hz=band)
        np.testing.assert_array_equal(x, direct)
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(n, 1.0 / sr)
    outside = power[(freqs < 0.8 * band[0]) | (freqs > 1.05 * band[1])].sum() / power.sum()
    assert outside < 1e-3  # the cut leaks < 0.1 % of the energy outside the band
