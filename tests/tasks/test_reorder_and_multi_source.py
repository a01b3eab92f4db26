"""temporal_reorder and multi_source_relation: answers follow the stored recipe; multi-clip items load in order."""

import math
from collections import Counter

import numpy as np
import pytest

from auralgen.config import build_tasks
from auralgen.core.qa import answer_slot
from auralgen.core.random import item_rng
from auralgen.evaluation.items import load_items
from auralgen.evaluation.prompts import is_reorder, present
from auralgen.generation.run import run as generate
from auralgen.tasks.temporal_reorder import ORDERS, PROCESSES, order_text
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731
TASKS = build_tasks(small_run("task=temporal_reorder"))
REORDER = TASKS["temporal_reorder"]
MULTI = build_tasks(small_run("task=multi_source_relation"))["multi_source_relation"]


def test_reorder_answer_follows_the_shuffle_and_orders_are_balanced():
    counts = Counter()
    n = 600
    for i in range(n):
        rng = item_rng(0, "test", "temporal_reorder", i)
        p = REORDER.sample(rng, i % 3)
        qa = REORDER.qa(p, rng, slot=answer_slot(0, "test", "temporal_reorder", i, 6))
        order = REORDER.chronological(p)
        # clip order[k]-1 holds segment k
        assert [p["shuffle"][c - 1] for c in order] == [0, 1, 2]
        assert qa.answer == order_text(order) and len(qa.options) == 6
        counts[order] += 1
    assert set(counts) == set(ORDERS)
    chi2 = sum((c - n / 6) ** 2 / (n / 6) for c in counts.values())
    assert chi2 < 20.5  # p > 0.001 with 5 degrees of freedom


@pytest.mark.parametrize("process", PROCESSES)
def test_reorder_segments_are_consecutive_pieces_of_one_process(process):
    for i in range(50):
        p = REORDER.sample(item_rng(1, "test", "temporal_reorder", i), 2)  # hardest level
        if p["process"] == process:
            break
    clips = REORDER.render(p)
    assert len(clips) == 3 and all(c.shape == clips[0].shape for c in clips)
    m = REORDER.check(p, clips)
    assert m["valid"], m
    shuffled = {**p, "shuffle": [p["shuffle"][1], p["shuffle"][0], p["shuffle"][2]]}
    assert REORDER.check(shuffled, clips)["valid"] is False  # the wrong order is caught by measurement


@pytest.mark.parametrize("process", PROCESSES)
def test_reorder_segment_loudness_follows_the_order_only_in_the_level_processes(process):
    """Sweep, filling and scale segments share one integrated loudness (their order is spectral); approaching
    and bouncing keep their level change, which is their cue (no level proxy of the order)."""
    from auralgen.measure.common import sounding
    from auralgen.synth.levels import loudness_lufs
    from auralgen.tasks.temporal_reorder import LEVEL_CUE

    p = next(
        q
        for i in range(80)
        if (q := REORDER.sample(item_rng(2, "test", "temporal_reorder", i), 0))["process"] == process
    )
    lufs = [loudness_lufs(sounding(c[0].astype(np.float64)), p["sample_rate_hz"]) for c in REORDER.render(p)]
    spread = max(lufs) - min(lufs)
    assert (spread > 1.0) if process in LEVEL_CUE else (spread < 0.05), (process, lufs)


def test_reorder_segments_sit_at_roved_offsets_in_clips_of_one_length():
    """Each clip holds its segment at its own drawn offset: the silence before it says nothing of the order."""
    leads = {0: [], 2: []}
    for i in range(60):
        p = REORDER.sample(item_rng(3, "test", "temporal_reorder", i), 1)
        if p["process"] in ("approaching", "bouncing"):
            continue
        clips = REORDER.render(p)
        sr = p["sample_rate_hz"]
        assert {c.shape for c in clips} == {(1, round((p["segment_s"] + p["pad_s"]) * sr))}
        for c, seg in zip(clips, p["shuffle"], strict=True):
            first = int(np.flatnonzero(np.abs(c[0]) > 0)[0])
            assert abs(first - round(p["offsets_s"][list(p["shuffle"]).index(seg)] * sr)) <= 1
            if seg in leads:
                leads[seg].append(first / sr)
    # the first and the last segment sit at offsets from the same range
    assert abs(np.mean(leads[0]) - np.mean(leads[2])) < 0.06 and min(map(len, leads.values())) > 20


