"""Dist: a distribution config field, parsed once by the config walk, sampled as before, recorded as written."""

from __future__ import annotations

import copy
import json
import math
import pickle

import numpy as np
import pytest
from omegaconf import OmegaConf

from auralgen.config import config_record, fingerprint, validate
from auralgen.core.errors import ParameterError
from auralgen.core.mapping import coerce, plain
from auralgen.core.random import Dist, as_distribution, as_written, bounded
from auralgen.tasks.base import task_class

LOGUNIFORM = {"dist": "loguniform", "low": 200.0, "high": 800.0}
FORMS = [  # written form, kind, (low, high)
    (440, "const", (440.0, 440.0)),
    (0.25, "const", (0.25, 0.25)),
    ([0.6, 1.0], "uniform", (0.6, 1.0)),
    ((0.6, 1.0), "uniform", (0.6, 1.0)),
    (LOGUNIFORM, "loguniform", (200.0, 800.0)),
    ({"dist": "uniform", "low": -3, "high": 2}, "uniform", (-3, 2)),
    ({"dist": "choice", "values": [220, 440, 880]}, "choice", (220, 880)),
    ({"dist": "const", "value": 3.5}, "const", (3.5, 3.5)),
    ({"dist": "normal", "mean": 1.0, "std": 0.0}, "normal", (1.0, 1.0)),
    ({"dist": "truncnorm", "mean": 0.8, "std": 0.1, "low": 0.6, "high": 1.0}, "truncnorm", (0.6, 1.0)),
]


@pytest.mark.parametrize("written,kind,support", FORMS)
def test_each_accepted_form_parses_to_its_kind_bounds_and_written_form(written, kind, support):
    d = Dist.parse("x", written)
    assert (d.kind, (d.low, d.high), d.support()) == (kind, support, support)
    assert d.plain == written and repr(d) == repr(written)  # messages quote the value as written


def test_omegaconf_containers_parse_to_plain_lists_and_dicts():
    d = coerce("task.freq_hz", OmegaConf.create({"v": LOGUNIFORM})["v"], Dist)
    assert type(d.plain) is dict and d.plain == LOGUNIFORM and d.kind == "loguniform"
    pair = coerce("task.tone_s", OmegaConf.create({"v": [0.5, 0.9]})["v"], Dist)
    assert type(pair.plain) is list and (pair.low, pair.high) == (0.5, 0.9)


@pytest.mark.parametrize("written", [w for w, *_ in FORMS])
def test_sample_is_the_draw_of_the_distribution_parsed_before(written):
    new, old = np.random.default_rng(7), np.random.default_rng(7)
    d, before = Dist.parse("x", written), as_distribution("x", plain(written))
    assert [d.sample(new) for _ in range(20)] == [before.sample(old) for _ in range(20)]


def test_loguniform_draw_is_exp_of_a_uniform_log_draw():
    got = Dist.of(LOGUNIFORM).sample(np.random.default_rng(3))
    want = math.exp(np.random.default_rng(3).uniform(math.log(200.0), math.log(800.0)))
    assert got == want and 200.0 <= got <= 800.0


@pytest.mark.parametrize(
    "written,message",
    [
        ([1, 2, 3], r"^task\.tone_s=\[1, 2, 3\] is not a range; allowed: \[low, high\] of two numbers$"),
        ("long", r"^task\.tone_s='long' is not a distribution; allowed: number, \[low, high\] or \{dist: \.\.\.\}$"),
        ([2.0, 1.0], r"^task\.tone_s=\[2\.0, 1\.0\] has low > high; allowed: \[low, high\] with low <= high$"),
        ({"dist": "choice", "values": ["a", "b"]}, r"^task\.tone_s=\['a', 'b'\] holds non-numbers; allowed: numbers$"),
        ({"dist": "gauss"}, r"^task\.tone_s\.dist=.*gauss.*allowed"),
        (
            {"dist": "uniform", "lo": 1},
            r"^task\.tone_s=.* has wrong fields for uniform; allowed fields: \['low', 'high'\]$",
        ),
    ],
)
def test_a_bad_form_is_refused_in_one_line_naming_the_key(written, message):
    with pytest.raises(ParameterError, match=message) as err:
        validate({"task": {"name": "pitch_relative", "tone_s": written}})
    assert "\n" not in str(err.value)


def test_the_record_holds_the_written_form_and_parses_back_to_the_same_dist():
    run = validate({"task": {"name": "pitch_relative", "freq_hz": LOGUNIFORM, "tone_s": [0.5, 0.9], "gap_s": 0.4}})
    cfg = run.tasks[0]
    assert isinstance(cfg.freq_hz, Dist) and isinstance(cfg.tone_s, Dist) and cfg.gap_s.kind == "const"
    task = config_record(run)["tasks"][0]
    assert (task["freq_hz"], task["tone_s"], task["gap_s"]) == (LOGUNIFORM, [0.5, 0.9], 0.4)
    again = validate(json.loads(json.dumps({"task": task}, default=list)))
    assert again.tasks[0] == cfg and fingerprint(again) == fingerprint(run)  # tuples come back as lists
    for d in (cfg.freq_hz, cfg.tone_s):
        assert Dist.parse("x", d.plain) == d and pickle.loads(pickle.dumps(d)) == d and copy.deepcopy(d) is d


def test_a_python_default_records_as_the_config_walk_value():
    default = task_class("pitch_relative").Config(name="pitch_relative")
    walked = validate({"task": {"name": "pitch_relative", "tone_s": [0.6, 1.0]}}).tasks[0]
    assert default.tone_s.plain == (0.6, 1.0) and walked.tone_s.plain == [0.6, 1.0] and default.tone_s == walked.tone_s
    assert json.dumps(as_written(default.tone_s)) == json.dumps(as_written(walked.tone_s)) == "[0.6, 1.0]"


def test_a_python_caller_may_pass_a_plain_value():
    cfg = task_class("pitch_relative").Config(name="pitch_relative", tone_s=(0.4, 0.5))
    assert isinstance(cfg.tone_s, Dist) and (cfg.tone_s.low, cfg.tone_s.high) == (0.4, 0.5)
    with pytest.raises(ParameterError, match=r"^tone_s=\[0\.5\] is not a range"):
        task_class("pitch_relative").Config(name="pitch_relative", tone_s=[0.5])


def test_bounds_are_checked_on_a_dist_with_the_message_of_its_written_form():
    pattern = r"^gap_s=\[-1, 2\] reaches \[-1\.0, 2\.0\]; allowed: values within \[0\.0, inf\]"
    for spec in ([-1, 2], Dist.parse("gap_s", [-1, 2])):
        with pytest.raises(ParameterError, match=pattern):
            bounded("gap_s", spec, low=0.0)


def test_a_dist_is_frozen():
    d = Dist.of([0.1, 0.2])
    with pytest.raises(AttributeError, match="frozen"):
        d.plain = [0.3, 0.4]
    assert d.plain == [0.1, 0.2]
