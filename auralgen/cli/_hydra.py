"""Hydra's side of the command line (the only part of auralgen that imports hydra / omegaconf).

:func:`register_configs` stores the ``task`` config group in Hydra's ConfigStore: one node per
registered task, its ``Config`` dataclass defaults (written once, in Python; there is no
``conf/task/*.yaml``). Suites pull them with ``/task@tasks.<name>: <name>`` and set their own sizes.
:func:`check_command_line` composes and validates every job of a command line (every job of a
multirun) before Hydra runs anything, so a bad override ends in one ``error:`` line and exit code 2;
:func:`compose` composes the shipped configuration (:func:`auralgen.core.resources.conf_dir`) for
tests and notebooks. The library itself takes plain mappings (:func:`auralgen.config.validate`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from auralgen.config import RUNTIME_KEYS, ExecutorConfig, ExportConfig, RunSettings, validate
from auralgen.core.errors import ParameterError
from auralgen.core.mapping import did_you_mean, plain
from auralgen.core.resources import conf_dir
from auralgen.mixing import DEFAULT_MIXING
from auralgen.sounds.corpus import SOURCE_KINDS, SourceConfig

# -- config nodes from the dataclasses -----------------------------------------------------------
TASK_GROUP = "task"
EVALUATE_CONFIG = "evaluate"  # conf/evaluate.yaml: its `task` is a plain key, not the task group
SETTINGS_NODE = "settings"  # conf/config.yaml's defaults list names it first (a suite sets suite_name after it)


def settings_node() -> dict:
    """The top-level settings: :class:`~auralgen.config.RunSettings` defaults, and the multirun rule
    that a job's folder name (``override_dirname``) leaves out the runtime keys, which change no byte."""
    exclude = {"job": {"config": {"override_dirname": {"exclude_keys": list(RUNTIME_KEYS)}}}}
    return {**plain(dataclasses.asdict(RunSettings())), "hydra": exclude}


def group_nodes() -> dict[tuple[str, str], dict]:
    """The config-group options written in Python, ``(group, option) -> node``: the export format
    (:class:`~auralgen.config.ExportConfig`) and the default mixing (:class:`~auralgen.mixing.MixSpec`);
    the other mixing options stay YAML files of ``conf/mixing/``."""
    return {
        ("export", "parquet"): plain(dataclasses.asdict(ExportConfig())),
        ("executor", "local"): plain(dataclasses.asdict(ExecutorConfig())),
        ("executor", "ray"): plain(dataclasses.asdict(ExecutorConfig(kind="ray"))),
        **{("source", k): plain(dataclasses.asdict(SourceConfig(kind=k))) for k in SOURCE_KINDS},
        ("mixing", "default"): plain(DEFAULT_MIXING),
    }


def task_node(cls, name: str) -> dict:
    """The ``task/<name>`` node: every field of ``cls.Config(name=name)`` as plain values. A field
    named like a config group with a ``default`` option (``mixing``) takes that option instead,
    through the node's defaults list, so ``mixing@task.mixing=sequential`` swaps it whole."""
    node = plain(dataclasses.asdict(cls.Config(name=name)))
    defaults = {group for group, option in group_nodes() if option == "default"}
    groups = [k for k, v in node.items() if isinstance(v, dict) and k in defaults]
    if not groups:
        return node
    return {
        "defaults": [*({f"/{k}@{k}": "default"} for k in groups), "_self_"],
        **{k: v for k, v in node.items() if k not in groups},
    }


def register_configs(*, task_group: bool = True) -> None:
    """(Re)build the nodes written in Python in Hydra's ConfigStore: the top-level settings, the
    options of :func:`group_nodes` and the ``task`` group from the registered tasks (every task
    module is imported); a task unregistered since the last call loses its node.

    ``task_group=False`` (evaluation) leaves the ``task`` group out: there ``task=`` is a plain key
    (the tasks to ask), which Hydra would otherwise read as a choice of that group.
    """
    from hydra.core.config_store import ConfigStore

    from auralgen.tasks.base import TASKS

    store = ConfigStore.instance()
    nodes = {(None, SETTINGS_NODE): settings_node(), **group_nodes()}
    tasks = {(TASK_GROUP, name): task_node(cls, name) for name, cls in TASKS.load_all().items()} if task_group else {}
    if not task_group or {k for k in _STORED if k[0] == TASK_GROUP} != set(tasks):
        store.repo.pop(TASK_GROUP, None)
        for key in [k for k in _STORED if k[0] == TASK_GROUP]:
            del _STORED[key]
    for (group, option), node in {**nodes, **tasks}.items():
        if _STORED.get((group, option)) != node or not _in_store(store, group, option):
            store.store(group=group, name=option, node=node)  # building a node is most of a compose's time
            _STORED[(group, option)] = node


