"""evaluate: rotation plan, reply cache and resume, accounting, reports and leaderboard."""

import json
import sys
import textwrap

import numpy as np
import pytest

from auralgen.cli._hydra import compose
from auralgen.core.errors import ParameterError
from auralgen.evaluation.adapters import FatalModelError
from auralgen.evaluation.cache import ReplyCache
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.items import Item, load_items
from auralgen.evaluation.prompts import build_message, is_reorder, n_runs, present, reorder_options
from auralgen.evaluation.report import psychometrics
from auralgen.evaluation.runner import run

QUIET = lambda *_: None  # noqa: E731


def cfg_of(*overrides):
    return validate_eval(compose(list(overrides), config_name="evaluate"))


def evaluate(data, out, *overrides):
    return run(cfg_of(f"data={data}", f"out={out}", "progress=false", "eval.n_boot=0", *overrides), log=QUIET)


def test_random_baseline_end_to_end(tiny_dataset, tmp_path):
    res = evaluate(tiny_dataset, tmp_path / "random", "model=random")
    items = load_items(tiny_dataset)
    asked = sum(len(it.options) for it in items)
    acc = res["accounting"]["overall"]
    assert acc["asked"] == asked == res["scores"]["n_answers"]
    assert acc["answered"] == acc["ok"] == asked and acc["error"] == 0
    # every item asked once under every rotation
    per_item = res["scores"]["overall"]["answers_per_item"]
    assert per_item == [min(len(it.options) for it in items), max(len(it.options) for it in items)]
    assert 0.05 < res["scores"]["overall"]["AA"] < 0.5
    assert set(res["scores"]["by_task"]) == {it.task for it in items}
    pitch = [it for it in items if it.task == "pitch_relative"]
    pitch_scores = res["scores"]["by_task"]["pitch_relative"]
    assert pitch_scores["stated_chance"] == pytest.approx(1 / len(pitch[0].options))
    assert pitch_scores["stated_chance"] <= pitch_scores["chance"] <= 1.0 and pitch_scores["chance_rule"]
    saved = json.loads((tmp_path / "random" / "results.json").read_text())
    assert saved["accounting"] == res["accounting"]
    for name in ("task_bars.png", "audiogram.png", "psychometric_pitch_relative.png"):
        assert (tmp_path / "random" / "plots" / name).stat().st_size > 1000
    assert not (tmp_path / "random" / "audio").exists()  # WAVs for the model are removed
    board = (tmp_path / "random" / "leaderboard.md").read_text()  # inside out
    assert "| random | random |" in board and "pitch_relative" in board


def test_records_carry_the_fields_the_task_states(tiny_dataset):
    """record_fields adds the task's eval_fields: the audiogram's tone frequency and half, nothing for the others."""
    items = load_items(tiny_dataset)
    for it in items:
        rec = it.record_fields()
        if it.task == "audiogram" and "freq_hz" in it.recipe:
            assert (rec["frequency_hz"], rec["tone_position"]) == (float(it.recipe["freq_hz"]), it.recipe["position"])
        else:
            assert not {"frequency_hz", "tone_position", "difference", "difference_unit"} & set(rec), it.task
    assert sum("frequency_hz" in it.record_fields() for it in items) == 3  # one audiogram item per level


def test_rotations_override_and_rotated_options_are_cached(tiny_dataset, tmp_path):
    evaluate(tiny_dataset, tmp_path / "r", "model=constant", "eval.rotations=2", "task=[pitch_relative]")
    lines = [json.loads(ln) for ln in (tmp_path / "r" / "replies.jsonl").read_text().splitlines()]
    items = {it.id: it for it in load_items(tiny_dataset, tasks=["pitch_relative"])}
    assert sorted(e["key"] for e in lines) == sorted(f"{i}@r{r}" for i in items for r in (0, 1))
    for e in lines:
        opts = list(items[e["id"]].options)
        r = e["rotation"] % len(opts)
        assert e["options"] == (opts[-r:] + opts[:-r] if r else opts)  # STAR-Bench's rotation
        assert e["options"][e["truth"]] == items[e["id"]].answer


