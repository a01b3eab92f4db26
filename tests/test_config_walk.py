"""No override is silently ignored: every key of the composed config, changed,
either changes the plan or the output, or is refused in one line.

For each leaf key (top level on the ``tones`` suite, every ``tasks.<name>.*`` of the default
suite) a few plausible new values are tried in turn (a number scaled, a list shortened, a flag
flipped, a string replaced, then the values its refusal names as allowed); the first value
``validate`` accepts must change something of: the plan, the items' parameters and questions,
their audio and measurements, or the dataset card. Runtime keys (out, workers, progress,
overwrite) change no byte by design: they must change the RunConfig and be listed in RUNTIME_KEYS.
"""

from __future__ import annotations

import copy
import re

import pytest
from omegaconf import OmegaConf

from auralgen.cli._hydra import compose
from auralgen.config import RUNTIME_KEYS, build_tasks, config_record, validate
from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng
from auralgen.generation import Renderer, plan

ITEMS_PER_LEVEL = 2  # items sampled at each level (the first is also rendered when the samples agree)


def leaves(node, path=()):
    if isinstance(node, dict) and node and "dist" not in node:
        for k, v in node.items():
            yield from leaves(v, (*path, k))
    elif isinstance(node, dict) and node:
        for k, v in node.items():  # a distribution: its fields are keys too
            yield (*path, k), v
    else:
        yield path, node


def candidates(value):
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value * 2 + 1, value - 1, 1, value // 2]
    if isinstance(value, float):
        return [value * 1.1 if value else 0.5, value * 0.9 if value else 0.1, value + 1.0, value * 0.5]
    if isinstance(value, str):
        return ["__changed__"]
    if value is None:
        return [48000, [0], 1.0, "__changed__"]
    if isinstance(value, list) and value:
        out = []
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            out.append([type(v)(v * 1.1 if v else 1) if isinstance(v, float) else v * 2 + 1 for v in value])
        if len(value) > 1:
            out += [value[:-1], value[1:]]
        return out + [list(reversed(value))]
    return []


def allowed_from(message: str, current) -> list:
    """The alternatives a refusal names (``allowed: a, b or c``), other than the current value."""
    tail = message.split("allowed:")[-1]
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", tail)
    stop = {"or", "and", "a", "an", "the", "of", "one", "list", "null", "true", "false", "name", "names"}
    return [w for w in dict.fromkeys(words) if w not in stop and w != current][:4]


def set_path(cfg, path, value):
    node = cfg
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def snapshot(cfg: dict, tmp_path, levels: int | None = None) -> dict:
    """What a config produces, stage by stage: plan, samples (params + QA), rendered rows, card."""
    run = validate(cfg)
    tasks = build_tasks(run)
    shards = plan(run, tasks)
    firsts = [
        sp for sh in shards for sp in sh.items if sp.k < ITEMS_PER_LEVEL and (levels is None or sp.level < levels)
    ]
    samples = []
    renderer = Renderer(run)
    for spec in firsts:
        task = tasks[spec.task]
        rng = item_rng(run.seed, spec.split, spec.task, spec.index)
        params = task.design.draw(task.sample, rng, spec.level, spec.k, spec.split, run.splits)
        samples.append(
            (
                spec,
                params,
                task.qa(params, rng, slot=0),
                task.design.level_info(spec.level),
                task.channel_layout(params),
            )
        )
    return {
        "plan": [(sh.path, sh.items) for sh in shards],
        "samples": repr(samples),
        "run": run,
        "renderer": renderer,
        "firsts": firsts,
    }


def later_stages(snap: dict, tmp_path) -> dict:
    from auralgen.export.card import write_card

    rows = [snap["renderer"](spec)["row"] for spec in snap["firsts"] if spec.k == 0]
    out = tmp_path / f"card{len(list(tmp_path.iterdir()))}"
    out.mkdir()
    run = snap["run"]
    write_card(out, run, build_tasks(run), [])
    return {"rows": rows, "card": (out / "README.md").read_text(), "record": config_record(run)}


def changes(base: dict, base_cfg: dict, new_cfg: dict, tmp_path, levels=None) -> bool:
    new = snapshot(new_cfg, tmp_path, levels)
    if new["plan"] != base["plan"] or new["samples"] != base["samples"]:
        return True
    if "later" not in base:
        base["later"] = later_stages(base, tmp_path)
    later = later_stages(new, tmp_path)
    return later["rows"] != base["later"]["rows"] or later["card"] != base["later"]["card"]


