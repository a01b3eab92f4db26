"""Spatial tasks: geometry in params, channels intact through export, cues present in the audio."""

import json
import math

import numpy as np
import pytest
import soundfile as sf

from auralgen.config import build_tasks
from auralgen.core.errors import ParameterError
from auralgen.core.random import item_rng
from auralgen.generation.run import run as generate
from auralgen.measure import itd_ild
from auralgen.measure.geometry import direction_of
from tests.support.builders import decode, read_rows, small_run

SPATIAL = (
    "azimuth_absolute",
    "elevation_absolute",
    "distance_absolute",
    "azimuth_relative",
    "elevation_relative",
    "distance_relative",
)
TASKS = build_tasks(small_run("suite=spatial"))
QUIET = lambda *_: None  # noqa: E731


def sample(name, i, level=None):
    task = TASKS[name]
    level = i % task.design.n_levels() if level is None else level
    return task, task.sample(item_rng(0, "test", name, i), level)


@pytest.mark.parametrize("name", SPATIAL)
def test_params_hold_geometry_consistent_with_positions(name):
    for i in range(30):
        _, p = sample(name, i)
        assert p["room"] and len(p["room_dims_m"]) == 3 and p["rt60_s"] > 0
        for s in p["sounds"]:
            az, el, d = direction_of(s["position_m"], p["listener_m"], p["yaw_deg"])
            assert float(d) == pytest.approx(s["distance_m"], rel=1e-9)
            assert float(el) == pytest.approx(s["elevation_deg"], abs=1e-6)
            assert math.cos(math.radians(float(az) - s["azimuth_deg"])) == pytest.approx(1.0, abs=1e-9)
            assert np.all(np.asarray(s["position_m"]) >= 0.1) and np.all(
                np.asarray(s["position_m"]) <= np.asarray(p["room_dims_m"]) - 0.1
            )
            assert math.isfinite(s["drr_db_expected"])


def test_relative_pairs_follow_their_separation():
    seps = {"same": set(), "different": set()}
    for i in range(60):
        task, p = sample("azimuth_relative", i)
        a, b = p["sounds"]
        diff = abs((b["azimuth_deg"] - a["azimuth_deg"] + 180) % 360 - 180)
        expected = 0 if p["relation"] == "same" else task.design.level_value(i % task.design.n_levels())
        assert diff == pytest.approx(expected, abs=1e-6)
        assert a["source"] == b["source"] and a["distance_m"] == b["distance_m"]
        seps[p["relation"]].add(round(diff))
    assert seps["same"] == {0} and len(seps["different"]) == 6
    levels = set()
    for i in range(40):
        task, p = sample("distance_relative", i)
        d = [s["distance_m"] for s in p["sounds"]]
        ratio_db = 20 * math.log10(max(d) / min(d))
        assert ratio_db == pytest.approx(task.design.level_value(i % task.design.n_levels())) == p["difference"]
        assert d[p["closer"]] == min(d) and 1.0 <= min(d) <= 2.5
        levels.add(p["sounds"][0]["level_db_spl"] - p["sounds"][1]["level_db_spl"])
    assert len(levels) == 40 and max(levels) - min(levels) > 20  # source levels roved per sound


def test_binaural_left_source_leads_and_is_louder_at_left_ear():
    task = TASKS["azimuth_absolute"]
    for quadrant, sign in (("front_left", 1), ("front_right", -1)):
        for i in range(40):
            p = task.sample(item_rng(5, "test", "azimuth_absolute", i), 0)
            if p["quadrant"] == quadrant and p["sounds"][0]["source"]["kind"] == "noise":
                break
        x = task.render(p)[0].astype(np.float64)
        s = p["sounds"][0]
        a = int(round((s["onset_s"] + s["distance_m"] / 343.0) * 16000)) + 40
        itd, ild = itd_ild(x[0, a : a + 128], x[1, a : a + 128], 16000)
        assert np.sign(itd) == sign and np.sign(ild) == sign
        assert 0.1e-3 < abs(itd) < 0.9e-3


def test_distance_level_follows_inverse_distance_and_direction_level_is_normalised():
    t_dist = TASKS["distance_relative"]
    for i in range(4):
        p = t_dist.sample(item_rng(2, "test", "distance_relative", i), 0)
        m = t_dist.check(p, t_dist.render(p))
        drr = [r["measured"] for r in m["drr_db"]]
        assert m["valid"] and drr[p["closer"]] > drr[1 - p["closer"]]
    t_az = TASKS["azimuth_relative"]
    p = t_az.sample(item_rng(2, "test", "azimuth_relative", 1), 5)
    x = t_az.render(p)[0].astype(np.float64)
    rms = []
    for s in p["sounds"]:
        a = int(round(s["onset_s"] * 16000))
        rms.append(math.sqrt(np.mean(x[:, a : a + int(s["source"]["duration_s"] * 16000)] ** 2)))
    assert 20 * math.log10(rms[0] / rms[1]) == pytest.approx(0.0, abs=0.6)


