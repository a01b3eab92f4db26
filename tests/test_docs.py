"""The README and the docs site: short README, no development history, generated pages up to date,
benchmark figures read from results files.

(``mkdocs build --strict`` itself runs in ``make lint``: no broken link, no missing reference. The shell
blocks of README and docs run in tests/test_readme.py.)
"""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from tests.support.builders import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "bench" / "results").glob("*.md"))]
# a git short or full commit hash (7-12 or 40 hex digits with a digit and a letter; item ids are 20),
# an issue reference, an absolute path of a machine
FORBIDDEN = {
    "commit hash": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])(?:[0-9a-f]{7,12}|[0-9a-f]{40})\b"),
    "issue reference": re.compile(r"\b(?:issues?|PRs?|pull requests?)[ -]?#?\d+|\(#\d+\)", re.I),
    "absolute machine path": re.compile(r"(?<![\w.])/(?:work|root|home|Users|tmp|mnt)/"),
}


def _load(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_pages_hold_no_commit_hash_issue_number_or_machine_path(page):
    found = [
        f"{page.relative_to(ROOT)}:{n}: {what}: {m.group(0)!r}"
        for n, line in enumerate(page.read_text().splitlines(), 1)
        for what, pattern in FORBIDDEN.items()
        for m in pattern.finditer(line)
    ]
    assert not found, "\n".join(found)


def test_forbidden_patterns_catch_what_they_are_for():
    work, home = "/".join(("", "work", "main", "data", "x")), "/".join(("", "home", "me", "y"))  # built here: the
    text = f"at 9fbe5ad; see issue 12, issue-13 tasks (#7); wrote to {work} and {home}"  # repository holds no such path
    hits = {what for what, p in FORBIDDEN.items() if p.search(text)}
    assert hits == set(FORBIDDEN)
    clean = 'the id "02d3089000098aab9892", Technical Report #280? no: ' + "data/default, 1,859 items, 48 kHz"
    assert not any(p.search(clean) for p in FORBIDDEN.values())
    assert len(FORBIDDEN["issue reference"].findall("issue 12, issue-13 tasks (#7)")) == 3


def test_readme_is_short_and_links_into_the_docs():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", text))
    assert {"docs/getting-started.md", "docs/reference/tasks.md", "docs/reference/config.md"} <= linked
    assert all((ROOT / p).exists() for p in linked), sorted(p for p in linked if not (ROOT / p).exists())


def test_generated_reference_pages_are_up_to_date(capsys):
    """The task, config and CLI pages equal what the registry and the config dataclasses give now."""
    gen = _load("gen_reference", ROOT / "docs" / "scripts" / "gen_reference.py")
    assert gen.main(["--check"]) == 0, capsys.readouterr().out
    tasks = (ROOT / "docs" / "reference" / "tasks.md").read_text()
    from auralgen.tasks.base import task_names

    assert all(f"## `{name}`" in tasks for name in task_names())


def test_benchmark_page_renders_every_results_file(tmp_path):
    hooks = _load("docs_hooks", ROOT / "docs" / "hooks.py")
    record = {
        "bench": "bench_x",
        "command": "python bench/bench_x.py",
        "recorded": "2026-01-02",
        "source": "measured",
        "machine": {"cpu": "CPU X", "cores": 2, "system": "Linux", "python": "3.11"},
        "versions": {"numpy": "2.0"},
        "figures": [
            {
                "name": "speed",
                "unit": "items/s",
                "median": 301.0,
                "min": 290.0,
                "max": 310.0,
                "n": 3,
                "target": ">= 300",
                "note": "",
            }
        ],
    }
    (tmp_path / "bench_x.json").write_text(json.dumps(record))
    text = hooks.render_results(tmp_path)
    assert "| speed | 301 items/s | 290 – 310 | 3 | >= 300 |" in text
    assert "`python bench/bench_x.py` on 2026-01-02" in text
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert hooks.MARKER in page and hooks.on_page_markdown(page, None, None, None).count("### `bench_") == len(
        list((ROOT / "bench" / "results").glob("*.json"))
    )


@pytest.mark.parametrize("path", sorted((ROOT / "bench" / "results").glob("*.json")), ids=lambda p: p.name)
def test_each_results_file_names_an_existing_command_and_its_machine(path):
    rec = json.loads(path.read_text())
    script = rec["command"].split()[1]
    assert rec["command"].startswith("python bench/") and (ROOT / script).exists()
    assert rec["source"] in ("measured", "transcribed") and re.fullmatch(r"\d{4}-\d\d-\d\d", rec["recorded"])
    assert rec["machine"]["cores"] >= 1 and rec["figures"]
    for f in rec["figures"]:
        assert f["min"] <= f["median"] <= f["max"] and f["n"] >= 1
        if rec["source"] == "transcribed":
            assert "transcribed" in f["note"]


def test_the_adaptive_tables_are_those_of_their_results_files():
    """bench_adaptive writes a markdown table beside each results file (the adaptive-thresholds page
    includes it); it must be what the file's rows give now."""
    bench = _load("bench_adaptive", ROOT / "bench" / "bench_adaptive.py")
    paths = sorted((ROOT / "bench" / "results").glob("bench_adaptive*.json"))
    for path in paths:
        assert path.with_suffix(".md").read_text() == bench.markdown(json.loads(path.read_text())), path.name
    record = {
        "command": "python bench/bench_adaptive.py",
        "recorded": "2026-01-02",
        "machine": {"cores": 2, "cpu": "X"},
        "tables": {
            "budgets": [
                {
                    "name": "500/1.2/0.04 at 160 trials",
                    "budget": 160,
                    "bound": 3.07,
                    "lapse": "known",
                    "factor": 2.8,
                    "share": 0.912,
                    "coverage": 0.95,
                    "trials_median": 160.0,
                    "ci_ratio_median": 1.9,
                    "knowing_factor": 1.4,
                    "knowing_share": 2.0,
                    "met": False,  # derived again from share and coverage, not read
                    "runs": 200,
                }
            ]
        },
    }
    row = "| 160 trials | 3.07x (known) | 2.80x | 91% | 1.40x | 200% | 0.950 | 160 | 1.90 | met |"
    assert row in bench.markdown(record)
    record["tables"]["budgets"][0]["coverage"] = 0.85  # the goal needs 90 % coverage too
    assert "| 0.850 | 160 | 1.90 | **not met** |" in bench.markdown(record)
    again = bench.rederive(json.loads(json.dumps(record)))
    assert again["tables"]["budgets"][0]["met"] is False
    shares = [f for f in again["figures"] if f["name"].endswith(": share")]
    assert len(shares) == 1 and shares[0]["target"] == "share >= 90 %"


def _docstrings(path):
    """``(line, text)`` of every docstring of one Python file (module, classes, functions)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield (node.body[0].lineno, doc)


def test_docstrings_hold_no_issue_number():
    """Docstrings of the package, the tests and the benchmarks speak to users: no issue numbers."""
    files = [p for folder in ("auralgen", "tests", "bench") for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 300
    found = [
        f"{path.relative_to(ROOT)}:{line}: {m.group(0)!r}"
        for path in files
        for line, doc in _docstrings(path)
        for m in FORBIDDEN["issue reference"].finditer(doc)
    ]
    assert not found, "\n".join(found)
