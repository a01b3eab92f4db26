"""The generated dataset card (README.md with Hub YAML front matter)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData

from auralgen import __version__
from auralgen.core.schema import columns
from auralgen.export.parquet import FEATURES

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
    """The item features in the Hub card's YAML form (``dtype`` / ``list`` entries).

    Returns
    -------
    list of dict
        One entry per column, in schema order: ``{"name", "dtype"}`` for a value, ``{"name", "list"}``
        for a list of strings or of audio.
    """
    out = []
    for col, feat in FEATURES.items():
        if feat["_type"] == "Value":
            out.append({"name": col, "dtype": feat["dtype"]})
        elif feat["feature"]["_type"] == "Audio":
            out.append({"name": col, "list": {"audio": {"decode": feat["feature"]["decode"]}}})
        else:
            out.append({"name": col, "list": feat["feature"]["dtype"]})
    return out


def split_sizes(out: Path, records, opener=None) -> dict[str, dict[str, list[int]]]:
    """``[rows, bytes]`` per task and split. Bytes are the uncompressed data size from each shard's
    parquet footer (what the Hub's ``num_bytes`` reports, within a few percent; no row is read).
    ``opener(path)`` opens a shard (default: the file under ``out``).

    Parameters
    ----------
    out : Path
        The dataset folder the shard paths are relative to.
    records : iterable of dict
        Shard records with ``path``, ``task``, ``split`` and ``rows``.
    opener : callable or None, optional
        ``opener(path)`` returns a binary file object for a shard's relative path (a bucket's
        ``open``); None reads the files under ``out``.

    Returns
    -------
    dict of str to dict of str to list of int
        Task to split to ``[rows, bytes]``, bytes being the uncompressed data size.
    """
    per: dict[str, dict[str, list[int]]] = {}
    for r in records:
        if opener is None:
            meta = pq.ParquetFile(Path(out) / r["path"]).metadata
        else:
            with opener(r["path"]) as fh:
                meta = pq.ParquetFile(fh).metadata
        size = per.setdefault(r["task"], {}).setdefault(r["split"], [0, 0])
        size[0] += r["rows"]
        size[1] += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return per


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket of ``n`` rows.

    Parameters
    ----------
    n : int
        Number of rows in the dataset.

    Returns
    -------
    str
        One of ``n<1K``, ``1K<n<10K``, ``10K<n<100K``, ``100K<n<1M``, ``n>1M``.

    Examples
    --------
    >>> size_category(2500)
    '1K<n<10K'
    """
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def card_data(run, tasks, sizes) -> DatasetCardData:
    """The card's YAML front matter: the default config ``all`` plus one per task, with split sizes.

    Parameters
    ----------
    run : RunConfig
        The run's configuration (splits, export names and license, audio source).
    tasks : dict of str to Task
        The run's tasks by name.
    sizes : dict of str to dict of str to list of int
        Task to split to ``[rows, bytes]``, as :func:`split_sizes` returns.

    Returns
    -------
    DatasetCardData
        The front matter, with ``configs`` and ``dataset_info`` for ``all`` and every task.

    Raises
    ------
    ValueError
        If a task is named ``all``.
    """
    if DEFAULT_CONFIG in tasks:  # registered task names never shadow the default config
        raise ValueError(f"task name {DEFAULT_CONFIG!r} collides with the default config")

    def config(name: str, task_glob: str, size: dict[str, list[int]]) -> tuple[dict, dict]:
        files = [{"split": sp, "path": f"data/{task_glob}/{sp}-*.parquet"} for sp in run.splits]
        entry = {"config_name": name, **({"default": True} if name == DEFAULT_CONFIG else {}), "data_files": files}
        splits = [
            {"name": sp, "num_bytes": size.get(sp, [0, 0])[1], "num_examples": size.get(sp, [0, 0])[0]}
            for sp in run.splits
        ]
        return entry, {"config_name": name, "features": features_yaml(), "splits": splits}

    total = {sp: [sum(sizes.get(t, {}).get(sp, [0, 0])[k] for t in tasks) for k in (0, 1)] for sp in run.splits}
    pairs = [config(DEFAULT_CONFIG, "*", total)] + [config(t, t, sizes.get(t, {})) for t in tasks]
    return DatasetCardData(
        pretty_name=run.export.pretty_name,
        license=run.export.license,
        task_categories=["audio-classification", "question-answering"],
        size_categories=[size_category(sum(rows for rows, _ in total.values()))],
        tags=["audio", "psychoacoustics", "benchmark", "recorded" if run.audio.source.recorded else "synthetic"],
        configs=[c for c, _ in pairs],
        dataset_info=[i for _, i in pairs],
    )


