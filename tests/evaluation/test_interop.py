"""Interoperability: external prediction files and the STAR-Bench / MMAR export layouts."""

import json

import numpy as np
import pytest
import soundfile as sf

from auralgen.cli._hydra import compose
from auralgen.core.errors import ParameterError
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.interop import prediction_records, read_predictions
from auralgen.evaluation.items import load_items
from auralgen.evaluation.parsing import rotate_options
from auralgen.evaluation.runner import run
from auralgen.export.audio import decode_flac

QUIET = lambda *_: None  # noqa: E731


def _run(*overrides):
    return run(validate_eval(compose(list(overrides), config_name="evaluate")), log=QUIET)


def test_starbench_export_layout_round_trips_audio(tiny_dataset, tmp_path):
    out = tmp_path / "sb"
    _run("action=export", "export_format=starbench", f"data={tiny_dataset}", f"out={out}")
    rows = json.loads((out / "meta_info" / "foundation_perception.json").read_text())
    items = {it.id: it for it in load_items(tiny_dataset)}
    assert len(rows) == len(items)
    for row in rows:
        assert set(row) == {"id", "task", "category", "sub-category", "question", "options", "answer", "audio_paths"}
        it = items[row["id"]]
        assert row["answer"] in row["options"] and row["options"] == list(it.options)
        x, sr = sf.read(out / row["audio_paths"][0], dtype="float32", always_2d=True)
        ref, ref_sr = decode_flac(it.clips[0])
        assert sr == ref_sr and x.shape == ref.T.shape
        np.testing.assert_allclose(x, ref.T, atol=2.0**-23)
    nonspatial = json.loads((out / "meta_info" / "foundation_perception_nonspatial.json").read_text())
    assert len(nonspatial) == len(rows)  # the tone suite has no spatial attribute


def test_mmar_export_layout(tiny_dataset, tmp_path):
    out = tmp_path / "mmar"
    _run("action=export", "export_format=mmar", f"data={tiny_dataset}", f"out={out}", "task=[pitch_relative]")
    rows = json.loads((out / "MMAR-meta.json").read_text())
    assert [json.loads(ln) for ln in (out / "MMAR-meta.jsonl").read_text().splitlines()] == rows
    assert len(rows) == len(load_items(tiny_dataset, tasks=["pitch_relative"])) > 1
    assert rows[0]["answer"] in rows[0]["choices"] and rows[0]["category"] == "Signal Layer"
    assert (out / rows[0]["audio_path"]).is_file()


def test_scoring_a_starbench_infer_results_file(tiny_dataset, tmp_path):
    """A toolkit run: every item under every rotation, toolkit-style options and responses."""
    items = load_items(tiny_dataset, tasks=["pitch_relative", "duration_absolute"])
    lines = []
    for it in items:
        for r in range(len(it.options)):
            opts, _ = rotate_options(list(it.options), -r)  # the toolkit rotates the other way
            truth = opts.index(it.answer)
            right = it.task == "pitch_relative"  # the "model" is right on pitch, wrong elsewhere
            letter = "ABCDE"[truth if right else (truth + 1) % len(opts)]
            lines.append(
                {
                    "id": it.id,
                    "task": it.task,
                    "category": it.category,
                    "sub-category": it.sub_category,
                    "options": opts,
                    "answer": it.answer,
                    "answer_letter": f"<{'ABCDE'[truth]}>",
                    "rotate_id": r,
                    "prediction": "<Z>",
                    "model_response": f"The answer is <{letter}>.",
                }
            )
    lines[0] = dict(lines[0], model_response="I cannot listen to audio.")
    path = tmp_path / "infer_results.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = _run("action=score_predictions", f"predictions={path}", f"out={tmp_path / 'ext'}")
    bt = res["scores"]["by_task"]
    # the refused run of the first pitch item costs that item its all-correct status
    n_pitch = sum(it.task == "pitch_relative" for it in items)
    assert (
        bt["pitch_relative"]["ACR"] == pytest.approx((n_pitch - 1) / n_pitch) and bt["duration_absolute"]["AA"] == 0.0
    )
    assert res["accounting"]["overall"]["refusal"] == 1 and res["accounting"]["overall"]["asked"] == len(lines)
    assert json.loads((tmp_path / "ext" / "results.json").read_text())["scores"] == res["scores"]