def test_constant_reply_is_chance_with_zero_acr(tiny_dataset, tmp_path):
    res = evaluate(tiny_dataset, tmp_path / "c", "model=constant", "task=[pitch_relative,loudness_relative]")
    k = {it.task: len(it.options) for it in load_items(tiny_dataset)}
    for task in ("pitch_relative", "loudness_relative"):
        s = res["scores"]["by_task"][task]  # one letter under every rotation: right once in k
        assert k[task] == 3 and s["AA"] == pytest.approx(1 / k[task]) and s["ACR"] == 0.0


def test_unparseable_replies_stay_in_the_denominator(tiny_dataset, tmp_path):
    res = evaluate(
        tiny_dataset, tmp_path / "u", "model=constant", "model.reply='hmm, hard to say'", "task=[duration_absolute]"
    )
    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["duration_absolute"]))  # every rotation
    acc = res["accounting"]["by_task"]["duration_absolute"]
    assert n > 0 and acc["asked"] == acc["answered"] == acc["unparseable"] == n
    s = res["scores"]["by_task"]["duration_absolute"]
    assert s["AA"] == 0.0 and s["unparseable_rate"] == 1.0 and s["n_answers"] == n


FLAKY = """
import json, sys, pathlib
log = pathlib.Path(sys.argv[1]); limit = int(pathlib.Path(sys.argv[2]).read_text())
for n, line in enumerate(sys.stdin):
    msg = json.loads(line)
    assert "answer" not in msg["meta"] and "answer_letter" not in msg["meta"]
    with log.open("a") as fh:
        fh.write(msg["meta"]["unique_id"] + "\\n")
    if n >= limit:
        sys.stderr.write("model crashed\\n"); sys.exit(3)
    print(json.dumps({"id": msg["id"], "reply": "B"}), flush=True)
"""


def test_interrupted_run_resumes_without_asking_again(tiny_dataset, tmp_path):
    script = tmp_path / "flaky.py"
    script.write_text(textwrap.dedent(FLAKY))
    log = tmp_path / "asked.txt"
    out = tmp_path / "cmd"
    limit = tmp_path / "limit.txt"
    limit.write_text("5")
    args = [
        "model=command",
        "task=[pitch_relative]",
        "model.label=cmd",
        f"model.cmd='{sys.executable} {script} {log} {limit}'",
    ]
    with pytest.raises(FatalModelError, match=r"exited \(code 3\): model crashed"):
        evaluate(tiny_dataset, out, *args)
    first = log.read_text().split()
    assert len(first) == 6 and len(ReplyCache(out / "replies.jsonl")) == 5
    limit.write_text("1000")
    res = evaluate(tiny_dataset, out, *args)
    asked = log.read_text().split()
    n = sum(len(it.options) for it in load_items(tiny_dataset, tasks=["pitch_relative"]))  # every rotation
    assert n > 6 and len(asked) == 6 + (n - 5)  # only the missing replies were asked again
    assert set(asked[6:]).isdisjoint(first[:5])
    assert res["accounting"]["overall"]["asked"] == n == res["accounting"]["overall"]["ok"]
    # re-scoring needs no model: a command that cannot even start is never launched
    again = evaluate(tiny_dataset, out, "action=rescore", *args[:-1], "model.cmd='/nonexistent/model'")
    assert again["scores"] == res["scores"]


def test_rescore_with_missing_replies_is_an_error(tiny_dataset, tmp_path):
    evaluate(tiny_dataset, tmp_path / "m", "model=random", "task=[pitch_relative]")
    n = {
        t: sum(len(it.options) for it in load_items(tiny_dataset, tasks=[t]))
        for t in ("pitch_relative", "duration_absolute")
    }
    missing, total = n["duration_absolute"], sum(n.values())
    with pytest.raises(ParameterError, match=rf"{missing} of {total} replies are not cached"):
        evaluate(
            tiny_dataset, tmp_path / "m", "action=rescore", "model=random", "task=[pitch_relative,duration_absolute]"
        )