def test_reorder_items_export_three_clips_in_order_and_the_harness_reorders_them(tmp_path):
    run = small_run("task=temporal_reorder", "task.items_per_level=2", out=tmp_path / "ds")
    generate(run, log=QUIET)
    rows = read_rows(tmp_path / "ds")
    assert len(rows) == 6
    for row in rows:
        rendered = REORDER.render(params_of(row))
        assert len(row["audio"]) == 3
        for entry, clip in zip(row["audio"], rendered):
            x, _ = decode(entry)
            assert np.max(np.abs(x - clip)) <= 2.0**-24 + 1e-12
    items = load_items(tmp_path / "ds")
    assert all(is_reorder(it) for it in items)
    for it in items:
        truths = set()
        for r in range(3):
            pres = present(it, r)
            # under every presentation, the option marked true lists the presented clips in chronological order
            true_seq = [int(t) for t in pres.options[pres.truth].replace(",", "").split() if t.isdigit()]
            segment_of_shown = [params_of_item(it)["shuffle"][c] for c in pres.clip_order]
            assert [segment_of_shown[k - 1] for k in true_seq] == [0, 1, 2]
            truths.add(pres.truth)
        assert len(truths) >= 2  # different clip orders move the answer


def params_of_item(it):
    return it.recipe  # the item's params as a dict


def test_higher_sources_sit_to_one_side_and_clicks_are_single_samples():
    """'higher' keeps every source 20-160 deg to one side (in the median plane no interaural cue separates
    heights) and at or below 40 deg; the click train's clicks carry 4-8 kHz (pulse_taps=3)."""
    from auralgen.sounds.spatial import source_signal

    higher = [lv for lv in range(MULTI.design.n_levels()) if MULTI.design.grid[lv][0] == "higher"]
    for i in range(30):
        p = MULTI.sample(item_rng(0, "test", "multi_source_relation", i), higher[i % len(higher)])
        az = [s["azimuth_deg"] for s in p["sounds"]]
        assert all(20 <= abs(a) <= 160 for a in az) and len({a > 0 for a in az}) == 1, az
        assert max(s["elevation_deg"] for s in p["sounds"]) <= 40
        clicks = next(s["source"] for s in p["sounds"] if s["source"]["kind"] == "clicks")
        x = source_signal(clicks, 16000, ramp_s=p["ramp_s"])
        spectrum = np.abs(np.fft.rfft(x[:1000]))  # the first click alone
        assert spectrum[375] > 0.5 * spectrum[:50].mean()  # 6 kHz within 6 dB of the lowest bins


def test_multi_source_roles_are_independent_of_timbre_and_entry_order():
    from auralgen.tasks.multi_source_relation import ENTRY_GAP_S, ENTRY_ORDER

    answer_kind, answer_rank = Counter(), Counter()
    for i in range(300):
        p = MULTI.sample(item_rng(0, "test", "multi_source_relation", i), i % MULTI.design.n_levels())
        s = p["sounds"]
        assert len({x["source"]["kind"] for x in s}) == len(s)
        entered = sorted(s, key=lambda x: x["onset_s"])  # one after another, in the palette's entry order
        assert [x["source"]["kind"] for x in entered] == sorted((x["source"]["kind"] for x in s), key=ENTRY_ORDER.index)
        gaps = np.diff([x["onset_s"] for x in entered])
        assert np.all((gaps >= ENTRY_GAP_S[0]) & (gaps <= ENTRY_GAP_S[1]))
        if "answer_sound" in p:
            answer_rank[entered.index(s[p["answer_sound"]])] += 1
        if p["relation"] == "left_of":
            a, b = s
            side = (
                "same"
                if a["azimuth_deg"] == b["azimuth_deg"]
                else ("left" if a["azimuth_deg"] > b["azimuth_deg"] else "right")
            )
            assert len(s) == 2 and side == p["side"]
            answer_kind[f"side:{p['side']}"] += 1
            continue
        assert len(s) == 3
        ans = s[p["answer_sound"]]
        if p["relation"] == "left":
            assert ans["azimuth_deg"] == max(x["azimuth_deg"] for x in s)
        elif p["relation"] == "closer":
            assert ans["distance_m"] == min(x["distance_m"] for x in s)
        else:
            assert ans["elevation_deg"] == max(x["elevation_deg"] for x in s)
        answer_kind[ans["source"]["kind"]] += 1
    # every timbre takes the answer role (a third each of the 225 three-source items); no sweep is drawn
    assert min(answer_kind[k] for k in ("noise", "harmonic", "clicks")) > 60 and answer_kind["chirp"] == 0
    assert min(v for k, v in answer_kind.items() if k.startswith("side:")) > 15  # left / right / same all occur
    assert sorted(answer_rank) == [0, 1, 2] and min(answer_rank.values()) > 50  # the first, second or last to enter


