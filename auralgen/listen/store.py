"""The study's data: SQLite in WAL mode at ``<out>/listen.sqlite``, one row per trial.

``participants``: a pseudonymous id (``P`` + 8 hex digits), the SHA-256 of the participant's session
key (the browser holds the key in a cookie; the database never does), when consent was given and the
volume set, the screening's count of correct answers and verdict, when the session finished.

``trials``: one row per trial shown, in the order shown (``seq``): phase (``screening``, ``practice``,
``fixed``, ``adaptive``), track and trial index within it, item id, task, level value and unit,
question, the options in the order shown and the position of the right one, the opaque id the browser
knew the trial by, when it was shown, and once answered: the response (position and text), whether it
was right, the response time (ms, measured in the browser from the first play) and the screening verdict.
A trial row is written before the browser sees the trial and its answer is committed (synchronous,
WAL) before the browser hears back, so a killed server loses no answered trial and shows the same
unanswered trial again.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from pathlib import Path

__all__ = ["Store", "TRIAL_COLUMNS"]

TRIAL_COLUMNS = (
    "pid",
    "seq",
    "phase",
    "track",
    "trial",
    "item_id",
    "task",
    "level_value",
    "level_unit",
    "question",
    "options",
    "truth",
    "token",
    "shown_at",
    "response",
    "response_text",
    "correct",
    "rt_ms",
    "answered_at",
    "screening_passed",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS participants (
    pid TEXT PRIMARY KEY, key_hash TEXT UNIQUE NOT NULL, created REAL NOT NULL, consented REAL,
    volume_set REAL, screening_correct INTEGER, screening_passed INTEGER, finished REAL);
CREATE TABLE IF NOT EXISTS trials (
    pid TEXT NOT NULL REFERENCES participants(pid), seq INTEGER NOT NULL, phase TEXT NOT NULL, track TEXT,
    trial INTEGER NOT NULL, item_id TEXT, task TEXT, level_value REAL, level_unit TEXT, question TEXT,
    options TEXT NOT NULL, truth INTEGER NOT NULL, token TEXT UNIQUE NOT NULL, shown_at REAL NOT NULL,
    response INTEGER, response_text TEXT, correct INTEGER, rt_ms REAL, answered_at REAL, screening_passed INTEGER,
    PRIMARY KEY (pid, seq));
"""


