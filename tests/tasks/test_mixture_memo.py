"""The mixture's per-process memo of sounds returns what a direct synthesis and level measurement give."""

import numpy as np
import pytest

from auralgen.mixing import component_level
from auralgen.sounds.events import KINDS, draw_sound, synth_sound
from auralgen.tasks import _mixture_memo as memo

SR = 16000


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level_mode", ["lufs", "db"])
def test_memo_returns_the_direct_signal_and_level(kind, level_mode):
    memo.clear()
    s = draw_sound(np.random.default_rng(3), kind, 0.7)
    direct = synth_sound(s, SR)
    cold = memo.sound(s, SR)
    assert np.array_equal(cold, direct) and cold.dtype == direct.dtype
    assert memo.sound(dict(s), SR) is cold  # a copy of the recipe hits the same entry
    assert memo.raw_level(s, SR, level_mode) == component_level(direct, SR, level_mode=level_mode)
    with pytest.raises(ValueError):
        cold[0] = 1.0  # read-only: no caller can change the next caller's signal


def test_memo_is_bounded_and_keyed_by_recipe_and_rate():
    memo.clear()
    rng = np.random.default_rng(0)
    sounds = [draw_sound(rng, "noise", 0.3) for _ in range(memo.MAX_SOUNDS + 5)]
    first = memo.sound(sounds[0], SR)
    for s in sounds[1:]:
        memo.sound(s, SR)
    assert len(memo._CACHE) == memo.MAX_SOUNDS
    again = memo.sound(sounds[0], SR)  # evicted, recomputed: equal, not the same object
    assert again is not first and np.array_equal(again, first)
    assert len(memo.sound(sounds[0], 32000)) == 2 * len(again)


def test_a_recipe_with_a_nested_value_is_keyed_by_its_json():
    """A recipe whose values are not all hashable (a recorded sound's transforms) is still memoised."""
    memo.clear()
    key = memo._key({"kind": "recording", "transforms": [{"gain_db": -3.0}], "file": "a.wav"}, SR)
    assert key == ('{"file": "a.wav", "kind": "recording", "transforms": [{"gain_db": -3.0}]}', SR)
    s = draw_sound(np.random.default_rng(2), "sweep", 0.5)
    assert memo._key(s, SR) == (tuple(sorted(s.items())), SR)


def test_the_memo_keeps_a_copy_so_a_sources_own_array_stays_writeable(monkeypatch):
    """A sound source that hands out its own cached array (a corpus recording) keeps it writeable."""
    memo.clear()
    shared = np.linspace(-0.5, 0.5, 800)
    monkeypatch.setattr(memo, "synth_sound", lambda sound, sr: shared)
    got = memo.sound({"kind": "recording", "file": "a.wav"}, SR)
    assert np.array_equal(got, shared) and got is not shared
    shared[0] = 0.25  # still writeable, and the memo's signal did not change with it
    assert got[0] == -0.5
    memo.clear()
