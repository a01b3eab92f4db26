"""Architecture checks that ratchet: import layers and unit sizes.

Both lists below only shrink. An import the layers forbid, or a function or module over the size
limit, fails here unless it is listed; a listed entry that is fixed must be deleted from its list
(import-linter reports an ignore that matches nothing; the size test reports a fixed offender).
"""

from __future__ import annotations

import ast
import configparser
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auralgen.tasks.base import TASKS

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"
PACKAGE = ROOT / "auralgen"

MAX_FUNCTION_LINES = 60  # `def` line to last line, docstring included
MAX_MODULE_LINES = 600

# Today's offenders with their current length. Shrink a unit below the limit -> delete its line;
# shorten it but stay over -> lower its number. Never add a line: split the function instead.
FUNCTION_OFFENDERS = {}
MODULE_OFFENDERS: dict[str, int] = {}


def _lint(config: Path, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))"
    )
    env = {**os.environ, "PYTHONPATH": str(pythonpath)} if pythonpath else None
    return subprocess.run(
        [sys.executable, "-c", code, str(config)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_import_contracts_hold():
    """Layers import downward only, no sibling cycles, hydra/omegaconf only in auralgen.cli (.importlinter)."""
    proc = _lint(CONFIG)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Contracts: 3 kept, 0 broken." in proc.stdout, proc.stdout[-3000:]


def test_layers_contract_is_not_vacuous(tmp_path):
    """The same layers, upside down and without the ignore list, are broken: the contract checks real imports.

    Guards against a contract that checks nothing (a misspelt layer made optional, a wrong container).
    """
    cfg = configparser.ConfigParser(interpolation=None, comment_prefixes=(";",), inline_comment_prefixes=None)
    cfg.read(CONFIG)
    layers = cfg["importlinter:contract:layers"]
    rows = [line for line in layers["layers"].splitlines() if line.strip()]
    layers["layers"] = "\n" + "\n".join(reversed(rows))
    layers.pop("ignore_imports", None)
    mutated = tmp_path / "importlinter.ini"
    with mutated.open("w") as f:
        cfg.write(f)
    proc = _lint(mutated)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "auralgen layers import downward only BROKEN" in proc.stdout, proc.stdout[-3000:]


def test_import_linter_sees_imports_inside_functions(tmp_path):
    """An upward import hidden inside a function (how today's cycles survive) breaks a layers contract."""
    pkg = tmp_path / "layered"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "high.py").write_text("from layered import low\n")
    (pkg / "low.py").write_text("def late():\n    from layered import high\n\n    return high\n")
    config = tmp_path / "importlinter.ini"
    config.write_text(
        "[importlinter]\nroot_package = layered\n\n"
        "[importlinter:contract:l]\nname = layered\ntype = layers\nlayers =\n    layered.high\n    layered.low\n"
    )
    proc = _lint(config, pythonpath=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "layered.low -> layered.high (l.2)" in proc.stdout, proc.stdout[-3000:]


def _function_lengths(path: Path, root: Path = ROOT) -> dict[str, int]:
    """``{"<path>::<Class>.<func>": lines}`` for every function and method, nested ones included."""
    rel = path.relative_to(root).as_posix()
    out: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out[f"{rel}::{name}"] = child.end_lineno - child.lineno + 1
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(), filename=rel), "")
    return out


def _sizes() -> tuple[dict[str, int], dict[str, int]]:
    functions: dict[str, int] = {}
    modules: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        modules[path.relative_to(ROOT).as_posix()] = len(path.read_text().splitlines())
        functions.update(_function_lengths(path))
    return functions, modules