def levels_text(task) -> str:
    """The task's level values, each run of one unit followed by that unit once: ``3, 6 LU · 0.5, 1 s``.

    Parameters
    ----------
    task : Task
        A built task, whose design gives the level values and units.

    Returns
    -------
    str
        The values in level order, formatted with ``:g``.
    """
    groups: list[tuple[str, list[str]]] = []
    for i in range(task.design.n_levels()):
        unit = task.design.level_info(i).unit
        if not groups or groups[-1][0] != unit:
            groups.append((unit, []))
        groups[-1][1].append(f"{task.design.level_value(i):g}")
    return " · ".join(f"{', '.join(values)} {unit}" for unit, values in groups)


def provenance(run) -> list[str]:
    """Where the items come from: the public seed (regenerate them), or a secret one (only a commitment is public).

    Parameters
    ----------
    run : RunConfig
        The run's configuration (``seed``, ``suite``, ``seed_secret``).

    Returns
    -------
    list of str
        Markdown lines, ending with a blank line.
    """
    if getattr(run, "seed_secret", False):
        return [
            f"Generated by auralgen {__version__} with a secret seed (suite `{run.suite}`): no public file holds",
            "it, so the items cannot be regenerated from this directory; `manifest.json` holds a commitment to",
            "it (`seed_commitment`). The `seed` column reads -1.",
            "",
        ]
    return [
        f"Generated by auralgen {__version__} with seed {run.seed} (suite `{run.suite}`). Every item is computed",
        "from the config in `manifest.json` and the seed: regenerate it instead of downloading it.",
        "",
    ]


def validation_lines(report: dict | None) -> list[str]:
    """The card's account of every item, from the run's validation report
    (:func:`auralgen.generation.summary.summarise`): per task the items kept, the draws re-made because
    their measurement contradicted the label (by failed check) and the items dropped (by reason).

    Parameters
    ----------
    report : dict or None
        The validation report (``levels``, ``drop_reasons``, ``redraw_reasons``); None for none.

    Returns
    -------
    list of str
        Markdown lines of the Validation section; empty when the report has no levels.
    """
    counts: dict[str, dict] = {}
    for r in (report or {}).get("levels", ()):
        c = counts.setdefault(r["task"], {"kept": 0, "resampled": 0, "dropped": {}})
        c["kept"] += r["passed"]
        c["resampled"] += r["resampled"]
    if not counts:
        return []
    for key, n in report.get("drop_reasons", {}).items():
        task, _, reason = key.partition(": ")
        why = reason.split(":")[0]
        counts[task]["dropped"][why] = counts[task]["dropped"].get(why, 0) + n
    lines = [
        "",
        "## Validation",
        "",
        "Every item's label was checked by measuring its audio. An item whose measurement contradicted its",
        "label was drawn again (its own random stream, so the result does not depend on the workers) and,",
        "after `max_resample` tries, dropped. Re-draws are counted by the check that failed.",
        "",
        "| task | kept | re-drawn (failed checks) | dropped (reasons) |",
        "|---|---|---|---|",
    ]
    for name, c in sorted(counts.items()):
        checks = ", ".join(f"{k} {v}" for k, v in sorted(report.get("redraw_reasons", {}).get(name, {}).items()))
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(c["dropped"].items()))
        lines.append(
            f"| {name} | {c['kept']} | {c['resampled']}{f' ({checks})' if checks else ''} | "
            f"{sum(c['dropped'].values())}{f' ({dropped})' if dropped else ''} |"
        )
    return lines


def level_lines(tasks) -> list[str]:
    """The "Presentation level" section: each task's full scale (dB SPL of digital RMS 1.0) and what it means
    for playback (:func:`auralgen.tasks.base.task_audio`).

    Parameters
    ----------
    tasks : dict of str to Task
        The run's tasks by name.

    Returns
    -------
    list of str
        Markdown lines: the section's text and a table of full scale (dB SPL) per task.
    """
    lines = [
        "",
        "## Presentation level",
        "",
        "Digital RMS 1.0 stands for `full_scale_db_spl` dB SPL (stated in every recipe given in dB SPL, "
        "in `params`). A task whose attribute is not absolute level is *presented*: its full scale puts its "
        "sounds at a normal digital level (about -50 to -25 dBFS RMS, no sample clipping); play it at a "
        "comfortable level. A task about absolute level keeps the *calibrated* full scale: set the playback "
        "so that a full-scale sine (RMS 0.707) plays at the full scale minus 3 dB SPL, or its levels mean nothing.",
        "",
        "| task | full scale (dB SPL) | convention |",
        "|---|---|---|",
    ]
    for name, task in tasks.items():
        kind = "calibrated: set the playback level" if task.calibrated_level else "presented: a comfortable level"
        lines.append(f"| {name} | {task.audio.full_scale_db_spl:g} | {kind} |")
    return lines


