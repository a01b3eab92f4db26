"""Leaves take what they use: below the evaluation runner no function takes the whole run config.

Only the runner (``evaluation/runner.py``) and the one function each action starts with see an
``EvalRunConfig``; they hand on the values (or a small settings object such as ``EvalSettings`` or
``interop.common.Predictions``) the functions below them use. The check reads the source: a
parameter annotated ``EvalRunConfig`` anywhere else fails, and so does one of the allowed
functions passing its config on whole to a function that is not allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "auralgen"
# (module, function): the runner and the top of each action (evaluate/rescore, score_predictions, export)
SEES_WHOLE_CONFIG = {
    ("auralgen/evaluation/runner.py", "run"),
    ("auralgen/evaluation/runner.py", "_dispatch"),
    ("auralgen/evaluation/runner.py", "_adaptive"),
    ("auralgen/evaluation/session.py", "evaluate"),
    ("auralgen/evaluation/interop/__init__.py", "score_predictions_file"),
    ("auralgen/evaluation/interop/__init__.py", "export_split"),
}
ALLOWED_CALLEES = {name for _, name in SEES_WHOLE_CONFIG}


def _functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _config_params(fn) -> list[str]:
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    return [a.arg for a in args if a.annotation is not None and "EvalRunConfig" in ast.unparse(a.annotation)]


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ast.unparse(f))


def _handed_on(fn, names: list[str]) -> list[str]:
    """Calls in ``fn`` that pass one of ``names`` (the whole config) as an argument."""
    out = []
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        values = [*call.args, *(k.value for k in call.keywords)]
        if any(isinstance(v, ast.Name) and v.id in names for v in values) and _callee(call) not in ALLOWED_CALLEES:
            out.append(f"{_callee(call)}() at line {call.lineno}")
    return out


def whole_config_takers(root: Path = ROOT) -> list[str]:
    """Every place below the runner where the whole config goes: ``module:function`` (and why)."""
    found = []
    for path in sorted((root / "auralgen").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for fn in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            names = _config_params(fn)
            if not names:
                continue
            if (rel, fn.name) not in SEES_WHOLE_CONFIG:
                found.append(f"{rel}:{fn.name} takes an EvalRunConfig")
            found += [f"{rel}:{fn.name} hands the config to {c}" for c in _handed_on(fn, names)]
    return found


def test_no_function_below_the_runner_takes_the_whole_eval_config():
    assert whole_config_takers() == []


def test_the_check_sees_a_leaf_that_takes_the_config(tmp_path):
    """The check is not vacuous: a leaf annotated with the config, and an allowed function handing
    its config on whole, are both reported."""
    pkg = tmp_path / "auralgen" / "evaluation"
    pkg.mkdir(parents=True)
    (pkg / "session.py").write_text(
        "def evaluate(cfg: EvalRunConfig):\n    return write(cfg, 1)\n\n\n"
        "def leaf(cfg: 'EvalRunConfig', n: int):\n    return n\n",
        encoding="utf-8",
    )
    assert whole_config_takers(tmp_path) == [
        "auralgen/evaluation/session.py:evaluate hands the config to write() at line 2",
        "auralgen/evaluation/session.py:leaf takes an EvalRunConfig",
    ]
    allowed = {name for _, name in SEES_WHOLE_CONFIG}
    assert allowed <= {fn.name for p in PACKAGE.rglob("*.py") for fn in _functions(ast.parse(p.read_text()))}
