"""The ``command`` adapter on a Ray cluster: one actor per model replica (``model.ray_address``).

``model=command model.ray_address=auto model.replicas=4 model.num_gpus=1`` starts four Ray actors,
each reserving ``model.num_cpus`` CPUs and ``model.num_gpus`` GPUs, and each running one copy of
``model.cmd`` through an ordinary :class:`~auralgen.evaluation.adapters.command.CommandAdapter`: the
program starts (loads its model) once per replica, and questions stream through the replicas as
they get free, ``model.concurrency`` in flight per replica. Everything that makes a run a run stays
on the driver -- the reply cache, rotations, accounting, scoring -- so a pool run's ``replies.jsonl``
and ``results.json`` are those of a local run of the same deterministic program.

``ray_address``: ``local`` starts a Ray instance on this machine; ``auto`` or ``host:port`` joins a
running cluster. The messages name the clips by absolute path (the framed protocol), so the
replicas must see the run's ``<out>/audio`` directory: one machine, or a filesystem shared by the
nodes. Each replica writes its program's stray stdout to ``<out>/replica<k>/command_stdout.log``.

Every wait is bounded: a reply by ``model.timeout_s`` plus :data:`GRACE_S` (the replica's own
deadline comes first), a replica's report and shutdown by :data:`GRACE_S`. A replica whose process
Ray loses ends the run (:class:`~auralgen.evaluation.adapters.base.FatalModelError`), as the local
program's death does. Ray is the optional extra ``auralgen[ray]``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict, replace
from pathlib import Path

from .base import Adapter, FatalModelError, ModelError

GRACE_S = 30.0  # beyond model.timeout_s: the longest wait for a replica's reply, report or shutdown
POOL_FIELDS = {"ray_address": None, "replicas": 1, "num_cpus": 1.0, "num_gpus": 0.0}  # the pool's, not a replica's


class _Replica:
    """A Ray actor: one local command adapter (one model process)."""

    def __init__(self, single: type, cfg: dict, seed: int, workdir: str, logdir: str):
        Path(logdir).mkdir(parents=True, exist_ok=True)
        self.adapter = single(single.Config(**cfg), seed=seed, workdir=workdir, logdir=logdir)

    async def ask(self, msg: dict) -> str:
        return await self.adapter.agenerate(msg)

    def report(self) -> tuple[dict, dict]:
        return self.adapter.late_errors(), self.adapter.protocol_report()

    def close(self) -> None:
        self.adapter.close()


class RayCommandPool(Adapter):
    """``model.replicas`` copies of the adapter class ``single`` (the command adapter) as Ray actors,
    used as one adapter by the session."""

    kind = "command"

    def __init__(self, cfg, *, single: type, seed: int = 0, workdir=".", logdir=None):
        from auralgen.execution.ray import _import_ray, worker_env

        super().__init__(cfg, seed=seed, workdir=workdir, logdir=logdir)
        ray = self._ray = _import_ray()
        self._owns = not ray.is_initialized()
        if self._owns:
            common = dict(runtime_env={"env_vars": worker_env()}, log_to_driver=False, logging_level=logging.WARNING)
            if cfg.ray_address == "local":
                ray.init(address="local", include_dashboard=False, **common)
            else:
                ray.init(address=cfg.ray_address, **common)
        one = asdict(replace(cfg, **POOL_FIELDS))
        actor = ray.remote(num_cpus=cfg.num_cpus, num_gpus=cfg.num_gpus, max_restarts=0)(_Replica)
        root = Path(self.logdir).resolve()
        self.actors = [
            actor.remote(single, one, seed, str(Path(workdir).resolve()), str(root / f"replica{k}"))
            for k in range(cfg.replicas)
        ]
        self.concurrency = cfg.replicas * cfg.concurrency
        self._free: asyncio.Queue | None = None

    async def agenerate(self, msg: dict) -> str:
        if self._free is None:  # created in the session's running loop
            self._free = asyncio.Queue()
            for a in self.actors:
                for _ in range(self.cfg.concurrency):
                    self._free.put_nowait(a)
        replica = await self._free.get()
        try:
            return await asyncio.wait_for(replica.ask.remote(msg), timeout=self.cfg.timeout_s + GRACE_S)
        except asyncio.TimeoutError:
            raise ModelError(
                f"no reply from a Ray replica within timeout_s={self.cfg.timeout_s} + {GRACE_S:g} s"
            ) from None
        except self._ray.exceptions.RayTaskError as exc:  # the replica's own error, as the local adapter raises it
            cause = getattr(exc, "cause", None)
            if isinstance(cause, (ModelError, FatalModelError)):
                raise cause from None
            raise FatalModelError(f"a Ray replica failed: {str(exc).splitlines()[0][:200]}") from None
        except self._ray.exceptions.RayActorError as exc:
            raise FatalModelError(
                f"a Ray replica of model.cmd={self.cfg.cmd!r} died: {str(exc).splitlines()[0][:200]}"
            ) from None
        finally:
            self._free.put_nowait(replica)

    def generate_inner(self, msg: dict) -> str:
        return asyncio.run(self.agenerate(msg))

    def _reports(self) -> list[tuple[dict, dict] | None]:
        """Each replica's late errors and protocol counts; None for one that is gone or does not answer
        within :data:`GRACE_S` (its process ended with it: the run has already failed)."""
        ray, refs = self._ray, [a.report.remote() for a in self.actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=GRACE_S)
        out = []
        for ref in refs:
            try:
                out.append(ray.get(ref, timeout=0) if ref in ready else None)
            except ray.exceptions.RayError:
                out.append(None)
        return out

    def late_errors(self) -> dict[str, str]:
        return {k: v for r in self._reports() if r for k, v in r[0].items()}

    def protocol_report(self) -> dict:
        """The replicas' counts summed, their stdout logs listed, and how many could not report."""
        reports = self._reports()
        total: dict = {
            "replicas": len(self.actors),
            "replicas_lost": sum(r is None for r in reports),
            "stdout_logs": [],
        }
        for r in filter(None, reports):
            for k, v in r[1].items():
                if k == "stdout_log":
                    total["stdout_logs"] += [v] if v else []
                elif isinstance(v, (int, float)):
                    total[k] = total.get(k, 0) + v
        return total

    def close(self) -> None:
        ray = self._ray
        if not ray.is_initialized():
            return
        try:
            ray.get([a.close.remote() for a in self.actors], timeout=GRACE_S)
        except Exception:  # a replica already gone: its process ended with it
            pass
        for a in self.actors:
            ray.kill(a)
        if self._owns:
            ray.shutdown()
        self._owns = False
