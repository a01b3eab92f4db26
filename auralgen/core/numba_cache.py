"""One numba cache for every way auralgen is run: ``make``, ``python generate.py``, ``auralgen ...``, a notebook.

numba writes a ``cache=True`` kernel's machine code to ``NUMBA_CACHE_DIR`` when it is set, else next to
the source (``__pycache__``), so a run started one way would compile every kernel again when started
another way (seconds of idle time). ``import auralgen`` therefore sets ``NUMBA_CACHE_DIR``, before any
kernel is compiled, to :func:`default_cache_dir` -- the ``.auralgen_cache/numba`` folder of a source
checkout, which is where the Makefile points it -- unless the user has set it. Nothing here imports
numba.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from pathlib import Path

ENV_VAR = "NUMBA_CACHE_DIR"
CHECKOUT_CACHE = (".auralgen_cache", "numba")  # under a source checkout's root (the Makefile's NUMBA_CACHE_DIR)


def default_cache_dir(root: Path | None = None, environ: MutableMapping[str, str] = os.environ) -> Path:
    """The shared numba cache folder when the user names none.

    Parameters
    ----------
    root : Path, optional
        The folder holding the ``auralgen`` package (default: where this package was imported from).
    environ : mapping
        The environment (``XDG_CACHE_HOME``).

    Returns
    -------
    Path
        ``<root>/.auralgen_cache/numba`` when ``root`` is a source checkout (it holds ``pyproject.toml``
        and ``conf/``), else ``$XDG_CACHE_HOME/auralgen/numba`` (``~/.cache/auralgen/numba``) for an
        installed wheel, whose ``site-packages`` is no place for a cache.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     default_cache_dir(Path(d), {"XDG_CACHE_HOME": "/var/cache/me"}).as_posix()
    '/var/cache/me/auralgen/numba'
    """
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    if (root / "pyproject.toml").is_file() and (root / "conf").is_dir():
        return root.joinpath(*CHECKOUT_CACHE)
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "auralgen" / "numba"


def use_shared_cache(environ: MutableMapping[str, str] = os.environ) -> str:
    """Point numba at the shared cache unless ``NUMBA_CACHE_DIR`` is already set; returns the folder in use.

    Child processes (the local pool's workers, a Ray job's driver) inherit the variable. When numba
    was imported before auralgen it has already read its configuration, so its ``CACHE_DIR`` is set
    too (a kernel decorated afterwards, as auralgen's are, caches there).

    Parameters
    ----------
    environ : mapping of str to str, optional
        The environment to read and set (default: ``os.environ``; numba's own configuration is updated
        only for that one).

    Returns
    -------
    str
        The cache folder in use: the user's ``NUMBA_CACHE_DIR``, else :func:`default_cache_dir`.
    """
    current = environ.get(ENV_VAR)
    if current:
        return current
    path = str(default_cache_dir(environ=environ))
    environ[ENV_VAR] = path
    numba = sys.modules.get("numba")
    if numba is not None and environ is os.environ and not numba.config.CACHE_DIR:
        numba.config.CACHE_DIR = path
    return path
