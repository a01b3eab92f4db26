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


class FetchError(Exception):
    """A clone or checkout that failed, as one line."""


def _git(*args: str, cwd: Path | None = None, what: str) -> None:
    try:
        res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise FetchError(f"{what}: no answer within {GIT_TIMEOUT_S} s") from None
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or [f"exit code {res.returncode}"])[-1]
        raise FetchError(f"{what}: {last}")


def fetch(into: Path, source: str = GITHUB) -> list[str]:
    """Clone every peer into ``into/<name>`` at its pinned commit; a clone already there is checked out again."""
    into.mkdir(parents=True, exist_ok=True)
    done = []
    for name, (repo, commit) in PEERS.items():
        owner, short = repo.split("/")
        dest = into / name
        url = source.format(repo=repo, owner=owner, name=short)
        if not (dest / ".git").exists():
            _git("clone", "--quiet", "--no-checkout", url, str(dest), what=f"cannot clone {url}")
        # a mirror that lacks its largest files (images, data) still checks out the code (git names the
        # missing objects on stderr, captured here, and goes on); a missing commit fails
        _git(
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            commit,
            cwd=dest,
            what=f"{name} has no commit {commit[:12]}",
        )
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
    except FetchError as exc:
        print(f"make peers: {exc} (it needs GitHub, or PEERS_SOURCE=<a mirror's URL template>)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
