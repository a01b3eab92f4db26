"""The listening-test app without a browser: Starlette's TestClient, and a real uvicorn on 127.0.0.1."""

import json
import sqlite3

import numpy as np
import pytest
from starlette.testclient import TestClient

from auralgen.core.errors import ParameterError
from auralgen.evaluation.adaptive import SimulatedObserver
from auralgen.evaluation.adaptive.session import run_interleaved
from auralgen.listen import screening
from auralgen.listen.app import create_app, experimenter_key
from auralgen.listen.schedule import Schedule
from auralgen.listen.study import study_from_dict
from tests.listen.conftest import make_study
from tests.support.participant import listener_choice, screening_choice

# keys that would carry an answer, a level or a recipe; none may reach the browser before it has answered
FORBIDDEN = {
    "answer",
    "answer_index",
    "truth",
    "correct",
    "level",
    "level_value",
    "level_unit",
    "params",
    "measured",
    "item_id",
    "task",
    "track",
    "difference",
    "direction",
    "freq_hz",
    "phase",
}


def keys(node) -> set:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in keys(v)}
    return set()


def drive(client, choose, *, limit=200, log=None):
    """Take a participant through the whole session; ``choose(state, wav) -> position``."""
    s = client.get("/api/state").json()
    log is not None and log.append(("state", s))
    for _ in range(limit):
        if s["screen"] == "consent":
            s = client.post("/api/consent").json()
        elif s["screen"] == "volume":
            log is not None and log.append(("audio", client.get("/" + s["audio"])))
            s = client.post("/api/volume").json()
        elif s["screen"] == "trial":
            audio = client.get("/" + s["audio"])
            reply = client.post("/api/answer", json={"id": s["id"], "choice": choose(s, audio.content), "rt_ms": 321.0})
            log is not None and log.extend([("trial", s), ("audio", audio), ("answer", reply.json())])
            s = reply.json()["state"]
            continue
        else:
            return s
        log is not None and log.append(("state", s))
    raise AssertionError("the session did not end")


def honest(s, wav):
    if s["part"] == "screening":
        return screening_choice(s["options"], wav)
    return listener_choice(s["question"], s["options"], wav)


def test_a_whole_session_shows_no_answer_and_stores_every_trial(tmp_path, pitch_dataset):
    study = make_study(tmp_path / "study", pitch_dataset)
    client = TestClient(create_app(study))
    page = [client.get(p) for p in ("/", "/static/app.js", "/static/style.css")]
    log = []
    end = drive(client, honest, log=log)
    assert end["screen"] == "end" and "finish" in end["message"]
    audio = [r for kind, r in log if kind == "audio"]
    assert len({len(r.content) for r in audio}) == 1  # every sound the same byte size ...
    assert len({(r.headers["content-type"], r.headers["content-length"]) for r in audio}) == 1  # ... and headers
    trials = [s for kind, s in log if kind == "trial"]
    for kind, body in log:
        if kind in ("state", "trial"):
            assert not keys(body) & FORBIDDEN, body
        if kind == "answer":  # only a practice answer names the right option, after it was given
            leaked = keys(body["state"]) & FORBIDDEN
            assert not leaked and (set(body) - {"stored", "state", "feedback"}) == set()
    assert all("feedback" not in body for kind, body in log if kind == "answer" and "feedback" not in body)
    db = sqlite3.connect(study.db_path)
    rows = db.execute(
        "SELECT phase, item_id, level_value, token, response, rt_ms, screening_passed FROM trials"
    ).fetchall()
    text = json.dumps([s for kind, s in log if kind != "audio"]) + "".join(r.text for r in page)
    for phase, item_id, _value, token, response, rt, passed in rows:
        assert response is not None and rt == 321.0  # every trial answered and stored
        assert item_id not in text and token in text  # the browser knew the trial by its opaque id only
        assert (passed == 1) == (phase != "screening")
    phases = [r[0] for r in rows]
    assert len(rows) == len(trials) and phases[:8] == ["screening"] * 6 + ["practice"] * 2
    assert phases.count("fixed") == 8 and 6 <= phases.count("adaptive") <= 8  # every item; min..max trials
    fixed = db.execute("SELECT options FROM trials WHERE phase = 'fixed'").fetchall()
    assert len({tuple(json.loads(o)) for (o,) in fixed}) > 1  # the option order changes from trial to trial
    assert db.execute("SELECT COUNT(*) FROM trials WHERE phase != 'screening' AND correct = 1").fetchone()[0] >= 12


