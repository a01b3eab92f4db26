"""STAR-Bench interop checked with STAR-Bench's own code (github InternLM/StarBench, ALMEval_code).

The toolkit's ``datasets`` package is read from the peers folder (``tests/support/peers.py``;
copied into a tmp dir, loaded under another package name); ``torch`` and ``loguru``, which it imports only for a base
class and
a logger, get minimal stand-in modules. Its ``build_dataset`` loads our export for every alias, its
``build_prompt`` / ``evaluate_item`` / ``evaluate`` make a run of a scripted "model", and our
``score_predictions`` must reproduce its ``performance.json`` byte for byte with ``scorer=file``.
Where the clone is absent the tests skip, and the run's summary counts them (``make peers`` fetches it).
"""

import importlib.util
import json
import re
import shutil
import sys
import types
from pathlib import Path

import pytest

from auralgen.cli._hydra import compose
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.interop import starbench
from auralgen.evaluation.items import load_items
from auralgen.evaluation.parsing import rotate_options
from auralgen.evaluation.runner import run
from auralgen.generation.run import run as generate
from tests.support.builders import small_run
from tests.support.peers import peer

QUIET = lambda *_: None  # noqa: E731
ALIASES = ["pc", "pc_sp", "pc_nsp", "tr", "tr_cap", "tr_uncut", "sr", "sr_ch"]


def _stand_ins():
    torch = types.ModuleType("torch")
    torch.utils = types.ModuleType("torch.utils")
    torch.utils.data = types.ModuleType("torch.utils.data")
    torch.utils.data.Dataset = type("Dataset", (), {})
    loguru = types.ModuleType("loguru")
    loguru.logger = types.SimpleNamespace(info=QUIET, warning=QUIET, error=QUIET)
    return {"torch": torch, "torch.utils": torch.utils, "torch.utils.data": torch.utils.data, "loguru": loguru}


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory):
    """STAR-Bench's ``datasets`` package, imported as ``sb_almeval_datasets``."""
    src = peer("StarBench") / "ALMEval_code" / "datasets"
    pkg = tmp_path_factory.mktemp("almeval") / "sb_almeval_datasets"
    pkg.mkdir()
    for name in ("__init__.py", "starbench.py", "utils.py"):
        shutil.copyfile(src / name, pkg / name)
    stand_ins = {k: v for k, v in _stand_ins().items() if k not in sys.modules}
    sys.modules.update(stand_ins)  # only while the toolkit imports: other libraries probe sys.modules for torch
    try:
        spec = importlib.util.spec_from_file_location(
            "sb_almeval_datasets", pkg / "__init__.py", submodule_search_locations=[str(pkg)]
        )
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sb_almeval_datasets"] = mod
        spec.loader.exec_module(mod)
    finally:
        for k in stand_ins:
            sys.modules.pop(k, None)
    yield mod
    for k in [k for k in sys.modules if k.startswith("sb_almeval_datasets")]:
        sys.modules.pop(k)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A split with foundational (spatial and not), temporal-reorder and holistic spatial items, exported."""
    data = tmp_path_factory.mktemp("sb_data")
    overrides = ["suite=spatial"] + [
        f"~tasks.{t}"
        for t in (
            "elevation_absolute",
            "elevation_relative",
            "distance_absolute",
            "distance_relative",
            "azimuth_relative",
        )
    ]
    overrides += ["+task@tasks.temporal_reorder=temporal_reorder", "+task@tasks.pitch_relative=pitch_relative"]
    overrides += [f"tasks.{t}.items_per_level=1" for t in ("azimuth_absolute", "trajectory", "pitch_relative")]
    overrides += ["tasks.temporal_reorder.items_per_level=2"]
    generate(small_run(*overrides, out=data, workers=1), log=QUIET)
    out = tmp_path_factory.mktemp("sb_export")
    res = run(
        validate_eval(compose(["action=export", f"data={data}", f"out={out}"], config_name="evaluate")), log=QUIET
    )
    return data, out, res


def _reply(meta: dict, k: int) -> str:
    """A scripted model: right, wrong, or said in ways the two parsers read differently."""
    letter = meta["answer_letter"][1]
    wrong = "AB"[letter == "A"]
    return [
        f"<{letter}>",
        f"The answer is {wrong}.",
        f'{{"answer": "{letter.lower()}"}}',
        f"I think {letter}.",
        f"Not {letter}; going with {wrong}",
        "I cannot listen to audio.",
    ][k % 6]


def _toolkit_run(toolkit, root: Path, alias: str, work: Path) -> tuple[Path, dict]:
    """A run.py-style robust run of ``alias``: infer_results.jsonl and the toolkit's performance."""
    (ds,) = toolkit.build_dataset([alias], dataset_root=str(root))
    rows, k = [], 0
    for item in ds.data:
        runs = len(item["options"]) if alias.startswith("pc") else 3
        for r in range(runs):
            msg = ds.build_prompt(item, rotate_id=r)
            for p in msg["prompts"]:
                assert p["type"] == "text" or Path(p["value"]).is_file(), (alias, p)
            res = ds.evaluate_item(msg["meta"], _reply(msg["meta"], k))
            res["unique_id"] = f"{item['id']}@{r}"
            rows.append(res)
            k += 1
    path = work / "model" / alias / "infer_results.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows))
    return path, ds.evaluate(str(path))


