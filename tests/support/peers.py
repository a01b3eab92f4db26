"""The peers' code the interop tests run: STAR-Bench, MMAR, MMAU and SonicBench at pinned commits.

The tests find the clones in one folder: ``$AURALGEN_PEERS`` if set, else ``.peers/`` at the
repository root (git-ignored). ``make peers`` fills it (``python -m tests.support.peers fetch``):
one clone per peer, named as in :data:`PEERS`, checked out at the pinned commit. That needs the
network (GitHub); ``--source`` clones from elsewhere instead, e.g. local mirrors
(``--source '/srv/mirrors/{owner}+{name}'``: ``{owner}``, ``{name}`` and ``{repo}`` are filled in).

A test that needs a peer calls :func:`peer`; where the folder or that clone is absent it skips
with a reason starting :data:`SKIP_MARK`, and the run's summary counts those skips in one line
(``tests/conftest.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = "AURALGEN_PEERS"
DEFAULT = ".peers"  # relative to the repository root
SKIP_MARK = "peer absent:"
PEERS = {  # clone folder name: (GitHub owner/name, pinned commit)
    "StarBench": ("InternLM/StarBench", "0daf8b02f21db316f8bccc4319f5b98b83b82c00"),
    "MMAR": ("ddlBoJack/MMAR", "3bce090a967db576c8ad433b290a8da582d6d2a0"),
    "MMAU": ("Sakshi113/MMAU", "110127f54c0dfba3faa5ec9feee4a7e4148679c5"),
    "SonicBench": ("qiuxins/SonicBench", "d9f621e050258492d10d5b91e07f9526f5a70937"),
}
GITHUB = "https://github.com/{repo}.git"
GIT_TIMEOUT_S = 600


def peers_dir() -> Path:
    """The folder of clones: ``$AURALGEN_PEERS``, else ``.peers/`` at the repository root."""
    given = os.environ.get(ENV)
    return Path(given) if given else ROOT / DEFAULT


def shown_dir() -> str:
    """How the folder is named to a person: as given, or ``.peers`` (no machine path)."""
    return os.environ.get(ENV) or DEFAULT


def find(name: str) -> Path | None:
    """The clone of peer ``name`` (a key of :data:`PEERS`) with files checked out, or None."""
    path = peers_dir() / name
    return path if path.is_dir() and any(p.name != ".git" for p in path.iterdir()) else None


def peer(name: str) -> Path:
    """The clone of peer ``name``; skips the calling test (counted in the summary) when absent."""
    path = find(name)
    if path is None:
        pytest.skip(f"{SKIP_MARK} {name} not in {shown_dir()}/ (set {ENV}=<folder of clones> or run `make peers`)")
    return path


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, timeout=GIT_TIMEOUT_S)


def fetch(into: Path, source: str = GITHUB) -> list[str]:
    """Clone every peer into ``into/<name>`` at its pinned commit; a clone already there is checked out again."""
    into.mkdir(parents=True, exist_ok=True)
    done = []
    for name, (repo, commit) in PEERS.items():
        owner, short = repo.split("/")
        dest = into / name
        if not (dest / ".git").exists():
            _git("clone", "--quiet", "--no-checkout", source.format(repo=repo, owner=owner, name=short), str(dest))
        _git("-c", "advice.detachedHead=false", "checkout", "--quiet", commit, cwd=dest)
        done.append(f"{name} {commit[:12]}")
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.support.peers", description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["fetch"])
    ap.add_argument("--into", default=None, help=f"the folder of clones (default: ${ENV}, else {DEFAULT}/)")
    ap.add_argument("--source", default=GITHUB, help="clone URL template with {repo}, {owner}, {name}")
    args = ap.parse_args(argv)
    into = Path(args.into) if args.into else peers_dir()
    try:
        for line in fetch(into, args.source):
            print(f"{line} -> {args.into or shown_dir()}/")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        print(
            f"make peers: {exc} (it clones from {args.source.split('{')[0]}...: needs that reachable)", file=sys.stderr
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
