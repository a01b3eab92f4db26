"""``make`` and a direct run (``python generate.py``, ``auralgen``, a notebook) share one numba cache:
``import auralgen`` points ``NUMBA_CACHE_DIR`` at the checkout's ``.auralgen_cache/numba`` (where the
Makefile points it) unless the user has set it, so the first direct run after ``make`` compiles nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from auralgen.core.numba_cache import default_cache_dir, use_shared_cache
from tests.support.builders import ROOT

# a cache=True kernel: where its machine code goes, and which numba locator chose the place
PROBE = (
    "import os{pre}\nfrom auralgen.measure import level\n"
    "c = level._runs_above._cache\n"
    "print(os.environ['NUMBA_CACHE_DIR']); print(c._cache_path); print(type(c._impl.locator).__name__)"
)


def _probe(*, numba_first: bool = False) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"PYTHONPATH": str(ROOT)}
    code = PROBE.format(pre="\nimport numba" if numba_first else "")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_makefile_and_the_package_name_the_same_cache():
    line = re.search(r"^export NUMBA_CACHE_DIR := \$\(CURDIR\)/(\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert ROOT / line.group(1) == default_cache_dir() == ROOT / ".auralgen_cache" / "numba"


@pytest.mark.parametrize("numba_first", [False, True], ids=["auralgen-first", "numba-imported-first"])
def test_a_direct_run_caches_its_kernels_where_make_does(numba_first):
    env_dir, cache_path, locator = _probe(numba_first=numba_first)
    assert env_dir == str(ROOT / ".auralgen_cache" / "numba")
    assert cache_path.startswith(env_dir + os.sep) and locator == "UserProvidedCacheLocator"


def test_an_installed_package_uses_the_users_cache_folder(tmp_path):
    site = tmp_path / "site-packages"  # no pyproject.toml, no conf/: not a checkout
    site.mkdir()
    assert default_cache_dir(site, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg" / "auralgen" / "numba"
    home = default_cache_dir(site, {})
    assert home == default_cache_dir(site, {"XDG_CACHE_HOME": ""}) and home.parts[-3:] == (
        ".cache",
        "auralgen",
        "numba",
    )


def test_use_shared_cache_sets_only_an_unset_variable(tmp_path):
    env: dict[str, str] = {}
    assert use_shared_cache(env) == env["NUMBA_CACHE_DIR"] == str(default_cache_dir(environ=env))
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    assert use_shared_cache(env) == str(tmp_path) and env == {"NUMBA_CACHE_DIR": str(tmp_path)}
