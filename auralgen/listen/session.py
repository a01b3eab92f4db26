"""A participant's session: which screen comes next, and what an answer does.

Order: consent -> volume -> headphone screening (failing it ends the session; no data trial is
kept before it is passed) -> practice (feedback after each answer) -> the fixed block -> the adaptive
tracks, interleaved (the unfinished track with the fewest answered trials next, in study order: the
round-robin of :func:`~auralgen.evaluation.adaptive.session.run_interleaved`) -> end.

The next trial is derived from the stored answers alone, and stored (unanswered) before the browser
sees it; a reload or a restarted server shows that same trial until it is answered. A track's
procedure is rebuilt by replaying its stored outcomes (QUEST+ is deterministic), so after a restart it
asks the value it would have asked. What the browser gets (:meth:`Session.state`) holds the question,
the options in their shown order and an opaque trial id; never the answer, the level or the item.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict

from . import screening
from .schedule import Schedule, Stimulus
from .store import Store

__all__ = ["Session"]

VOLUME_TEXT = (
    "Put on your headphones and press Play. Set your computer's volume so that the tone is clearly audible and "
    "comfortable, then leave the volume where it is for the rest of the session."
)
SCREENED_OUT = "Thank you. This study needs headphones, and the headphone check was not passed, so it ends here."
FINISHED = "Thank you, you have finished. You may close this page."


class Session:
    """The participants of one study (see the module docstring); thread-safe. A ``pid`` argument is a
    participant's id (:meth:`~auralgen.listen.store.Store.create_participant`)."""

    def __init__(self, schedule: Schedule, store: Store, *, cache_size: int = 64):
        self.schedule, self.store, self.study = schedule, store, schedule.study
        self._lock = threading.RLock()
        self._procs: dict[tuple[str, str], tuple[object, int]] = {}
        self._audio: OrderedDict[str, bytes] = OrderedDict()
        self._cache_size = cache_size

    # -- the screen --------------------------------------------------------------------------
    def state(self, pid: str) -> dict:
        """The screen participant ``pid`` sees now (creating and storing its trial when one is due).

        Parameters
        ----------
        pid : str
            Whose screen to show.

        Returns
        -------
        dict
            The browser's JSON: ``screen`` (``consent``, ``volume``, ``trial`` or ``end``) and that
            screen's fields; a trial carries its token, question and shown options, never the answer.
        """
        with self._lock:
            p = self.store.participant(pid)
            if p["consented"] is None:
                return {
                    "screen": "consent",
                    "title": self.study.title,
                    "instructions": self.study.instructions,
                    "consent": self.study.consent,
                    "participant": pid,
                }
            if p["volume_set"] is None:
                return {"screen": "volume", "text": VOLUME_TEXT, "audio": "audio/calibration", "participant": pid}
            if p["screening_passed"] == 0:
                return self._end(pid, SCREENED_OUT, passed=False)
            row = self.store.pending(pid) or self._next_trial(pid)
            if row is None:
                return self._end(pid, FINISHED, passed=True)
            return self._trial_screen(row)

    def _end(self, pid: str, message: str, *, passed: bool) -> dict:
        if self.store.participant(pid)["finished"] is None:
            self.store.update_participant(pid, finished=time.time())
        screen = {"screen": "end", "message": message, "participant": pid}
        if passed and self.study.finish_url:
            screen["finish_url"] = self.study.finish_url
        return screen

    def _trial_screen(self, row: dict) -> dict:
        phase = row["phase"]
        part = "test" if phase in ("fixed", "adaptive") else phase
        done = sum(1 for r in self.store.trials(row["pid"]) if _part(r["phase"]) == part)
        total = {"screening": screening.N_TRIALS, "practice": self.study.practice}.get(part)
        if part == "test" and not self.schedule.tracks:
            total = len(self.schedule.fixed)
        return {
            "screen": "trial",
            "part": part,
            "id": row["token"],
            "question": row["question"],
            "options": row["options"],
            "audio": f"audio/{row['token']}",
            "number": done + 1,
            "of": total,
        }

    # -- the next trial ----------------------------------------------------------------------
    def _next_trial(self, pid: str) -> dict | None:
        answered = self.store.trials(pid)
        by_phase = {
            ph: [r for r in answered if r["phase"] == ph] for ph in ("screening", "practice", "fixed", "adaptive")
        }
        if self.study.screening and len(by_phase["screening"]) < screening.N_TRIALS:
            k = len(by_phase["screening"])
            return self._store(pid, "screening", "screening", k, self.schedule.screening(pid, k))
        if self.store.participant(pid)["screening_passed"] is None:  # no screening in this study
            self.store.update_participant(pid, screening_passed=1)
        if len(by_phase["practice"]) < self.study.practice:
            k = len(by_phase["practice"])
            return self._store(pid, "practice", "practice", k, self.schedule.practice(k))
        order = self.schedule.fixed_order(pid)
        k = len(by_phase["fixed"])
        if k < len(order):
            return self._store(pid, "fixed", "fixed", k, self.schedule.fixed_item(order[k]))
        return self._next_adaptive(pid, by_phase["adaptive"])

    def _next_adaptive(self, pid: str, answered: list[dict]) -> dict | None:
        best = None
        for name in self.schedule.tracks:
            proc = self.procedure(pid, name, [r for r in answered if r["track"] == name])
            n = proc.n_trials
            if not proc.done() and (best is None or n < best[1]):
                best = (name, n, proc)
        if best is None:
            return None
        name, n, proc = best
        return self._store(pid, "adaptive", name, n, self.schedule.adaptive(name, proc.next_level(), n))

    def procedure(self, pid: str, name: str, rows: list[dict]):
        """Track ``name``'s procedure for ``pid``, updated with the outcomes ``rows`` (its answered
        trials, in order).

        Parameters
        ----------
        pid : str
            Whose track it is.
        name : str
            An adaptive track's name.
        rows : list of dict
            The track's answered trial rows, oldest first (``level_value``, ``correct``); rows already
            applied to the cached procedure are skipped.

        Returns
        -------
        QuestPlusProcedure
            The procedure after every outcome in ``rows``.
        """
        proc, applied = self._procs.get((pid, name)) or (self.schedule.procedure(name), 0)
        for r in rows[applied:]:
            proc.update(r["level_value"], bool(r["correct"]))
        self._procs[(pid, name)] = (proc, len(rows))
        return proc

    def _store(self, pid: str, phase: str, track: str, k: int, s: Stimulus) -> dict:
        order = self.schedule.option_order(pid, f"{phase}:{track}", k, len(s.options))
        token = secrets.token_urlsafe(18)
        self._remember(token, s.wav)
        return self.store.add_trial(
            pid,
            {
                "phase": phase,
                "track": track,
                "trial": k,
                "item_id": s.item_id,
                "task": s.task,
                "level_value": s.level_value,
                "level_unit": s.level_unit,
                "question": s.question,
                "options": [s.options[i] for i in order],
                "truth": order.index(s.answer_index),
                "token": token,
            },
        )

    # -- answers and audio -------------------------------------------------------------------
    def consent(self, pid: str) -> None:
        """Record that ``pid`` consented (now, as Unix time).

        Parameters
        ----------
        pid : str
            Who consented.
        """
        with self._lock:  # the store's one connection is shared with the locked volume and answer steps
            self.store.update_participant(pid, consented=time.time())

    def volume(self, pid: str) -> None:
        """Record that ``pid`` set the volume (now, as Unix time); ignored before consent.

        Parameters
        ----------
        pid : str
            Who set the volume.
        """
        with self._lock:
            if self.store.participant(pid)["consented"] is not None:
                self.store.update_participant(pid, volume_set=time.time())

    def answer(self, pid: str, token: str, choice: int, rt_ms: float | None) -> dict:
        """Record ``choice`` (a position among the shown options) for trial ``token``; returns
        ``{"stored": bool, "feedback"?: ..., "state": next screen}`` (feedback in practice only).

        Parameters
        ----------
        pid : str
            Who answered.
        token : str
            The pending trial's opaque id; any other token stores nothing.
        choice : int
            Position of the chosen option among the shown options, from 0.
        rt_ms : float or None
            Response time in milliseconds, as the browser measured it; None if unknown.

        Returns
        -------
        dict
            ``stored`` (False for a stale token or a choice out of range), ``feedback`` (practice only:
            ``correct`` and the right option's text) and ``state``, the next screen.
        """
        with self._lock:
            row = self.store.pending(pid)
            if row is None or row["token"] != token or not 0 <= choice < len(row["options"]):
                return {"stored": False, "state": self.state(pid)}
            correct = choice == row["truth"]
            passed = None if row["phase"] == "screening" else True
            self.store.answer(
                token,
                response=choice,
                text=row["options"][choice],
                correct=correct,
                rt_ms=rt_ms,
                screening_passed=passed,
            )
            out: dict = {"stored": True}
            if row["phase"] == "screening":
                self._screening_verdict(pid)
            if row["phase"] == "practice":
                out["feedback"] = {"correct": correct, "answer": row["options"][row["truth"]]}
            self._audio.pop(token, None)
            out["state"] = self.state(pid)
            return out

    def _screening_verdict(self, pid: str) -> None:
        rows = self.store.trials(pid, "screening")
        if len(rows) >= screening.N_TRIALS:
            n = sum(int(r["correct"]) for r in rows)
            self.store.update_participant(pid, screening_correct=n, screening_passed=int(screening.passed(n)))

    def audio(self, pid: str, token: str) -> bytes | None:
        """The WAV of ``pid``'s trial ``token`` (None when it is not theirs or already answered).

        Parameters
        ----------
        pid : str
            Who asks for the audio; another participant's trial gives None.
        token : str
            A trial's opaque id.

        Returns
        -------
        bytes or None
            The trial's WAV file (see :func:`~auralgen.listen.sound.trial_wav`), or None.
        """
        with self._lock:
            row = self.store.trial(token)
            if row is None or row["pid"] != pid or row["response"] is not None:
                return None
            if token not in self._audio:
                self._remember(token, self._regenerate(row).wav)
            return self._audio[token]

    def _regenerate(self, row: dict) -> Stimulus:
        phase, k = row["phase"], row["trial"]
        if phase == "screening":
            return self.schedule.screening(row["pid"], k)
        if phase == "practice":
            return self.schedule.practice(k)
        if phase == "fixed":
            return self.schedule.fixed_item(row["item_id"])
        return self.schedule.adaptive(row["track"], row["level_value"], k)

    def _remember(self, token: str, wav: bytes) -> None:
        self._audio[token] = wav
        while len(self._audio) > self._cache_size:
            self._audio.popitem(last=False)


def _part(phase: str) -> str:
    return "test" if phase in ("fixed", "adaptive") else phase
