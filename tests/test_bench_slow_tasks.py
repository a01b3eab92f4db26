"""bench/bench_slow_tasks.py: the reference tree is unpacked from git and the speed-up is this tree over it."""

from __future__ import annotations

import subprocess

import pytest

from bench import bench_slow_tasks as bst


def test_report_divides_this_tree_by_the_reference_pair_by_pair():
    got = {
        "reference": [{"items_per_s": 10.0, "redraws_per_item": 0.5}, {"items_per_s": 20.0, "redraws_per_item": 0.0}],
        "this tree": [{"items_per_s": 60.0, "redraws_per_item": 0.1}, {"items_per_s": 80.0, "redraws_per_item": 0.1}],
    }
    figures, line = bst.report("mixture", got)
    speed = next(f for f in figures if f["name"] == "mixture: speed-up")
    assert (speed["min"], speed["max"], speed["median"]) == (4.0, 6.0, 5.0)
    assert "5.00x [4.00-6.00] met" in line and "re-draws 0.10/item" in line and "re-draws 0.25/item" in line


def test_without_a_reference_only_this_tree_is_reported():
    figures, line = bst.report("trajectory", {"this tree": [{"items_per_s": 12.0, "redraws_per_item": 0.0}]})
    assert [f["name"] for f in figures] == ["trajectory: items/s/core"] and "reference" not in line


def test_unpack_gives_a_tree_with_the_package_and_its_configs(tmp_path):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=bst.ROOT, capture_output=True, text=True)
    if head.returncode:
        pytest.skip("not a git checkout")
    assert bst.unpack("HEAD", tmp_path / "ref")
    assert (tmp_path / "ref" / "auralgen" / "__init__.py").is_file()
    assert (tmp_path / "ref" / "auralgen" / "conf" / "config.yaml").is_file()
    assert not bst.unpack("no-such-ref-anywhere", tmp_path / "other")
