"""Where the shipped configuration lives: ``conf/`` of the repository, installed as ``auralgen.conf``.

The YAML files (run configs, suites, tasks, rooms, mixing presets, models) are package data of
``auralgen.conf`` (pyproject.toml maps the repository's top-level ``conf/`` onto it), so an
installed wheel and an editable checkout read the same files through :mod:`importlib.resources`,
whatever the working directory. Nothing here searches the file system around the package.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.resources
from pathlib import Path

from auralgen.core.errors import AuralgenError

CONF_PACKAGE = "auralgen.conf"


@functools.lru_cache(maxsize=1)
def conf_dir() -> Path:
    """The configuration folder as a real directory (what Hydra's ``initialize_config_dir`` needs).

    Raises :class:`~auralgen.core.errors.AuralgenError` when ``auralgen.conf`` is not installed
    (a broken install), rather than falling back to built-in values.
    """
    try:
        root = importlib.resources.files(CONF_PACKAGE)
    except ModuleNotFoundError as exc:
        raise AuralgenError(
            f"package={CONF_PACKAGE} is not installed (the configuration files are missing); "
            "allowed: an install of auralgen that ships them (pip install . or pip install -e .)"
        ) from exc
    if isinstance(root, Path):
        return root
    stack = contextlib.ExitStack()  # zipped install: extracted once, removed at exit
    atexit.register(stack.close)
    return Path(stack.enter_context(importlib.resources.as_file(root)))


def conf_path(*parts: str) -> Path:
    """A file or folder below :func:`conf_dir`, e.g. ``conf_path("room", "hall.yaml")``.

    Parameters
    ----------
    *parts : str
        Path components below the configuration folder.

    Returns
    -------
    Path
        The joined path (not checked to exist).
    """
    return conf_dir().joinpath(*parts)
