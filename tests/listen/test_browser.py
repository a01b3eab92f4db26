"""End to end: headless Chromium (Debian's chromium + chromedriver, Selenium) through a whole session on
uvicorn at 127.0.0.1 -- screening, practice, a fixed block and an adaptive pitch track -- by a scripted
participant that answers from the sound the page plays. Screenshots of every screen go to docs/images/listen/."""

import base64
import sqlite3
import time
from pathlib import Path

import pytest

from auralgen.evaluation.adaptive import SimulatedObserver
from auralgen.evaluation.adaptive.session import build_task, run_track, track_summary
from auralgen.listen.report import study_report
from auralgen.listen.schedule import new_procedure
from auralgen.listen.study import load_study
from tests.support.listen_server import ROOT, ListenServer, write_study
from tests.support.participant import listener_choice, observer_choice, screening_choice

pytestmark = pytest.mark.slow
SHOTS = ROOT / "docs" / "images" / "listen"
FETCH_AUDIO = """
const done = arguments[arguments.length - 1];
fetch(document.getElementById("sound").src, {credentials: "same-origin", cache: "no-store"})
  .then((r) => r.arrayBuffer()).then((b) => {
    const u = new Uint8Array(b); let s = "";
    for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
    done(btoa(s));
  }).catch((e) => done("error:" + e));
"""


def chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=900,760",
        "--autoplay-policy=no-user-gesture-required",
    ):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.set_script_timeout(60)
    driver.set_page_load_timeout(60)
    return driver


class Page:
    def __init__(self, driver, url):
        self.d, self.url, self.shot = driver, url, set()
        driver.get(url)

    def screen(self):
        return self.d.find_element("id", "screen")

    def wait(self, test, what, timeout_s=60.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if test():
                    return
            except Exception:  # the page is being re-rendered
                pass
            time.sleep(0.05)
        raise AssertionError(f"page: no {what} within {timeout_s:g} s")

    def at(self, name):
        self.wait(lambda: self.screen().get_attribute("data-screen") == name, f"{name} screen")

    def click(self, element_id):
        self.d.find_element("id", element_id).click()

    def snap(self, name):
        if name not in self.shot:
            SHOTS.mkdir(parents=True, exist_ok=True)
            self.d.save_screenshot(str(SHOTS / f"{name}.png"))
            self.shot.add(name)

    def trial(self):
        """The shown trial: its id, part, question, options, and the sound the page plays (bytes)."""
        self.at("trial")
        s = self.screen()
        part = self.d.find_element("id", "part").get_attribute("textContent").split(" ·")[0]
        options = [b.text for b in s.find_elements("css selector", "button.option")]
        self.click("play")
        data = self.d.execute_async_script(FETCH_AUDIO)
        assert not data.startswith("error:"), data
        return (
            s.get_attribute("data-trial"),
            part,
            self.d.find_element("id", "question").text,
            options,
            base64.b64decode(data),
        )

    def answer(self, trial_id, choice):
        self.d.find_elements("css selector", "button.option")[choice].click()
        self.wait(lambda: self.screen().get_attribute("data-trial") != trial_id, "next screen")


def test_a_browser_session_stores_every_trial_and_its_threshold_is_the_direct_runs(tmp_path, pitch_dataset):
    study_file = write_study(
        tmp_path / "study.yaml",
        {
            "out": str(tmp_path / "out"),
            "seed": 0,
            "title": "Pitch listening test",
            "practice": 2,
            "audio": {"length_s": 4.0},
            "fixed": {"data": str(pitch_dataset)},
            "adaptive": {"tasks": ["pitch_relative"], "settings": {"min_trials": 12, "max_trials": 16}},
        },
    )
    study = load_study(study_file)
    task = build_task("pitch_relative")
    observer = SimulatedObserver(new_procedure(study, task).domain, threshold=60.0, slope=2.0, chance=1 / 3, seed=11)
    mirror, n_fixed = new_procedure(study, task), 8
    server = ListenServer(study_file)
    driver = chromium()
    try:
        page = Page(driver, server.url + "/")
        page.at("consent"), page.snap("1_consent"), page.click("agree")
        page.at("volume"), page.click("play"), page.snap("2_volume"), page.click("continue")
        counts, reloaded = {"Headphone check": 0, "Practice": 0, "Test": 0}, None
        while True:
            page.wait(lambda: page.screen().get_attribute("data-screen") in ("trial", "end"), "trial or end")
            if page.screen().get_attribute("data-screen") == "end":
                break
            tid, part, question, options, wav = page.trial()
            if part == "Test" and counts["Test"] == 3 and reloaded is None:  # a reload mid-session
                driver.refresh()
                reloaded = page.trial()[0]
                assert reloaded == tid
            page.snap({"Headphone check": "3_screening", "Practice": "4_practice", "Test": "6_test"}[part])
            if part == "Headphone check":
                choice = screening_choice(options, wav)
            elif part == "Practice" or counts["Test"] < n_fixed:
                choice = listener_choice(question, options, wav)
            else:
                value = mirror.next_level()
                correct = observer.respond(mirror.n_trials, value)["correct"]
                choice = observer_choice(options, wav, correct)
                mirror.update(value, correct)
            page.answer(tid, choice)
            counts[part] += 1
            if part == "Practice":
                page.at("feedback"), page.snap("5_practice_feedback"), page.click("next")
        page.snap("7_end")
        assert "finished" in driver.find_element("id", "message").text
    finally:
        driver.quit()
        server.stop()
    direct = run_track("pitch_relative", new_procedure(study, task), observer.respond)
    db = sqlite3.connect(study.db_path)
    rows = db.execute("SELECT phase, level_value, correct, response FROM trials ORDER BY seq").fetchall()
    adaptive = [r for r in rows if r[0] == "adaptive"]
    assert all(r[3] is not None for r in rows) and len(rows) == sum(counts.values())  # every trial stored
    assert counts == {"Headphone check": 6, "Practice": 2, "Test": n_fixed + len(adaptive)}
    assert [r[1] for r in adaptive] == [r["level_value"] for r in direct.records]  # the same values asked ...
    assert [bool(r[2]) for r in adaptive] == [r["correct"] for r in direct.records]  # ... and outcomes stored
    replayed = new_procedure(study, task)
    for _, value, correct, _ in adaptive:
        replayed.update(value, bool(correct))
    assert replayed.estimate().threshold == direct.procedure.estimate().threshold  # the same threshold ...
    (person,) = study_report(study)["participants"].values()  # ... in the study's report
    mine, theirs = person["adaptive"]["pitch_relative"], track_summary(direct)
    assert (mine["threshold"], mine["ci95"]) == (theirs["threshold"], theirs["ci95"])
    print(
        f"browser threshold {mine['threshold']} cents {mine['ci95']} ({mine['n_trials']} trials); direct "
        f"{theirs['threshold']} {theirs['ci95']}; observer 60 cents"
    )
    assert all(Path(SHOTS / f"{n}.png").stat().st_size > 5000 for n in ("1_consent", "3_screening", "6_test"))