def test_check_rejects_wrong_side_label():
    task = TASKS["azimuth_absolute"]
    for i in range(60):
        p = task.sample(item_rng(3, "test", "azimuth_absolute", i), 0)
        clips = task.render(p)
        if task.check(p, clips)["valid"]:
            break
    flipped = {
        "front_left": "front_right",
        "front_right": "front_left",
        "back_left": "back_right",
        "back_right": "back_left",
    }
    assert task.check({**p, "quadrant": flipped[p["quadrant"]]}, clips)["valid"] is False


@pytest.mark.parametrize("receiver", ["binaural", "foa", "tetra"])
def test_direction_is_measured_in_every_layout_and_a_contradicting_label_is_refused(receiver):
    """The label check measures the direction (KEMAR template / FOA intensity / SRP-PHAT), front/back
    and elevation included: the true label is confirmed, the mirrored one refused."""
    tasks = build_tasks(small_run("task=azimuth_absolute", f"task.receiver.type={receiver}"))
    task = tasks["azimuth_absolute"]
    back = {
        "front_left": "back_left",
        "front_right": "back_right",
        "back_left": "front_left",
        "back_right": "front_right",
    }
    confirmed = 0
    for i in range(6):
        p = task.sample(item_rng(4, "test", "azimuth_absolute", i), 0)
        clips = task.render(p)
        got = task.check(p, clips)
        confirmed += got["valid"]
        assert got["quadrant"]["measured"] in (p["quadrant"], None) or not got["valid"]
        assert task.check({**p, "quadrant": back[p["quadrant"]]}, clips)["valid"] is False
    assert confirmed >= 5
    elev = build_tasks(small_run("task=elevation_absolute", f"task.receiver.type={receiver}"))["elevation_absolute"]
    for i in range(4):
        p = elev.sample(item_rng(4, "test", "elevation_absolute", i), 0)
        got = elev.check(p, elev.render(p))
        other = {"above": "below", "below": "ear", "ear": "above"}[p["elevation_class"]]
        assert got["valid"] and got["elevation_class"]["measured"] == p["elevation_class"]
        assert elev.check({**p, "elevation_class": other}, elev.render(p))["valid"] is False


@pytest.mark.parametrize(
    "receiver,channels,layout", [("binaural", 2, "binaural"), ("foa", 4, "foa_acn_sn3d"), ("tetra", 4, "tetra")]
)
def test_spatial_items_export_and_load_with_channels_intact(tmp_path, receiver, channels, layout):
    from datasets import load_dataset

    run = small_run(
        "task=azimuth_absolute",
        "task.items_per_level=1",
        f"task.receiver.type={receiver}",
        "validate=false",
        out=tmp_path / "ds",
    )
    generate(run, log=QUIET)
    rows = read_rows(tmp_path / "ds")
    assert len(rows) == 3
    ds = load_dataset("parquet", data_files=str(tmp_path / "ds" / "data" / "azimuth_absolute" / "*.parquet"))["train"]
    for row, hf in zip(rows, ds):
        assert row["num_channels"] == channels and row["channel_layout"] == layout
        x, sr = decode(hf["audio"][0])
        assert x.shape[0] == channels and sr == 16000
        rendered = TASKS["azimuth_absolute"].__class__(run.tasks[0], run.audio).render(json.loads(row["params"]))[0]
        assert np.max(np.abs(x - rendered)) <= 2.0**-24 + 1e-12
        assert np.std(x[0] - x[1]) > 0  # channels are not averaged


