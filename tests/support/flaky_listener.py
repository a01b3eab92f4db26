"""A ``command``-adapter model that fails like real ones, around examples/noisy_pitch_listener.py.

It answers as the noisy pitch listener of ``--sigma`` cents (deterministic per question), except:

``--fail-every N``   declines every N-th request it receives (``{"id": ..., "error": "declined"}``);
``--fail-all``       declines every request;
``--slow-every N --slow-s S``
                     sleeps S seconds before replying to every N-th request (a timeout of the adapter);
``--stop-after K --flag PATH --signal INT|KILL``
                     after replying to its K-th request, when PATH does not exist yet, creates PATH and
                     sends the signal to its parent (the ``evaluate.py`` process): a Ctrl-C or a killed
                     run, once (the rerun of the same command finds PATH and runs through).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

from noisy_pitch_listener import answer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigma", type=float, default=20.0)
    ap.add_argument("--fail-every", type=int, default=0)
    ap.add_argument("--fail-all", action="store_true")
    ap.add_argument("--slow-every", type=int, default=0)
    ap.add_argument("--slow-s", type=float, default=0.0)
    ap.add_argument("--stop-after", type=int, default=0)
    ap.add_argument("--flag", default="")
    ap.add_argument("--signal", choices=("INT", "KILL"), default="INT")
    args = ap.parse_args()
    for n, line in enumerate(sys.stdin, 1):
        request = json.loads(line)
        if args.fail_all or (args.fail_every and n % args.fail_every == 0):
            out = {"id": request["id"], "error": "declined"}
        else:
            out = {"id": request["id"], "reply": answer(request, args.sigma)}
        if args.slow_every and n % args.slow_every == 0:
            time.sleep(args.slow_s)
        print(json.dumps(out), flush=True)
        if args.stop_after and n == args.stop_after and not os.path.exists(args.flag):
            Path(args.flag).touch()
            os.kill(os.getppid(), getattr(signal, f"SIG{args.signal}"))


if __name__ == "__main__":
    main()