def source_lines(sources: dict | None) -> list[str]:
    """The "Source recordings" section: every file of a recorded source with its license and
    attribution, and the files left out with the reason (``sources``: ``kind``, ``root``,
    ``files`` and ``skipped`` rows; None for procedural sounds, which need no section).

    Parameters
    ----------
    sources : dict or None
        ``kind``, ``root``, ``files`` (dicts with ``file``, ``label``, ``license``, ``attribution``)
        and ``skipped`` (``(file, reason)`` pairs); None for procedural sounds.

    Returns
    -------
    list of str
        Markdown lines of the section; empty when ``sources`` is None or empty.
    """
    if not sources:
        return []
    lines = [
        "",
        "## Source recordings",
        "",
        f"The sounds are recordings (`source={sources['kind']}`, root `{sources['root']}`); "
        f"every file the generator could draw, with its license and attribution:",
        "",
        "| file | label | license | attribution |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{r['file']}` | {r['label']} | {r['license']} | {r['attribution']} |" for r in sources["files"]]
    if sources.get("skipped"):
        lines += ["", "Left out: " + "; ".join(f"`{f}` ({why})" for f, why in sources["skipped"]) + "."]
    return lines


def body(run, tasks, sizes, report: dict | None = None, sources: dict | None = None) -> str:
    """The card's markdown below the front matter.

    Parameters
    ----------
    run : RunConfig
        The run's configuration (splits, seed, export settings).
    tasks : dict of str to Task
        The run's tasks by name.
    sizes : dict of str to dict of str to list of int
        Task to split to ``[rows, bytes]``, as :func:`split_sizes` returns.
    report : dict or None, optional
        The run's validation report, for the Validation section (none without it).
    sources : dict or None, optional
        The recorded source's files, for the Source recordings section (see :func:`source_lines`).

    Returns
    -------
    str
        Markdown text: title, provenance, tasks table, notes, sections, columns and loading example.
    """
    units = sorted({t.design.level_info(i).unit for t in tasks.values() for i in range(t.design.n_levels())})
    fill = {"units": ", ".join(f"`{u}`" for u in units), "bits": run.export.flac_bits}
    lines = [
        f"# {run.export.pretty_name}",
        "",
        *provenance(run),
        f"Configs: `{DEFAULT_CONFIG}` (the default: every task) and one per task.",
        "",
        "## Tasks",
        "",
        "| task | attribute | regime | levels | " + " | ".join(run.splits) + " |",
        "|---|---|---|---|" + "---|" * len(run.splits),
    ]
    for name, task in tasks.items():
        counts = " | ".join(str(sizes.get(name, {}).get(s, [0, 0])[0]) for s in run.splits)
        lines.append(f"| {name} | {task.attribute} | {task.regime} | {levels_text(task)} | {counts} |")
    notes = [f"- **{name}**: {task.card_note}" for name, task in tasks.items() if task.card_note]
    lines += ["", "## What the labels mean", "", *notes] if notes else []
    lines += level_lines(tasks)
    lines += validation_lines(report)
    lines += source_lines(sources)
    lines += ["", "## Columns", "", "| column | unit | meaning |", "|---|---|---|"]
    for c in columns():  # the item schema states each unit once; the card nowhere else
        lines.append(f"| `{c.name}` | {c.unit} | {c.doc.format(**fill)} |")
    lines += ["", "## Loading", "", LOADING, ""]
    return "\n".join(lines)


def write_card(
    out: Path, run, tasks, records, report: dict | None = None, sources: dict | None = None, opener=None
) -> None:
    """Write ``out/README.md``: the Hub YAML front matter (via ``huggingface_hub``) and the body
    (with ``report``, the run's validation report, its Validation table).

    Parameters
    ----------
    out : Path
        The dataset folder (local); ``README.md`` is saved there.
    run : RunConfig
        The run's configuration.
    tasks : dict of str to Task
        The run's tasks by name.
    records : iterable of dict
        Shard records with ``path``, ``task``, ``split`` and ``rows``.
    report : dict or None, optional
        The run's validation report, for the Validation section.
    sources : dict or None, optional
        The recorded source's files, for the Source recordings section (see :func:`source_lines`).
    opener : callable or None, optional
        Opens a shard by relative path (see :func:`split_sizes`); None reads the files under ``out``.
    """
    sizes = split_sizes(out, records, opener)
    data = card_data(run, tasks, sizes)
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body(run, tasks, sizes, report, sources)}")
    card.save(Path(out) / "README.md")
