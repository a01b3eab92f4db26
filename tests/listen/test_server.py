"""The listening test on a real uvicorn server (127.0.0.1): a killed server loses no answered trial."""

import sqlite3

import httpx

from tests.support.listen_server import ListenServer, write_study


def test_a_killed_server_loses_no_answered_trial_and_resumes_the_same_trial(tmp_path, pitch_dataset):
    study = write_study(
        tmp_path / "study.yaml",
        {
            "out": str(tmp_path / "out"),
            "practice": 2,
            "audio": {"length_s": 4.0},
            "fixed": {"data": str(pitch_dataset)},
        },
    )
    server = ListenServer(study)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            c.get("/api/state"), c.post("/api/consent"), c.post("/api/volume")
            answered = []
            for _ in range(4):
                s = c.get("/api/state").json()
                assert c.post("/api/answer", json={"id": s["id"], "choice": 0, "rt_ms": 5.0}).json()["stored"]
                answered.append(s["id"])
            pending = c.get("/api/state").json()
            cookies = dict(c.cookies)
    finally:
        server.kill()  # SIGKILL: no shutdown handler runs
    db = sqlite3.connect(tmp_path / "out" / "listen.sqlite")
    stored = [t for (t,) in db.execute("SELECT token FROM trials WHERE response IS NOT NULL ORDER BY seq")]
    assert stored == answered
    server = ListenServer(study)
    try:
        with httpx.Client(base_url=server.url, timeout=60, cookies=cookies) as c:
            assert c.get("/api/state").json() == pending  # the same trial, same options, same id
            assert c.get("/" + pending["audio"]).status_code == 200
    finally:
        server.stop()