def test_every_alias_loads_with_the_toolkits_own_build_dataset(toolkit, exported):
    data, out, res = exported
    sets = {a: toolkit.build_dataset([a], dataset_root=str(out))[0] for a in ALIASES}
    by_task = {}
    for a in ("pc_sp", "pc_nsp", "tr", "sr"):
        for row in sets[a].data:
            by_task.setdefault(row["task"], set()).add(a)
    spatial = {t for t, (a,) in by_task.items() if a in ("pc_sp", "sr")}
    assert {t: a.pop() for t, a in by_task.items()} == {
        "azimuth_absolute": "pc_sp",
        "pitch_relative": "pc_nsp",
        "temporal_reorder": "tr",
        "trajectory": "sr",
    }
    assert spatial == {"azimuth_absolute", "trajectory"}
    assert len(sets["pc"].data) == len(sets["pc_sp"].data) + len(sets["pc_nsp"].data)
    assert res["files"]["tr"] == 6 and res["sr_ch_split"] == res["files"]["sr"] > 0
    for a in ALIASES:  # every prompt of every alias builds, every audio it names exists
        for item in sets[a].data:
            for r in range(3):
                msg = sets[a].build_prompt(item, rotate_id=r)
                assert all(p["type"] == "text" or Path(p["value"]).is_file() for p in msg["prompts"])


def test_reorder_items_are_shuffled_by_the_toolkit_and_its_answer_is_the_true_order(toolkit, exported):
    """For every run the toolkit makes, its recomputed answer lists the shown clips in the order the
    stored item says they happened (the exported clips keep their stored index in the file name)."""
    data, out, _ = exported
    items = {it.id: it for it in load_items(data)}
    (ds,) = toolkit.build_dataset(["tr"], dataset_root=str(out))
    orders = set()
    for row in ds.data:
        it = items[row["id"].split("_")[0]]
        happened = [int(n) - 1 for n in re.findall(r"\d+", it.answer)]  # stored clip indices, in time order
        for r in range(3):
            msg = ds.build_prompt(row, rotate_id=r)
            shown = [int(Path(p["value"]).stem.rsplit("_", 1)[1]) for p in msg["prompts"] if p["type"] == "audio"]
            told = [int(n) for n in re.findall(r"\d+", msg["meta"]["answer"])]  # shown positions, in time order
            assert [shown[j - 1] for j in told] == happened
            assert msg["meta"]["answer"] in row["options"] and len(set(row["options"])) == 6
            # the order the toolkit shows is the documented one (what auralgen's evaluator can adopt)
            assert [c - 1 for c in starbench.clip_order(it.id, [h + 1 for h in happened], r)] == shown
            orders.add(tuple(happened.index(c) for c in shown))
    assert len(orders) > 3  # the toolkit's round-robin spreads the clip orders


