"""One registry idiom for every extension point (tasks, listeners, adapters, receivers, ...).

A :class:`Registry` is a read-only mapping ``name -> object``. Entries register themselves with
a decorator; the registry knows the names of entries not imported yet from three places, none of
which imports anything: the modules of ``package`` (entry name = module name), an explicit
``modules`` map (entry name -> module that registers it), and the ``entry_points`` group of
installed distributions. :meth:`Registry.get` imports the one module an entry needs, so a tone
run never loads the room code.

Examples
--------
>>> SHAPES = Registry("shape")
>>> @SHAPES.register("square")
... def square(x):
...     return x * x
>>> SHAPES.get("square")(3)
9
>>> SHAPES.get("circle")
Traceback (most recent call last):
...
auralgen.core.registry.UnknownNameError: shape='circle' is unknown; allowed: square
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points as _entry_points
from typing import Any, Generic, TypeVar

from auralgen.core.errors import ParameterError

T = TypeVar("T")


class UnknownNameError(ParameterError, KeyError):
    """A name no entry of the registry has (a ParameterError; also a KeyError for mapping use)."""

    __str__ = Exception.__str__  # KeyError would quote the message


class Registry(Mapping[str, T], Generic[T]):
    """Named entries of one ``kind`` (the word used in messages: ``task``, ``receiver.type``).

    Parameters
    ----------
    kind : str
        Names the entry in errors: ``"<kind>=<name!r> is unknown; allowed: a, b, c"``.
    package : str, optional
        Every module of this package is an entry of its own name (modules starting with ``_``
        and those in ``exclude`` aside); it registers itself when imported.
    modules : mapping, optional
        ``{name: module}`` for entries registered by a module of another name.
    entry_points : str, optional
        Entry-point group of installed distributions (``name = module:object``).
    validate : callable, optional
        ``validate(name, obj)`` runs before an entry is stored; it raises to refuse it.
    attr : str
        Attribute giving the name of an object registered without one (``cls.name``).
    sort : bool
        ``names()`` sorted (default) or in registration order (for registries without lazy entries).
    """

    def __init__(
        self,
        kind: str,
        *,
        package: str | None = None,
        modules: Mapping[str, str] | None = None,
        entry_points: str | None = None,
        validate: Callable[[str, T], None] | None = None,
        exclude: tuple[str, ...] = (),
        attr: str = "name",
        sort: bool = True,
    ):
        self.kind = kind
        self.package = package
        self.modules = dict(modules or {})
        self.entry_points = entry_points
        self.validate = validate
        self.exclude = frozenset(exclude)
        self.attr = attr
        self.sort = sort
        self._entries: dict[str, T] = {}

    # -- registering --------------------------------------------------------------------------
    def register(self, name: str | T | None = None) -> Any:
        """Decorator storing an object under ``name`` (default: its ``attr``): ``@R.register``,
        ``@R.register()`` or ``@R.register("name")``. A second, different object under a taken
        name is refused (the same class re-executed, e.g. by a reload, replaces itself).

        Parameters
        ----------
        name : str or object or None, optional
            The entry's name; None takes it from the object's ``attr``; an object (bare ``@R.register``)
            registers that object under its ``attr``.

        Returns
        -------
        callable or object
            The decorator, which stores and returns the object unchanged (the object itself for a bare
            ``@R.register``).

        Raises
        ------
        ParameterError
            When the name is taken by a different object, or ``validate`` refuses the entry.
        """
        if name is not None and not isinstance(name, str):
            return self.register()(name)

        def deco(obj: T) -> T:
            key = name if name is not None else getattr(obj, self.attr)
            old = self._entries.get(key)
            if old is not None and _origin(old) != _origin(obj):
                raise ParameterError(
                    f"{self.kind}={key!r} is already registered by {_origin(old)}; allowed: a new name "
                    f"for {_origin(obj)} (or unregister({key!r}) first)"
                )
            if self.validate is not None:
                self.validate(key, obj)
            self._entries[key] = obj
            return obj

        return deco

    def unregister(self, name: str) -> None:
        """Remove a registered entry (tests that register a throw-away one).

        Parameters
        ----------
        name : str
            The entry's name.

        Raises
        ------
        UnknownNameError
            When no entry of that name is registered (a lazy one not imported yet counts as absent).
        """
        if name not in self._entries:
            raise self._unknown(name, None)
        del self._entries[name]

    # -- looking up ---------------------------------------------------------------------------
    def get(self, name: str, *, key: str | None = None) -> T:  # type: ignore[override]
        """The entry ``name``, importing only the module that registers it.

        Parameters
        ----------
        name : str
            The entry's name.
        key : str, optional
            The config path quoted in the error (default: the registry's ``kind``).

        Returns
        -------
        object
            The registered entry.

        Raises
        ------
        UnknownNameError
            When no entry, registered or importable, has that name.
        ParameterError
            When the module expected to register ``name`` registers no such entry.
        """
        if isinstance(name, str) and name not in self._entries:
            self._load(name)
        if not isinstance(name, str) or name not in self._entries:
            raise self._unknown(name, key)
        return self._entries[name]

    def names(self) -> list[str]:
        """Every entry's name, registered or importable, without importing anything.

        Returns
        -------
        list of str
            Sorted; when ``sort`` is False, registered entries in registration order, then the others.
        """
        lazy = set(self._package_names()) | set(self.modules) | set(self._entry_point_map())
        found = list(self._entries) + [n for n in lazy if n not in self._entries]
        return sorted(found) if self.sort else found

    def load_all(self) -> dict[str, T]:
        """Import every entry.

        Returns
        -------
        dict of str to object
            ``{name: entry}`` in :meth:`names` order.
        """
        return {name: self.get(name) for name in self.names()}

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._entries or name in self.names())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, names={self.names()!r})"

    # -- internals ----------------------------------------------------------------------------
    def _unknown(self, name, key: str | None) -> UnknownNameError:
        return UnknownNameError(f"{key or self.kind}={name!r} is unknown; allowed: {', '.join(self.names())}")

    def _package_names(self) -> list[str]:
        if self.package is None:
            return []
        spec = importlib.util.find_spec(self.package)
        paths = spec.submodule_search_locations if spec is not None else None
        return [
            m.name
            for m in pkgutil.iter_modules(paths or [])
            if not m.name.startswith("_") and m.name not in self.exclude
        ]

    def _entry_point_map(self) -> dict[str, Any]:
        if self.entry_points is None:
            return {}
        return {ep.name: ep for ep in _entry_points(group=self.entry_points)}

    def _load(self, name: str) -> None:
        if name in self.modules:
            importlib.import_module(self.modules[name])
        elif name in self._package_names():
            importlib.import_module(f"{self.package}.{name}")
        else:
            ep = self._entry_point_map().get(name)
            if ep is not None:
                obj = ep.load()
                if name not in self._entries:
                    self.register(name)(obj)
                return
        if name not in self._entries and (name in self.modules or name in self._package_names()):
            where = self.modules.get(name, f"{self.package}.{name}")
            raise ParameterError(
                f"{self.kind}={name!r}: module {where} registers no such entry; allowed: a module that does"
            )


def _origin(obj: Any) -> str:
    """``module.qualname`` of a registered object (how a re-executed definition is recognised)."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"
