"""Mixer: levels and onsets in the audio match the record, peak safety, determinism, spec errors."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from auralgen.core.errors import ParameterError
from auralgen.core.random import Dist, Uniform
from auralgen.measure import mixture_components
from auralgen.mixing import DEFAULT_MIXING, MixInfo, MixSpec, component_level, mix, plan_mix, render_mix
from auralgen.sounds.events import KINDS, draw_sound, synth_sound
from auralgen.synth import noise, tone
from auralgen.synth.levels import loudness_lufs

SR = 16000
CONF = Path(__file__).resolve().parents[2] / "conf" / "mixing"
SPECS = {"default": DEFAULT_MIXING, **{p.stem: yaml.safe_load(p.read_text()) for p in sorted(CONF.glob("*.yaml"))}}


def scene(spec: MixSpec, seed: int, n: int = 3):
    """Raw components and the mix of ``n`` sounds drawn from ``spec``."""
    rng = np.random.default_rng(seed)
    ev = spec.sample(rng, n)
    kinds = [KINDS[i] for i in rng.permutation(len(KINDS))[:n]]
    comps = [synth_sound(draw_sound(rng, k, d), SR) for k, d in zip(kinds, ev["durations_s"])]
    y, info = mix(
        comps,
        sample_rate=SR,
        onsets_s=ev["onsets_s"],
        levels=ev["levels"],
        duration_s=spec.clip_s,
        max_peak=spec.max_peak,
    )
    return comps, ev, y, info


def test_conf_files_are_valid_and_the_default_is_written_once():
    assert not (CONF / "default.yaml").exists()  # mixing=default is MixSpec's defaults (a node of cli/_hydra.py)
    assert set(SPECS) >= {"default", "overlap", "sequential"}
    assert all(set(cfg) == set(DEFAULT_MIXING) for cfg in SPECS.values())  # each option file spells every key
    assert {MixSpec.from_config(name, cfg).timing for name, cfg in SPECS.items()} == {"free", "overlap", "sequential"}


@pytest.mark.parametrize("name", ["default", "overlap", "sequential"])
def test_measured_levels_and_onsets_match_the_record(name):
    spec = MixSpec.from_config(name, SPECS[name])
    for seed in range(4):
        comps, ev, y, info = scene(spec, seed)
        found = mixture_components(y, comps, SR)
        levels = [component_level(c, SR) + f.gain_db for c, f in zip(comps, found)]
        want = info.output_levels()
        for k, (f, rec) in enumerate(zip(found, info.components)):
            assert abs(f.onset_s - rec.onset_s) <= 1e-3
            assert abs(rec.onset_s - ev["onsets_s"][k]) <= 0.5 / SR  # sample-exact quantisation
            assert rec.offset_s == pytest.approx(rec.onset_s + comps[k].shape[-1] / SR)
            assert rec.measured_level == pytest.approx(ev["levels"][k], abs=1e-6)
        diffs = np.subtract.outer(levels, levels)
        assert np.max(np.abs(diffs - np.subtract.outer(want, want))) <= 0.5
        assert np.max(np.abs(np.subtract(levels, want))) <= 0.5


def test_sequential_stems_read_their_target_loudness_in_the_mix():
    """Without overlap each stem can be cut out of the mix and measured on its own."""
    spec = MixSpec.from_config("sequential", SPECS["sequential"])
    comps, ev, y, info = scene(spec, 11)
    for rec, want in zip(info.components, info.output_levels()):
        a, b = round(rec.onset_s * SR), round(rec.offset_s * SR)
        assert loudness_lufs(y[0, a:b], SR) == pytest.approx(want, abs=0.05)
        assert rec.offset_s < min([r.onset_s for r in info.components if r.onset_s > rec.onset_s], default=math.inf)


def test_peak_safety_scales_the_whole_mix_and_records_the_gain():
    rng = np.random.default_rng(0)
    a, b = noise(1.0, sample_rate=SR, rng=rng), noise(1.0, sample_rate=SR, rng=rng)
    y, info = mix([a, b], sample_rate=SR, onsets_s=[0.0, 0.5], levels=[-3.0, -3.0], max_peak=0.5)
    dry = np.zeros(int(1.5 * SR))
    for x, rec in zip((a, b), info.components):
        s = round(rec.onset_s * SR)
        dry[s : s + len(x)] += x * 10 ** (rec.gain_db / 20)
    assert info.peak_before == pytest.approx(np.max(np.abs(dry))) and info.peak_before > 1.0
    assert info.global_gain_db == pytest.approx(20 * math.log10(0.5 / info.peak_before))
    assert np.max(np.abs(y)) <= 0.5
    # scaled, not clipped: the output is the dry mix times one constant everywhere
    np.testing.assert_allclose(y[0], dry * 10 ** (info.global_gain_db / 20), rtol=1e-6, atol=1e-7)
    assert np.sum(np.isclose(np.abs(y), 0.5, rtol=0, atol=1e-6)) <= 2
    assert info.output_levels()[0] == pytest.approx(-3.0 + info.global_gain_db, abs=1e-6)


def test_quiet_mix_has_unity_global_gain():
    y, info = mix([tone(500.0, 0.5, sample_rate=SR)], sample_rate=SR, onsets_s=[0.1], levels=[-30.0])
    assert info.global_gain_db == 0.0 and info.n_samples == int(0.6 * SR)
    assert loudness_lufs(y[0, int(0.1 * SR) :], SR) == pytest.approx(-30.0, abs=1e-3)


def test_mix_is_deterministic_and_renders_from_json_bit_for_bit():
    spec = MixSpec.from_config("default", SPECS["default"])
    comps, _, y1, info = scene(spec, 5)
    _, _, y2, info2 = scene(spec, 5)
    assert info == info2
    np.testing.assert_array_equal(y1, y2)
    record = json.loads(json.dumps(info.to_dict()))
    assert MixInfo.from_dict(record) == info
    again = render_mix(comps, record)
    assert again.dtype == np.float32 and again.shape == (1, int(spec.clip_s * SR))
    np.testing.assert_array_equal(again, y1)


def test_db_mode_sets_rms_level():
    x = noise(0.3, sample_rate=SR, rng=np.random.default_rng(1))
    y, info = mix([x], sample_rate=SR, onsets_s=[0.0], levels=[-20.0], level_mode="db")
    assert 20 * math.log10(np.sqrt(np.mean(y.astype(np.float64) ** 2))) == pytest.approx(-20.0, abs=1e-4)
    assert info.level_mode == "db" and info.components[0].gain_db == pytest.approx(-20.0, abs=1e-9)


def test_short_and_many_channel_components_follow_the_level_rule():
    short = tone(997.0, 0.1, sample_rate=SR)
    padded = np.zeros(int(0.4 * SR))
    padded[2400:4000] = short
    assert component_level(short, SR) == pytest.approx(loudness_lufs(padded, SR))
    six = np.stack([short * g for g in (1.0, 0.5, 0.5, 0.2, 0.2, 0.6)])
    assert component_level(six, SR) == pytest.approx(component_level(six.mean(axis=0), SR))
    stereo = np.stack([short, short])
    assert component_level(stereo, SR) == pytest.approx(component_level(short, SR) + 10 * math.log10(2), abs=1e-6)
    y, info = mix([six, six * 0.1], sample_rate=SR, onsets_s=[0.0, 0.2], levels=[-20.0, -26.0])
    assert y.shape == (6, int(0.3 * SR)) and info.n_channels == 6
    assert [c.measured_level for c in info.components] == pytest.approx([-20.0, -26.0], abs=1e-6)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"onsets_s": [0.0]}, r"onsets_s has 1 values; allowed: one per component \(2\)"),
        ({"onsets_s": [0.0, -0.1]}, r"onsets_s\[1\]=-0.1 is negative"),
        ({"levels": [-20.0, math.nan]}, r"levels=.* non-finite"),
        ({"level_mode": "sones"}, r"level_mode='sones' is unknown; allowed: \['lufs', 'db'\]"),
        ({"max_peak": 1.5}, r"max_peak=1.5 is out of range; allowed: 0 < max_peak <= 1"),
        ({"duration_s": 0.5}, r"duration_s=0.5 ends before the last component"),
    ],
)
def test_mix_rejects_bad_arguments(kwargs, match):
    x = tone(440.0, 0.5, sample_rate=SR)
    args = {"sample_rate": SR, "onsets_s": [0.0, 0.25], "levels": [-20.0, -20.0], **kwargs}
    with pytest.raises(ParameterError, match=match):
        mix([x, x], **args)


def test_mix_rejects_silence_and_mixed_channel_counts():
    x = tone(440.0, 0.5, sample_rate=SR)
    with pytest.raises(ParameterError, match=r"components\[1\] is silent"):
        mix([x, np.zeros(8000)], sample_rate=SR, onsets_s=[0, 0], levels=[-20, -20])
    with pytest.raises(ParameterError, match=r"components have \[1, 2\] channels"):
        mix([x, np.stack([x, x])], sample_rate=SR, onsets_s=[0, 0], levels=[-20, -20])


@pytest.mark.parametrize(
    "change,match",
    [
        ({"timing": "random"}, r"m.timing='random' is unknown; allowed: \['free', 'overlap', 'sequential'\]"),
        ({"level_mode": "phon"}, r"m.level_mode='phon' is unknown"),
        (
            {"relative_level": [-6.0, 3.0]},
            r"m.relative_level=\[-6.0, 3.0\] reaches \[-6.0, 3.0\]; allowed: values within \[-inf, 0.0\]",
        ),
        (
            {"duration_s": {"dist": "normal", "mean": 1.0, "std": 0.1}},
            r"m.duration_s=.* reaches \[-inf, inf\]; allowed: .*truncnorm",
        ),
        ({"gap_s": [0.4, 0.1]}, r"m.gap_s=\[0.4, 0.1\] has low > high"),
        ({"lead_s": {"dist": "gamma", "k": 2}}, r"m.lead_s.dist='gamma' is unknown"),
        ({"lead_s": {"dist": "uniform", "lo": 0}}, r"m.lead_s=.* has wrong fields for uniform"),
        ({"max_peak": 0}, r"m.max_peak=0 is out of range; allowed: 0 < max_peak <= 1"),
        ({"clip_s": 1.0, "timing": "sequential"}, r"m.clip_s=1.0 is too short for 2 events with timing=sequential"),
        ({"timing": "overlap", "overlap_s": [0.1, 0.7]}, r"m.overlap_s=.* can reach the shortest duration_s"),
        ({"loudness": 3}, r"m.loudness: unknown key; allowed keys: level_mode, timing"),
    ],
)
def test_spec_errors_name_key_value_and_allowed(change, match):
    with pytest.raises(ParameterError, match=match):
        MixSpec.from_config("m", {**DEFAULT_MIXING, **change})


def test_spec_keys_left_out_take_the_dataclass_defaults():
    spec = MixSpec.from_config("m", {"timing": "sequential", "gap_s": [0.2, 0.3]})
    assert (spec.timing, spec.gap_s.support(), spec.clip_s, spec.duration_s.support()) == (
        "sequential",
        (0.2, 0.3),
        4.5,
        (0.6, 1.2),
    )
    assert MixSpec.from_config("m", {}) == MixSpec()
    # -1 dBFS to 4 digits, as the shipped YAML always had it (10 ** (-1 / 20) would change the mixture's bytes)
    assert DEFAULT_MIXING["reference_level"] == [-30.0, -22.0] and DEFAULT_MIXING["max_peak"] == 0.8913
    with pytest.raises(ParameterError, match=r"^reference_level=\[-3, 2\] reaches"):
        MixSpec(reference_level=(-3, 2))
    # a distribution field is a Dist, printed as written; a distribution object is kept and its support checked
    spec = MixSpec(gap_s=Uniform(0.2, 0.3), lead_s=[0.0, 0.2])
    assert isinstance(spec.gap_s, Dist) and spec.gap_s.support() == (0.2, 0.3) and repr(spec.lead_s) == "[0.0, 0.2]"
    with pytest.raises(ParameterError, match=r"^gap_s=Uniform\(low=-1.0, high=0.3\) reaches \[-1.0, 0.3\]"):
        MixSpec(gap_s=Uniform(-1.0, 0.3))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4), timing=st.sampled_from(["free", "overlap", "sequential"]))
def test_timelines_follow_their_timing(seed, n, timing):
    spec = MixSpec.from_config("m", {**DEFAULT_MIXING, "timing": timing, "clip_s": 6.0})
    ev = spec.sample(np.random.default_rng(seed), n)
    on, dur, lv = ev["onsets_s"], ev["durations_s"], ev["levels"]
    assert all(0.6 <= d <= 1.2 for d in dur) and max(lv) == lv[0] and all(-10 <= v - lv[0] <= 0 for v in lv)
    assert all(0 <= t and t + d <= 6.0 + 1e-9 for t, d in zip(on, dur))
    steps = [on[k + 1] - (on[k] + dur[k]) for k in range(n - 1)]
    if timing == "sequential":
        assert 0.1 <= on[0] <= 0.4 and all(0.1 <= s <= 0.4 for s in steps)
    elif timing == "overlap":
        assert 0.1 <= on[0] <= 0.4 and all(-0.4 <= s <= -0.1 for s in steps)


@pytest.mark.parametrize("level_mode", ["lufs", "db"])
def test_given_raw_levels_give_the_same_mix_as_measuring_them(level_mode):
    """``raw_levels`` (each component's own level, measured before) skips that measurement only:
    the same mix and the same record, bit for bit; a wrong count is one clear error."""
    rng = np.random.default_rng(5)
    comps = [synth_sound(draw_sound(rng, k, 0.6), SR) for k in ("noise", "sweep", "harmonic")]
    kw = dict(sample_rate=SR, onsets_s=[0.1, 0.5, 1.2], levels=[-25.0, -31.0, -28.0], level_mode=level_mode)
    y0, info0 = mix(comps, **kw)
    raws = [component_level(c, SR, level_mode=level_mode) for c in comps]
    y1, info1 = mix(comps, **kw, raw_levels=raws)
    assert np.array_equal(y0, y1) and info1 == info0
    with pytest.raises(ParameterError, match=r"raw_levels has 2 values; allowed: one per component \(3\)"):
        mix(comps, **kw, raw_levels=raws[:2])


@pytest.mark.parametrize("max_peak", [1.0, 0.01])  # no global gain; the whole mix scaled down
def test_plan_mix_is_the_record_mix_renders(max_peak):
    """plan_mix gives the record of mix without the mix (the same record; rendering it gives mix's array),
    with the same checks."""
    rng = np.random.default_rng(6)
    comps = [synth_sound(draw_sound(rng, k, 0.6), SR) for k in ("noise", "clicks", "sweep")]
    kw = dict(sample_rate=SR, onsets_s=[0.0, 0.3, 0.9], levels=[-20.0, -24.0, -22.0], max_peak=max_peak)
    y, info = mix(comps, **kw)
    planned = plan_mix(comps, **kw)
    assert planned == info and (planned.global_gain_db < 0) == (max_peak < 1)
    assert np.array_equal(render_mix(comps, planned), y)
    with pytest.raises(ParameterError, match=r"onsets_s\[1\]=-0.3 is negative"):
        plan_mix(comps, **{**kw, "onsets_s": [0.0, -0.3, 0.9]})


def test_mix_record_to_dict_is_the_dataclass_fields():
    """MixInfo.to_dict gives the same plain dict as dataclasses.asdict (components as a list of dicts)."""
    from dataclasses import asdict

    rng = np.random.default_rng(8)
    comps = [synth_sound(draw_sound(rng, k, 0.5), SR) for k in ("noise", "harmonic")]
    _, info = mix(comps, sample_rate=SR, onsets_s=[0.0, 0.3], levels=[-20.0, -26.0], duration_s=1.0)
    want = {**asdict(info), "components": [asdict(c) for c in info.components]}
    got = info.to_dict()
    assert got == want and json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert MixInfo.from_dict(got) == info