_STORED: dict[tuple[str | None, str], dict] = {}  # the nodes register_configs last stored, to store only changes


def _in_store(store, group: str | None, option: str) -> bool:
    repo = store.repo if group is None else store.repo.get(group, {})
    return f"{option}.yaml" in repo


def _is_group(config_dir: str, group: str) -> bool:
    """Whether ``group`` is a config group: a folder of ``config_dir`` or a group of the ConfigStore."""
    from pathlib import Path

    from hydra.core.config_store import ConfigStore

    node = ConfigStore.instance().repo
    for part in group.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return isinstance(node, dict) or (Path(config_dir) / group.replace(".", "/")).is_dir()


# -- command line ------------------------------------------------------------------------------
HYDRA_FLAGS_WITH_VALUE = {"-cp", "--config-path", "-cn", "--config-name", "-cd", "--config-dir", "-p", "--package"}
MAX_SWEEP_JOBS = 1000  # jobs one multirun may hold; each distinct one is checked before any runs


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause).strip() and str(cause) not in text:
        text += ": " + str(cause)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    keep = [ln for ln in lines if not ln.startswith(("To append", "full_key", "object_type", "Set the environment"))]
    if "Config search path:" in keep:  # Hydra lists its search path after the options: noise for a user
        keep = keep[: keep.index("Config search path:")]
    text = "; ".join(keep) or type(exc).__name__
    return text.replace("\t", "").replace(":;", ":")


CONFIG_FLAGS = {"-cp", "--config-path", "-cn", "--config-name", "-cd", "--config-dir"}


def refuse_config_flags(argv: list[str]) -> None:
    """Refuse Hydra's flags that load another configuration (``-cd /etc``): the checks run on the
    shipped one, so a run would use a configuration nobody checked."""
    for i, arg in enumerate(argv):
        flag, _, value = arg.partition("=")
        if flag in CONFIG_FLAGS:
            value = value or (argv[i + 1] if i + 1 < len(argv) else "")
            raise ParameterError(
                f"{flag} {value} loads a configuration other than the shipped one; allowed: the shipped "
                "configuration with overrides (suite=<name>, task=<name>, key=value)"
            )


def _overrides(argv: list[str]) -> list[str]:
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in HYDRA_FLAGS_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            out.append(arg)
    return out


def _sweep_values(o) -> list[str]:
    """The values of a sweep override, refusing more than :data:`MAX_SWEEP_JOBS` (never all of a huge range)."""
    import itertools

    values = list(itertools.islice(o.sweep_string_iterator(), MAX_SWEEP_JOBS + 1))
    if len(values) > MAX_SWEEP_JOBS:
        raise ParameterError(
            f"{o.input_line} sweeps more than {MAX_SWEEP_JOBS} values; "
            f"allowed: at most {MAX_SWEEP_JOBS} jobs per multirun"
        )
    return values


def _sweeps(parsed) -> list[tuple[Any, list[str]]]:
    """``(override, values)`` of each override (a plain override has one value); refuses too many jobs."""
    out, jobs = [], 1
    for o in parsed:
        values = _sweep_values(o) if o.is_sweep_override() else [None]
        jobs *= len(values)
        out.append((o, values))
    if jobs > MAX_SWEEP_JOBS:
        swept = " x ".join(str(len(v)) for o, v in out if o.is_sweep_override())
        raise ParameterError(
            f"the sweep makes {jobs} jobs ({swept}); allowed: at most {MAX_SWEEP_JOBS} jobs per multirun"
        )
    return out


def _as_override(o, value: str | None) -> str:
    return o.input_line if value is None else f"{o.get_key_element()}={value}"


def _combinations(overrides: list[str]) -> list[list[str]]:
    """Sweep overrides (``a=1,2``) expanded into plain override lists, one per job (at most
    :data:`MAX_SWEEP_JOBS`, else :class:`ParameterError`)."""
    import itertools

    from hydra.core.override_parser.overrides_parser import OverridesParser

    sweeps = _sweeps(OverridesParser.create().parse_overrides(overrides))
    grid = itertools.product(*[[(o, v) for v in values] for o, values in sweeps])
    return [[_as_override(o, v) for o, v in job] for job in grid]


def _structural(o, config_dir: str) -> bool:
    """Whether an override changes the defaults list (a config group, an addition or a deletion)."""
    group = o.key_or_group
    return bool(
        o.is_add() or o.is_force_add() or o.is_delete() or group.startswith("hydra") or _is_group(config_dir, group)
    )