def test_our_evaluator_presents_what_the_toolkit_presents_at_the_same_rotation(toolkit, exported):
    """Rotation r means one thing: auralgen's presented options (foundation items) and clip order
    (reorder items) equal those the toolkit's own build_prompt shows for rotate_id r."""
    from auralgen.evaluation.prompts import present

    data, out, _ = exported
    items = {it.id: it for it in load_items(data)}
    (pc,) = toolkit.build_dataset(["pc"], dataset_root=str(out))
    for row in pc.data:
        item = items[row["id"]]
        for r in range(len(row["options"])):
            assert present(item, r).options == pc.build_prompt(row, rotate_id=r)["meta"]["options"]
    (tr,) = toolkit.build_dataset(["tr"], dataset_root=str(out))
    for row in tr.data:
        item = items[row["id"].split("_")[0]]
        for r in range(6):
            msg = tr.build_prompt(row, rotate_id=r)
            shown = [int(Path(p["value"]).stem.rsplit("_", 1)[1]) for p in msg["prompts"] if p["type"] == "audio"]
            ours = present(item, r)
            assert ours.clip_order == shown
            # the same options in the same order (each a sequence of shown positions), so the same letter
            assert [_positions(o) for o in ours.options] == [_positions(o) for o in msg["meta"]["options"]]
            assert f"<{'ABCDEF'[ours.truth]}>" == msg["meta"]["answer_letter"]


