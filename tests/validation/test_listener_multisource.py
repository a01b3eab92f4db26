"""multi_source_relation's reference listener (issue 12 point 4): each source's direction read from the
mix -- the first to enter from its onset, the noise after the harmonic tone from the residual of the
tone's prediction, the click train from its averaged clicks."""

import numpy as np
import pytest

from auralgen.generation.run import run
from auralgen.listeners import multisource as LMS
from auralgen.listeners.common import NO_ANSWER
from auralgen.synth import harmonic_complex, noise
from auralgen.validation import listener as L
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731
SR = 16000


@pytest.fixture(scope="module")
def easiest(tmp_path_factory):
    """Eight binaural items of each relation at its easiest level (the default grid's first value)."""
    out = tmp_path_factory.mktemp("multisource")
    run(small_run("task=multi_source_relation", "task.items_per_level=8", "task.levels=[60]",
                  "task.distance_levels_m=[2.0]", "task.elevation_levels_deg=[40]", "task.left_of_levels_deg=[60]",
                  out=out), log=QUIET)  # fmt: skip
    got = {}
    for r in read_rows(out, "multi_source_relation"):
        x, sr = decode(r["audio"][0])
        answer = L.answer("multi_source_relation", r["question"], r["options"], [x], sr, layout=r["channel_layout"])
        got.setdefault(params_of(r)["relation"], []).append(answer == r["answer_index"] if answer >= 0 else None)
    return got


@pytest.mark.slow  # the fixture renders 32 items (~11 s): make test stays under 10 min; make test-slow (CI) runs it
@pytest.mark.parametrize("relation", ["left", "left_of", "higher"])
def test_directions_are_read_from_the_mix_at_the_easiest_level(easiest, relation):
    # chance is 1/3 (left_of: a third of the items are "same"); 121 / 121 right on other seeds (30-40 per relation)
    assert len(easiest[relation]) == 8 and sum(a is True for a in easiest[relation]) >= 7, easiest[relation]


@pytest.mark.slow
def test_closer_is_not_attempted(easiest):
    assert easiest["closer"] == [None] * 8


def test_other_layouts_and_unnamed_sounds_are_not_answered():
    q = "Three sounds start one after another and overlap, from different directions. Which one is furthest to the left?"
    names = ["the noise burst", "the harmonic tone", "the click train"]
    clip = np.random.default_rng(0).standard_normal((2, SR))
    hrtf = object()  # never reached
    assert LMS.multi_source_relation(q, names, [clip[:1]], SR, hrtf=hrtf) == NO_ANSWER  # mono
    assert LMS.multi_source_relation(q, names, [clip], SR, layout="foa_acn_sn3d", hrtf=hrtf) == NO_ANSWER
    assert LMS.multi_source_relation(q, ["the dog", "the bell", "the siren"], [clip], SR, hrtf=hrtf) == NO_ANSWER
    assert LMS.multi_source_relation(q, names, [clip], SR) == NO_ANSWER  # no HRTF set


@pytest.mark.parametrize("f0", [151.3, 237.77, 398.2])
def test_tone_f0_is_found_to_the_grid_step(f0):
    x = harmonic_complex(f0, 0.1, sample_rate=SR, n_harmonics=min(30, int((SR / 2 - 1) // f0)))
    assert abs(LMS.tone_f0(np.stack([x, 0.5 * x]), SR) - f0) <= LMS.F0_STEP_HZ


def test_a_noise_entering_over_a_tone_is_found_and_isolated():
    """A tone from sample 1600, a noise 20 dB weaker from sample 5000: the entry is found within 1 ms and
    the residual around it is the noise (the tone removed to -30 dB)."""
    rng = np.random.default_rng(3)
    tone = harmonic_complex(203.4, 0.6, sample_rate=SR, n_harmonics=30)
    n = 0.1 * noise(0.3, sample_rate=SR, rng=rng, color="white")
    x = np.zeros((2, SR))
    x[:, 1600 : 1600 + tone.size] += np.stack([tone, 0.7 * tone])
    x[:, 5000 : 5000 + n.size] += np.stack([n, n])
    onset, residual = LMS.entry_after_tone(x, SR, 1600)
    assert abs(onset - 5000) <= SR // 1000
    span = slice(onset - 40, onset + 200)
    truth = np.zeros_like(x)
    truth[:, 5000 : 5000 + n.size] = np.stack([n, n])
    err = np.sum((residual[:, span] - truth[:, span]) ** 2) / np.sum(truth[:, span] ** 2)
    assert err < 1e-3


def test_click_period_is_found_under_noise():
    rate, first = 11.37, 3000
    x = 0.05 * np.random.default_rng(4).standard_normal((2, 2 * SR))
    pos = first + np.rint(np.arange(18) * SR / rate).astype(int)
    x[:, pos] += 1.0
    spikes = LMS._spikes(x, SR, 2000)
    period = LMS._click_period(spikes, SR, 2000)
    assert abs(period - SR / rate) <= 1
    # the first click, to within its spike's 0.5 ms (the comb of a whole-sample period drifts; the
    # period and each click's position are refined on the waveforms after this)
    assert abs(LMS._first_click(spikes, period, 2000) - first) <= SR // 2000
