"""The peer interop tests find the peers' code through one setting, and say so when it is absent."""

import os
import subprocess
import sys

import pytest

from tests.support.peers import ENV, PEERS, ROOT, find

MACHINE_PATHS = ("/work/", "/root/", "/home/")


def test_absent_peers_are_counted_in_one_summary_line(tmp_path):
    env = {**os.environ, ENV: str(tmp_path / "nowhere")}
    test = "tests/evaluation/test_interop_mmar.py::test_mmau_file_scored_by_mmaus_own_script_equals_scorer_mmar"
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [x for x in res.stdout.splitlines() if x.startswith("peer interop:")]
    assert res.returncode == 0 and "1 skipped" in res.stdout, res.stdout[-2000:]
    assert lines == [
        f"peer interop: 1 tests skipped, the peers' code is not in {tmp_path / 'nowhere'}/ "
        f"(run `make peers`, which needs GitHub, or set {ENV}=<folder of clones>)"
    ]


def test_the_folder_is_the_setting_else_dot_peers(tmp_path, monkeypatch):
    (tmp_path / "MMAR" / "code").mkdir(parents=True)
    (tmp_path / "MMAU").mkdir()  # an empty folder is no clone
    monkeypatch.setenv(ENV, str(tmp_path))
    assert find("MMAR") == tmp_path / "MMAR" and find("MMAU") is None and find("StarBench") is None
    monkeypatch.delenv(ENV)
    assert find("MMAR") in (None, ROOT / ".peers" / "MMAR")
    assert all(len(commit) == 40 for _, commit in PEERS.values())


# the tests that look for machine paths name the patterns themselves
CHECKS_OF_MACHINE_PATHS = {"tests/test_peers.py", "tests/test_docs.py"}


def test_no_machine_path_in_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in files:
        path = ROOT / name
        if (
            path.suffix not in {".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt", ".json", ""}
            or not path.is_file()
        ):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{name}: {p}" for p in MACHINE_PATHS if p in text and name not in CHECKS_OF_MACHINE_PATHS]
    assert found == []


def test_fetch_clones_the_pinned_commits_from_a_mirror_and_fails_in_one_line(tmp_path):
    """``make peers PEERS_SOURCE=...``: here the source is the peers folder itself (skipped without it)."""
    from tests.support.peers import FetchError, fetch, peer

    source = str(peer("MMAR").parent / "{name}")
    assert fetch(tmp_path / "p", source) == [f"{n} {c[:12]}" for n, (_, c) in PEERS.items()]
    for name, (_, commit) in PEERS.items():
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path / "p" / name, capture_output=True, text=True)
        assert head.stdout.strip() == commit
    assert (tmp_path / "p" / "MMAU" / "evaluation.py").is_file()
    with pytest.raises(FetchError, match=r"^cannot clone .*nowhere/StarBench: "):
        fetch(tmp_path / "q", str(tmp_path / "nowhere" / "{name}"))
