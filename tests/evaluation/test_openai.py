"""The openai adapter against a real chat-completions server on 127.0.0.1 (faults injected)."""

import asyncio
import json

import pytest

from auralgen.cli._hydra import compose
from auralgen.evaluation.adapters import FatalModelError, ModelError, build_adapter
from auralgen.evaluation.adapters.openai import _content, _Transient
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.items import write_wav
from auralgen.evaluation.runner import run
from tests.support.chat_server import ChatServer

QUIET = lambda *_: None  # noqa: E731
SECRET = "sk-auralgen-test-0123456789abcdef"


def _adapter(srv, **kw):
    cfg = {
        "kind": "openai",
        "base_url": srv.base_url,
        "name": "test-model",
        "api_key_env": "AURALGEN_TEST_KEY",
        "backoff_s": 0.001,
        "max_backoff_s": 0.01,
        "timeout_s": 5.0,
        **kw,
    }
    return build_adapter(cfg)


@pytest.fixture
def wav(tmp_path):
    import numpy as np

    return write_wav(tmp_path / "a.wav", 0.1 * np.ones((2, 1600), dtype=np.float32), 16000)


def _msg(wav, uid="x@0"):
    return {
        "meta": {"unique_id": uid, "options": ["A1", "B1"]},
        "prompts": [
            {"type": "audio", "value": str(wav)},
            {"type": "text", "value": f"Question {uid}\n<A>: A1\n<B>: B1\n"},
        ],
    }


async def _ask_all(adapter, msgs):
    try:
        return await asyncio.gather(*(adapter.agenerate(m) for m in msgs), return_exceptions=True)
    finally:
        adapter.close()


def test_retries_429_500_malformed_and_dropped_connections(wav, monkeypatch):
    monkeypatch.setenv("AURALGEN_TEST_KEY", SECRET)
    with ChatServer(reply=lambda text: "The answer is (B)", faults=["429", "500", "malformed", "drop", "503"]) as srv:
        adapter = _adapter(srv, concurrency=3)
        replies = asyncio.run(_ask_all(adapter, [_msg(wav, f"i{n}@0") for n in range(6)]))
    assert replies == ["The answer is (B)"] * 6
    assert srv.n_requests == 6 * 6 and adapter.n_retries == 6 * 5
    assert srv.statuses[429] == srv.statuses[500] == srv.statuses[503] == 6
    assert srv.auth_headers == {f"Bearer {SECRET}"}
    assert srv.audio_shapes[0] == (1600, 2)  # both channels reach the server


def test_slow_reply_times_out_and_is_retried(wav):
    with ChatServer(faults=["slow"], slow_s=1.0) as srv:
        adapter = _adapter(srv, timeout_s=0.2, concurrency=1)
        (reply,) = asyncio.run(_ask_all(adapter, [_msg(wav)]))
    assert reply == "Answer: A" and adapter.n_retries == 1


def test_failure_after_all_retries_is_a_model_error(wav):
    with ChatServer(fail_substring="Question bad") as srv:
        adapter = _adapter(srv, max_retries=2)
        good, bad = asyncio.run(_ask_all(adapter, [_msg(wav, "good@0"), _msg(wav, "bad@0")]))
    assert good == "Answer: A"
    assert isinstance(bad, ModelError) and "no reply after 2 retries: HTTP 500" in str(bad)
    assert srv.statuses[500] == 3


def test_client_errors_are_fatal_and_never_show_the_key(wav, monkeypatch):
    monkeypatch.setenv("AURALGEN_TEST_KEY", SECRET)
    with ChatServer(expect_model="other-model") as srv:
        (err,) = asyncio.run(_ask_all(_adapter(srv), [_msg(wav)]))
    assert isinstance(err, FatalModelError) and "answered HTTP 404" in str(err) and srv.n_requests == 1
    with ChatServer() as srv:
        monkeypatch.setattr(srv, "handle", lambda body, auth="": (401, {}, f"invalid key {SECRET}".encode()))
        (err,) = asyncio.run(_ask_all(_adapter(srv), [_msg(wav)]))
    assert isinstance(err, FatalModelError) and "HTTP 401: invalid key ***" in str(err) and SECRET not in str(err)


def test_keeps_the_configured_concurrency_in_flight(wav):
    with ChatServer(delay_s=0.15) as srv:
        adapter = _adapter(srv, concurrency=4)
        replies = asyncio.run(_ask_all(adapter, [_msg(wav, f"i{n}@0") for n in range(16)]))
    assert len(replies) == 16 and srv.max_in_flight == 4
    assert srv.mean_in_flight > 3.0