def test_out_of_another_model_is_refused(tiny_dataset, tmp_path):
    evaluate(tiny_dataset, tmp_path / "x", "model=random", "task=[pitch_relative]")
    with pytest.raises(ParameterError, match=r"holds replies of another run \(different model\)"):
        evaluate(tiny_dataset, tmp_path / "x", "model=constant", "task=[pitch_relative]")
    res = evaluate(tiny_dataset, tmp_path / "x", "model=constant", "task=[pitch_relative]", "overwrite=true")
    assert res["model"]["label"] == "constant"


def test_cache_ignores_a_cut_last_line_and_rejects_a_corrupt_one(tmp_path):
    path = tmp_path / "replies.jsonl"
    path.write_text('{"key": "a@0", "reply": "A"}\n{"key": "a@0", "reply": "B"}\n{"key": "b@0", "rep')
    cache = ReplyCache(path)
    assert cache.get("a@0")["reply"] == "B" and cache.get("b@0") is None  # last wins; cut line dropped
    cache.put({"key": "b@0", "reply": "C"})
    cache.close()
    assert ReplyCache(path).get("b@0")["reply"] == "C"
    path.write_text('{"key": "a@0"}\nnot json\n{"key": "b@0"}\n')
    with pytest.raises(ParameterError, match=r"line 2 is not a cache entry"):
        ReplyCache(path)


def _reorder_item():
    opts = [
        "clip 1 -> clip 2 -> clip 3",
        "clip 2 -> clip 1 -> clip 3",
        "clip 3 -> clip 1 -> clip 2",
        "clip 1 -> clip 3 -> clip 2",
        "clip 2 -> clip 3 -> clip 1",
        "clip 3 -> clip 2 -> clip 1",
    ]
    return Item(
        id="reo",
        task="order",
        category="c",
        sub_category="s",
        attribute="time",
        regime="reorder",
        level=0,
        level_value=0.0,
        level_unit="",
        question="Order the clips.",
        options=tuple(opts),
        answer=opts[2],
        answer_index=2,
        audio=tuple({"bytes": b, "path": None} for b in (b"0", b"1", b"2")),
        sampling_rate=16000,
        num_channels=1,
        channel_layout="mono",
        params="{}",
        split="test",
    )


def test_reorder_items_are_asked_under_different_clip_orders():
    item = _reorder_item()
    assert is_reorder(item) and n_runs(item, rotations=None, reorder_runs=3) == 3
    true_order = [3, 1, 2]  # canonical clip numbers in temporal order (the answer)
    orders = []
    for r in range(3):
        p = present(item, r)
        # options stay put, in the toolkit's order: the stored ones renumbered by time (clip 3 happened first)
        assert p.options == reorder_options(item) and p.options[0] == "clip 2 -> clip 3 -> clip 1"
        assert sorted(p.options) == sorted(item.options)
        shown = [int(c) for c in p.options[p.truth].replace("clip", "").split("->")]
        # presented clip shown[i] is canonical clip true_order[i]
        assert [p.clip_order[s - 1] + 1 for s in shown] == true_order
        orders.append(tuple(p.clip_order))
    assert len(set(orders)) == 3
    msg = build_message(item, present(item, 1), ["/a.wav", "/b.wav", "/c.wav"])
    audio = [q["value"] for q in msg["prompts"] if q["type"] == "audio"]
    assert audio == [["/a.wav", "/b.wav", "/c.wav"][c] for c in present(item, 1).clip_order]
    assert [q["value"] for q in msg["prompts"] if q["type"] == "text"][:3] == ["Audio 1:", "Audio 2:", "Audio 3:"]


