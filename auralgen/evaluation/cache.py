"""The reply cache: one JSON line per (item, rotation), keyed ``"<id>@r<rotation>"`` (:func:`~.prompts.cache_key`).

Every reply is appended and flushed as soon as it arrives, so a killed run keeps what it
got and the next run asks only the rest; scoring again needs no model. A line holds::

    {"key": "0a2a...@r2", "id": "0a2a...", "rotation": 2, "reply": "B" | null,
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
    """Append-only JSONL cache of model replies (see the module docstring).

    Only an index stays in memory (per key: where its last line starts, and whether it holds a
    reply); :meth:`get` reads that line back from the file, so memory does not grow with the
    replies' size, and the file is read line by line, never whole."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._index: dict[str, tuple[int, bool]] = {}  # key -> (offset of its last line, holds a reply)
        self._fh = None
        self._reader = None
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        with open(self.path, "rb") as fh:
            offset, line = 0, fh.readline()
            n = 0
            while line:
                n += 1
                nxt = fh.readline()
                if line.strip():
                    try:
                        entry = json.loads(line)
                        key = entry["key"]
                        self._index[key] = (offset, entry.get("reply") is not None)
                    except (ValueError, KeyError, TypeError):
                        if not nxt and not line.endswith(b"\n"):  # a last line cut short by a kill
                            os.truncate(self.path, offset)
                            return
                        raise ParameterError(
                            f"reply cache {str(self.path)!r} line {n} is not a cache entry; "
                            "allowed: JSON lines with a 'key'"
                        ) from None
                    if not nxt and not line.endswith(b"\n"):  # a whole last entry without its newline
                        with open(self.path, "ab") as out:
                            out.write(b"\n")
                offset += len(line)
                line = nxt

    def get(self, key: str) -> dict | None:
        """The last entry stored under ``key``, or ``None``.

        Parameters
        ----------
        key : str
            ``"<item id>@r<rotation>"``, as :func:`~.prompts.cache_key` builds it.

        Returns
        -------
        dict or None
            The entry as it was put (reply, error, presented options, truth, latency in seconds), or None.
        """
        at = self._index.get(key)
        if at is None:
            return None
        if self._fh is not None:
            self._fh.flush()
        if self._reader is None:
            self._reader = open(self.path, "rb")
        self._reader.seek(at[0])
        return json.loads(self._reader.readline())

    def answered(self, key: str) -> bool:
        """True when the cache holds a reply (not a failure) for ``key``.

        Parameters
        ----------
        key : str
            As in :meth:`get`.

        Returns
        -------
        bool
            Whether the last entry under ``key`` has a reply that is not None.
        """
        at = self._index.get(key)
        return at is not None and at[1]

    def put(self, entry: dict) -> None:
        """Append ``entry`` (must have ``key``) and flush it to disk.

        Parameters
        ----------
        entry : dict
            A JSON-able cache line (see the module docstring); ``entry["key"]`` indexes it.
        """
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab")
        offset = self._fh.seek(0, os.SEEK_END)
        self._fh.write((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
        self._fh.flush()
        self._index[entry["key"]] = (offset, entry.get("reply") is not None)

    def close(self) -> None:
        """Close the file handles (a later :meth:`get` or :meth:`put` opens them again)."""
        for fh in (self._fh, self._reader):
            if fh is not None:
                fh.close()
        self._fh = self._reader = None

    def __len__(self) -> int:
        return len(self._index)
