"""Adapters: baselines, the text-only and noise controls, the DSP listener hook, command models."""

import sys
import types

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.evaluation.adapters import (
    ModelError,
    build_adapter,
    check_model_config,
    strip_answer,
)
from auralgen.evaluation.items import read_wav, write_wav


def _msg(paths, options=("Higher", "Lower", "Same", "Unable to determine"), uid="x@0", task="pitch_relative"):
    prompts = []
    if len(paths) > 1:
        for j, p in enumerate(paths):
            prompts += [{"type": "text", "value": f"Audio {j + 1}:"}, {"type": "audio", "value": str(p)}]
    else:
        prompts += [{"type": "audio", "value": str(p)} for p in paths]
    prompts.append({"type": "text", "value": "Which?\n<A>: ...\n"})
    meta = {
        "id": uid.split("@")[0],
        "task": task,
        "options": list(options),
        "unique_id": uid,
        "question": "Which?",
        "answer": options[0],
        "answer_letter": "<A>",
        "sample_rate": 16000,
    }
    return {"meta": meta, "prompts": prompts}


@pytest.fixture
def stereo_clip(tmp_path):
    t = np.arange(16000) / 16000
    clip = np.stack([0.1 * np.sin(2 * np.pi * 440 * t), 0.02 * np.sin(2 * np.pi * 880 * t)]).astype(np.float32)
    return write_wav(tmp_path / "clip.wav", clip, 16000), clip


def test_random_is_seeded_and_uniform():
    a = build_adapter({"kind": "random"}, seed=3)
    replies = [a(_msg([], uid=f"i{n}@0")) for n in range(2000)]
    assert replies == [build_adapter({"kind": "random"}, seed=3)(_msg([], uid=f"i{n}@0")) for n in range(2000)]
    counts = np.array([replies.count(c) for c in "ABCD"])
    assert counts.min() > 400 and set(replies) == set("ABCD")
    assert replies != [build_adapter({"kind": "random"}, seed=4)(_msg([], uid=f"i{n}@0")) for n in range(2000)]


def test_text_only_removes_every_audio_part(stereo_clip):
    path, _ = stereo_clip
    seen = []
    adapter = build_adapter({"kind": "text_only"})
    adapter.inner.generate_inner = lambda m: seen.append(m) or "A"
    adapter(_msg([path, path]))
    assert [p["type"] for p in seen[0]["prompts"]] == ["text"]
    assert not any(p["value"].startswith("Audio ") for p in seen[0]["prompts"])


def test_text_prior_prefers_the_same_text_under_every_rotation():
    adapter = build_adapter({"kind": "text_prior"})
    opts = ["Higher", "Lower", "Same", "Unable to determine"]
    chosen = set()
    for r in range(4):
        rotated = opts[r:] + opts[:r]
        chosen.add(rotated["ABCD".index(adapter(_msg([], options=rotated)))])
    assert len(chosen) == 1


def test_noise_control_keeps_rms_shape_and_channels(stereo_clip, tmp_path):
    path, clip = stereo_clip
    seen = []
    adapter = build_adapter({"kind": "noise", "inner": {"kind": "constant"}}, workdir=tmp_path, seed=1)
    adapter.inner.generate_inner = lambda m: seen.append(m) or "A"
    adapter(_msg([path]))
    (noise_path,) = [p["value"] for p in seen[0]["prompts"] if p["type"] == "audio"]
    noise, sr = read_wav(noise_path)
    assert sr == 16000 and noise.shape == clip.shape
    rms = lambda x: np.sqrt(np.mean(np.square(x, dtype=np.float64), axis=1))  # noqa: E731
    np.testing.assert_allclose(rms(noise), rms(clip), rtol=0.03)
    assert abs(np.corrcoef(noise[0], clip[0])[0, 1]) < 0.05  # no trace of the tone


def test_dsp_absent_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "auralgen.validation.listener", None)  # import fails
    with pytest.raises(ParameterError, match=r"model.kind='dsp' needs auralgen.validation.listener, which is absent"):
        build_adapter({"kind": "dsp"})


