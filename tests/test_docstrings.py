"""Every public function of the package has numpydoc Parameters/Returns sections, checked by numpydoc's validator.

The scope and the checks are those of ``tests/support/docstrings.py`` (also a script that lists what is
missing, e.g. ``python -m tests.support.docstrings auralgen/listeners``).
"""

from __future__ import annotations

import textwrap

from tests.support import docstrings


def test_every_public_function_in_scope_passes_the_numpydoc_checks():
    names = list(docstrings.public_functions())
    assert len(names) > 800  # the scope reaches the whole package
    failures = {name: lines for name in names if (lines := docstrings.problems(name))}
    assert not failures, "\n".join(f"{name}: {'; '.join(lines)}" for name, lines in sorted(failures.items()))


def test_the_checks_catch_a_missing_parameter_and_a_missing_returns_section(tmp_path, monkeypatch):
    pkg = tmp_path / "docpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(
        textwrap.dedent(
            '''
            def good(x):
                """Twice ``x``.

                Parameters
                ----------
                x : float
                    A value.

                Returns
                -------
                float
                    ``2 * x``.
                """
                return 2 * x


            def bad(x, y):
                """Twice ``x``.

                Parameters
                ----------
                x : float
                    A value.
                """
                return 2 * x
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert docstrings.problems("docpkg.mod.good") == []
    assert [line.split()[0] for line in docstrings.problems("docpkg.mod.bad")] == ["PR01", "RT01"]