def _jobs(overrides: list[str], config_dir: str, config_name: str):
    """Yield ``(label, composed config)`` for every job of the command line, composing once per
    distinct choice of config groups and setting plain values on a copy (fast for large sweeps)."""
    import copy
    import itertools

    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    register_configs(task_group=config_name != EVALUATE_CONFIG)
    parser = OverridesParser.create()
    sweeps = _sweeps(parser.parse_overrides(overrides))
    shape = [_structural(o, config_dir) for o, _ in sweeps]
    # config groups: every choice composed; plain values: the first composed, the others set on a copy
    groups = itertools.product(*[[(o, x) for x in v] if st else [(o, v[0])] for (o, v), st in zip(sweeps, shape)])
    free = [(o, v) for (o, v), st in zip(sweeps, shape) if not st and o.is_sweep_override()]
    parsed = {(id(o), x): parser.parse_override(_as_override(o, x)).value() for o, v in free for x in v}
    with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
        for group in groups:
            base = compose(config_name=config_name, overrides=[_as_override(o, v) for o, v in group])
            swept = [(o, v) for (o, v), st in zip(group, shape) if st and o.is_sweep_override()]
            if not free:  # the composed config itself
                yield " ".join(_as_override(o, v) for o, v in swept), base
                continue
            plain = OmegaConf.to_container(base, resolve=True)
            for values in itertools.product(*[[(o, x) for x in v] for o, v in free]):
                cfg = copy.deepcopy(plain)  # a plain copy (fast); unknown keys are refused by validate
                for o, x in values:
                    _set_path(cfg, o.key_or_group.split("."), copy.deepcopy(parsed[id(o), x]))
                _refuse_missing(cfg)
                yield " ".join(_as_override(o, v) for o, v in [*swept, *values]), cfg


def _refuse_missing(cfg, key: str = "") -> None:
    """A mandatory value (``???``) left unset, as OmegaConf would refuse it."""
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            _refuse_missing(v, f"{key}.{k}" if key else str(k))
    elif cfg == "???":
        raise ParameterError(f"{key} is missing; allowed: a value given on the command line ({key}=...)")


def _set_path(cfg: dict, path: list[str], value) -> None:
    """``cfg[path] = value`` as Hydra sets an override (mappings merged into mappings)."""
    for k in path[:-1]:
        cfg = cfg.setdefault(k, {})
    old = cfg.get(path[-1])
    if isinstance(old, dict) and isinstance(value, dict):
        for k, v in value.items():
            _set_path(old, [k], v)
    else:
        cfg[path[-1]] = value


def refuse_ignored_task_overrides(overrides: list[str]) -> None:
    """Refuse overrides that generation would silently ignore: several tasks given to ``task=``
    (one ``task`` node holds one task), and a suite's ``tasks.<name>...``, ``suite=`` or
    ``suite_name=`` beside ``task=`` (only the selected task runs)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides)
    refuse_deletions_and_empty_tasks(parsed)
    refuse_task_lists(parsed)
    chosen = None
    for o in parsed:
        if o.key_or_group != "task" or o.package or o.is_delete():
            continue
        values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
        if any(isinstance(v, (list, tuple)) for v in values):
            raise ParameterError(
                f"{o.input_line} names several tasks, but task= selects one; "
                "allowed: task=<one name>, a multirun -m task=a,b (one dataset each), or a suite trimmed with "
                "~tasks.<name> / grown with +task@tasks.<name>=<name>"
            )
        chosen = o if any(v is not None for v in values) else chosen
    if chosen is None:
        return
    for o in parsed:
        key = o.key_or_group if not o.package else f"{o.key_or_group}@{o.package}"
        if key.split(".")[0] in ("tasks", "suite", "suite_name") or (o.package or "").startswith("tasks"):
            raise ParameterError(
                f"{o.input_line} has no effect with {chosen.input_line} (only the selected task runs); "
                "allowed: task.<key>=<value> to configure it, or drop task= to run the suite"
            )


def refuse_task_lists(parsed) -> None:
    """Refuse ``tasks=[a,b]`` / ``tasks=a`` in generation (a suite's ``tasks`` is a mapping of task
    configs; Hydra's own answer is "Cannot merge DictConfig with ListConfig"): the one way to name a
    task is ``task=<name>``, in generation as in evaluation."""
    for o in parsed:
        if o.key_or_group != "tasks" or o.package or o.is_delete():
            continue
        values = list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]
        if any(isinstance(v, (list, tuple, str)) for v in values):
            raise ParameterError(
                f"{o.input_line} names tasks as a list, but a suite's tasks are a mapping of task configs; "
                "allowed: task=<name> (one task), "
                "-m task=a,b (one dataset each), suite=<name>, or a suite grown with +task@tasks.<name>=<name>"
            )


def tasks_deprecation(argv: list[str]) -> str | None:
    """The one-line note for evaluation's former ``tasks=`` (``None`` when the command line does not use it)."""
    for arg in _overrides(argv):
        key, eq, value = arg.partition("=")
        if eq and key.lstrip("+~") == "tasks":
            return (
                f"note: tasks= is deprecated; write task={value} (one name or a list, the key auralgen generate "
                "takes too)"
            )
    return None


def _suggest_key(exc: BaseException, overrides: list[str], config_dir: str, config_name: str) -> str:
    """``" (did you mean 'task.items_per_level'?)"`` for Hydra's "Could not override 'task.itmes_per_level'"."""
    import re

    from omegaconf import DictConfig, OmegaConf

    found = re.search(r"Could not override '([^']+)'", str(exc))
    if not found:
        return ""
    key = found.group(1).lstrip("+~")
    parent, _, leaf = key.rpartition(".")
    rest = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != key and "," not in o]
    try:
        cfg = compose(rest, config_dir=config_dir, config_name=config_name)
        node = OmegaConf.select(cfg, parent) if parent else cfg
    except Exception:  # the other overrides do not compose on their own: no suggestion
        return ""
    if not isinstance(node, DictConfig):
        return ""
    return did_you_mean(leaf, node.keys(), prefix=f"{parent}." if parent else "")