def ratchet_problems(sizes: dict[str, int], offenders: dict[str, int], limit: int, what: str) -> list[str]:
    """One line per unit that breaks the ratchet of ``offenders`` (empty = holds)."""
    problems = []
    for unit, n in sorted(sizes.items()):
        if n > limit and unit not in offenders:
            problems.append(f"{unit}: {n} lines > {limit}; split the {what} (the offender list never grows)")
        elif unit in offenders and n > offenders[unit]:
            problems.append(f"{unit}: grew from {offenders[unit]} to {n} lines; allowed: at most {offenders[unit]}")
        elif unit in offenders and limit < n < offenders[unit]:
            problems.append(f"{unit}: now {n} lines; lower its entry from {offenders[unit]} to {n}")
    for unit, listed in sorted(offenders.items()):
        if sizes.get(unit, 0) <= limit:
            state = "is gone" if unit not in sizes else f"is {sizes[unit]} lines"
            problems.append(f"{unit} {state} (listed at {listed}); delete its entry from the offender list")
    return problems


def test_units_are_small_and_the_offender_lists_only_shrink():
    functions, modules = _sizes()
    problems = ratchet_problems(functions, FUNCTION_OFFENDERS, MAX_FUNCTION_LINES, "function")
    problems += ratchet_problems(modules, MODULE_OFFENDERS, MAX_MODULE_LINES, "module")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("sizes", "needle"),
    [
        ({"a.py::f": 61}, "a.py::f: 61 lines > 60"),
        ({"a.py::g": 71}, "a.py::g: grew from 70 to 71 lines"),
        ({"a.py::g": 65}, "lower its entry from 70 to 65"),
        ({"a.py::g": 60}, "a.py::g is 60 lines (listed at 70); delete its entry"),
        ({}, "a.py::g is gone (listed at 70); delete its entry"),
    ],
)
def test_size_ratchet_reports_new_grown_shrunk_and_fixed_offenders(sizes, needle):
    problems = ratchet_problems(sizes, {"a.py::g": 70}, 60, "function")
    assert any(needle in p for p in problems), problems
    assert ratchet_problems({"a.py::g": 70, "a.py::h": 60}, {"a.py::g": 70}, 60, "function") == []


def test_function_lengths_count_methods_and_nested_functions(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("class A:\n    def f(self):\n        def g():\n            return 1\n        return g()\n")
    assert _function_lengths(src, tmp_path) == {"m.py::A.f": 4, "m.py::A.f.g": 2}


TASKS_DIR = PACKAGE / "tasks"
NOT_TASKS = {"__init__", *TASKS.exclude}  # public modules of auralgen.tasks that are not a task


def _task_module_names() -> set[str]:
    return {p.stem for p in TASKS_DIR.glob("*.py") if not p.stem.startswith("_") and p.stem not in NOT_TASKS}


def sibling_task_imports(source: str, own: str, tasks: set[str]) -> list[str]:
    """The task modules (other than ``own``) that ``source`` imports, at any depth (inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "auralgen.tasks" if node.level == 1 else (node.module or "")
            if node.level == 1 and node.module:
                base = f"auralgen.tasks.{node.module}"
            modules = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if len(parts) >= 3 and parts[:2] == ["auralgen", "tasks"] and parts[2] in tasks and parts[2] != own:
                found.append(parts[2])
    return sorted(set(found))


def test_no_task_module_imports_another_task_module():
    """What tasks share lives in a family module (``auralgen/tasks/_*.py``), never in a sibling task."""
    tasks = _task_module_names()
    assert {"pitch_relative", "attack_absolute", "distance_relative", "multi_source_relation"} <= tasks
    problems = []
    for name in sorted(tasks):
        siblings = sibling_task_imports((TASKS_DIR / f"{name}.py").read_text(), name, tasks)
        for sibling in siblings:
            problems.append(f"auralgen/tasks/{name}.py imports task module {sibling}; move what they share to a family")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from auralgen.tasks.b_task import x\n", ["b_task"]),
        ("from auralgen.tasks import b_task, _family\n", ["b_task"]),
        ("import auralgen.tasks.b_task\n", ["b_task"]),
        ("def f():\n    from .b_task import x\n    return x\n", ["b_task"]),
        ("from . import b_task\n", ["b_task"]),
        ("from auralgen.tasks._family import x\nfrom auralgen.tasks.a_task import y\n", []),
    ],
)
def test_sibling_task_import_finder_sees_every_form(source, found):
    assert sibling_task_imports(source, "a_task", {"a_task", "b_task"}) == found