def verdict(base, base_cfg, path, value, tmp_path, levels=None) -> str:
    """'changes' (some accepted new value changes the output), 'refused' (every new value is
    refused) or 'IGNORED' (values were accepted, none changed anything) for changing ``path``."""
    tried, queue, accepted = set(), candidates(value), []
    while queue and len(tried) < 8:
        new_value = queue.pop(0)
        if repr(new_value) in tried or new_value == value:
            continue
        tried.add(repr(new_value))
        cfg = copy.deepcopy(base_cfg)
        set_path(cfg, path, new_value)
        try:
            validate(cfg)
        except ParameterError as exc:
            if isinstance(value, str) and new_value == "__changed__":
                queue += allowed_from(str(exc), value)
            continue
        try:
            if changes(base, base_cfg, cfg, tmp_path, levels):
                return "changes"
        except ParameterError:  # refused while sampling (e.g. no room fits): one line at run time
            continue
        accepted.append(new_value)
    return f"IGNORED (accepted {accepted!r} without effect)" if accepted else "refused"


def plain(overrides):
    return OmegaConf.to_container(compose([*overrides, "workers=1", "progress=false"]), resolve=True)


TOP = plain(["suite=tones"])
ALL_TOP_KEYS = [p for p, _ in leaves({k: v for k, v in TOP.items() if k != "tasks"})]
# max_resample bounds the re-draws of items that fail validation; none fails here: its own test below.
# export.public writes a second dataset (<out>/public) beside the unchanged shards and card (by design):
# tests/export/test_public.py checks that it is written and changes no id and no shard
TOP_KEYS = [p for p in ALL_TOP_KEYS if p not in (("max_resample",), ("export", "public"))]
RUNTIME_NEW = {
    ("out",): "elsewhere",
    ("workers",): 2,
    ("progress",): True,
    ("overwrite",): True,
    ("executor", "kind"): "ray",
    ("executor", "address"): "auto",
    ("executor", "num_cpus_per_task"): 2.0,
    ("executor", "max_retries"): 1,
    ("executor", "connect_timeout_s"): 5.0,
}


def test_max_resample_bounds_redraws(monkeypatch):
    from auralgen.tasks.base import task_class

    monkeypatch.setattr(task_class("pitch_relative"), "check", lambda self, params, clips: {"valid": False})
    for n in (0, 3):
        run = validate(plain(["task=pitch_relative", "task.items_per_level=1", "task.levels=[0]", f"max_resample={n}"]))
        spec = plan(run, build_tasks(run))[0].items[0]
        res = Renderer(run)(spec)
        assert res["row"] is None and res["stat"]["resampled"] == n and res["stat"]["dropped"]


@pytest.mark.parametrize("path", TOP_KEYS, ids=[".".join(p) for p in TOP_KEYS])
def test_every_top_level_key_changes_the_output_or_is_refused(path, tmp_path):
    cfg = copy.deepcopy(TOP)
    if path[0] in RUNTIME_KEYS:  # change no byte by design; they must reach the RunConfig
        set_path(cfg, path, RUNTIME_NEW[path])
        try:
            run = validate(cfg)
        except ParameterError as exc:  # executor.kind=ray where ray is not installed: refused in one line
            assert path == ("executor", "kind") and "ray" in str(exc)
            return
        assert getattr(run, path[0]) != getattr(validate(TOP), path[0])
        return
    base = snapshot(TOP, tmp_path, levels=1)
    value = TOP
    for k in path:
        value = value[k]
    assert verdict(base, TOP, path, value, tmp_path, levels=1) in ("changes", "refused")


SUITE = plain([])
TASK_KEYS = [("tasks", name, *p) for name in SUITE["tasks"] for p, _ in leaves(SUITE["tasks"][name]) if p != ("name",)]
TASK_PARAMS = [pytest.param(p, id=".".join(p[1:])) for p in TASK_KEYS]


def test_the_walk_covers_every_key():
    assert len(TASK_KEYS) > 200
    assert {p[0] for p in ALL_TOP_KEYS} == set(TOP) - {"tasks"}


BASES: dict[tuple[str, int | None], dict] = {}


@pytest.mark.parametrize("path", TASK_PARAMS)
def test_every_task_key_changes_the_output_or_is_refused(path, tmp_path):
    name = path[1]
    cfg = {k: v for k, v in SUITE.items() if k != "tasks"}
    cfg["task"] = copy.deepcopy(SUITE["tasks"][name])
    value = cfg["task"]
    for k in path[2:]:
        value = value[k]
    # the first level alone settles most keys (a change there is a change); a key it finds without
    # effect is walked again over every level
    for levels in (1, None):
        if (name, levels) not in BASES:  # the unchanged task's snapshot, shared by the walk over its keys
            BASES[name, levels] = snapshot(copy.deepcopy(cfg), tmp_path, levels)
        found = verdict(BASES[name, levels], cfg, ("task", *path[2:]), value, tmp_path, levels)
        if found in ("changes", "refused"):
            return
    raise AssertionError(f"{'.'.join(path)}: {found}")