def test_multi_source_check_measures_the_relation():
    for relation, level in (("left", 0), ("closer", 3), ("left_of", 9)):
        for i in range(30):
            p = MULTI.sample(item_rng(4, "test", "multi_source_relation", i), level)
            clips = MULTI.render(p)
            if MULTI.check(p, clips)["valid"]:
                break
        assert p["relation"] == relation
        if relation == "left_of":
            wrong = {**p, "side": {"left": "right", "right": "same", "same": "left"}[p["side"]]}
            qa = MULTI.qa(p, item_rng(0, "x", "y", 0), slot=0)
            names = {"noise": "the noise burst", "harmonic": "the harmonic tone", "clicks": "the click train"}
            assert qa.question.endswith(
                f"Where is {names[p['sounds'][0]['source']['kind']]} relative to "
                f"{names[p['sounds'][1]['source']['kind']]}?"
            )
        else:
            wrong = {**p, "answer_sound": (p["answer_sound"] + 1) % 3}
        assert MULTI.check(wrong, clips)["valid"] is False
        assert math.isclose(MULTI.design.level_value(level), p["step"])


@pytest.mark.parametrize("sample_rate", [16000, 22050, 24000])
@pytest.mark.parametrize("level", [0, 1, 2])
def test_reorder_sweep_from_the_top_of_its_start_range_renders(sample_rate, level):
    """The highest start (start=1) of a full-extent sweep once ended at 9.6 kHz > Nyquist at 16 kHz."""
    from auralgen.sounds.processes import SWEEP_TOP, render_process
    from auralgen.tasks.base import AudioConfig
    from auralgen.tasks.temporal_reorder import TemporalReorder, TemporalReorderConfig

    task = TemporalReorder(TemporalReorderConfig(sample_rate=sample_rate), AudioConfig())
    p = {**task.sample(np.random.default_rng(level), level), "process": "sweep", "start": 1.0}
    clips = task.render(p)
    assert len(clips) == 3 and all(np.isfinite(c).all() for c in clips)
    x = render_process(p)
    spec = np.abs(np.fft.rfft(x[-len(x) // 10 :]))  # the sweep's last tenth: energy at its top
    top_hz = np.argmax(spec) * sample_rate / (2 * (len(spec) - 1))
    assert top_hz <= SWEEP_TOP * sample_rate * 1.01


def test_reorder_sweep_start_unchanged_where_it_fits():
    """Only sweeps that would pass SWEEP_TOP are lowered: the default suite's items keep their bytes."""
    from auralgen.sounds.processes import render_process
    from auralgen.synth import sweep

    p = {"sample_rate_hz": 16000, "process": "sweep", "extent": 1.0, "segment_s": 0.4, "start": 0.5, "seed": 1}
    expected = sweep(300.0, 300.0 * 16, 1.2, sample_rate=16000, method="log")
    assert np.array_equal(render_process(p), expected[: len(render_process(p))])
