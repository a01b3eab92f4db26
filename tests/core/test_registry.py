"""The one registry idiom: unknown names list the allowed ones, entries import lazily."""

import subprocess
import sys
import textwrap

import pytest

from auralgen.core.errors import ParameterError
from auralgen.core.registry import Registry, UnknownNameError


def _make_package(tmp_path, name="plugpkg"):
    """A package with modules ``alpha`` and ``beta`` that register themselves when imported,
    a helper ``_util`` and a ``base`` module (neither is an entry)."""
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_util.py").write_text("")
    (pkg / "reg.py").write_text(
        f"from auralgen.core.registry import Registry\nR = Registry('plugin', package={name!r}, exclude=('reg',))\n"
    )
    for mod in ("alpha", "beta"):
        (pkg / f"{mod}.py").write_text(f"from {name}.reg import R\n\n@R.register\nclass P:\n    name = {mod!r}\n")
    return pkg


def test_unknown_name_is_one_line_listing_allowed_names():
    r = Registry("shape")
    r.register("square")(lambda: 4)
    r.register("circle")(lambda: 3)
    with pytest.raises(ParameterError, match=r"^shape='hexagon' is unknown; allowed: circle, square$"):
        r.get("hexagon")
    with pytest.raises(ParameterError, match=r"^model\.kind='x' is unknown; allowed: circle, square$"):
        r.get("x", key="model.kind")
    with pytest.raises(KeyError):  # a Mapping: r[name] raises a KeyError subclass
        r["hexagon"]
    assert "hexagon" not in r and "square" in r and None not in r
    with pytest.raises(UnknownNameError, match=r"shape=None is unknown"):
        r.get(None)


def test_register_forms_and_attribute_name():
    r = Registry("adapter", attr="kind")

    @r.register
    class A:
        kind = "a"

    @r.register()
    class B:
        kind = "b"

    @r.register("c")
    def c():
        return None

    assert r.load_all() == {"a": A, "b": B, "c": c}
    assert list(r) == ["a", "b", "c"] and len(r) == 3 and dict(r.items())["b"] is B


def test_registration_order_kept_when_unsorted():
    r = Registry("receiver.type", sort=False)
    for name in ("mono", "stereo", "binaural"):
        r.register(name)(object())
    assert r.names() == ["mono", "stereo", "binaural"]
    with pytest.raises(ParameterError, match="allowed: mono, stereo, binaural$"):
        r.get("dipole")


def test_duplicate_registration_refused():
    r = Registry("task")

    @r.register
    class First:
        name = "pitch"

    with pytest.raises(ParameterError, match=r"task='pitch' is already registered by .*First; allowed: a new name"):

        @r.register
        class Second:
            name = "pitch"

    assert r.get("pitch") is First


def test_unregister():
    r = Registry("listener")
    r.register("tmp")(len)
    assert r.get("tmp") is len
    r.unregister("tmp")
    assert "tmp" not in r
    with pytest.raises(ParameterError, match="listener='tmp' is unknown"):
        r.get("tmp")
    with pytest.raises(ParameterError, match="listener='tmp' is unknown"):
        r.unregister("tmp")
    r.register("tmp")(sorted)  # the name is free again
    assert r.get("tmp") is sorted


def test_validate_callback_can_refuse():
    def needs_doc(name, obj):
        if not obj.__doc__:
            raise ParameterError(f"task={name!r} has no docstring; allowed: a documented class")

    r = Registry("task", validate=needs_doc)
    with pytest.raises(ParameterError, match="task='bare' has no docstring"):
        r.register("bare")(type("Bare", (), {}))
    assert "bare" not in r
    r.register("doc")(type("Doc", (), {"__doc__": "documented"}))
    assert "doc" in r


def test_package_names_without_import_and_lazy_get(tmp_path):
    _make_package(tmp_path)
    code = textwrap.dedent(
        """
        import sys
        from plugpkg.reg import R
        assert R.names() == ["alpha", "beta"], R.names()      # _util, reg excluded
        assert "plugpkg.alpha" not in sys.modules and "plugpkg.beta" not in sys.modules
        assert R.get("alpha").name == "alpha"
        assert "plugpkg.alpha" in sys.modules and "plugpkg.beta" not in sys.modules   # only what was asked
        try:
            R.get("gamma")
        except ValueError as e:
            assert str(e) == "plugin='gamma' is unknown; allowed: alpha, beta", str(e)
        else:
            raise AssertionError("no error")
        assert sorted(R.load_all()) == ["alpha", "beta"] and "plugpkg.beta" in sys.modules
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.strip() == "ok", out.stderr


def test_explicit_module_map(tmp_path):
    pkg = _make_package(tmp_path, "other")
    (pkg / "reg.py").write_text(
        "from auralgen.core.registry import Registry\n"
        "R = Registry('plugin', modules={'alpha': 'other.alpha', 'ghost': 'other._util'})\n"
    )
    code = textwrap.dedent(
        """
        import sys
        from other.reg import R
        assert R.names() == ["alpha", "ghost"] and "other.alpha" not in sys.modules
        assert R.get("alpha").name == "alpha"
        try:
            R.get("ghost")
        except ValueError as e:
            assert "module other._util registers no such entry" in str(e), str(e)
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.strip() == "ok", out.stderr


def test_task_registry_is_lazy_and_names_allowed_tasks():
    code = textwrap.dedent(
        """
        import sys
        from auralgen.tasks.base import TASKS, task_class, task_names
        names = task_names()
        assert {"pitch_relative", "azimuth_relative"} <= set(names) and "base" not in names, names
        assert not any(m.startswith("auralgen.tasks.pitch") for m in sys.modules)
        assert task_class("pitch_relative").name == "pitch_relative"
        assert "auralgen.rooms.scene" not in sys.modules          # a tone task loads no room code
        try:
            TASKS.get("pich_relative")
        except ValueError as e:
            assert str(e) == "task='pich_relative' is unknown; allowed: " + ", ".join(names), str(e)
        else:
            raise AssertionError("no error")
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "ok", out.stderr
