"""An interrupt while a JSON file (the journal) is written leaves no .tmp behind (a clean-clone run of the
two-worker Ctrl-C test once found .auralgen-journal.json.tmp)."""

from __future__ import annotations

import json

import pytest

from auralgen.export import manifest


def test_an_interrupt_between_write_and_rename_removes_the_tmp(tmp_path, monkeypatch):
    path = tmp_path / "journal.json"
    manifest.write_json(path, {"a": 1})

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(manifest.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        manifest.write_json(path, {"a": 2})
    assert list(tmp_path.iterdir()) == [path] and json.loads(path.read_text()) == {"a": 1}
