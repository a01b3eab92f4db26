"""The dataset card: Hub configs (a default `all` plus one per task), `dataset_info` sizes, units."""

import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard, DatasetCardData

from auralgen import generation
from auralgen.config import build_tasks
from auralgen.export.card import DEFAULT_CONFIG, levels_text
from auralgen.export.parquet import FEATURES
from tests.support.builders import read_rows, small_run

QUIET = lambda *_: None  # noqa: E731
TASKS = ("duration_relative", "pitch_relative")


@pytest.fixture(scope="module")
def two_tasks(tmp_path_factory):
    """A 2-task, 2-split dataset (8 items) with a split of 2 rows per task."""
    out = tmp_path_factory.mktemp("card")
    overrides = ["suite=tones", "~tasks.audiogram", "~tasks.loudness_relative", "~tasks.duration_absolute"]
    overrides += ["split=[train,test]", "tasks.pitch_relative.levels=[0,50]", "tasks.duration_relative.levels=[0,20]"]
    overrides += [f"tasks.{t}.items_per_level=1" for t in TASKS]
    generation.run(small_run(*overrides, out=out), log=QUIET)
    return out


def load(out, *args, cache):
    return datasets.load_dataset(str(out), *args, cache_dir=str(cache))


def test_load_dataset_with_no_config_name_loads_every_task(two_tasks, tmp_path):
    ds = load(two_tasks, cache=tmp_path)
    assert set(ds) == {"train", "test"}
    for split in ds:
        rows = [r for r in read_rows(two_tasks) if r["split"] == split]
        assert sorted(ds[split]["id"]) == sorted(r["id"] for r in rows) and len(rows) == 4
        assert set(ds[split]["task"]) == set(TASKS)


def test_a_task_config_loads_that_task_only(two_tasks, tmp_path):
    names = datasets.get_dataset_config_names(str(two_tasks))
    assert names[0] == DEFAULT_CONFIG and sorted(names[1:]) == sorted(TASKS)
    ds = load(two_tasks, "pitch_relative", cache=tmp_path)
    for split in ("train", "test"):
        expected = [r["id"] for r in read_rows(two_tasks, "pitch_relative") if r["split"] == split]
        assert sorted(ds[split]["id"]) == sorted(expected) and len(expected) == 2


def test_dataset_info_gives_features_and_split_sizes_of_every_config(two_tasks):
    for name in (DEFAULT_CONFIG, *TASKS):
        info = datasets.load_dataset_builder(str(two_tasks), name).info
        assert info.features == datasets.Features.from_dict(FEATURES)
        rows = [r for r in read_rows(two_tasks) if name == DEFAULT_CONFIG or r["task"] == name]
        assert {s: info.splits[s].num_examples for s in info.splits} == {
            s: sum(r["split"] == s for r in rows) for s in ("train", "test")
        }
        shards = [p for p in two_tasks.glob("data/*/*.parquet") if name == DEFAULT_CONFIG or p.parent.name == name]
        arrow = sum(pq.read_table(p).nbytes for p in shards)
        assert 0.9 * arrow < sum(s.num_bytes for s in info.splits.values()) < 1.1 * arrow


def test_card_yaml_round_trips_through_huggingface_hub(two_tasks):
    path = two_tasks / "README.md"
    card = DatasetCard.load(path)
    assert isinstance(card.data, DatasetCardData)
    front = card.data.to_dict()
    names = [c["config_name"] for c in front["configs"]]
    assert names[0] == DEFAULT_CONFIG and sorted(names[1:]) == sorted(TASKS)
    assert [c.get("default", False) for c in front["configs"]] == [True, False, False]
    assert [i["config_name"] for i in front["dataset_info"]] == names
    again = DatasetCard(f"---\n{DatasetCardData(**front).to_yaml()}\n---\n{card.text}")
    assert again.data.to_dict() == front and str(again) == path.read_text()


def test_each_column_states_its_unit_once(two_tasks):
    text = (two_tasks / "README.md").read_text()
    table = text.split("## Columns")[1].split("## Loading")[0]
    rows = {line.split("|")[1].strip(" `"): line.split("|")[2].strip() for line in table.splitlines()[4:] if line}
    assert rows["sampling_rate"] == "Hz" and rows["level_value"] == "`level_unit`"
    assert text.count("| Hz |") == 1
    assert "the unit of `level_value` in this row: `cents`, `percent`" in table


def test_levels_of_a_task_with_several_units_name_each_unit():
    task = build_tasks(small_run("task=mixture"))["mixture"]
    units = [task.design.level_info(i)[2] for i in range(task.design.n_levels())]
    runs = [u for i, u in enumerate(units) if i == 0 or units[i - 1] != u]
    groups = levels_text(task).split(" · ")
    assert len(set(units)) > 1 and len(groups) == len(runs)
    for group, unit in zip(groups, runs):
        assert group.endswith(f" {unit}") and group.count(unit) == 1


def test_a_task_that_states_what_its_labels_mean_has_it_on_the_card(two_tasks, tmp_path):
    """Tasks without a card_note add no section; the audiogram's note (physical presence, calibration) is printed."""
    assert "## What the labels mean" not in (two_tasks / "README.md").read_text()
    out = tmp_path / "gram"
    generation.run(
        small_run("task=audiogram", "task.items_per_level=1", "task.freqs_hz=[1000]", "task.levels=[40]", out=out),
        log=QUIET,
    )
    card = (out / "README.md").read_text()
    assert "## What the labels mean" in card
    assert "- **audiogram**: Labels are physical presence" in card and "re ISO 389-7" in card
    assert "| audiogram | 136 | calibrated: set the playback level |" in card


def test_the_bare_path_streams_every_item_of_every_split(two_tasks):
    ds = datasets.load_dataset(str(two_tasks), streaming=True)
    assert set(ds) == {"train", "test"}
    for split in ds:
        expected = [r["id"] for r in read_rows(two_tasks) if r["split"] == split]
        assert sorted(r["id"] for r in ds[split]) == sorted(expected) and len(expected) == 4


def test_data_files_are_the_manifests_shards_per_split(two_tasks):
    from auralgen.core.errors import ParameterError
    from auralgen.export.storage import data_files

    files = {split: sorted(paths) for split, paths in data_files(two_tasks).items()}  # plan order, here sorted
    assert files == {s: sorted(str(p) for p in two_tasks.glob(f"data/*/{s}-*.parquet")) for s in ("train", "test")}
    one = data_files(two_tasks, task="pitch_relative")
    ds = datasets.load_dataset("parquet", data_files=one, split="test", streaming=True)
    assert [r["id"] for r in ds] == [r["id"] for r in read_rows(two_tasks, "pitch_relative") if r["split"] == "test"]
    with pytest.raises(
        ParameterError, match=r"^task='tempo' is not in data=.*; allowed: duration_relative, pitch_relative$"
    ):
        data_files(two_tasks, task="tempo")


def test_the_card_states_each_task_s_presentation_level(two_tasks):
    card = (two_tasks / "README.md").read_text()
    assert "## Presentation level" in card
    assert "| pitch_relative | 100 | presented: a comfortable level |" in card
    assert "| duration_relative | 100 | presented: a comfortable level |" in card