def test_practice_feedback_comes_after_the_answer_only(tmp_path, pitch_dataset):
    client = TestClient(create_app(make_study(tmp_path / "s", pitch_dataset)))
    log = []
    drive(client, honest, log=log)
    feedback = [body["feedback"] for kind, body in log if kind == "answer" and "feedback" in body]
    assert len(feedback) == 2 and all(set(f) == {"correct", "answer"} for f in feedback)
    parts = [s["part"] for kind, s in log if kind == "trial"]
    assert parts[: screening.N_TRIALS] == ["screening"] * 6 and parts[6:8] == ["practice"] * 2
    assert set(parts[8:]) == {"test"}


def test_failing_the_screening_ends_the_session_before_any_data(tmp_path, pitch_dataset):
    study = make_study(tmp_path / "s", pitch_dataset)
    client = TestClient(create_app(study))

    def wrong(s, wav):
        right = screening_choice(s["options"], wav)
        return (right + 1) % 3

    end = drive(client, wrong)
    assert end["screen"] == "end" and "headphone" in end["message"]
    db = sqlite3.connect(study.db_path)
    assert db.execute("SELECT DISTINCT phase FROM trials").fetchall() == [("screening",)]
    assert db.execute("SELECT screening_correct, screening_passed FROM participants").fetchone() == (0, 0)


def test_woods_stimuli_quiet_tone_and_antiphase_cancel_over_loudspeakers():
    clip, answer = screening.screening_trial(np.random.default_rng(3), 48000)
    step, n = int(1.5 * 48000), 48000
    tones = [clip[:, k * step : k * step + n] for k in range(3)]
    ear = [20 * np.log10(np.sqrt(np.mean(t[0] ** 2))) for t in tones]
    air = [np.sqrt(np.mean((t[0] + t[1]) ** 2)) for t in tones]  # both channels summed, as from two speakers
    assert sorted(round(e - max(ear), 2) for e in ear) == [-6.0, 0.0, 0.0] and int(np.argmin(ear)) == answer
    assert min(air) < 1e-6 and int(np.argmin(air)) != answer  # the antiphase tone vanishes in the air
    assert screening.passed(5) and not screening.passed(4)


def test_reload_and_restart_show_the_same_trial_and_no_answer_twice(tmp_path, pitch_dataset):
    study = make_study(tmp_path / "s", pitch_dataset)
    schedule = Schedule(study)
    client = TestClient(create_app(study, schedule=schedule))
    s = client.get("/api/state").json()
    client.post("/api/consent"), client.post("/api/volume")
    for _ in range(3):
        s = client.get("/api/state").json()
        client.post("/api/answer", json={"id": s["id"], "choice": 0, "rt_ms": 1.0})
    first = client.get("/api/state").json()
    assert client.get("/api/state").json() == first  # a reload
    again = TestClient(create_app(study, schedule=schedule), cookies=client.cookies)  # a new server, same browser
    assert again.get("/api/state").json() == first
    done = again.post("/api/answer", json={"id": first["id"], "choice": 1, "rt_ms": 1.0}).json()
    twice = again.post("/api/answer", json={"id": first["id"], "choice": 2, "rt_ms": 1.0}).json()
    assert done["stored"] and not twice["stored"] and twice["state"]["id"] != first["id"]
    db = sqlite3.connect(study.db_path)
    assert db.execute("SELECT response FROM trials WHERE token = ?", (first["id"],)).fetchall() == [(1,)]


def test_one_participant_cannot_reach_another_and_results_need_the_key(tmp_path, pitch_dataset):
    study = make_study(tmp_path / "s", pitch_dataset)
    app = create_app(study)
    a, b = TestClient(app), TestClient(app)
    for c in (a, b):
        c.get("/api/state"), c.post("/api/consent"), c.post("/api/volume")
    sa = a.get("/api/state").json()
    assert a.get("/" + sa["audio"]).status_code == 200
    assert b.get("/" + sa["audio"]).status_code == 404  # B cannot hear (or time) A's trial
    assert TestClient(app).get("/" + sa["audio"]).status_code == 404
    assert b.post("/api/answer", json={"id": sa["id"], "choice": 0}).json()["stored"] is False
    assert a.get("/results").status_code == 403
    key = experimenter_key(study.out)
    res = a.get("/results", headers={"Authorization": f"Bearer {key}"}).json()
    assert len(res["participants"]) == 2 and "key_hash" not in res["participants"][0]


