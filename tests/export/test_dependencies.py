"""Packaging: every third-party import is a declared dependency with a floor the venv meets. A module
of an optional extra is imported only inside a function (lazily) by the modules :data:`LAZY_EXTRAS`
names, so ``import auralgen`` and its commands run without it; `datasets` is the optional extra
`auralgen[hf]` (generation and evaluation run without it)."""

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
DISTRIBUTION = {
    "yaml": "pyyaml",
    "hydra": "hydra-core",
    "fluidsynth": "pyfluidsynth",
}  # import name -> distribution name, where they differ
STDLIB = set(sys.stdlib_module_names)


def requirements(group: list[str]) -> dict[str, Requirement]:
    return {Requirement(r).name.lower().replace("_", "-"): Requirement(r) for r in group}


# optional extra -> {imported module: the package files allowed to import it, inside a function only}
LAZY_EXTRAS = {
    "adaptive": {"questplus": {"auralgen/evaluation/adaptive/quest.py"}},  # mode=adaptive
    "ray": {"ray": {"auralgen/execution/ray.py"}},  # executor=ray
    "clips": {"librosa": {"auralgen/sounds/transforms.py"}},  # source=clips: pitch shift / time stretch
    "hf": {"datasets": {"auralgen/sounds/corpus_files.py"}},  # source=hf: a save_to_disk folder
    "soundfont": {"fluidsynth": {"auralgen/sounds/soundfont.py"}},  # source=soundfont: FluidSynth
    "listen": {"starlette": {"auralgen/listen/app.py"}, "uvicorn": {"auralgen/listen/app.py"}},  # auralgen listen
    "s3": {"fsspec": {"auralgen/export/storage.py"}},  # out=<url> / data=<url>: object storage
}
# modules that belong to an optional extra as a whole: they import it at module level, and every other
# module imports them inside a function only (so `import auralgen` and its other commands run without it)
EXTRA_MODULES = {"auralgen/listen/app.py": "auralgen.listen.app"}
CODE = [*sorted(ROOT.glob("auralgen/**/*.py")), ROOT / "generate.py", ROOT / "evaluate.py"]


def _imports(tree: ast.AST, in_function: bool = False):
    """``(module name, imported inside a function?)`` of every absolute import under ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, in_function) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module, in_function
        nested = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from _imports(node, nested)


def third_party_imports(paths) -> dict[tuple[str, str], bool]:
    """``(module, file relative to the repo) -> imported only inside functions`` for third-party modules."""
    found: dict[tuple[str, str], bool] = {}
    for path in paths:
        rel = Path(path).relative_to(ROOT).as_posix()
        for name, lazy in _imports(ast.parse(Path(path).read_text())):
            module = name.split(".")[0]
            if module not in STDLIB and module not in {"auralgen", "__future__"}:
                found[module, rel] = found.get((module, rel), True) and lazy
    return found


def _distribution(module: str) -> str:
    return DISTRIBUTION.get(module, module).lower().replace("_", "-")


def test_every_import_of_the_package_is_a_declared_dependency():
    runtime = requirements(PROJECT["dependencies"])
    extras = PROJECT["optional-dependencies"]
    for (module, rel), lazy in third_party_imports(CODE).items():
        if _distribution(module) in runtime:
            continue
        extra = next((e for e, allowed in LAZY_EXTRAS.items() if module in allowed), None)
        assert extra is not None, f"{rel} imports {module!r} but pyproject declares no {_distribution(module)!r}"
        assert rel in LAZY_EXTRAS[extra][module], (
            f"{rel} imports {module!r} of extra [{extra}]; allowed only in "
            + ", ".join(sorted(LAZY_EXTRAS[extra][module]))
        )
        assert lazy or rel in EXTRA_MODULES, (
            f"{rel} imports {module!r} of optional extra [{extra}] at module level; import it inside a function"
        )
        assert _distribution(module) in requirements(extras[extra]), f"extra [{extra}] does not declare {module!r}"


def test_a_module_of_an_extra_is_imported_lazily_everywhere_else():
    for rel, name in EXTRA_MODULES.items():
        for path in CODE:
            other = Path(path).relative_to(ROOT).as_posix()
            if other == rel:
                continue
            found = {(m, lazy) for m, lazy in _imports(ast.parse(Path(path).read_text())) if m == name}
            assert all(lazy for _, lazy in found), f"{other} imports {name} at module level"


def test_optional_extras_are_imported_where_listed():
    """LAZY_EXTRAS names exactly the files that import each optional module (a stale entry fails)."""
    found = third_party_imports(CODE)
    for allowed in LAZY_EXTRAS.values():
        for module, files in allowed.items():
            assert {rel for m, rel in found if m == module} == files


def test_datasets_is_the_optional_hf_extra_and_part_of_dev():
    runtime = requirements(PROJECT["dependencies"])
    extras = PROJECT["optional-dependencies"]
    assert "datasets" not in runtime
    assert str(requirements(extras["hf"])["datasets"].specifier) == ">=4"  # the `List` feature of the card
    itself = requirements(extras["dev"])["auralgen"].extras  # `make install` installs dev: the tests load
    assert {"hf", "adaptive", "clips"} <= itself  # datasets, run QUEST+, transform clips
    # the card only shows it in example text; source=hf reads a save_to_disk folder with it, lazily
    assert {f: lazy for (m, f), lazy in third_party_imports(CODE).items() if m == "datasets"} == {
        "auralgen/sounds/corpus_files.py": True
    }


def test_the_venv_meets_every_declared_floor():
    extras = PROJECT["optional-dependencies"]
    groups = (
        PROJECT["dependencies"] + extras["hf"] + extras["adaptive"] + extras["clips"]
    )  # what `make install` (dev) installs
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