def test_dsp_adapter_hands_clips_to_the_listener(monkeypatch, stereo_clip):
    path, clip = stereo_clip
    calls = []

    def answer(task, question, options, clips, sample_rate):
        calls.append((task, question, options, [c.shape for c in clips], sample_rate))
        if task == "unknown":
            raise KeyError(task)
        return 2

    monkeypatch.setitem(sys.modules, "auralgen.validation.listener", types.SimpleNamespace(answer=answer))
    import auralgen.validation as validation

    monkeypatch.setattr(validation, "listener", sys.modules["auralgen.validation.listener"], raising=False)
    adapter = build_adapter({"kind": "dsp"})
    assert adapter(_msg([path])) == "C"
    assert calls[0] == (
        "pitch_relative",
        "Which?",
        ["Higher", "Lower", "Same", "Unable to determine"],
        [clip.shape],
        16000,
    )
    with pytest.raises(ModelError, match=r"dsp listener cannot answer task='unknown'"):
        adapter(_msg([path], task="unknown"))


def test_strip_answer_removes_the_answer_only():
    msg = _msg([])
    out = strip_answer(msg)
    assert "answer" not in out["meta"] and "answer_letter" not in out["meta"]
    assert out["meta"]["options"] == msg["meta"]["options"] and msg["meta"]["answer"] == "Higher"


@pytest.mark.parametrize(
    "model,needle",
    [
        ({"kind": "gpt"}, "model.kind='gpt' is unknown; allowed: command, constant, dsp"),
        ({"kind": "random", "temperature": 0}, "model.temperature: unknown key"),
        ({"kind": "command", "cmd": ""}, "model.cmd='' is empty"),
        (
            {"kind": "openai", "base_url": "localhost:8000", "name": "m"},
            "model.base_url='localhost:8000' is not an http(s) URL",
        ),
        (
            {"kind": "openai", "base_url": "http://h/v1", "name": "m", "concurrency": 0},
            "model.concurrency=0 is out of range",
        ),
        ({"kind": "random", "label": "a/b"}, "model.label='a/b' is invalid"),
        ({"kind": "noise", "inner": {"kind": "nope"}}, "model.inner.kind='nope' is unknown"),
    ],
)
def test_bad_model_configs(model, needle):
    with pytest.raises(ParameterError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        check_model_config(model)
        build_adapter(model)


def test_messages_carry_the_channel_layout_to_adapters(tmp_path):
    from auralgen.evaluation.items import clip_wavs, load_items
    from auralgen.evaluation.prompts import build_message, present
    from auralgen.generation.run import run as generate
    from tests.support.builders import small_run

    run = small_run("task=azimuth_absolute", "task.items_per_level=1", "validate=false", out=tmp_path / "ds")
    generate(run, log=lambda *_: None)
    item = load_items(tmp_path / "ds")[0]
    assert item.channel_layout == "binaural" and item.num_channels == 2
    msg = build_message(item, present(item, 0), clip_wavs(item, tmp_path / "wav"))
    assert msg["meta"]["channel_layout"] == "binaural"


def test_adapters_are_found_by_module_and_imported_only_when_asked():
    """A new adapter is one module of the package: listed without importing, imported on first use."""
    import subprocess

    code = (
        "import sys; from auralgen.evaluation.adapters import ADAPTERS; print(ADAPTERS.names()); "
        "print('auralgen.evaluation.adapters.openai' in sys.modules); ADAPTERS.get('openai'); "
        "print('auralgen.evaluation.adapters.openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "['command', 'constant', 'dsp', 'noise', 'openai', 'random', 'text_only', 'text_prior']"
    assert out[1:3] == ["False", "True"]
    with pytest.raises(ParameterError, match=r"model.kind='base' is unknown; allowed: command, constant, dsp"):
        check_model_config({"kind": "base"})


@pytest.mark.parametrize("kind", ["text_only", "noise", "flip"])
def test_a_wrapper_passes_on_its_inner_models_tokens_late_errors_and_protocol_counts(kind, tmp_path):
    """What the wrapped model reports (tokens, replies found invalid later, stray output) is not lost."""
    from auralgen.evaluation.adapters.base import Adapter, BaseConfig

    class Reporting(Adapter):
        def generate_inner(self, msg):
            return "A"

        def take_usage(self):
            return {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}

        def late_errors(self):
            return {"i0@0": "answered twice"}

        def protocol_report(self):
            return {"stray_stdout_lines": 3}

    inner = Reporting(BaseConfig(kind="reporting", label="inner"))
    if kind == "flip":
        from auralgen.evaluation.adaptive import FlipAdapter

        adapter = FlipAdapter(inner, 0.5, seed=1)
    else:
        adapter = build_adapter({"kind": kind, "inner": {"kind": "constant"}}, workdir=tmp_path, seed=1)
        adapter.inner = inner
    assert adapter.take_usage() == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    assert adapter.late_errors() == {"i0@0": "answered twice"}
    assert adapter.protocol_report() == {"stray_stdout_lines": 3}
