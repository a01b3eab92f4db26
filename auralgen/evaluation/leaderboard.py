"""The leaderboard: one markdown table per dataset, rows keyed by the dataset's fingerprint.

A leaderboard is a markdown file (default ``<out>/leaderboard.md``, or ``leaderboard=PATH``)
rendered from a store beside it (``<name>.json``: ``{"runs": {<out folder>: results}}``).
Each ``evaluate`` run upserts its own row, keyed by its ``out`` folder; a failed run (see
``eval.max_error_rate``) removes its row. Rows are grouped by ``dataset.key`` -- the SHA-256
of the dataset's ``manifest.json`` (which names every shard by its hash), the split and the
items asked -- so runs on different data never share a table. Plots go to
``<name>_plots/<key>/`` with safe file names; the markdown links to them relatively.

Each table ends with the chance rows: the **honest chance** (the best audio-free rule's AA /
ACR, :mod:`.chance`) and the stated chance (``1/options``). The store also holds the learned
**audio-free controls** (:mod:`auralgen.validation.controls`, ``store["controls"]`` keyed by the
tested dataset's manifest SHA-256; :func:`update_controls`): each control is one row, marked
*audio-free control*, in the table of every run on that dataset, with its per-task accuracy in
the models' AA column (one answer per item, in canonical option order: no rotation, so no ACR).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections import defaultdict
from pathlib import Path

from auralgen.core.errors import ParameterError
from auralgen.tasks.base import task_class
from auralgen.validation.controls import CONTROLS

from .plots import plot_audiogram, plot_psychometric, plot_task_bars
from .report import _pct, _thr, audiogram_levels, fit_from_json, frequency_tasks, safe_name, write_json

__all__ = [
    "adaptive_table",
    "control_rows",
    "rebuild_leaderboard",
    "render_leaderboard",
    "update_adaptive",
    "update_controls",
    "update_human",
    "update_leaderboard",
]

CONTROL_KIND = "audio-free control"

NOTE = (
    "AA / ACR in %, circular evaluation (AA: mean over rotations; ACR: items right under every rotation). "
    "Macro = mean over sub-categories (STAR-Bench). Unparseable, refused and failed answers count as wrong; "
    "`errors` = questions with no reply, `acc. answered` = accuracy over the answered questions only."
)


def _store_path(path: Path) -> Path:
    return path.with_name(path.stem + ".json")


def _load_store(path: Path) -> dict:
    """The runs of the store beside ``path`` (``{}`` when there is none)."""
    return _load(path)["runs"]


def _load_controls(path: Path) -> dict:
    """The controls of the store beside ``path``: ``{manifest SHA-256: entry}`` (see :func:`update_controls`)."""
    return _load(path)["controls"]


def _write_store(path: Path, runs: dict, controls: dict, adaptive: dict | None = None) -> None:
    """Write the store; ``adaptive`` None keeps the adaptive runs it holds."""
    old = _load(path)
    adaptive = old["adaptive"] if adaptive is None else adaptive
    path.parent.mkdir(parents=True, exist_ok=True)
    store = {"runs": runs, "controls": controls, "adaptive": adaptive}
    write_json(_store_path(path), store | ({"human": old["human"]} if old["human"] else {}))


def _load(path: Path) -> dict:
    store = _store_path(path)
    if not store.exists():
        return {"runs": {}, "controls": {}, "adaptive": {}, "human": {}}
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
        return {
            "runs": dict(data["runs"]),
            "controls": dict(data.get("controls", {})),
            "adaptive": dict(data.get("adaptive", {})),
            "human": dict(data.get("human", {})),
        }
    except (ValueError, KeyError, TypeError) as exc:
        raise ParameterError(
            f"leaderboard store {str(store)!r} is unreadable ({exc}); allowed: a file written by evaluate.py "
            "(delete it and run action=leaderboard to rebuild)"
        ) from None


def update_leaderboard(path: str | os.PathLike, out: str | os.PathLike, results: dict | None) -> Path:
    """Put ``results`` as the row of run ``out`` (``None``: remove that row), then render ``path``.

    Parameters
    ----------
    path : str or PathLike
        The leaderboard markdown file; its store is ``<stem>.json`` beside it.
    out : str or PathLike
        The run's output folder; its resolved path keys the row.
    results : dict or None
        The run's ``results.json`` content; None removes the row (a failed run).

    Returns
    -------
    Path
        ``path``, rendered with or without the run's row.
    """
    path = Path(path)
    runs, controls = _load_store(path), _load_controls(path)
    key = str(Path(out).resolve())
    if results is None:
        runs.pop(key, None)
    else:
        runs[key] = results
    _write_store(path, runs, controls)
    return render_leaderboard(path, runs, controls)


def update_controls(path: str | os.PathLike, report: dict, manifest_sha256: str) -> Path:
    """Store the learned controls ``report`` (``ControlsReport.to_dict()``) as tested on the dataset
    whose ``manifest.json`` has SHA-256 ``manifest_sha256`` (16 hex digits, as in a run's
    ``dataset.manifest_sha256``), then render ``path``; runs on that dataset show them as rows.

    Parameters
    ----------
    path : str or PathLike
        As in :func:`update_leaderboard`.
    report : dict
        ``ControlsReport.to_dict()``: ``train``, ``test``, ``verdict``, ``tasks``, ``flags``, ``notes``.
    manifest_sha256 : str
        16 hex digits of the tested dataset's manifest (:func:`~.items.dataset_fingerprint`).

    Returns
    -------
    Path
        ``path``, rendered with the controls' rows.
    """
    path = Path(path)
    runs, controls = _load_store(path), _load_controls(path)
    controls[manifest_sha256] = {k: report[k] for k in ("train", "test", "verdict", "tasks", "flags", "notes")}
    _write_store(path, runs, controls)
    return render_leaderboard(path, runs, controls)


def update_adaptive(path: str | os.PathLike, out: str | os.PathLike, results: dict | None) -> Path:
    """Put the thresholds of the ``mode=adaptive`` run ``out`` (its ``adaptive.json``, with ``model``)
    in the leaderboard's adaptive table (``results`` None, a failed run: remove its row), then render ``path``.

    Parameters
    ----------
    path : str or PathLike
        As in :func:`update_leaderboard`.
    out : str or PathLike
        The adaptive run's output folder; its resolved path keys the row.
    results : dict or None
        The run's ``adaptive.json`` content (``model``, ``tracks``); None removes the row.

    Returns
    -------
    Path
        ``path``, rendered with the run's adaptive row.
    """
    path = Path(path)
    store = _load(path)
    if results is None:
        store["adaptive"].pop(str(Path(out).resolve()), None)
    else:
        store["adaptive"][str(Path(out).resolve())] = _adaptive_entry(results)
    _write_store(path, store["runs"], store["controls"], store["adaptive"])
    return render_leaderboard(path, store["runs"], store["controls"])


def _adaptive_entry(results: dict) -> dict:
    keep = (
        "threshold",
        "ci95",
        "n_trials",
        "message",
        "bound",
        "bound_side",
        "human_jnd",
        "human_jnd_unit",
        "human_jnd_source",
        "questions",
        "tokens",
    )
    return {
        "model": results.get("model", {}),
        "replay": results.get("replay", False),
        "tracks": {
            name: {k: t.get(k) for k in keep} | {"unit": t.get("domain", {}).get("unit", "")}
            for name, t in results["tracks"].items()
        },
    }


def update_human(path: str | os.PathLike, human: dict) -> Path:
    """Put the pooled thresholds of a human listening study (``auralgen listen report``: ``{"n", "tracks"}``)
    in the adaptive table -- a "human (n = N, same stimuli)" row and a model/human ratio column -- then
    render ``path``. Without a call, no human figure other than the cited literature appears.

    Parameters
    ----------
    path : str or PathLike
        As in :func:`update_leaderboard`.
    human : dict
        The study's pooled entry (``auralgen.listen.report.human_entry``): ``n`` (participants) and
        ``tracks`` (thresholds per track), optionally ``fixed`` (accuracy on a dataset's items).

    Returns
    -------
    Path
        ``path``, rendered with the human row and ratio column.
    """
    path = Path(path)
    store = _load(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(_store_path(path), {**store, "human": human})
    return render_leaderboard(path, store["runs"], store["controls"])


def rebuild_leaderboard(root: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Render ``path`` from every finished ``<root>/results.json`` and ``<root>/*/results.json``.

    Parameters
    ----------
    root : str or PathLike
        A run folder, or a folder of run folders (``results.json`` and ``adaptive.json`` are read).
    path : str or PathLike
        As in :func:`update_leaderboard`.

    Returns
    -------
    Path
        ``path``, rendered from the runs found under ``root``.

    Raises
    ------
    ParameterError
        A results file is unreadable, or ``root`` holds no finished run.
    """
    runs = {}
    for name in sorted(glob.glob(f"{root}/results.json") + glob.glob(f"{root}/*/results.json")):
        try:
            res = json.loads(Path(name).read_text(encoding="utf-8"))
            res["model"]["label"], res["scores"]["macro"]["AA"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ParameterError(
                f"results file {name!r} is unreadable ({exc}); allowed: results.json written by evaluate.py"
            ) from None
        if res.get("status", "ok") == "ok":
            runs[str(Path(name).parent.resolve())] = res
    adaptive = {}
    for n in sorted(glob.glob(f"{root}/adaptive.json") + glob.glob(f"{root}/*/adaptive.json")):
        res = json.loads(Path(n).read_text(encoding="utf-8"))
        if res.get("status", "ok") == "ok":  # a failed run (too many questions without reply) has no row
            adaptive[str(Path(n).parent.resolve())] = _adaptive_entry(res)
    if not runs and not adaptive:
        raise ParameterError(
            f"out={str(root)!r} holds no results.json or adaptive.json of a finished run; "
            "allowed: a folder of evaluate.py runs"
        )
    path = Path(path)
    controls = _load_controls(path)  # the controls are not runs: kept from the store
    _write_store(path, runs, controls, adaptive)
    return render_leaderboard(path, runs, controls)


def _dataset_key(res: dict) -> str:
    """The run's dataset key; results without one (scored prediction files) get one per source path."""
    ds = res.get("dataset", {})
    if ds.get("key"):
        return str(ds["key"])
    return "unfingerprinted_" + hashlib.sha256(str(ds.get("path")).encode()).hexdigest()[:8]


def render_leaderboard(path: Path, runs: dict[str, dict], controls: dict[str, dict] | None = None) -> Path:
    """Write ``path``: one section per dataset key, models by macro AA (best first), then the
    audio-free controls tested on that dataset (``controls``: see :func:`update_controls`) and chance.

    Parameters
    ----------
    path : Path
        The leaderboard markdown file; plots go to ``<stem>_plots/`` beside it.
    runs : dict of str to dict
        Run folder to its ``results.json`` content.
    controls : dict of str to dict or None, optional
        Tested dataset's manifest SHA-256 (16 hex digits) to its stored controls entry.

    Returns
    -------
    Path
        ``path``, the file written.
    """
    groups: dict[str, dict[str, dict]] = defaultdict(dict)
    for out, res in runs.items():
        label = res["model"]["label"]
        group = groups[_dataset_key(res)]
        group[label if label not in group else f"{label} ({Path(out).name})"] = res
    lines, store = ["# auralgen leaderboard", "", NOTE], _load(path)
    if not groups:
        lines += ["", "No finished run yet."]
    for key, group in sorted(groups.items()):
        ranked = dict(sorted(group.items(), key=lambda kv: -(kv[1]["scores"]["macro"]["AA"] or 0.0)))
        plot_dir = path.parent / f"{safe_name(path.stem)}_plots" / safe_name(key)
        ds = next(iter(ranked.values()))["dataset"]
        tested = (controls or {}).get(str(ds.get("manifest_sha256")))
        lines += ["", *_section(key, ranked, plot_dir, path.parent, tested, store["human"].get("fixed"))]
    lines += adaptive_table(store["adaptive"], store["human"])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _section(
    key: str, runs: dict[str, dict], plot_dir: Path, base: Path, controls: dict | None, human: dict | None = None
) -> list[str]:
    ds = next(iter(runs.values()))["dataset"]
    lines = [
        f"## Dataset `{key}`",
        "",
        f"`{ds.get('path')}`, split `{ds.get('split')}`, {ds.get('items')} items, "
        f"manifest SHA-256 `{ds.get('manifest_sha256', 'unknown')}`.",
        "",
    ]
    tasks = sorted({t for r in runs.values() for t in r["scores"]["by_task"]})
    head = ["model", "kind", "macro AA", "macro ACR", *[f"{t} AA / ACR" for t in tasks]]
    head += ["unparseable %", "errors", "acc. answered %"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, r in runs.items():
        bt = r["scores"]["by_task"]
        acc = r["accounting"]["overall"]
        macro = r["scores"]["macro"]  # AA and ACR to two decimals, as the peers' scripts print them
        row = [label, r["model"].get("kind", ""), _pct(macro["AA"], 2), _pct(macro["ACR"], 2)]
        row += [f"{_pct(bt[t]['AA'], 2)} / {_pct(bt[t]['ACR'], 2)}" if t in bt else "–" for t in tasks]
        row += [_pct(acc["unparseable"] / acc["asked"] if acc["asked"] else None), f"{acc['error']} of {acc['asked']}"]
        row += [_pct(acc.get("accuracy_over_answered"))]
        lines.append("| " + " | ".join(row) + " |")
    rows = control_rows(controls) if controls else {}
    for label, row in rows.items():
        cells = [f"{_pct(row['by_task'][t])} / –" if t in row["by_task"] else "–" for t in tasks]
        lines.append(
            f"| *{label}* | {CONTROL_KIND} | {_pct(row['macro_AA'])} | – | " + " | ".join(cells) + " | – | – | – |"
        )
    lines += _human_fixed_row(human, ds, tasks)
    lines += _chance_rows(runs, tasks)
    if controls:
        lines += [
            "",
            f"*{CONTROL_KIND}s*: never hear the audio; trained on `{controls['train']}`, tested on every item "
            f"of `{controls['test']}` (one answer per item, canonical option order); verdict "
            f"**{controls['verdict']}** (`python -m auralgen.validation controls TRAIN TEST` gives the table "
            "with 95 % intervals and the minimum detectable effect).",
        ]
    lines += _threshold_tables(runs)
    plots = _plots(runs, plot_dir)
    if plots:
        rel = plot_dir.relative_to(base).as_posix()
        lines += ["", "### Plots", ""] + [f"![{p}]({rel}/{p})" for p in plots]
    return lines


def adaptive_table(adaptive: dict[str, dict], human: dict | None = None) -> list[str]:
    """The thresholds of the ``mode=adaptive`` runs, one row per run and one column per track, then
    the published human threshold of each track's attribute (``[]`` without any adaptive run). With
    ``human`` (:func:`update_human`): a row of the people measured on the same stimuli and a column of
    each model's threshold over theirs.

    Parameters
    ----------
    adaptive : dict of str to dict
        Run folder to its stored adaptive entry (``model``, ``tracks``).
    human : dict or None, optional
        The stored human study (``n``, ``tracks``), or None.

    Returns
    -------
    list of str
        Markdown lines (a heading, the table and its sources), empty when there is nothing to show.
    """
    if not adaptive and not human:
        return []
    people = (human or {}).get("tracks", {})
    tracks = sorted({t for a in adaptive.values() for t in a["tracks"]} | set(people), key=_track_order)
    ratio = ["model / human threshold"] if people else []
    lines = [
        "",
        "## Thresholds measured adaptively (`mode=adaptive`, QUEST+, 75 % correct, 95 % interval)",
        "",
        "| model | " + " | ".join(tracks + ratio) + " |",
        "|" + "---|" * (len(tracks) + len(ratio) + 1),
    ]
    for out, a in sorted(adaptive.items()):
        label = a["model"].get("label") or Path(out).name
        cells = [_adaptive_cell(a["tracks"].get(t)) for t in tracks] + ([_ratio(a["tracks"], people)] if people else [])
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if people:
        cells = [_human_cell(people.get(t)) for t in tracks]
        lines.append(f"| *human (n = {human['n']}, same stimuli)* | " + " | ".join(cells) + " | |")
    human = {t: next((a["tracks"][t] for a in adaptive.values() if t in a["tracks"]), {}) for t in tracks}
    cells = [
        f"{h['human_jnd']:g} {h['human_jnd_unit']}" if h.get("human_jnd") is not None else "–" for h in human.values()
    ]
    lines.append("| *human (published)* | " + " | ".join(cells + ([""] if people else [])) + " |")
    sources = sorted({h["human_jnd_source"] for h in human.values() if h.get("human_jnd_source")})
    return lines + ["", "Human thresholds: " + "; ".join(sources) + "." if sources else ""]


def _human_fixed_row(human: dict | None, ds: dict, tasks: list[str]) -> list[str]:
    """The people's accuracy on this dataset's items (one presentation each, options shuffled), when a listening
    study's fixed block used the same dataset (manifest) and split; macro as the models'."""
    if not human or human.get("manifest_sha256") != ds.get("manifest_sha256") or human.get("split") != ds.get("split"):
        return []
    by_task, pooled = human["by_task"], defaultdict(lambda: [0, 0])
    for t, c in by_task.items():
        sub = pooled[_sub_category(t)]
        sub[0], sub[1] = sub[0] + c["correct"], sub[1] + c["n"]
    macro = [k / n for k, n in pooled.values() if n]
    cells = [f"{_pct(by_task[t]['accuracy'])} / –" if t in by_task else "–" for t in tasks]
    label = f"*human (n = {human['n']}, same stimuli)*"
    return [f"| {label} | people | {_pct(sum(macro) / len(macro))} | – | " + " | ".join(cells) + " | – | – | – |"]


def _ratio(model: dict, people: dict) -> str:
    """``track r×`` for each track where both the model and the people have a threshold."""
    parts = [
        f"{t} {m['threshold'] / people[t]['threshold']:.2g}×"
        for t, m in sorted(model.items())
        if m.get("threshold") and (people.get(t) or {}).get("threshold")
    ]
    return "; ".join(parts) or "–"


def _human_cell(t: dict | None) -> str:
    if not t or t.get("threshold") is None:
        return "–"
    lo, hi = t["ci95"]
    return f"{t['threshold']:.3g} {t['unit']} [{lo:.3g}, {hi:.3g}] (n = {t['n']})"


def _track_order(name: str) -> tuple[str, float]:
    """Tasks by name, an audiogram's tracks (``audiogram@1000Hz``) by frequency."""
    task, _, freq = name.partition("@")
    return task, float(freq.removesuffix("Hz") or 0)


def _adaptive_cell(t: dict | None) -> str:
    if not t:
        return "–"
    if t.get("bound") is not None:  # past the hardest level tested: a bound, not a number
        return f"{t.get('bound_side') or '<'} {t['bound']:g} {t['unit']} ({_cost(t)})"
    if t.get("threshold") is None:
        return f"{t.get('message') or 'no threshold'} ({_cost(t)})"
    lo, hi = t["ci95"]
    return f"{t['threshold']:.3g} {t['unit']} [{lo:.3g}, {hi:.3g}] ({_cost(t)})"


def _cost(t: dict) -> str:
    """What a threshold cost: answered trials, questions asked (with the unanswered ones), tokens if reported."""
    out = f"{t.get('n_trials')} trials"
    asked = (t.get("questions") or {}).get("asked")
    if asked is not None:
        out += f", {asked} questions"
    if t.get("tokens"):
        out += f", {t['tokens']['total_tokens']} tokens"
    return out


def _chance_rows(runs: dict[str, dict], tasks: list[str]) -> list[str]:
    """The honest chance (best audio-free rule, AA / ACR) and the stated chance (``1/options``) per task."""
    honest, stated = {}, {}
    for r in runs.values():
        for t, s in r["scores"]["by_task"].items():
            if s.get("chance") is not None:
                honest[t] = (s["chance"], s.get("chance_ACR"))
            if s.get("stated_chance", s.get("chance")) is not None:  # older results: chance was 1/options
                stated[t] = s.get("stated_chance", s.get("chance"))
    cells = [f"{_pct(honest[t][0])} / {_pct(honest[t][1])}" if t in honest else "– / –" for t in tasks]
    row = ["| *chance* | best audio-free rule | | | " + " | ".join(cells) + " | | | |"]
    return row + [
        "| *chance* (stated) | 1/options | | | " + " | ".join(f"{_pct(stated.get(t))} / –" for t in tasks) + " | | | |"
    ]


def control_rows(controls: dict) -> dict[str, dict]:
    """One row per learned control from a stored controls entry (:func:`update_controls`):
    ``{"control: <name>": {"by_task": {task: accuracy}, "macro_AA"}}``. The macro AA is the
    models' macro: accuracy pooled within each sub-category (``Task.sub_category``; an unknown task
    is its own), then the unweighted mean over the sub-categories.

    Parameters
    ----------
    controls : dict
        One stored controls entry; its ``tasks`` lists per task ``task``, ``n`` and ``controls``
        (per control ``accuracy`` and ``correct``).

    Returns
    -------
    dict of str to dict
        ``"control: <name>"`` to ``{"by_task": {task: accuracy in [0, 1]}, "macro_AA": float or None}``.
    """
    out = {}
    names = [c for c in CONTROLS if any(c in t["controls"] for t in controls["tasks"])]
    for name in names:
        by_task, pooled = {}, defaultdict(lambda: [0, 0])
        for t in controls["tasks"]:
            if name not in t["controls"]:
                continue
            c = t["controls"][name]
            by_task[t["task"]] = c["accuracy"]
            sub = pooled[_sub_category(t["task"])]
            sub[0], sub[1] = sub[0] + c["correct"], sub[1] + t["n"]
        macro = [k / n for k, n in pooled.values() if n]
        out[f"control: {name}"] = {"by_task": by_task, "macro_AA": sum(macro) / len(macro) if macro else None}
    return out


def _sub_category(task: str) -> tuple[str, str]:
    try:
        cls = task_class(task)
    except ParameterError:
        return ("", task)
    return (cls.category, cls.sub_category)


def _threshold_tables(runs: dict[str, dict]) -> list[str]:
    lines = []
    rel = sorted({t for r in runs.values() for t in r["psychometric"]})
    if rel:
        lines += ["", "### Thresholds (psychometric fit, psignifit 4, 95 % credible interval)", ""]
        lines += ["| model | " + " | ".join(rel) + " |", "|" + "---|" * (len(rel) + 1)]
        for label, r in runs.items():
            lines.append(f"| {label} | " + " | ".join(_thr(r["psychometric"].get(t)) for t in rel) + " |")
    tasks = frequency_tasks()
    for task in tasks:
        name = "" if len(tasks) == 1 else f" of {task}"
        grams = {label: r for label, r in runs.items() if r.get(task)}
        lines += _frequency_table(name, task, grams)
    return lines


def _frequency_table(name: str, task: str, runs: dict[str, dict]) -> list[str]:
    """The per-frequency thresholds of ``task`` (an audiogram), one row per model; ``[]`` without any.
    With the tested levels stored, a threshold at the lowest level reads "≤ L" and none "> H"."""
    if not runs:
        return []
    freqs = sorted({float(f) for r in runs.values() for f in r[task]})
    unit = task_class(task).level_unit
    lines = ["", f"### Audiogram{name} ({unit}; ≤ L: heard at the lowest level L, > H: not heard at the "]
    lines[-1] += "highest level H, – = no level reached the criterion)"
    lines += ["", "| model | " + " | ".join(f"{f:g} Hz" for f in freqs) + " |", "|" + "---|" * (len(freqs) + 1)]
    for label, r in runs.items():
        vals, levels = {float(f): v for f, v in r[task].items()}, audiogram_levels(r, task)
        cells = [_audiogram_cell(vals.get(f), levels.get(f)) for f in freqs]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _audiogram_cell(value: float | None, levels: tuple[float, float] | None) -> str:
    if levels is None:
        return "–" if value is None else f"{value:g}"
    if value is None:
        return f"> {levels[1]:g}"
    return f"≤ {value:g}" if value <= levels[0] else f"{value:g}"


def _plots(runs: dict, plot_dir: Path) -> list[str]:
    written = []
    plot_task_bars({label: r["scores"] for label, r in runs.items()}, plot_dir / "task_bars.png")
    written.append("task_bars.png")
    for task in sorted({t for r in runs.values() for t in r["psychometric"]}):
        fits = {
            label: fit_from_json(r["psychometric"][task])
            for label, r in runs.items()
            if r["psychometric"].get(task, {}).get("threshold_status", "not_fitted") != "not_fitted"
        }
        if fits:
            unit = next(r["psychometric"][task]["unit"] for r in runs.values() if task in r["psychometric"])
            name = f"psychometric_{safe_name(task)}.png"
            plot_psychometric(fits, plot_dir / name, x_label=f"{task} difference ({unit})")
            written.append(name)
    for task in frequency_tasks():
        grams = {label: {float(f): v for f, v in r[task].items()} for label, r in runs.items() if r.get(task)}
        if grams:
            levels = {label: audiogram_levels(r, task) for label, r in runs.items() if r.get(task)}
            plot_audiogram(grams, plot_dir / f"{safe_name(task)}.png", levels_by_model=levels)
            written.append(f"{safe_name(task)}.png")
    return written