def test_message_follows_the_starbench_toolkit_convention(tiny_dataset):
    item = load_items(tiny_dataset, tasks=["pitch_relative"])[0]
    p = present(item, 1)
    msg = build_message(item, p, ["/x.wav"], instruction="Answer with a letter.")
    meta = msg["meta"]
    assert {"id", "task", "category", "sub-category", "options", "answer", "answer_letter", "rotate_id"} <= set(meta)
    assert meta["rotate_id"] == 1 and meta["unique_id"] == f"{item.id}@r1"
    assert meta["answer"] == item.answer and meta["answer_letter"] == f"<{'ABCD'[p.truth]}>"
    assert msg["prompts"][0] == {"type": "audio", "value": "/x.wav"}
    text = msg["prompts"][1]["value"]
    assert text.startswith(item.question + "\n<A>: " + p.options[0] + "\n") and text.endswith("Answer with a letter.")


def test_psychometric_threshold_of_a_listener_with_a_known_threshold():
    rng = np.random.default_rng(1)
    recs = []
    for level in (0, 25, 50, 100, 200, 400):
        for _ in range(40):
            right = level >= 100 or (level > 0 and rng.random() < 0.25 + 0.5 * level / 100)
            recs.append(
                dict(
                    task="pitch_relative",
                    regime="relative",
                    level_value=float(level),
                    level_unit="cents",
                    n_options=4,
                    correct=bool(right),
                )
            )
    fit = psychometrics(recs, criterion=0.75, n_boot=20, seed=0)["pitch_relative"]
    assert fit["threshold_status"] == "ok" and 25 < fit["threshold"] < 100 and fit["unit"] == "cents"
    assert fit["ci95"][0] <= fit["threshold"] <= fit["ci95"][1]
    assert fit["n_excluded"] == 1


def test_task_selection_errors_name_what_is_available(tiny_dataset, tmp_path):
    with pytest.raises(ParameterError, match=r"task=\['pitch_absolute'\] not in data=.*allowed: audiogram"):
        evaluate(tiny_dataset, tmp_path / "e", "task=[pitch_absolute]")
    with pytest.raises(ParameterError, match=r"no parquet shard of split='train'.*splits found: test"):
        evaluate(tiny_dataset, tmp_path / "e", "split=train")


def test_model_audiogram_is_not_earned_by_an_answer_bias():
    from auralgen.evaluation.report import frequency_analyses

    def audiogram(recs, criterion):
        return frequency_analyses(recs, criterion=criterion)["audiogram"]

    base = dict(task="audiogram", level_unit="dB HL", frequency_hz=1000.0, level_value=10.0, status="ok")
    positions = ["first", "second", "absent"] * 2
    # always "Not present": right on absent items only
    biased = [dict(base, id=f"i{i}", tone_position=p, correct=p == "absent") for i, p in enumerate(positions)]
    assert audiogram(biased, criterion=0.75) == {"1000": None}
    hears = [dict(r, correct=True) for r in biased]
    assert audiogram(hears, criterion=0.75) == {"1000": 10.0}
    one_position = [r for r in hears if r["tone_position"] == "first"]
    assert audiogram(one_position, criterion=0.75) == {"1000": None}  # cannot tell hearing from bias
    probes = [dict(r, level_unit="dB SPL") for r in hears]  # the task's probe items (other unit) are left out
    assert audiogram(probes, criterion=0.75) == {}


def test_frequency_thresholds_follow_the_tasks_declared_analyses(monkeypatch):
    """The per-frequency analysis goes to the tasks declaring it, keyed by task name; no other task gets it."""
    from auralgen.evaluation import report
    from auralgen.tasks.base import task_class

    assert report.frequency_tasks() == ["audiogram"]
    rec = dict(
        task="pitch_relative",
        level_unit="cents",
        frequency_hz=1000.0,
        level_value=10.0,
        tone_position="first",
        status="ok",
        correct=True,
    )
    recs = [dict(rec, id=f"i{i}", tone_position=p) for i, p in enumerate(["first", "second"] * 2)]
    assert report.frequency_analyses(recs, criterion=0.75) == {"audiogram": {}}
    monkeypatch.setattr(task_class("pitch_relative"), "analyses", (report.FREQUENCY_THRESHOLDS,))
    got = report.frequency_analyses(recs, criterion=0.75)
    assert got == {"audiogram": {}, "pitch_relative": {"1000": 10.0}}


