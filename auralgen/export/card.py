"""The generated dataset card (README.md with Hub YAML front matter)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData

from auralgen import __version__
from auralgen.export.parquet import FEATURES

# column -> (unit, meaning); the unit is stated here once and nowhere else in the card
COLUMN_DOCS = {
    "id": ("", "opaque unique id; carries no parameter value or answer"),
    "task": ("", "task name (the config of the same name holds its rows)"),
    "category": ("", "e.g. `foundational_perception`"),
    "sub_category": ("", "e.g. `relative_discrimination`"),
    "attribute": ("", "probed attribute: `pitch`, `loudness`, `duration`, `azimuth`, ..."),
    "regime": ("", "`absolute`, `relative` or `mixture`"),
    "level": ("", "difficulty index within the task (0 = first level of the task's list)"),
    "level_value": ("`level_unit`", "the physical value of the difficulty"),
    "level_unit": ("", "the unit of `level_value` in this row: {units}"),
    "question": ("", "the question text"),
    "options": ("", "options in canonical order (the evaluator rotates them)"),
    "answer": ("", "the correct option's text"),
    "answer_index": ("", "index of the answer in `options`"),
    "audio": ("", "1..k clips: FLAC bytes ({bits}-bit), every channel preserved"),
    "sampling_rate": ("Hz", "sample rate of every clip of the row"),
    "num_channels": ("", "channels per clip"),
    "channel_layout": ("", "`mono`, `stereo`, `binaural`, `foa_acn_sn3d`, `tetra`, `circular_<n>`"),
    "params": (
        "",
        "JSON: the full recipe; rendering it reproduces the audio bit for bit (keys carry units: `*_hz`, `*_s`, ...)",
    ),
    "measured": ("", "JSON: validation measurements of the rendered audio"),
    "valid": ("", "whether the measurements support the label"),
    "seed": ("", "generation seed"),
    "split": ("", "split name"),
    "generator_version": ("", "auralgen version"),
}

LOADING = """```python
import io, glob
import soundfile as sf
from datasets import load_dataset

ds = load_dataset("parquet", data_files={"test": glob.glob("data/pitch_relative/test-*.parquet")})["test"]
# or, from this folder: load_dataset(".") (config `all`) / load_dataset(".", "pitch_relative")
item = ds[0]
# decode every clip yourself: channels stay separate (shape [samples, channels])
clips = [sf.read(io.BytesIO(a["bytes"]), always_2d=True) for a in item["audio"]]
signal, sr = clips[0]
print(item["question"], item["options"], item["answer"], signal.shape, sr)
```
Do not cast `audio` to `Audio(decode=True)` for spatial tasks: the `["array"]` of
`datasets`' decoder averages channels to mono and destroys the spatial cues."""


DEFAULT_CONFIG = "all"  # the config `load_dataset("<out>")` loads: every task, every split


def features_yaml() -> list[dict]:
    """The item features in the Hub card's YAML form (``dtype`` / ``list`` entries)."""
    out = []
    for col, feat in FEATURES.items():
        if feat["_type"] == "Value":
            out.append({"name": col, "dtype": feat["dtype"]})
        elif feat["feature"]["_type"] == "Audio":
            out.append({"name": col, "list": {"audio": {"decode": feat["feature"]["decode"]}}})
        else:
            out.append({"name": col, "list": feat["feature"]["dtype"]})
    return out