def test_off_loopback_every_link_needs_the_study_token(tmp_path, pitch_dataset):
    study = make_study(tmp_path / "s", pitch_dataset)
    token = "a" * 20
    client = TestClient(create_app(study, token=token))
    assert client.get("/").status_code == 403 and client.get("/api/state").status_code == 403
    assert client.get("/?t=wrongtokenwrongtoken").status_code == 403
    assert client.get(f"/?t={token}").status_code == 200
    assert client.get("/api/state").status_code == 200  # the page keeps the token in a cookie


def test_interleaved_tracks_follow_the_procedure_run_directly(tmp_path):
    """Two tracks (pitch and the audiogram at 1 kHz), answered by simulated observers that read the level
    and the right answer from the experimenter's database: the session's values and thresholds are
    those of run_interleaved on the same observers."""
    study = make_study(
        tmp_path / "s",
        None,
        practice=0,
        screening=False,
        adaptive={
            "tasks": {"pitch_relative": {}, "audiogram": {"freqs_hz": [1000]}},
            "settings": {"min_trials": 5, "max_trials": 7},
        },
    )
    schedule = Schedule(study)
    observers = {
        name: SimulatedObserver(schedule.procedure(name).domain, threshold=t, slope=2.0, chance=1 / 3, seed=7)
        for name, t in (("pitch_relative", 40.0), ("audiogram@1000Hz", 20.0))
    }
    app = create_app(study, schedule=schedule)
    client = TestClient(app)
    store = app.state.store

    def choose(s, wav):
        row = store.trial(s["id"])
        ok = observers[row["track"]].respond(row["trial"], row["level_value"])["correct"]
        return row["truth"] if ok else (row["truth"] + 1) % len(s["options"])

    drive(client, choose)
    direct = run_interleaved([(n, schedule.procedure(n), o.respond) for n, o in observers.items()])
    rows = store.trials(phase="adaptive")
    assert [r["track"] for r in rows[:4]] == ["pitch_relative", "audiogram@1000Hz"] * 2  # interleaved
    for result in direct:
        mine = [r for r in rows if r["track"] == result.name]
        assert [r["level_value"] for r in mine] == [r["level_value"] for r in result.records]
        proc = schedule.procedure(result.name)
        for r in mine:
            proc.update(r["level_value"], bool(r["correct"]))
        assert proc.estimate().threshold == result.procedure.estimate().threshold


ADAPTIVE = {"out": "x", "adaptive": {"tasks": ["pitch_relative"]}}


@pytest.mark.parametrize(
    "node, match",
    [
        ({"out": "x"}, "neither fixed nor adaptive"),
        ({"out": "x", "adaptive": {"tasks": ["pitch_relative"]}, "practise": 3}, "study.practise is unknown"),
        ({"out": "x", "adaptive": {"tasks": ["pitch_relative"], "settings": {"max_trials": 0}}}, "min_trials"),
        ({"out": "x", "adaptive": {"tasks": ["pitch_relative"]}, "audio": {"length_s": 60}}, "audio.length_s=60"),
        ({"out": "x", "adaptive": {"tasks": ["pitch_relative"]}, "token": "short"}, "token=<hidden>"),
        # the headphone screening's trial (4 s) and the calibration tone (2 s) must fit the fixed length
        ({**ADAPTIVE, "audio": {"length_s": 3.0}}, r"shorter than a headphone-screening trial \(4 s\)"),
        ({**ADAPTIVE, "screening": False, "audio": {"length_s": 1.5}}, r"allowed: 2 \.\. 30"),
        ({**ADAPTIVE, "audio": {"gap_s": "half"}}, r"audio.gap_s='half'; allowed: 0 \.\. 2"),
        ({**ADAPTIVE, "audio": {"calibration_db_spl": 140}}, r"calibration_db_spl=140; allowed: 40 \.\. 100"),
        ({"out": "x", "adaptive": {"tasks": ["pitch_relative"], "extend": "x"}}, "extend='x'; allowed: a number"),
    ],
)
def test_a_bad_study_file_is_refused_in_one_line(node, match):
    with pytest.raises(ParameterError, match=match):
        study_from_dict(node)


def test_a_task_that_cannot_run_adaptively_or_a_sound_too_long_is_refused(tmp_path, pitch_dataset):
    with pytest.raises(ParameterError, match="regime='absolute'"):
        Schedule(make_study(tmp_path / "a", adaptive={"tasks": ["duration_absolute"]}))
    with pytest.raises(ParameterError, match="allowed: at most audio.length_s=2"):
        Schedule(make_study(tmp_path / "b", pitch_dataset, audio={"length_s": 2.0}, screening=False))
