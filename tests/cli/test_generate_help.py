"""`auralgen generate --help` is one short page pointing to the full config reference."""

from __future__ import annotations

import re

import pytest

from auralgen.cli import main
from tests.support.builders import ROOT


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_generate_help_is_short_and_points_to_the_reference(flag, capsys):
    assert main(["generate", "task=pitch_relative", flag]) == 0
    out = capsys.readouterr().out
    assert 10 <= len(out.splitlines()) <= 40
    for page in re.findall(r"docs/reference/\w+\.md", out):
        assert (ROOT / page).exists(), page
    assert "docs/reference/config.md" in out and "--cfg job" in out
    suites = re.search(r"suite=NAME\s+(.+?) \(conf/suite/\)", out).group(1).split(", ")
    assert sorted(suites) == sorted(p.stem for p in (ROOT / "conf" / "suite").glob("*.yaml"))
