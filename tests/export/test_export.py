"""Export: Hub layout, schema, FLAC round trip through `datasets`, card, manifest, resume."""

import glob
import json

import numpy as np
import pytest
from datasets import load_dataset

from auralgen import generation
from auralgen.core.errors import ExportError
from auralgen.export.audio import decode_flac, encode_flac, quantise
from auralgen.export.parquet import COLUMNS
from auralgen.generation import item
from tests.support.builders import decode, params_of, read_rows, small_run

QUIET = lambda *_: None  # noqa: E731


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite")
    overrides = ["suite=tones"] + [
        f"tasks.{t}.items_per_level=2"
        for t in ("pitch_relative", "loudness_relative", "duration_relative", "duration_absolute")
    ]
    overrides += [
        "tasks.audiogram.items_per_level=1",
        "tasks.audiogram.levels=[-10,40,110]",
        "tasks.audiogram.probe_items_per_level=1",
    ]
    manifest = generation.run(small_run(*overrides, out=out, workers=2, shard_size=5), log=QUIET)
    return out, manifest


def test_hub_layout_and_manifest(suite):
    out, manifest = suite
    paths = sorted(p.relative_to(out).as_posix() for p in out.glob("data/*/*.parquet"))
    assert paths == sorted(s["path"] for s in manifest["shards"])
    assert "data/pitch_relative/test-00000-of-00003.parquet" in paths
    assert manifest["items"]["items"] == sum(s["rows"] for s in manifest["shards"]) + manifest["items"]["dropped"]
    assert set(manifest["versions"]) >= {"numpy", "datasets", "pyroomacoustics", "numba"}
    assert not list(out.rglob("*.tmp"))


def test_load_dataset_decodes_back_to_rendered_samples(suite):
    out, _ = suite
    from auralgen.config import build_tasks

    ds = load_dataset("parquet", data_files={"test": glob.glob(f"{out}/data/*/test-*.parquet")})["test"]
    assert list(ds.features) == COLUMNS
    tasks = build_tasks(small_run("suite=tones"))
    assert len(ds) > 20
    for row in ds:
        params = json.loads(row["params"])
        rendered = tasks[row["task"]].render(params)
        assert len(row["audio"]) == len(rendered)
        for entry, clip in zip(row["audio"], rendered):
            x, sr = decode(entry)
            assert sr == row["sampling_rate"] and x.shape == clip.shape
            assert np.max(np.abs(x - clip)) <= 2.0**-24 + 1e-12
        assert row["options"][row["answer_index"]] == row["answer"]
        assert row["id"] not in row["params"]


def test_card_lists_every_task_config_and_columns(suite):
    out, manifest = suite
    card = (out / "README.md").read_text()
    assert card.startswith("---\n")
    for task in {s["task"] for s in manifest["shards"]}:
        assert f"config_name: {task}" in card and f"path: data/{task}/test-*.parquet" in card
    for col in COLUMNS:
        assert f"| `{col}` |" in card
    assert "always_2d=True" in card


def test_quietest_audiogram_tone_survives_quantisation(suite):
    out, _ = suite
    from auralgen.measure import tone_presence

    rows = [
        r
        for r in read_rows(out, "audiogram")
        if params_of(r)["level_value"] == -10 and params_of(r)["position"] != "absent"
    ]
    for r in rows:
        x, sr = decode(r["audio"][0])
        p = params_of(r)
        assert tone_presence(x[0], sr, p["freq_hz"]).verdict == p["position"]


def test_flac_round_trip_is_exact_on_the_grid():
    rng = np.random.default_rng(0)
    clip = (rng.uniform(-0.9, 0.9, (3, 1000))).astype(np.float32)
    x, sr = decode_flac(encode_flac(clip, 16000))
    assert sr == 16000 and x.shape == (3, 1000)
    np.testing.assert_array_equal(np.round(x.astype(np.float64) * 2**23), quantise(clip).astype(np.float64))


def test_clipping_is_an_error_not_a_clipped_clip():
    with pytest.raises(ExportError, match="full scale"):
        encode_flac(np.ones((1, 10), np.float32), 16000)


def test_killed_run_resumes_without_rerendering(tmp_path, monkeypatch):
    args = ("task=loudness_relative", "task.items_per_level=2")
    full = generation.run(small_run(*args, out=tmp_path / "ref", shard_size=3), log=QUIET)
    run = small_run(*args, out=tmp_path / "r", shard_size=3)
    calls = {"n": 0}
    real = item.make_row

    def dying(task, spec, **kw):
        calls["n"] += 1
        if calls["n"] > 7:
            raise KeyboardInterrupt
        return real(task, spec, **kw)

    monkeypatch.setattr(item, "make_row", dying)
    with pytest.raises(KeyboardInterrupt):
        generation.run(run, log=QUIET)
    assert not (tmp_path / "r" / "manifest.json").exists()
    assert not list((tmp_path / "r").rglob("*.tmp"))
    done = len(list((tmp_path / "r").rglob("*.parquet")))
    assert done == 2  # two complete shards of 3 items
    calls["n"] = -1000
    logs = []
    resumed = generation.run(run, log=logs.append)
    n = len(read_rows(tmp_path / "ref"))  # 15: the zero level holds 5 items (Task.items_at), the others 2 each
    assert calls["n"] == -1000 + n - 6  # only the missing shards' items were rendered
    assert f"resuming: 2 of {-(-n // 3)} shards already complete" in logs
    assert resumed == full and read_rows(tmp_path / "r") == read_rows(tmp_path / "ref")
    calls["n"] = -1000
    again = generation.run(run, log=logs.append)  # a complete dataset: nothing is rendered again
    assert calls["n"] == -1000 and again == full
    assert f"resuming: {-(-n // 3)} of {-(-n // 3)} shards already complete" in logs


def test_out_from_other_config_is_refused(tmp_path):
    from auralgen.core.errors import ParameterError

    generation.run(small_run("task=duration_absolute", "task.items_per_level=1", out=tmp_path / "o"), log=QUIET)
    with pytest.raises(ParameterError, match="another config"):
        generation.run(small_run("task=duration_absolute", "task.items_per_level=2", out=tmp_path / "o"), log=QUIET)
    m = generation.run(
        small_run("task=duration_absolute", "task.items_per_level=2", out=tmp_path / "o", overwrite="true"), log=QUIET
    )
    assert m["items"]["items"] == 8


def test_schema_is_exactly_what_datasets_builds_from_the_item_features():
    import datasets

    from auralgen.export.parquet import FEATURES, SCHEMA

    features = datasets.Features.from_dict(FEATURES)
    assert features.arrow_schema == SCHEMA
    assert features.arrow_schema.metadata == SCHEMA.metadata
    assert isinstance(features["audio"].feature, datasets.Audio) and features["audio"].feature.decode is False


def test_card_front_matter_is_the_hub_yaml_of_the_features(suite):
    import datasets
    import yaml

    from auralgen.export.parquet import FEATURES

    out, _ = suite
    text = (out / "README.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    for info in front["dataset_info"]:
        assert datasets.Features._from_yaml_list(info["features"]) == datasets.Features.from_dict(FEATURES)
    assert {c["config_name"] for c in front["configs"]} == {"all"} | {p.name for p in (out / "data").iterdir()}
    assert front["license"] == "cc-by-4.0"
