"""The openai adapter keeps the configured concurrency in flight against a local server.

Starts :class:`~tests.support.chat_server.ChatServer` on 127.0.0.1 with a fixed reply
delay, sends ``N`` chat-completions requests (each with a 1 s mono 16 kHz WAV as
``input_audio``) through :class:`~auralgen.evaluation.adapters.openai.OpenAIAdapter` at each
configured concurrency, and prints the in-flight maximum and time-weighted mean measured by
the server against the configured value, and the throughput against the ideal
``concurrency / delay``.

Run: ``.venv/bin/python bench/bench_eval.py [delay_s] [n_requests]``
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test chat server lives in tests/support

from auralgen.evaluation.adapters import build_adapter  # noqa: E402
from auralgen.evaluation.items import write_wav  # noqa: E402
from tests.support.chat_server import ChatServer  # noqa: E402

CONCURRENCY = (1, 4, 8, 16)


def bench(concurrency: int, *, delay_s: float, n: int, wav: Path) -> dict:
    msgs = [
        {
            "meta": {"unique_id": f"item{i}@0", "options": ["A1", "B1"]},
            "prompts": [
                {"type": "audio", "value": str(wav)},
                {"type": "text", "value": f"Question {i}\n<A>: A1\n<B>: B1\n"},
            ],
        }
        for i in range(n)
    ]
    with ChatServer(delay_s=delay_s, reply=lambda text: "B") as srv:
        adapter = build_adapter(
            {"kind": "openai", "base_url": srv.base_url, "name": "bench", "concurrency": concurrency}
        )

        async def go():
            return await asyncio.gather(*(adapter.agenerate(m) for m in msgs))

        t0 = time.perf_counter()
        replies = asyncio.run(go())
        wall_s = time.perf_counter() - t0
        adapter.close()
    assert replies == ["B"] * n
    ideal = concurrency / delay_s
    return {
        "concurrency": concurrency,
        "requests": srv.n_requests,
        "in_flight_max": srv.max_in_flight,
        "in_flight_mean": round(srv.mean_in_flight, 2),
        "in_flight_mean_ratio": round(srv.mean_in_flight / concurrency, 3),
        "throughput_rps": round(n / wall_s, 1),
        "ideal_rps": round(ideal, 1),
        "throughput_ratio": round(n / wall_s / ideal, 3),
        "wall_s": round(wall_s, 2),
    }


def main(argv: list[str]) -> list[dict]:
    delay_s = float(argv[0]) if argv else 0.1
    n = int(argv[1]) if len(argv) > 1 else 160
    with tempfile.TemporaryDirectory() as tmp:
        wav = write_wav(Path(tmp) / "clip.wav", (0.1 * np.sin(np.arange(16000) * 0.2)).astype(np.float32)[None], 16000)
        rows = [bench(c, delay_s=delay_s, n=n, wav=wav) for c in CONCURRENCY]
    print(json.dumps(rows, indent=2))
    for r in rows:
        print(
            f"concurrency {r['concurrency']:>2}: in flight max {r['in_flight_max']} / mean {r['in_flight_mean']:.2f} "
            f"(= {r['in_flight_mean_ratio']:.2f} x configured); {r['throughput_rps']:.1f} req/s "
            f"= {r['throughput_ratio']:.2f} x ideal ({delay_s:g} s reply delay, {n} requests)"
        )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
