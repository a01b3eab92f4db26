"""Source kinds are a registry: a throw-away kind generates a dataset, and no module dispatches on a
kind's name any more (each kind's behaviour lives on its own object)."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.generation.run import run as generate
from auralgen.measure import f0_hz
from auralgen.sounds.corpus import NAMEABLE, SOURCE_KINDS, check_source, read_entry
from auralgen.sounds.source_kind import BUILT_IN, SOURCES, Entry, SourceKind, register_source_kind
from tests.support.builders import ROOT, decode, params_of, read_rows, small_run

BANK_HZ = {"low": 220.0, "mid": 440.0, "high": 880.0}
BANK_S = 2.0


class SineBank(SourceKind):
    """A corpus with no files: three labelled sine tones computed from the entry's name."""

    name = "sine_bank_test"
    labelled = True
    fields = ("license", "classes", "min_duration_s")
    root_key = "source.kind"

    def root(self, cfg):
        return Path("sine_bank")

    def entries(self, cfg, root):
        return [
            Entry(
                file=f"sine_{hz:g}",
                label=label,
                license="CC0-1.0",
                attribution="computed",
                sha256=hashlib.sha256(f"sine_{hz:g}".encode()).hexdigest()[:16],
                duration_s=BANK_S,
            )
            for label, hz in BANK_HZ.items()
        ], []

    def read(self, spec, sample_rate, shift_cents):
        hz = float(spec["file"].removeprefix("sine_"))
        t = np.arange(int(BANK_S * sample_rate)) / sample_rate
        return 0.5 * np.sin(2 * np.pi * hz * t)


@pytest.fixture
def sine_bank():
    register_source_kind(SineBank)
    yield SOURCES.get(SineBank.name)
    SOURCES.unregister(SineBank.name)


def test_a_registered_kind_is_a_source_every_recorded_task_takes(sine_bank):
    assert SineBank.name in SOURCE_KINDS and SineBank.name in NAMEABLE  # labelled: the options can name it
    cfg = check_source({"kind": SineBank.name})
    assert cfg.recorded
    with pytest.raises(ParameterError, match=rf"source.dir='x' has no effect with source={SineBank.name}"):
        check_source({"kind": SineBank.name, "dir": "x"})
    spec = {"source": SineBank.name, "root": "sine_bank", "file": "sine_440", "offset_s": 0.5}
    with pytest.raises(ParameterError, match="cannot be played shifted; allowed: source=soundfont"):
        read_entry(spec, 16000, 0.5, shift_cents=100.0)
    assert f0_hz(read_entry(spec, 16000, 0.5), 16000) == pytest.approx(440.0, rel=0.01)


def test_generate_with_a_throw_away_source_kind(sine_bank, tmp_path):
    cfg = small_run("task=loudness_relative", "task.items_per_level=2", f"source={SineBank.name}", out=tmp_path)
    generate(cfg)
    rows = read_rows(tmp_path)
    assert rows and all(r["valid"] for r in rows)
    for row in rows:
        sounds = [v for v in _recipes(params_of(row)) if v.get("source") == SineBank.name]
        assert sounds, row["params"]  # every item drew its sound from the registered kind
        x, sr = decode(row["audio"][0])
        hz = BANK_HZ[sounds[0]["label"]]
        assert f0_hz(x.mean(axis=0).astype(np.float64), sr) == pytest.approx(hz, rel=0.02)


def _recipes(obj):
    """Every dict inside ``params`` (a recipe is one of them)."""
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _recipes(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _recipes(v)


def _kind_names_in(node: ast.AST) -> list[str]:
    """Source kind names spelled as string literals in a comparison operand."""
    if isinstance(node, ast.Constant) and node.value in BUILT_IN:
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in BUILT_IN]
    return []


def test_no_module_dispatches_on_a_source_kind_name():
    """No ``kind == "soundfont"`` / ``kind in ("folder", "hf")`` anywhere in the package, and no table
    listing several kinds by name: a kind's behaviour is an attribute or method of its object."""
    found = []
    for path in sorted((ROOT / "auralgen").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            rel = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Compare):
                names = [n for operand in (node.left, *node.comparators) for n in _kind_names_in(operand)]
                found += [f"{rel} compares with {names}"] if names else []
            elif isinstance(node, ast.Tuple | ast.List | ast.Set) and len(_kind_names_in(node)) >= 2:
                if path.name != "source_kind.py":  # BUILT_IN: where the registry finds the shipped kinds
                    found.append(f"{rel} lists kinds {_kind_names_in(node)}")
    assert found == []