@pytest.mark.parametrize(
    "body,expected",
    [
        (b'{"choices": [{"message": {"content": "B"}}]}', "B"),
        (b'{"choices": [{"message": {"content": [{"type": "text", "text": "C"}]}}]}', "C"),
        (b'{"choices": [{"message": {"content": null, "refusal": "I cannot help"}}]}', "I cannot help"),
    ],
)
def test_reply_content_forms(body, expected):
    assert _content(body) == expected


@pytest.mark.parametrize(
    "body", [b"<html>", b'{"choices": []}', b'{"error": "x"}', b'{"choices": [{"message": {"content": 3}}]}']
)
def test_malformed_bodies_are_transient(body):
    with pytest.raises(_Transient, match="malformed"):
        _content(body)


def _cfg(data, out, srv, *overrides):
    return validate_eval(
        compose(
            [
                f"data={data}",
                f"out={out}",
                "progress=false",
                "eval.n_boot=0",
                "model=openai",
                f"model.base_url={srv.base_url}",
                "model.name=test-model",
                "model.api_key_env=AURALGEN_TEST_KEY",
                "model.backoff_s=0.001",
                "model.max_retries=1",
                *overrides,
            ],
            config_name="evaluate",
        )
    )


def test_evaluate_through_the_server_counts_errors_and_never_writes_the_key(tiny_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("AURALGEN_TEST_KEY", SECRET)
    from auralgen.evaluation.items import load_items

    items = load_items(tiny_dataset, tasks=["pitch_relative"])
    bad_q = items[0].question.split("\n")[0]
    out = tmp_path / "oa"
    with ChatServer(reply=lambda text: "B", fail_substring=None) as srv:
        # every question of the first item's phrasing fails on the server
        srv.fail_substring = bad_q
        res = run(_cfg(tiny_dataset, out, srv, "task=[pitch_relative]", "eval.keep_audio=true"), log=QUIET)
    n_bad = sum(len(it.options) for it in items if it.question == items[0].question)
    n = sum(len(it.options) for it in items)  # every rotation
    acc = res["accounting"]["overall"]
    assert acc["asked"] == n and acc["error"] == n_bad and acc["answered"] == n - n_bad
    assert res["scores"]["by_task"]["pitch_relative"]["error_rate"] == pytest.approx(n_bad / n)
    assert res["scores"]["by_task"]["pitch_relative"]["n_answers"] == n  # errors stay in the denominator
    errors = [json.loads(ln) for ln in (out / "replies.jsonl").read_text().splitlines() if '"reply": null' in ln]
    assert len(errors) == n_bad and "no reply after 1 retries: HTTP 500" in errors[0]["error"]
    # the next run asks only the failed ones
    with ChatServer(reply=lambda text: "B") as srv2:
        res2 = run(_cfg(tiny_dataset, out, srv2, "task=[pitch_relative]"), log=QUIET)
    assert srv2.n_requests == n_bad and res2["accounting"]["overall"]["error"] == 0
    assert res["model"]["config"]["api_key_env"] == "AURALGEN_TEST_KEY"
    for path in [p for p in tmp_path.rglob("*") if p.is_file()]:
        assert SECRET.encode() not in path.read_bytes(), path


def test_on_error_stop_ends_the_run(tiny_dataset, tmp_path):
    with ChatServer(fail_substring="pitch") as srv:
        with pytest.raises(ModelError, match="no reply after 1 retries"):
            run(_cfg(tiny_dataset, tmp_path / "s", srv, "task=[pitch_relative]", "eval.on_error=stop"), log=QUIET)


def test_llm_judge_reads_unparseable_replies(tiny_dataset, tmp_path):
    with ChatServer(reply=lambda text: "hmm, it is hard to say") as model, ChatServer(reply=lambda text: "C") as judge:
        judge_cfg = f"+eval.judge={{kind: openai, base_url: '{judge.base_url}', name: judge-model}}"
        res = run(
            _cfg(tiny_dataset, tmp_path / "j", model, "task=[duration_absolute]", judge_cfg.replace("+", "")),
            log=QUIET,
        )
    from auralgen.evaluation.items import load_items

    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["duration_absolute"]))  # every rotation
    acc = res["accounting"]["overall"]
    assert acc["asked"] == n and acc["judged"] == n and acc["ok"] == n and acc["unparseable"] == 0
    assert judge.n_requests == n
    assert (tmp_path / "j" / "judge.jsonl").exists()