def _positions(option: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", option)]


def test_every_exported_item_is_asked_as_often_as_the_toolkit_asks_it(toolkit, exported):
    """Runs per item: auralgen's default equals the toolkit run.py's robust evaluation (one per option
    for pc items, 3 for tr and sr items: the 4-option trajectory items get 3, not 4)."""
    from auralgen.evaluation.prompts import n_runs

    data, out, _ = exported
    items = {it.id: it for it in load_items(data)}
    counted = {}
    for alias in ("pc", "tr", "sr"):
        (ds,) = toolkit.build_dataset([alias], dataset_root=str(out))
        for row in ds.data:
            item = items[row["id"].split("_")[0]]
            theirs = len(row["options"]) if alias.startswith("pc") else 3  # run.py's params_list
            assert n_runs(item, rotations=None, reorder_runs=3) == theirs, (item.task, alias)
            counted[item.task] = theirs
    assert counted["trajectory"] == 3 and any(len(it.options) == 4 for it in items.values() if it.task == "trajectory")


TABLE_MODEL = """
import json, sys
table = json.load(open(sys.argv[1]))
for line in sys.stdin:
    m = json.loads(line)
    key = m["meta"]["id"] + "@" + str(m["meta"]["rotate_id"])
    print(json.dumps({"id": m["id"], "reply": table.get(key, "no such run")}), flush=True)
"""


def test_auralgen_and_the_toolkit_score_the_same_replies_alike(toolkit, exported, tmp_path):
    """The toolkit's own run (build_prompt for every run its run.py makes) and its evaluate, and
    auralgen's own evaluation of the same dataset given the same reply at each (item, rotation):
    every task's AA and ACR agree to the digits performance.json prints (so do the runs asked)."""
    from .test_harness import evaluate

    data, out, _ = exported
    table, theirs = {}, {}
    for alias in ("pc", "tr", "sr"):
        (ds,) = toolkit.build_dataset([alias], dataset_root=str(out))
        rows, k = [], 0
        for row in ds.data:
            for r in range(len(row["options"]) if alias == "pc" else 3):
                msg = ds.build_prompt(row, rotate_id=r)
                letter = msg["meta"]["answer_letter"][1]
                wrong = next(c for c in "ABCDEF" if c != letter)
                reply = f"<{letter if k % 3 else wrong}>"
                table[f"{row['id'].split('_')[0]}@{r}"] = reply
                res = ds.evaluate_item(msg["meta"], reply)
                res["unique_id"] = f"{row['id']}@{r}"
                rows.append(res)
                k += 1
        path = tmp_path / "model" / alias / "infer_results.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows))
        perf = ds.evaluate(str(path))
        for name, m in (perf["By Sub-category"] if alias == "pc" else {rows[0]["task"]: perf["Total"]}).items():
            theirs[name] = (m["AA"], m["ACR"])
    (tmp_path / "table.json").write_text(json.dumps(table))
    script = tmp_path / "table_model.py"
    script.write_text(TABLE_MODEL)
    res = evaluate(
        data, tmp_path / "ours", "model=command", f"model.cmd='{sys.executable} {script} {tmp_path / 'table.json'}'"
    )
    assert res["accounting"]["overall"]["asked"] == len(table) and res["accounting"]["overall"]["error"] == 0
    items = {it.task: it for it in load_items(data)}
    ours = {}
    for task, m in res["scores"]["by_task"].items():
        name = task if task in ("temporal_reorder", "trajectory") else items[task].sub_category
        ours[name] = (f"{100 * m['AA']:.2f}%", f"{100 * m['ACR']:.2f}%")
    assert ours == theirs and len(ours) == 4


@pytest.mark.parametrize("alias", ["pc", "pc_sp", "tr", "sr"])
def test_file_verdicts_reproduce_the_toolkits_performance_json(toolkit, exported, tmp_path, alias):
    _, out, _ = exported
    path, perf = _toolkit_run(toolkit, out, alias, tmp_path)
    (tmp_path / "theirs.json").write_text(json.dumps(perf, indent=4, ensure_ascii=False))
    res = run(
        validate_eval(
            compose(
                ["action=score_predictions", f"predictions={path}", "++scorer=file", f"out={tmp_path / 'ours'}"],
                config_name="evaluate",
            )
        ),
        log=QUIET,
    )
    assert (tmp_path / "ours" / "performance.json").read_bytes() == (tmp_path / "theirs.json").read_bytes()
    assert res["dataset"]["starbench_alias"] == alias
    v = res["verdicts"]
    # lowercase JSON is read by our parser only; "Not X; going with Y" fools the toolkit's keyword rule
    assert v["parser_right_toolkit_wrong"] > 0 and v["agree"] < v["answers"]
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert res["scores"]["overall"]["AA"] == pytest.approx(sum(r["is_correct"] for r in rows) / len(rows))
    parser = run(
        validate_eval(
            compose(
                ["action=score_predictions", f"predictions={path}", f"out={tmp_path / 'p'}"], config_name="evaluate"
            )
        ),
        log=QUIET,
    )
    assert parser["toolkit_scores"] == res["scores"] and parser["scores"] == res["parser_scores"]


def test_rotation_is_stored_in_auralgens_convention(toolkit, exported, tmp_path):
    data, out, _ = exported
    path, _ = _toolkit_run(toolkit, out, "pc", tmp_path)
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    items = {it.id: it for it in load_items(data)}
    recs, _ = starbench.records(rows, str(path), None)
    assert {r["starbench_rotate_id"] for r in recs} >= {0, 1, 2}
    for row, rec in zip(rows, recs, strict=True):
        assert rotate_options(list(items[row["id"]].options), rec["rotation"])[0] == row["options"]


def test_hedged_pitch_replies_the_toolkit_calls_correct_are_correct_in_every_number_we_print(
    toolkit, exported, tmp_path
):
    """A pc_nsp run whose replies hedge ("I can't hear the audio clearly, ..., but my best guess is
    <truth>"): the toolkit's own ``evaluate_item`` verdicts, and auralgen's scorer=file results.json,
    printed line, leaderboard and performance.json all give the toolkit's AA."""
    from auralgen.evaluation.leaderboard import rebuild_leaderboard

    _, out, _ = exported
    (ds,) = toolkit.build_dataset(["pc_nsp"], dataset_root=str(out))
    rows, k = [], 0
    for item in ds.data:
        for r in range(len(item["options"])):
            meta = ds.build_prompt(item, rotate_id=r)["meta"]
            truth = meta["options"]["ABCDEFGH".index(meta["answer_letter"][1])]
            reply = [
                f"I can't hear the audio clearly, it is faint, but my best guess is {truth}",
                "I cannot listen to audio.",
            ][k % 3 == 2]
            res = ds.evaluate_item(meta, reply)
            res["unique_id"] = f"{item['id']}@{r}"
            rows.append(res)
            k += 1
    assert rows and any(r["is_correct"] for r in rows) and not all(r["is_correct"] for r in rows)
    path = tmp_path / "model" / "pc_nsp" / "infer_results.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows))
    theirs = ds.evaluate(str(path))["Total"]["AA"]
    lines: list[str] = []
    args = ["action=score_predictions", f"predictions={path}", "++scorer=file", f"out={tmp_path / 'ours'}"]
    res = run(validate_eval(compose(args, config_name="evaluate")), log=lines.append)
    ours = tmp_path / "ours"
    saved = json.loads((ours / "results.json").read_text())
    assert f"{100 * saved['scores']['overall']['AA']:.2f}%" == theirs
    assert json.loads((ours / "performance.json").read_text())["Total"]["AA"] == theirs
    assert f"AA {theirs[:-1]} %" in lines[-1] and saved["scores"] == res["scores"]
    assert f"| {float(theirs[:-1]):.1f} |" in rebuild_leaderboard(ours, ours / "leaderboard.md").read_text()