def split_sizes(out: Path, records) -> dict[str, dict[str, list[int]]]:
    """``[rows, bytes]`` per task and split. Bytes are the uncompressed data size from each shard's
    parquet footer (what the Hub's ``num_bytes`` reports, within a few percent; no row is read)."""
    per: dict[str, dict[str, list[int]]] = {}
    for r in records:
        meta = pq.ParquetFile(Path(out) / r["path"]).metadata
        size = per.setdefault(r["task"], {}).setdefault(r["split"], [0, 0])
        size[0] += r["rows"]
        size[1] += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return per


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket of ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def card_data(run, tasks, sizes) -> DatasetCardData:
    """The card's YAML front matter: the default config ``all`` plus one per task, with split sizes."""
    if DEFAULT_CONFIG in tasks:  # registered task names never shadow the default config
        raise ValueError(f"task name {DEFAULT_CONFIG!r} collides with the default config")

    def config(name: str, task_glob: str, size: dict[str, list[int]]) -> tuple[dict, dict]:
        files = [{"split": sp, "path": f"data/{task_glob}/{sp}-*.parquet"} for sp in run.splits]
        entry = {"config_name": name, **({"default": True} if name == DEFAULT_CONFIG else {}), "data_files": files}
        splits = [{"name": sp, "num_bytes": size.get(sp, [0, 0])[1], "num_examples": size.get(sp, [0, 0])[0]}
                  for sp in run.splits]  # fmt: skip
        return entry, {"config_name": name, "features": features_yaml(), "splits": splits}

    total = {sp: [sum(sizes.get(t, {}).get(sp, [0, 0])[k] for t in tasks) for k in (0, 1)] for sp in run.splits}
    pairs = [config(DEFAULT_CONFIG, "*", total)] + [config(t, t, sizes.get(t, {})) for t in tasks]
    return DatasetCardData(
        pretty_name=run.export.pretty_name,
        license=run.export.license,
        task_categories=["audio-classification", "question-answering"],
        size_categories=[size_category(sum(rows for rows, _ in total.values()))],
        tags=["audio", "psychoacoustics", "benchmark", "synthetic"],
        configs=[c for c, _ in pairs],
        dataset_info=[i for _, i in pairs],
    )


def levels_text(task) -> str:
    """The task's level values, each run of one unit followed by that unit once: ``3, 6 LU · 0.5, 1 s``."""
    groups: list[tuple[str, list[str]]] = []
    for i in range(task.n_levels()):
        unit = task.level_info(i)[2]
        if not groups or groups[-1][0] != unit:
            groups.append((unit, []))
        groups[-1][1].append(f"{task.level_value(i):g}")
    return " · ".join(f"{', '.join(values)} {unit}" for unit, values in groups)


def body(run, tasks, sizes) -> str:
    """The card's markdown below the front matter."""
    units = sorted({task.level_info(i)[2] for task in tasks.values() for i in range(task.n_levels())})
    fill = {"units": ", ".join(f"`{u}`" for u in units), "bits": run.export.flac_bits}
    lines = [f"# {run.export.pretty_name}", "",
             f"Generated by auralgen {__version__} with seed {run.seed} (suite `{run.suite}`). Every item is computed",
             "from the config in `manifest.json` and the seed: regenerate it instead of downloading it.", "",
             f"Configs: `{DEFAULT_CONFIG}` (the default: every task) and one per task.", "",
             "## Tasks", "", "| task | attribute | regime | levels | " + " | ".join(run.splits) + " |",
             "|---|---|---|---|" + "---|" * len(run.splits)]  # fmt: skip
    for name, task in tasks.items():
        counts = " | ".join(str(sizes.get(name, {}).get(s, [0, 0])[0]) for s in run.splits)
        lines.append(f"| {name} | {task.attribute} | {task.regime} | {levels_text(task)} | {counts} |")
    lines += ["", "## Columns", "", "| column | unit | meaning |", "|---|---|---|"]
    for col in FEATURES:
        unit, meaning = COLUMN_DOCS[col]
        lines.append(f"| `{col}` | {unit} | {meaning.format(**fill)} |")
    lines += ["", "## Loading", "", LOADING, ""]
    return "\n".join(lines)


def write_card(out: Path, run, tasks, records) -> None:
    """Write ``out/README.md``: the Hub YAML front matter (via ``huggingface_hub``) and the body."""
    sizes = split_sizes(out, records)
    data = card_data(run, tasks, sizes)
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body(run, tasks, sizes)}")
    card.save(Path(out) / "README.md")
