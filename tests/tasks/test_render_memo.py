"""The per-process memos of the spatial renders (a dry source signal; a source rendered in its room): a
measurement that renders each source alone again gets the render's very arrays, read-only, and the
values of a render with empty memos; a changed recipe is rendered anew."""

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.random import item_rng
from auralgen.sounds import spatial
from auralgen.tasks import _spatial
from tests.support.builders import small_run

MULTI = build_tasks(small_run("task=multi_source_relation"))["multi_source_relation"]


def test_the_same_recipe_gives_the_same_read_only_signal_and_another_recipe_a_new_one():
    spec = {"kind": "harmonic", "duration_s": 0.5, "seed": 7, "f0_hz": 220.0}
    spatial._MEMO.clear()
    a = spatial.source_signal(spec, 16000, ramp_s=0.01)
    assert spatial.source_signal(dict(spec), 16000, ramp_s=0.01) is a and not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 1.0
    b = spatial.source_signal({**spec, "f0_hz": 221.0}, 16000, ramp_s=0.01)
    assert b is not a and not np.array_equal(a, b)
    spatial._MEMO.clear()
    assert np.array_equal(spatial.source_signal(spec, 16000, ramp_s=0.01), a)  # a fresh render: the same values


def test_the_measurement_reuses_the_renders_rooms_and_gives_the_values_of_empty_memos(monkeypatch):
    params = MULTI.sample(item_rng(0, "test", "multi_source_relation", 3), 1)
    calls = []
    real = _spatial.spatial_rir

    def counted(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(_spatial, "spatial_rir", counted)
    _spatial._WET.clear()
    clips = MULTI.render(params)
    n_sources = len(params["sounds"])
    assert len(calls) == n_sources >= 2
    measured = MULTI.check(params, clips)
    assert len(calls) == n_sources  # each solo render came from the memo, no room computed again
    _spatial._WET.clear()
    spatial._MEMO.clear()
    assert MULTI.check(params, MULTI.render(params)) == measured
    assert np.array_equal(MULTI.render(params)[0], clips[0])


def test_the_itd_of_a_window_is_the_same_from_a_warm_and_an_empty_memo():
    from auralgen.measure import spatial as ms

    rng = np.random.default_rng(4)
    s = rng.standard_normal(1600)
    pairs = [(s, 0.7 * np.roll(s, lag)) for lag in (-9, -3, 0, 5, 5, 12)]
    ms._fine_shift_parts.cache_clear()
    warm = [ms.itd_ild(a, b, 16000) for a, b in pairs]
    parts = ms._fine_shift_parts(4096)
    assert ms._fine_shift_parts.cache_info().currsize == 1 and all(not m.flags.writeable for m in parts)
    assert [round(itd * 16000) for itd, _ in warm] == [-9, -3, 0, 5, 5, 12]  # the right ear lags by `lag` samples
    cold = []
    for a, b in pairs:
        ms._fine_shift_parts.cache_clear()
        cold.append(ms.itd_ild(a, b, 16000))
    assert cold == warm  # bit for bit
    # the 33 fractional shifts around an integer lag, as the roots of unity times the fine shifts give them
    omega = 2.0 * np.pi * np.arange(2049) / 4096
    fresh = np.exp(1j * np.outer(5 + np.linspace(-1.0, 1.0, 33), omega))
    parts = ms._fine_shift_parts(4096)
    cos, sin, roots = parts
    assert parts is ms._fine_shift_parts(4096)
    np.testing.assert_allclose(roots[(5 * np.arange(2049)) % 4096] * (cos + 1j * sin), fresh, atol=1e-12)