def test_fits_use_the_recorded_difference_and_split_units():
    from auralgen.evaluation.report import psychometrics

    recs = []
    for near, ratio_db, p in ((1, 6.0, 1.0), (4, 1.9, 0.95), (6, 1.3, 0.7), (8, 1.0, 0.55)):
        for i in range(40):
            recs.append(
                dict(
                    task="distance_relative",
                    regime="relative",
                    level_value=float(near),
                    level_unit="m",
                    difference=ratio_db,
                    difference_unit="dB distance ratio",
                    n_options=3,
                    correct=i < p * 40,
                )
            )
    for unit, v in (("deg", 20.0), ("m", 0.5)):
        recs += [dict(task="multi", regime="relative", level_value=v, level_unit=unit, n_options=4, correct=True)] * 5
    fits = psychometrics(recs, criterion=0.75, n_boot=20, seed=0)
    assert set(fits) == {"distance_relative", "multi (deg)", "multi (m)"}
    assert fits["distance_relative"]["unit"] == "dB distance ratio"
    assert 1.0 < fits["distance_relative"]["threshold"] < 1.9  # accuracy crosses 75 % between the 6-7 and 4-5 m pairs


def test_a_process_pool_prepares_the_same_messages_as_the_serial_default(tiny_dataset, tmp_path):
    """The executor only prepares messages (clips -> WAV files): replies, cache and scores do not depend on it."""
    from auralgen.execution import LocalPoolExecutor

    def replies(out):
        return [{k: v for k, v in json.loads(ln).items() if k != "latency_s"} for ln in (out / "replies.jsonl").open()]

    args = ("progress=false", "eval.n_boot=0", "model=dsp", "task=[pitch_relative,audiogram]", "eval.keep_audio=true")
    serial = run(cfg_of(f"data={tiny_dataset}", f"out={tmp_path / 's'}", *args), log=QUIET)
    pool = LocalPoolExecutor(2)
    try:
        pooled = run(cfg_of(f"data={tiny_dataset}", f"out={tmp_path / 'p'}", *args), executor=pool, log=QUIET)
    finally:
        pool.close()
    assert replies(tmp_path / "p") == replies(tmp_path / "s") and len(replies(tmp_path / "s")) > 20
    assert pooled["scores"] == serial["scores"] and serial["scores"]["overall"]["AA"] > 0.5  # dsp hears the cues
    wavs = sorted(p.name for p in (tmp_path / "s" / "audio").rglob("*.wav"))
    assert wavs and wavs == sorted(p.name for p in (tmp_path / "p" / "audio").rglob("*.wav"))


def test_the_procedure_protocol_names_the_four_methods_of_an_adaptive_track():
    from auralgen.evaluation.procedure import Procedure, ThresholdEstimate

    class Staircase:  # 1-up 1-down on a fixed step, for the shape of the protocol only
        def __init__(self):
            self.level, self.trials = 8.0, []

        def next_level(self):
            return self.level

        def update(self, level, correct):
            self.trials.append((level, correct))
            self.level = level / 2 if correct else level * 2

        def done(self):
            return len(self.trials) >= 4

        def estimate(self):
            levels = [lv for lv, _ in self.trials]
            return ThresholdEstimate(sum(levels) / len(levels), (min(levels), max(levels)), len(levels))

    track = Staircase()
    assert isinstance(track, Procedure)
    while not track.done():
        track.update(track.next_level(), correct=track.next_level() > 3)
    assert track.estimate() == ThresholdEstimate(4.5, (2.0, 8.0), 4)
    assert not isinstance(object(), Procedure)