def refuse_deletions_and_empty_tasks(parsed) -> None:
    """Refuse ``tasks={}`` (Hydra merges it into the suite's tasks: the whole suite would run) and
    the deletion of a key (``~task.levels``: its default would come back silently); deleting a
    whole task from a suite (``~tasks.<name>``) stays allowed."""
    for o in parsed:
        key = o.key_or_group
        if (
            o.is_delete()
            and not o.package
            and not key.startswith("hydra")
            and not (key.startswith("tasks.") and key.count(".") == 1)
        ):
            raise ParameterError(
                f"{o.input_line} deletes {key}, which the run needs; allowed: set it ({key}=<value>), "
                "or drop a task from a suite with ~tasks.<name>"
            )
        if key == "tasks" and not o.is_delete() and not o.is_sweep_override() and o.value() in ({}, [], None, ""):
            raise ParameterError(
                f"{o.input_line} selects no task (it would run the whole suite); allowed: task=<name>, "
                "suite=<name>, or a suite trimmed with ~tasks.<name>"
            )


def check_command_line(argv: list[str], *, config_dir: str, config_name: str, validate_fn=None, rules=None) -> None:
    """Compose and validate every job of a command line (every job of a multirun) before Hydra runs anything.

    ``rules(overrides)`` may refuse overrides first. On a bad override or value: print one line
    ``error: ...`` to stderr and exit with code 2.
    """
    import sys

    from hydra.core.global_hydra import GlobalHydra
    from omegaconf.errors import OmegaConfBaseException

    if any(a in ("--help", "-h", "--hydra-help", "--info", "--cfg", "-c", "--shell-completion", "-sc") for a in argv):
        return
    validate_fn = validate_fn or validate
    label, seen, overrides = "", set(), []
    try:
        refuse_config_flags(argv)
        overrides = _overrides(argv)
        if rules is not None:
            rules(overrides)
        GlobalHydra.instance().clear()
        for label, cfg in _jobs(overrides, config_dir, config_name):  # noqa: B007 (label: the error's job)
            key = repr(cfg)
            if key not in seen:
                seen.add(key)
                validate_fn(cfg)
    except ParameterError as exc:
        print(f"error: {f'job {label}: ' if label else ''}{exc}", file=sys.stderr)
        sys.exit(2)
    except (OmegaConfBaseException, Exception) as exc:  # hydra's own override/composition errors
        if not type(exc).__module__.startswith(("hydra", "omegaconf")):
            raise
        hint = _suggest_key(exc, overrides, config_dir, config_name)
        print(f"error: {_one_line(exc).rstrip('.') if hint else _one_line(exc)}{hint}", file=sys.stderr)
        sys.exit(2)
    finally:
        GlobalHydra.instance().clear()


def compose(overrides: list[str] | None = None, *, config_dir: str | None = None, config_name: str = "config"):
    """Compose ``conf/`` with Hydra's compose API (for tests and notebooks); returns a DictConfig."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    config_dir = config_dir or str(conf_dir())
    register_configs(task_group=config_name != EVALUATE_CONFIG)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
            return hydra_compose(config_name=config_name, overrides=list(overrides or []))
    finally:
        GlobalHydra.instance().clear()
