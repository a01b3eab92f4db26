"""Input validation shared by every measurement, and JSON-ability of the results."""

import dataclasses
import json

import numpy as np
import pytest

from auralgen import measure
from auralgen.core.errors import ParameterError

SR = 16000
MICS = np.array([[0.05, 0, 0], [0, 0.05, 0], [-0.05, 0, 0], [0, -0.05, 0]], dtype=float)

# name -> callable taking the array under test
CALLS = {
    "f0_hz": lambda x: measure.f0_hz(x, SR),
    "level_db_rms": measure.level_db_rms,
    "level_db_spl": lambda x: measure.level_db_spl(x, full_scale_db_spl=100.0),
    "loudness_lufs": lambda x: measure.loudness_lufs(x, SR),
    "segments": lambda x: measure.segments(x, SR),
    "tone_presence": lambda x: measure.tone_presence(x, SR, 1000.0),
    "itd_ild_left": lambda x: measure.itd_ild(x, np.ones(SR), SR),
    "doa_array": lambda x: measure.doa_array(x, MICS, SR),
    "doa_foa": measure.doa_foa,
    "rt60_schroeder": lambda x: measure.rt60_schroeder(x, SR),
    "drr_db": lambda x: measure.drr_db(x, SR),
    "dominant_freq_hz": lambda x: measure.dominant_freq_hz(x, SR),
    "freq_track": lambda x: measure.freq_track(x, SR),
    "mixture_components": lambda x: measure.mixture_components(x, [np.ones(10)], SR),
}

BAD = {
    "empty": (np.zeros(0), "at least|shape|long"),
    "three_d": (np.zeros((2, 2, SR)), "must be|allowed: \\[n\\]"),
    "nan": (np.full(SR, np.nan), "finite|must be"),
    "inf": (np.concatenate([np.ones(SR - 1), [np.inf]]), "finite|must be"),
    "complex": (np.ones(SR, dtype=complex), "real float|must be"),
}


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("name", list(CALLS))
def test_bad_arrays_raise_one_line_parameter_error(name, bad):
    x, pattern = BAD[bad]
    if name in ("doa_array", "doa_foa") and bad != "three_d":
        x = np.broadcast_to(x, (4, *x.shape)).copy()
    with pytest.raises(ParameterError, match=pattern) as info:
        CALLS[name](x)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("rate", [0, -48000, float("nan"), "fast"])
def test_bad_sample_rate_raises(rate):
    with pytest.raises(ParameterError, match="sample_rate"):
        measure.dominant_freq_hz(np.ones(100), rate)


def test_results_are_json_able():
    rng = np.random.default_rng(0)
    t = np.arange(SR) / SR
    x = np.where(t < 0.5, np.sin(2 * np.pi * 1000 * t), 0.0) + 1e-3 * rng.standard_normal(SR)
    results = [
        measure.segments(x, SR),
        measure.tone_presence(x, SR, 1000.0),
        measure.freq_track(x, SR),
        measure.mixture_components(x, [x[:4000]], SR),
        measure.itd_ild(x, np.roll(x, 3), SR),
        measure.doa_foa(np.stack([x, x, 0 * x, x])),
        measure.f0_hz(x, SR),
    ]

    def plain(obj):
        if dataclasses.is_dataclass(obj):
            return dataclasses.asdict(obj)
        if isinstance(obj, (list, tuple)):
            return [plain(o) for o in obj]
        assert type(obj) in (float, int, str), type(obj)
        return obj

    text = json.dumps([plain(r) for r in results])
    assert '"verdict": "first"' in text
    assert '"duration_s"' in text


def test_public_api_is_exported():
    for name in measure.__all__:
        assert callable(getattr(measure, name)) or isinstance(getattr(measure, name), float)
