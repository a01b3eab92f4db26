"""Which functions must carry numpydoc ``Parameters`` and ``Returns`` sections, checked by numpydoc itself.

Scope: every public function of a public module of the package (no path part starting with ``_``)
and every public method of a public class there, except a method that overrides one of the same
name on a base class of the package (the base documents the hook once). Properties are exempt from
``Returns``. Each is run through :func:`numpydoc.validate.validate`, keeping the checks in
:data:`CHECKS`.

Run as a script to list what is missing, e.g. for one sub-package::

    python -m tests.support.docstrings auralgen/listeners
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

from numpydoc.validate import validate

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "auralgen"
CHECKS = {
    "GL08": "no docstring",
    "PR01": "a parameter is not documented",
    "PR02": "a documented parameter does not exist",
    "PR07": "a parameter has no description",
    "RT01": "no Returns section",
    "RT03": "a return value has no description",
    "YD01": "no Yields section",
}


def _module_names(folder: Path) -> Iterator[str]:
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if any(part.startswith("_") and part != "__init__" for part in parts):
            continue
        yield ".".join(part for part in parts if part != "__init__")


def _own(obj: object, module: str) -> bool:
    return getattr(obj, "__module__", None) == module


def _inherited(cls: type, name: str) -> bool:
    return any(name in vars(base) for base in cls.__mro__[1:] if base.__module__.startswith("auralgen"))


def public_functions(folder: Path = PACKAGE) -> Iterator[str]:
    """Dotted names of the functions and methods in scope under ``folder``.

    Parameters
    ----------
    folder : Path
        A folder inside the package (default: the whole package).

    Yields
    ------
    str
        A dotted name, e.g. ``auralgen.core.schema.iter_items``.
    """
    for name in _module_names(folder):
        module = importlib.import_module(name)
        for attr, obj in sorted(vars(module).items()):
            if attr.startswith("_") or not _own(obj, name):
                continue
            if inspect.isfunction(obj):
                yield f"{name}.{attr}"
            elif inspect.isclass(obj):
                for meth, fn in vars(obj).items():
                    if meth.startswith("_") or _inherited(obj, meth):
                        continue
                    if isinstance(fn, (staticmethod, classmethod)):
                        fn = fn.__func__
                    if inspect.isfunction(fn):
                        yield f"{name}.{attr}.{meth}"


def problems(dotted: str) -> list[str]:
    """The failed checks of one function, as ``"CODE message"`` lines.

    Parameters
    ----------
    dotted : str
        The function's dotted name, as :func:`public_functions` yields it.

    Returns
    -------
    list of str
        One line per failed check in :data:`CHECKS`; empty when the docstring passes.
    """
    result = validate(dotted)
    codes = {code: message for code, message in result["errors"] if code in CHECKS}
    return [f"{code} {message}" for code, message in sorted(codes.items())]


def report(folder: Path = PACKAGE) -> dict[str, list[str]]:
    """Every function in scope under ``folder`` with a failed check, and its failures.

    Parameters
    ----------
    folder : Path
        A folder inside the package.

    Returns
    -------
    dict of str to list of str
        Dotted name to its failed checks; empty when every docstring in scope passes.
    """
    found = {name: problems(name) for name in public_functions(folder)}
    return {name: lines for name, lines in found.items() if lines}


def main(argv: list[str]) -> int:
    """List the failures under each folder given (default: the package); exit status 1 if any.

    Parameters
    ----------
    argv : list of str
        Folders, relative to the repository root or absolute.

    Returns
    -------
    int
        0 when every docstring in scope passes, else 1.
    """
    folders = [Path(arg).resolve() for arg in argv] or [PACKAGE]
    failures = {name: lines for folder in folders for name, lines in report(folder).items()}
    for name, lines in failures.items():
        print(f"{name}: {'; '.join(lines)}")
    total = sum(1 for folder in folders for _ in public_functions(folder))
    print(f"{len(failures)} of {total} functions in scope fail")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