class Store:
    """The study database (see the module docstring); safe to share between the server's threads.

    Parameters
    ----------
    path : str or pathlib.Path
        The SQLite file (created with its tables unless ``read_only``).
    read_only : bool, optional
        Open an existing database for reading only (SQLite refuses every write), as a report does.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False):
        self.path = Path(path)
        self._lock = threading.RLock()
        if read_only:  # a report reads a study's database, even a copy on a read-only disk, and never writes it
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def _write(self, sql: str, args=()) -> int:
        with self._lock:
            return self._db.execute(sql, args).rowcount

    def _rows(self, sql: str, args=()) -> list[dict]:
        with self._lock:
            return [_plain(r) for r in self._db.execute(sql, args).fetchall()]

    # -- participants ------------------------------------------------------------------------
    def create_participant(self, key_hash: str) -> str:
        """A new participant with a fresh pseudonymous id.

        Parameters
        ----------
        key_hash : str
            SHA-256 (hex) of the participant's session key.

        Returns
        -------
        str
            The new id (``P`` + 8 hex digits), or the existing participant's if ``key_hash`` is taken.
        """
        while True:
            pid = "P" + secrets.token_hex(4)
            try:
                self._write(
                    "INSERT INTO participants (pid, key_hash, created) VALUES (?, ?, ?)", (pid, key_hash, time.time())
                )
                return pid
            except sqlite3.IntegrityError:
                if self.participant_by_key(key_hash):
                    return self.participant_by_key(key_hash)["pid"]

    def participant_by_key(self, key_hash: str) -> dict | None:
        """The participant whose session key hashes to ``key_hash``.

        Parameters
        ----------
        key_hash : str
            SHA-256 (hex) of a session key.

        Returns
        -------
        dict or None
            The participant's row (column name to value), or None if no participant has that key.
        """
        rows = self._rows("SELECT * FROM participants WHERE key_hash = ?", (key_hash,))
        return rows[0] if rows else None

    def participant(self, pid: str) -> dict:
        """The row of participant ``pid``.

        Parameters
        ----------
        pid : str
            An id :meth:`create_participant` returned.

        Returns
        -------
        dict
            Column name to value; times are Unix seconds, None where not reached yet.

        Raises
        ------
        IndexError
            If there is no participant ``pid``.
        """
        return self._rows("SELECT * FROM participants WHERE pid = ?", (pid,))[0]

    def participants(self) -> list[dict]:
        """Every participant's row, oldest first.

        Returns
        -------
        list of dict
            Column name to value, ordered by creation time, then id.
        """
        return self._rows("SELECT * FROM participants ORDER BY created, pid")

    def update_participant(self, pid: str, **values) -> None:
        """Set columns of participant ``pid``'s row.

        Parameters
        ----------
        pid : str
            Whose row to change.
        **values
            Column name to new value (names are not checked: callers pass fixed names only).
        """
        names = ", ".join(f"{k} = ?" for k in values)
        self._write(f"UPDATE participants SET {names} WHERE pid = ?", (*values.values(), pid))

    # -- trials ------------------------------------------------------------------------------
    def pending(self, pid: str) -> dict | None:
        """The participant's trial shown and not answered yet (at most one).

        Parameters
        ----------
        pid : str
            Whose pending trial to find.

        Returns
        -------
        dict or None
            The trial's row (``options`` decoded to a list), or None if none is pending.
        """
        rows = self._rows("SELECT * FROM trials WHERE pid = ? AND response IS NULL ORDER BY seq", (pid,))
        return rows[0] if rows else None

    def add_trial(self, pid: str, values: dict) -> dict:
        """Store a new (unanswered) trial of ``pid`` after its last one; returns the row.

        Parameters
        ----------
        pid : str
            Whose trial it is.
        values : dict
            The trial's columns of :data:`TRIAL_COLUMNS` besides ``pid``, ``seq`` and ``shown_at``
            (at least ``phase``, ``trial``, ``options``, ``truth`` and a unique ``token``).

        Returns
        -------
        dict
            The stored row, as :meth:`trial` returns it.
        """
        with self._lock:
            seq = self._db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM trials WHERE pid = ?", (pid,)).fetchone()[0]
            row = {"pid": pid, "seq": seq, "shown_at": time.time(), **values}
            row["options"] = json.dumps(list(row["options"]))
            cols = ", ".join(row)
            self._db.execute(f"INSERT INTO trials ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
        return self.trial(row["token"])

    def answer(
        self, token: str, *, response: int, text: str, correct: bool, rt_ms: float | None, screening_passed: bool | None
    ) -> bool:
        """Record the answer of the trial ``token`` (committed before returning); False when it had one.

        Parameters
        ----------
        token : str
            The trial's opaque id.
        response : int
            Position of the chosen option among the shown options.
        text : str
            The chosen option's text.
        correct : bool
            Whether the choice was the right option.
        rt_ms : float or None
            Response time in milliseconds; None if unknown.
        screening_passed : bool or None
            The participant's screening verdict at that time (None during the screening).

        Returns
        -------
        bool
            True if the answer was stored; False if the trial does not exist or was already answered.
        """
        n = self._write(
            "UPDATE trials SET response = ?, response_text = ?, correct = ?, rt_ms = ?, answered_at = ?, "
            "screening_passed = ? WHERE token = ? AND response IS NULL",
            (
                response,
                text,
                int(correct),
                rt_ms,
                time.time(),
                None if screening_passed is None else int(screening_passed),
                token,
            ),
        )
        return n == 1

    def trial(self, token: str) -> dict | None:
        """The trial with opaque id ``token``.

        Parameters
        ----------
        token : str
            Which trial to look up.

        Returns
        -------
        dict or None
            The trial's row (``options`` decoded to a list), or None if there is none.
        """
        rows = self._rows("SELECT * FROM trials WHERE token = ?", (token,))
        return rows[0] if rows else None

    def trials(self, pid: str | None = None, phase: str | None = None, *, answered: bool = True) -> list[dict]:
        """Trials (of ``pid``, of ``phase``; answered ones only unless ``answered=False``) in the order shown.

        Parameters
        ----------
        pid : str or None, optional
            Only this participant's trials; None for every participant's.
        phase : str or None, optional
            Only this phase (``screening``, ``practice``, ``fixed``, ``adaptive``); None for all.
        answered : bool, optional
            Only answered trials (default True); False includes the pending ones.

        Returns
        -------
        list of dict
            Trial rows (``options`` decoded to a list), ordered by participant id, then ``seq``.
        """
        where, args = ["1 = 1"], []
        if pid is not None:
            where.append("pid = ?"), args.append(pid)
        if phase is not None:
            where.append("phase = ?"), args.append(phase)
        if answered:
            where.append("response IS NOT NULL")
        return self._rows(f"SELECT * FROM trials WHERE {' AND '.join(where)} ORDER BY pid, seq", args)


def _plain(row: sqlite3.Row) -> dict:
    out = dict(row)
    if "options" in out and isinstance(out["options"], str):
        out["options"] = json.loads(out["options"])
    return out