def test_scoring_mmar_and_mmau_predictions_with_a_configurable_field(tmp_path):
    rows = [
        {
            "id": "1",
            "question": "q",
            "choices": ["dog", "cat"],
            "answer": "cat",
            "category": "Signal",
            "sub-category": "pitch",
            "my_pred": "cat",
        },
        {
            "id": "2",
            "question": "q",
            "choices": ["dog", "cat"],
            "answer": "dog",
            "category": "Signal",
            "sub-category": "pitch",
            "my_pred": "B",
        },
        {
            "id": "3",
            "question": "q",
            "choices": ["dog", "cat"],
            "answer": "dog",
            "category": "Signal",
            "sub-category": "pitch",
            "my_pred": "no idea",
        },
    ]
    path = tmp_path / "mmar.json"
    path.write_text(json.dumps(rows))
    res = _run(
        "action=score_predictions",
        f"predictions={path}",
        "predictions_format=mmar",
        "prediction_field=my_pred",
        f"out={tmp_path / 'm'}",
    )
    s = res["scores"]["by_task"]["pitch"]
    assert s["AA"] == pytest.approx(1 / 3) and s["unparseable_rate"] == pytest.approx(1 / 3) and s["n_answers"] == 3
    mmau = [dict(r, model_prediction=r["my_pred"], task="sound") for r in rows]
    recs = prediction_records(mmau, "mmau")
    assert [r["correct"] for r in recs] == [True, False, False] and {r["task"] for r in recs} == {"sound"}


@pytest.mark.parametrize(
    "content,needle",
    [
        ('{"id": 1}\nnot json\n', "line 2 is not JSON"),
        (
            '[{"id": "1", "choices": ["a", "b"], "answer": "c", "answer_prediction": "a"}]',
            "answer='c' is not among the options",
        ),
        ('[{"id": "1", "choices": ["a", "b"], "answer": "a"}]', "has none of model_prediction, answer_prediction"),
        (
            '[{"id": "1", "choices": ["a", "b"], "answer": "a", "model_output": "a"}, {"id": "2"}]',
            "entry 2 has no 'choices'",
        ),
        ("[]", "holds no prediction"),
    ],
)
def test_bad_prediction_files_are_one_clear_error(tmp_path, content, needle):
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(ParameterError, match=needle):
        prediction_records(read_predictions(path), "mmar", path=str(path))


# interop.py's split before the tasks declared it (Task.spatial): by the item's attribute
OLD_SPATIAL_ATTRIBUTES = {"azimuth", "elevation", "distance", "direction", "position", "trajectory", "doa"}


SPATIAL = {
    "azimuth_absolute",
    "azimuth_relative",
    "elevation_absolute",
    "elevation_relative",
    "distance_absolute",
    "distance_relative",
    "trajectory",
    "multi_source_relation",
}


def test_the_spatial_split_is_the_tasks_flag_and_matches_the_old_attribute_list():
    """Every level of every registered task (its default config; in a suite or not): Task.spatial gives
    the split the attribute list gave, except trajectory, whose attribute became "motion" (absent from
    the list): the old export filed its items as non-spatial, the flag files them as spatial (a motion
    answer)."""
    from auralgen.tasks.base import AudioConfig, load_tasks, task_class

    tasks = {name: cls(cls.Config(name=name), AudioConfig()) for name, cls in load_tasks().items()}
    split = {}
    for name, task in tasks.items():
        old = {task.design.level_info(lv)[0] in OLD_SPATIAL_ATTRIBUTES for lv in range(task.design.n_levels())}
        assert len(old) == 1, name  # no task mixed spatial and non-spatial levels
        split[name] = (old.pop(), task_class(name).spatial)
    changed = {name for name, (old, new) in split.items() if old != new}
    assert changed == {"trajectory"} and split["trajectory"] == (False, True)
    assert SPATIAL <= {name for name, (_, new) in split.items() if new}


def test_starbench_rows_read_in_auralgens_rotation_and_errors_counted():
    from auralgen.evaluation.interop import starbench

    base = {"id": "x", "task": "t", "answer": "b", "is_correct": False}
    # STAR-Bench presents options[-r:] + options[:-r] for rotate_id r
    rows = [
        dict(base, options=["abc"[(j - r) % 3] for j in range(3)], rotate_id=r, model_response=resp)
        for r, resp in ((0, "<B>"), (1, "ERROR: timeout"), (2, "I pick C"))
    ]
    recs, toolkit = starbench.records(rows, "f", None)
    assert [r["rotation"] for r in recs] == [0, 1, 2] and toolkit == [False] * 3
    assert [(r["status"], r["correct"]) for r in recs] == [("ok", True), ("error", False), ("ok", False)]
    assert all(rotate_options(["a", "b", "c"], r["rotation"])[0] == row["options"] for r, row in zip(recs, rows))
