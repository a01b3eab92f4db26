"""SonicBench interop: its published result files (github qiuxins/SonicBench, read from the peers
folder, ``tests/support/peers.py``; where the clone is absent the test skips, counted in the run's
summary) and an export in its layout.

SonicBench publishes no scoring script; its accuracy is the share of rows whose ``prediction`` is
the ``reference`` letter (its README's "about 72 %" for Qwen3-Omni is 72.25 % so counted)."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from auralgen.cli._hydra import compose
from auralgen.evaluation.config import validate_eval
from auralgen.evaluation.interop import sonicbench
from auralgen.evaluation.items import load_items
from auralgen.evaluation.runner import run
from auralgen.export.audio import decode_flac
from tests.support.peers import peer

QUIET = lambda *_: None  # noqa: E731
SYSTEMS = ["Kimi-Audio", "MiMo-Audio", "Ola"]  # letter replies: parser and exact match agree on every row


def _system(name: str) -> Path:
    """A published system's result folder (24 files)."""
    return peer("SonicBench") / "Results" / name


def _score(pred: Path, out: Path, *extra: str) -> dict:
    args = ["action=score_predictions", f"predictions={pred}", "predictions_format=sonicbench", f"out={out}", *extra]
    return run(validate_eval(compose(args, config_name="evaluate")), log=QUIET)


def _exact(path: Path) -> tuple[int, int]:
    rows = [json.loads(x) for f in sorted(path.glob("*.jsonl")) for x in f.read_text().splitlines() if x.strip()]
    return sum(str(r["prediction"]).strip() == r["reference"] for r in rows), len(rows)


@pytest.mark.parametrize("name", SYSTEMS)
def test_published_systems_score_as_sonicbench_counts_them(tmp_path, name):
    path = _system(name)
    right, n = _exact(path)
    parser = _score(path, tmp_path / "p")
    file = _score(path, tmp_path / "f", "++scorer=file")
    assert parser["scores"]["overall"]["n_answers"] == n == 2400
    assert parser["scores"]["overall"]["AA"] == file["scores"]["overall"]["AA"] == pytest.approx(right / n)
    assert parser["verdicts"]["agree"] == n and len(parser["scores"]["by_task"]) == 24


def test_a_reasoning_system_shows_both_verdicts(tmp_path):
    path = _system("Qwen2.5-Omni")  # replies such as "A." or option words, not bare letters
    right, n = _exact(path)
    res = _score(path, tmp_path / "f", "++scorer=file")
    assert res["scores"]["overall"]["AA"] == pytest.approx(right / n)
    assert res["parser_scores"]["overall"]["AA"] > res["scores"]["overall"]["AA"]
    assert res["verdicts"]["parser_right_toolkit_wrong"] > 0
    ex = res["verdicts"]["differ_examples"]  # both verdicts shown where they differ
    assert 0 < len(ex) <= 20 and all(e["parser_correct"] != e["toolkit_correct"] for e in ex)
    assert all(e["reply"].strip() != e["parser"] for e in ex if e["toolkit_correct"] is False)


def test_export_in_sonicbench_layout_and_score_it_back(tiny_dataset, tmp_path):
    """Binary items only, in SonicBench's two paradigms: a comparison is the item's two sounds as two
    clips joined by 0.5 s of silence (A the first, B the second); a recognition item asks between the
    task's two extreme categories; everything else is skipped and counted."""
    out = tmp_path / "sonic"
    res = run(
        validate_eval(
            compose(
                ["action=export", "export_format=sonicbench", f"data={tiny_dataset}", f"out={out}"],
                config_name="evaluate",
            )
        ),
        log=QUIET,
    )
    items = {it.id: it for it in load_items(tiny_dataset)}
    assert set(res["files"]) == {"pitch_comparison", "loudness_comparison", "duration_comparison", "duration_recog"}
    assert res["items"] + sum(res["skipped"].values()) == len(items) and res["items"] > 0
    reasons = {k.split(":")[0] for k in res["skipped"]}
    assert reasons == {"audiogram", "pitch_relative", "loudness_relative", "duration_relative", "duration_absolute"}
    preds = tmp_path / "preds"
    preds.mkdir()
    for f in sorted((out / "json").glob("*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        for k, r in enumerate(rows):
            it = items[r["id"]]
            assert len(r["options"]) == 2 and r["reference"] in "AB" and f"'{r['reference']}' for " in r["prompt"]
            assert r["prompt"].endswith(
                "Only answer 'A' or 'B'. Do not add any explanation, punctuation, or extra text."
            )
            x, sr = sf.read(out / r["audio_path"], always_2d=True)
            orig, _ = decode_flac(it.clips[0])
            if f.stem.endswith("_comparison"):
                assert r["audio_path"].endswith(f"_pair_{k:03d}.wav") and "0.5 seconds of silence" in r["prompt"]
                cut, gap = round(sonicbench.second_onset_s(it.recipe) * sr), round(0.5 * sr)
                assert x.shape[0] == orig.shape[1] + gap and not x[cut : cut + gap].any()
                assert np.allclose(x[cut + gap :, 0], orig[0, cut:], atol=1e-6)
                assert r["reference"] == "AB"[it.answer in ("Higher", "Louder", "Longer")]
            else:
                assert r["options"] == ["Longer than 2 s", "Shorter than 0.5 s"] and x.shape[0] == orig.shape[1]
                assert r["options"]["AB".index(r["reference"])] == it.answer
            # every other reply names the right option in words: the parser reads it, the exact match does not
            r["prediction"] = r["reference"] if k % 2 == 0 else r["options"]["AB".index(r["reference"])]
        (preds / f.name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    right, n = _exact(preds)
    back = _score(preds, tmp_path / "s", "++scorer=file")
    assert back["scores"]["overall"]["AA"] == pytest.approx(right / n) and n == res["items"]
    assert back["parser_scores"]["overall"]["AA"] == 1.0 > back["scores"]["overall"]["AA"]


def test_the_parser_never_misses_what_exact_match_counts_right_on_any_published_system():
    """All 36 systems' 86,400 rows: every row SonicBench's exact match counts right, the parser also
    reads as right; the rows they score differently are replies exact match cannot read."""
    from bench.bench_scoring import sonicbench_table

    table = sonicbench_table(str(peer("SonicBench")))
    assert len(table) == 36 and sum(c["n"] for c in table.values()) == 36 * 2400
    assert sum(c["exact_only"] for c in table.values()) == 0
    assert table["Qwen2.5-Omni"]["parser"] > 2 * table["Qwen2.5-Omni"]["exact"]  # it answers "A." (a stated letter)