def test_user_source_folder_and_unreadable_file(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    t = np.arange(22050) / 22050
    sf.write(folder / "a.wav", 0.3 * np.sin(2 * np.pi * 500 * t), 22050)
    run = small_run(
        "task=azimuth_absolute", "task.items_per_level=1", f"task.sources_dir={folder}", "task.sources=[noise]"
    )
    task = build_tasks(run)["azimuth_absolute"]
    kinds = {
        task.sample(item_rng(0, "test", "azimuth_absolute", i), 0)["sounds"][0]["source"]["kind"] for i in range(20)
    }
    assert kinds == {"noise", "file"}
    (folder / "b.flac").write_bytes(b"not audio")
    with pytest.raises(ParameterError, match="b.flac.*unreadable"):
        small_run("task=azimuth_absolute", f"task.sources_dir={folder}")


def test_distance_that_does_not_fit_the_rooms_is_a_config_error():
    with pytest.raises(ParameterError, match="does not fit rooms"):
        small_run("task=distance_relative", "task.rooms=[booth]")


def test_pra_and_fast_backends_render_the_same_item():
    args = ("task=azimuth_absolute", "task.receiver.type=tetra", "task.mode=exact")
    fast = build_tasks(small_run(*args))["azimuth_absolute"]
    pra = build_tasks(small_run(*args, "task.backend=pra"))["azimuth_absolute"]
    p = fast.sample(item_rng(0, "test", "azimuth_absolute", 0), 0)
    a = fast.render(p)[0].astype(np.float64)
    b = pra.render({**p, "backend": "pra"})[0].astype(np.float64)
    assert np.linalg.norm(a - b) / np.linalg.norm(b) <= 1e-3


def test_pra_backend_refuses_directional_receivers():
    with pytest.raises(ParameterError, match="backend='pra' cannot render a binaural"):
        small_run("task=azimuth_absolute", "task.backend=pra")


def test_rooms_come_from_yaml_and_items_carry_their_room(tmp_path, monkeypatch):
    from auralgen.rooms import spec

    conf = tmp_path / "room"
    conf.mkdir()
    (conf / "studio.yaml").write_text("name: studio\ndims_m: [7.0, 6.0, 3.0]\nrt60_s: 0.35\n")
    monkeypatch.setattr(spec, "_CONF_DIR", conf)
    spec.load_preset.cache_clear()
    try:
        task = build_tasks(small_run("task=azimuth_absolute", "task.rooms=[studio]"))["azimuth_absolute"]
        p = task.sample(item_rng(0, "test", "azimuth_absolute", 0), 0)
        assert (
            p["room"] == "studio" and p["room_spec"]["dims_m"] == [7.0, 6.0, 3.0] and p["room_spec"]["rt60_s"] == 0.35
        )
        with pytest.raises(ParameterError, match="'nowhere'.*studio"):
            small_run("task=azimuth_absolute", "task.rooms=[nowhere]")
    finally:
        spec.load_preset.cache_clear()
    # the recipe is self-contained: a different RT60 in the item's own room_spec changes the audio
    a = task.render(p)[0]
    b = task.render({**p, "room_spec": {**p["room_spec"], "rt60_s": 0.8}})[0]
    assert a.shape != b.shape or not np.array_equal(a, b)


# -- every (task, receiver layout) pair: refused at config time unless the layout carries the cue ------
LAYOUTS = {
    "mono": ("task.receiver.type=mono",),
    "stereo": ("task.receiver.type=stereo",),
    "circular (n=2)": ("task.receiver.type=circular", "+task.receiver.n=2"),
    "circular (n>=3)": ("task.receiver.type=circular", "+task.receiver.n=6"),
    "tetra": ("task.receiver.type=tetra",),
    "foa": ("task.receiver.type=foa",),
    "binaural": ("task.receiver.type=binaural",),
}
CARRIES = {
    "azimuth_absolute": {"circular (n>=3)", "tetra", "foa", "binaural"},
    "azimuth_relative": {"circular (n>=3)", "tetra", "foa", "binaural"},
    "elevation_absolute": {"tetra", "foa", "binaural"},
    "elevation_relative": {"tetra", "foa", "binaural"},
    "trajectory": {"stereo", "circular (n>=3)", "tetra", "foa", "binaural"},
    "multi_source_relation": {"tetra", "foa", "binaural"},  # 'left', 'higher' ('closer': binaural only)
    "distance_absolute": set(LAYOUTS),
    "distance_relative": set(LAYOUTS),
}


@pytest.mark.parametrize("task", sorted(CARRIES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_task_layout_pair_is_accepted_only_where_the_cue_exists(task, layout):
    from auralgen.core.errors import ParameterError
    from tests.support.builders import small_run

    extra = ("task.relations=[left,higher,left_of]",) if task == "multi_source_relation" else ()
    if layout in CARRIES[task]:
        assert small_run(f"task={task}", *LAYOUTS[layout], *extra).tasks[0].name == task
        return
    with pytest.raises(ParameterError) as err:
        small_run(f"task={task}", *LAYOUTS[layout], *extra)
    msg = str(err.value)
    assert "\n" not in msg and f"({layout}) carries no " in msg
    allowed = msg.rsplit("allowed: receiver types ", 1)[1].split(", ")
    assert set(allowed) == CARRIES[task]
