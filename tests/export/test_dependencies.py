"""Packaging: every third-party import is a declared dependency with a floor the venv meets, and
`datasets` is the optional extra `auralgen[hf]` (generation and evaluation run without it)."""

import ast
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

from tests.support.builders import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DISTRIBUTION = {"yaml": "pyyaml", "hydra": "hydra-core"}  # import name -> distribution name, where they differ
STDLIB = set(sys.stdlib_module_names)


def requirements(group: list[str]) -> dict[str, Requirement]:
    return {Requirement(r).name.lower().replace("_", "-"): Requirement(r) for r in group}


def third_party_imports(paths) -> set[str]:
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in STDLIB and n not in {"auralgen", "__future__"}}


def test_every_import_of_the_package_is_a_declared_runtime_dependency():
    runtime = requirements(PROJECT["dependencies"])
    code = [*ROOT.glob("auralgen/**/*.py"), ROOT / "generate.py", ROOT / "evaluate.py"]
    for module in third_party_imports(code):
        name = DISTRIBUTION.get(module, module).lower().replace("_", "-")
        assert name in runtime, f"auralgen imports {module!r} but pyproject does not declare {name!r}"


def test_datasets_is_the_optional_hf_extra_and_part_of_dev():
    runtime = requirements(PROJECT["dependencies"])
    extras = PROJECT["optional-dependencies"]
    assert "datasets" not in runtime
    assert str(requirements(extras["hf"])["datasets"].specifier) == ">=4"  # the `List` feature of the card
    assert "auralgen[hf]" in extras["dev"]  # `make install` installs dev: the tests load datasets


def test_the_venv_meets_every_declared_floor():
    groups = PROJECT["dependencies"] + PROJECT["optional-dependencies"]["hf"]
    for req in requirements(groups).values():
        installed = version(req.name)
        assert req.specifier.contains(installed, prereleases=True), f"{req.name} {installed} does not meet {req}"


def test_generation_and_evaluation_run_without_datasets(tmp_path):
    blocked = tmp_path / "blocked" / "datasets"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('datasets is not installed (test)')\n")
    env = {**os.environ, "PYTHONPATH": str(blocked.parent)}
    out, res = tmp_path / "d", tmp_path / "r"
    gen = [sys.executable, "generate.py", "task=duration_relative", "task.items_per_level=1", "task.levels=[0]"]
    ev = [sys.executable, "evaluate.py", "model=random", f"data={out}", f"out={res}", "progress=false"]
    for cmd in (gen + [f"out={out}", "progress=false", "workers=1"], ev):
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    assert (res / "results.json").exists()
    probe = subprocess.run([sys.executable, "-c", "import datasets"], env=env, capture_output=True, text=True)
    assert re.search(r"ImportError: datasets is not installed", probe.stderr)  # the block did apply
