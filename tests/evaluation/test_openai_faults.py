"""The openai adapter under faults, against real HTTP on 127.0.0.1: fatal conditions end fast,
rejected items are item errors, timeouts are deadlines, Ctrl-C is prompt, secrets stay out of files.

Every wait is bounded; every test stops its own server (``with ChatServer(...)``).
"""

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from auralgen.cli._hydra import compose
from auralgen.evaluation.adapters import FatalModelError, ModelError, build_adapter
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.items import write_wav
from auralgen.evaluation.redaction import redact, redact_url, url_secrets
from auralgen.evaluation.runner import run
from auralgen.generation.run import run as generate
from tests.support.builders import small_run
from tests.support.chat_server import ChatServer

ROOT = Path(__file__).resolve().parents[2]
QUIET = lambda *_: None  # noqa: E731
SECRET = "sk-env-key-0123456789abcdef"
URL_PASS = "urlpass-9876543210fedcba"
URL_TOKEN = "qtoken-55555aaaaa77777"


@pytest.fixture(scope="module")
def mixed_dataset(tmp_path_factory):
    """One pitch_relative item (1 clip) and one temporal_reorder item (3 clips)."""
    out = tmp_path_factory.mktemp("faults_ds")
    drop = [f"~tasks.{t}" for t in ("audiogram", "loudness_relative", "duration_relative", "duration_absolute")]
    overrides = ["suite=tones", "+task@tasks.temporal_reorder=temporal_reorder", *drop]
    overrides += ["tasks.temporal_reorder.items_per_level=1", "tasks.temporal_reorder.levels=[100]"]
    overrides += ["tasks.pitch_relative.items_per_level=1", "tasks.pitch_relative.levels=[0]"]
    generate(small_run(*overrides, out=out, workers=1), log=QUIET)
    return out


