"""The reply cache: one JSON line per (item, rotation), keyed ``"<id>@<rotation>"``.

Every reply is appended and flushed as soon as it arrives, so a killed run keeps what it
got and the next run asks only the rest; scoring again needs no model. A line holds::

    {"key": "0a2a...@2", "id": "0a2a...", "rotation": 2, "reply": "B" | null,
     "error": null | "no reply after 5 retries: HTTP 503", "options": [...presented...],
     "truth": 1, "clip_order": [0], "latency_s": 0.41}

An entry with ``"reply": null`` records a failure (counted as an ``error`` answer); it is
asked again on the next run. When a key occurs several times the last line wins. A final
line cut short by a kill is ignored (it is asked again); any other unreadable line is an
error naming the file and line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from auralgen.core.errors import ParameterError


class ReplyCache:
    """Append-only JSONL cache of model replies (see the module docstring)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.entries: dict[str, dict] = {}
        if self.path.exists():
            text = self.path.read_text(encoding="utf-8")
            lines = text.split("\n")
            partial = False
            for n, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    key = entry["key"]
                except (ValueError, KeyError, TypeError):
                    if n == len(lines):  # a last line without newline: cut short by a kill
                        partial = True
                        continue
                    raise ParameterError(
                        f"reply cache {str(self.path)!r} line {n} is not a cache entry; allowed: JSON lines with a 'key'"
                    ) from None
                self.entries[key] = entry
            if partial:
                kept = "\n".join(lines[:-1])
                self.path.write_text(kept + "\n" if kept.strip() else "", encoding="utf-8")
            elif text and not text.endswith("\n"):
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write("\n")
        self._fh = None

    def get(self, key: str) -> dict | None:
        return self.entries.get(key)

    def answered(self, key: str) -> bool:
        """True when the cache holds a reply (not a failure) for ``key``."""
        entry = self.entries.get(key)
        return entry is not None and entry.get("reply") is not None

    def put(self, entry: dict) -> None:
        """Append ``entry`` (must have ``key``) and flush it to disk."""
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")
        self._fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._fh.flush()
        self.entries[entry["key"]] = entry

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __len__(self) -> int:
        return len(self.entries)