@contextlib.contextmanager
def _refusing_port():
    """A port that refuses connections while the block runs: bound but never listening, so (unlike a
    port bound then closed) no other process on a busy machine can take it meanwhile and answer."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def _cli(data, out, base_url, *overrides, env=None, timeout=120):
    """Run evaluate.py (default retry settings); returns (returncode, stderr, seconds)."""
    args = [
        sys.executable,
        str(ROOT / "evaluate.py"),
        f"data={data}",
        f"out={out}",
        "progress=false",
        "eval.n_boot=0",
        "model=openai",
        f"model.base_url='{base_url}'",
        "model.name=test-model",
        "model.api_key_env=AURALGEN_TEST_KEY",
        *overrides,
    ]
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stderr, time.monotonic() - t0


def _cfg(data, out, base_url, *overrides):
    return validate_eval(
        compose(
            [
                f"data={data}",
                f"out={out}",
                "progress=false",
                "eval.n_boot=0",
                "model=openai",
                f"model.base_url='{base_url}'",
                "model.name=test-model",
                "model.api_key_env=AURALGEN_TEST_KEY",
                "model.backoff_s=0.001",
                *overrides,
            ],
            config_name="evaluate",
        )
    )


# -------------------------------------------------------------------- fatal conditions end fast


@pytest.mark.parametrize("fault", ["refused", "dns", "401", "403", "404"])
def test_fatal_conditions_end_the_run_in_one_line_within_30_s(mixed_dataset, tmp_path, fault):
    """Default retries (5, backoff 1 s..30 s) would take minutes per question; fatal ones are not retried."""
    expected = {
        "refused": "connection refused",
        "dns": "does not resolve",
        "401": "answered HTTP 401",
        "403": "answered HTTP 403",
        "404": "answered HTTP 404",
    }[fault]
    with ChatServer(status=int(fault) if fault.isdigit() else None) as srv, _refusing_port() as port:
        base = {"refused": f"http://127.0.0.1:{port}/v1", "dns": "http://nonexistent.invalid/v1"}
        url = base.get(fault, srv.base_url).replace("://", f"://user:{URL_PASS}@")
        code, err, seconds = _cli(mixed_dataset, tmp_path / "o", url, env={"AURALGEN_TEST_KEY": SECRET})
        n_requests = srv.n_requests
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: model.base_url="), err
    assert expected in lines[0] and "allowed:" in lines[0]
    assert URL_PASS not in err and SECRET not in err and "***@" in err
    assert seconds < 60  # a hang guard: retrying (5 times, backoff up to 30 s) would take minutes
    if fault.isdigit():  # asked once per question in flight, never retried
        assert 1 <= n_requests <= 7


# -------------------------------------------------------------------- deadlines and budgets


@pytest.fixture
def wav(tmp_path):
    return write_wav(tmp_path / "a.wav", 0.1 * np.ones((1, 1600), dtype=np.float32), 16000)


def _msg(wav, uid="x@0"):
    return {
        "meta": {"unique_id": uid, "options": ["A1", "B1"]},
        "prompts": [{"type": "audio", "value": str(wav)}, {"type": "text", "value": f"Question {uid}"}],
    }


def _ask_bounded(adapter, msg, limit_s=10.0):
    """(result or exception, seconds); fails instead of hanging past ``limit_s``."""

    async def go():
        try:
            return await asyncio.wait_for(adapter.agenerate(msg), limit_s)
        except (ModelError, FatalModelError) as exc:
            return exc
        finally:
            adapter.close()

    t0 = time.monotonic()
    result = asyncio.run(go())
    return result, time.monotonic() - t0


def _adapter(url, **kw):
    return build_adapter({"kind": "openai", "base_url": url, "name": "m", "backoff_s": 0.001, **kw})


def test_timeout_is_a_total_deadline_against_a_server_dripping_1_byte_per_s(wav):
    with ChatServer(drip_s=1.0) as srv:
        result, seconds = _ask_bounded(_adapter(srv.base_url, timeout_s=1.5, max_retries=0), _msg(wav), limit_s=60)
    assert isinstance(result, ModelError) and "no complete reply within 1.5 s" in str(result)
    assert 1.4 < seconds < 30  # not cut early; the upper bound is a hang guard


def test_retry_budget_bounds_the_total_time_of_one_question(wav):
    with ChatServer(status=503) as srv:  # every attempt fails fast; backoff grows
        adapter = _adapter(srv.base_url, max_retries=100, backoff_s=0.2, max_backoff_s=5.0, retry_budget_s=1.5)
        result, seconds = _ask_bounded(adapter, _msg(wav), limit_s=60)
    assert isinstance(result, ModelError) and "retry_budget_s=1.5" in str(result) and "HTTP 503" in str(result)
    assert seconds < 30 and 2 <= srv.n_requests < 10  # 100 retries would take minutes
    with ChatServer(drip_s=0.5) as srv:  # every attempt hangs: the last one is cut to what is left
        adapter = _adapter(srv.base_url, max_retries=100, timeout_s=1.0, retry_budget_s=2.5)
        result, seconds = _ask_bounded(adapter, _msg(wav), limit_s=60)
    assert isinstance(result, ModelError) and "retry_budget_s=2.5" in str(result)
    assert seconds < 30 and srv.n_requests == 3


@pytest.mark.parametrize("value", [0.0, -1.0])
def test_retry_budget_must_be_positive(value):
    from auralgen.core.errors import ParameterError

    with pytest.raises(ParameterError, match=rf"model.retry_budget_s={value} is out of range; allowed: > 0$"):
        _adapter("http://127.0.0.1:1/v1", retry_budget_s=value)


def test_garbage_json_is_retried_then_an_item_error(wav):
    with ChatServer(garbage=True) as srv:
        result, _ = _ask_bounded(_adapter(srv.base_url, max_retries=2), _msg(wav))
    assert isinstance(result, ModelError) and "no reply after 2 retries: malformed body" in str(result)
    assert srv.n_requests == 3


# -------------------------------------------------------------------- per-item rejection


def test_http_400_for_too_many_clips_is_an_item_error_and_the_rerun_asks_only_those(mixed_dataset, tmp_path):
    out = tmp_path / "o"
    with ChatServer(reply=lambda text: "A", max_audio=2) as srv:  # vLLM with a 2-audio limit
        res = run(_cfg(mixed_dataset, out, srv.base_url), log=QUIET)
    by_task = res["accounting"]["by_task"]
    reorder, pitch = by_task["temporal_reorder"], by_task["pitch_relative"]
    assert reorder["error"] == reorder["asked"] > 0 and pitch["error"] == 0 and pitch["answered"] == pitch["asked"]
    assert srv.statuses[400] == reorder["asked"]  # asked once each: a rejection is not retried
    entries = [json.loads(line) for line in (out / "replies.jsonl").read_text().splitlines()]
    errors = [e for e in entries if e["reply"] is None]
    assert len(errors) == reorder["asked"] and "answered HTTP 400" in errors[0]["error"]
    assert "At most 2 audio(s)" in errors[0]["error"]
    with ChatServer(reply=lambda text: "A") as srv2:  # the flag raised: only the failed ones are asked
        res2 = run(_cfg(mixed_dataset, out, srv2.base_url), log=QUIET)
    assert srv2.n_requests == reorder["asked"] and res2["accounting"]["overall"]["error"] == 0


# -------------------------------------------------------------------- Ctrl-C


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_sigint_during_hung_requests_exits_at_once_and_keeps_the_cache(mixed_dataset, tmp_path):
    out = tmp_path / "o"
    with ChatServer(drip_s=1.0, drip_from=2) as srv:  # two quick replies, then every request hangs
        args = [
            sys.executable,
            str(ROOT / "evaluate.py"),
            f"data={mixed_dataset}",
            f"out={out}",
            "progress=false",
            "eval.n_boot=0",
            "model=openai",
            f"model.base_url={srv.base_url}",
            "model.name=m",
            "model.concurrency=2",
            "model.timeout_s=600",
        ]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not (len(_lines(out / "replies.jsonl")) >= 1 and srv.dripping == 2):
                assert time.monotonic() < deadline and proc.poll() is None, "no hung requests"
                time.sleep(0.1)
            proc.send_signal(signal.SIGINT)
            t0 = time.monotonic()
            _, err = proc.communicate(timeout=90)
            seconds = time.monotonic() - t0
        finally:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 130 and "interrupted" in err and seconds < 60  # a hang guard (timeout_s=600)
    cached = _lines(out / "replies.jsonl")  # every line valid JSON
    assert len(cached) >= 1 and all(e["reply"] == "Answer: A" for e in cached)
    with ChatServer() as srv2:
        res = run(_cfg(mixed_dataset, out, srv2.base_url, "model.name=m"), log=QUIET)
    assert srv2.n_requests == res["accounting"]["overall"]["asked"] - len(cached)


# -------------------------------------------------------------------- secrets


def test_redact_url_hides_user_info_and_secret_query_values():
    url = f"https://me:{URL_PASS}@h.example:8443/v1?api-version=2024-06&api_key={URL_TOKEN}&x=1"
    assert redact_url(url) == "https://***@h.example:8443/v1?api-version=2024-06&api_key=***&x=1"
    assert redact_url(f"http://{URL_TOKEN}@h/v1") == "http://***@h/v1"
    assert set(url_secrets(url)) == {URL_PASS, URL_TOKEN}
    nested = {"inner": {"base_url": url, "n": 3}, "l": [f"see {url} now"]}
    assert URL_PASS not in json.dumps(redact(nested)) and URL_TOKEN not in json.dumps(redact(nested))


def test_a_bad_base_url_is_refused_without_showing_its_credentials():
    from auralgen.core.errors import ParameterError

    with pytest.raises(ParameterError) as exc:
        _adapter(f"ftp://me:{URL_PASS}@h/v1")
    assert URL_PASS not in str(exc.value) and "ftp://***@h/v1" in str(exc.value)


@pytest.mark.parametrize("env_key", [True, False])
def test_credentials_in_base_url_and_echoed_headers_never_reach_files_or_logs(
    mixed_dataset, tmp_path, monkeypatch, env_key
):
    if env_key:
        monkeypatch.setenv("AURALGEN_TEST_KEY", SECRET)
    else:
        monkeypatch.delenv("AURALGEN_TEST_KEY", raising=False)
    basic = base64.b64encode(f"user:{URL_PASS}".encode()).decode()
    out, logged = tmp_path / "o", []
    with ChatServer(reply=lambda text: "A", echo_auth=True) as srv:
        url = srv.base_url.replace("://", f"://user:{URL_PASS}@") + f"?api_key={URL_TOKEN}"
        res = run(_cfg(mixed_dataset, out, url, "eval.keep_audio=true"), log=logged.append)
    # the credentials did reach the server ...
    assert srv.auth_headers == {f"Bearer {SECRET}" if env_key else f"Basic {basic}"}
    assert srv.paths == {f"/v1/chat/completions?api_key={URL_TOKEN}"}
    # ... and nowhere else
    assert res["model"]["config"]["base_url"] == redact_url(url) and "***@127.0.0.1" in redact_url(url)
    replies = [e["reply"] for e in _lines(out / "replies.jsonl")]
    assert replies and all(r == "A (you sent Authorization: ***)" for r in replies)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {"results.json", "run.json", "replies.jsonl"} <= {p.name for p in files}
    for secret in (SECRET, URL_PASS, URL_TOKEN, basic):
        assert not any(secret.encode() in p.read_bytes() for p in files), secret
        assert not any(secret in line for line in logged), secret
