"""Time answer parsing + scoring of 100,000 cached replies against the 5 s target.

Builds 25,000 four-option items, asks each under its 4 rotations, and writes a synthetic
but realistic reply per answer (bare letters, bracketed letters, "Answer: X", option text,
chains of thought, Chinese, refusals, several letters, empty replies). Then times
:func:`~auralgen.evaluation.parsing.extract_choice` over all replies and
:func:`~auralgen.evaluation.metrics.score` over the resulting records.

Run: ``.venv/bin/python bench/bench_scoring.py``

``--corpus`` instead prints, per source system, how the parser reads the hand-labelled reply
corpus in ``tests/evaluation/replies/`` (real SonicBench replies plus written tricky ones):
stated answers read right, replies with no stated answer left unparsed, and the statuses.
Run: ``.venv/bin/python bench/bench_scoring.py --corpus``

``--sonicbench [CLONE]`` scores every published SonicBench system (``Results/<system>/`` of a clone of
github qiuxins/SonicBench, default ``SonicBench`` in the peers folder ``make peers`` fills: ``$AURALGEN_PEERS``,
else ``.peers/``) both ways: SonicBench's count (``prediction`` equal
to ``reference``) and the answer parser, with the rows where they differ.
Run: ``.venv/bin/python bench/bench_scoring.py --sonicbench``
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auralgen.evaluation.metrics import score  # noqa: E402
from auralgen.evaluation.parsing import extract_choice, rotate_options  # noqa: E402
from bench import results  # noqa: E402

TARGET_S = 5.0
N_ITEMS = 25_000
N_ROTATIONS = 4

TASKS = {
    "pitch_relative": ("relative_discrimination", ["Higher", "Lower", "Same", "Unable to determine"]),
    "loudness_relative": ("relative_discrimination", ["Louder", "Softer", "Equally loud", "Unable to determine"]),
    "duration_relative": ("relative_discrimination", ["Longer", "Shorter", "Same length", "Unable to determine"]),
    "azimuth_absolute": ("absolute_identification", ["Front-left", "Left", "Front-right", "Right"]),
    "distance_absolute": ("absolute_identification", ["0.5 m", "1 m", "2 m", "4 m"]),
    "count_sources": ("absolute_identification", ["1", "2", "3", "4"]),
}

TEMPLATES = [
    "{L}",
    "({L})",
    "**{L}**",
    "{L}. {T}",
    "Answer: {L}",
    "The answer is ({L}).",
    "The correct option is {L}: {T}",
    "{T}",
    "{t}.",
    "It sounds like the answer is {T}.",
    "Let me think step by step. The first clip and the second clip differ; option {W} seems plausible at "
    "first, but listening again the difference is clear. Therefore the answer is {L}.",
    "答案是{L}",
    "选{L}",
    "{L}, because the second sound matches {T}.",
]
BAD_REPLIES = [
    "I cannot listen to audio, so I can't answer this question.",
    "As an AI language model, I do not have access to the audio.",
    "{L} and {W}",
    "",
    "Hmm, it is hard to say.",
]


def build_replies(seed: int = 0) -> tuple[list[dict], list[str], list[list[str]]]:
    """Item metadata per answer, the reply strings and the presented options."""
    rng = np.random.default_rng(seed)
    task_names = list(TASKS)
    meta, replies, presented = [], [], []
    letters = "ABCD"
    for i in range(N_ITEMS):
        task = task_names[i % len(task_names)]
        sub_category, options = TASKS[task]
        level = int(rng.integers(0, 6))
        answer_index = int(rng.integers(0, len(options)))
        p_right = 0.3 + 0.1 * level
        for r in range(N_ROTATIONS):
            rotated, index_map = rotate_options(options, r)
            truth = index_map.index(answer_index)
            chosen = truth if rng.random() < p_right else int(rng.integers(0, len(options)))
            other = (chosen + 1 + int(rng.integers(0, len(options) - 1))) % len(options)
            if rng.random() < 0.06:
                template = BAD_REPLIES[int(rng.integers(0, len(BAD_REPLIES)))]
            else:
                template = TEMPLATES[int(rng.integers(0, len(TEMPLATES)))]
            replies.append(
                template.format(L=letters[chosen], W=letters[other], T=rotated[chosen], t=rotated[chosen].lower())
            )
            presented.append(rotated)
            meta.append(
                dict(
                    id=f"item{i:06d}",
                    task=task,
                    category="foundational_perception",
                    sub_category=sub_category,
                    level=level,
                    level_value=float(10 * level),
                    rotation=r,
                    n_options=len(options),
                    truth=truth,
                )
            )
    return meta, replies, presented


def run(seed: int = 0) -> dict:
    """Build the replies, time parsing and scoring; return the figures."""
    t0 = time.perf_counter()
    meta, replies, presented = build_replies(seed)
    build_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    parsed = [extract_choice(reply, options) for reply, options in zip(replies, presented)]
    parse_s = time.perf_counter() - t0

    records = []
    for m, p in zip(meta, parsed):
        rec = {k: v for k, v in m.items() if k != "truth"}
        rec["status"] = p.status
        rec["correct"] = p.status == "ok" and p.index == m["truth"]
        records.append(rec)

    t0 = time.perf_counter()
    result = score(records)
    score_s = time.perf_counter() - t0

    total_s = parse_s + score_s
    statuses = {s: sum(p.status == s for p in parsed) for s in ("ok", "unparseable", "refusal", "multiple")}
    return {
        "n_records": len(records),
        "build_s": round(build_s, 3),
        "parse_s": round(parse_s, 3),
        "score_s": round(score_s, 3),
        "parse_plus_score_s": round(total_s, 3),
        "target_s": TARGET_S,
        "ratio_to_target": round(total_s / TARGET_S, 3),
        "score_ratio_to_target": round(score_s / TARGET_S, 3),
        "parse_us_per_reply": round(1e6 * parse_s / len(records), 1),
        "statuses": statuses,
        "overall_AA": round(result["overall"]["AA"], 4),
        "overall_ACR": round(result["overall"]["ACR"], 4),
    }


CORPUS = Path(__file__).resolve().parent.parent / "tests" / "evaluation" / "replies"


def corpus_table() -> dict[str, collections.Counter]:
    """Per source system: counts of stated answers read right/wrong, unstated answers left
    unparsed/guessed, paraphrases, and the parser's statuses."""
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            src = row["source"].split("Results/")[1].split("/")[0] if "Results/" in row["source"] else row["source"]
            res = extract_choice(row["reply"], row["options"])
            c = table[src]
            c["n"] += 1
            c[res.status] += 1
            if row["kind"] in ("letter", "text"):
                c["stated"] += 1
                c["stated_right"] += (res.status, res.index) == ("ok", row["expected"])
            elif row["kind"] == "paraphrase":
                c["paraphrase"] += 1
            else:
                c["unstated"] += 1
                c["unstated_unparsed"] += res.index is None
    return table


def print_corpus_table() -> None:
    table = corpus_table()
    cols = (
        "n",
        "stated",
        "stated_right",
        "unstated",
        "unstated_unparsed",
        "paraphrase",
        "ok",
        "unparseable",
        "refusal",
        "multiple",
    )
    print(f"{'source':28s}" + "".join(f"{c[:12]:>13s}" for c in cols))
    total: collections.Counter = collections.Counter()
    for src, c in sorted(table.items()):
        total.update(c)
        print(f"{src:28s}" + "".join(f"{c[k]:13d}" for k in cols))
    print(f"{'TOTAL':28s}" + "".join(f"{total[k]:13d}" for k in cols))
    print(
        f"stated answers read right: {total['stated_right']}/{total['stated']} "
        f"({100 * total['stated_right'] / total['stated']:.1f} %); no stated answer left unparsed: "
        f"{total['unstated_unparsed']}/{total['unstated']} ({100 * total['unstated_unparsed'] / total['unstated']:.1f} "
        "%)"
    )


def sonicbench_table(clone: str) -> dict[str, collections.Counter]:
    """Per published SonicBench system, counts of rows: ``n``, right by exact match (``exact``), right by
    the parser (``parser``), scored differently (``differ``), right by exact match only (``exact_only``)."""
    from auralgen.evaluation.interop.sonicbench import options_of

    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for f in sorted(Path(clone, "Results").glob("*/*.jsonl")):
        system, stem = f.parent.name, f.stem
        attr, _, paradigm = stem.rpartition("_")
        for line in filter(str.strip, f.read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            res = extract_choice(row["prediction"], options_of(row, attr, paradigm))
            exact = str(row["prediction"]).strip() == row["reference"]
            parsed = res.status == "ok" and "AB"[res.index] == row["reference"]
            table[system].update(
                n=1, exact=exact, parser=parsed, differ=exact != parsed, exact_only=exact and not parsed
            )
    return table


def print_sonicbench_table(clone: str) -> None:
    """Per published SonicBench system: exact-match accuracy, parser accuracy, rows that differ."""
    table = sonicbench_table(clone)
    print(f"{'system':30s}{'rows':>6s}{'SonicBench %':>14s}{'parser %':>10s}{'differ':>8s}")
    for system, c in sorted(table.items()):
        print(
            f"{system:30s}{c['n']:6d}{100 * c['exact'] / c['n']:14.2f}"
            f"{100 * c['parser'] / c['n']:10.2f}{c['differ']:8d}"
        )
    same = sorted(s for s, c in table.items() if c["differ"] == 0)
    print(f"identical on {len(same)} of {len(table)} systems: {', '.join(same)}")
    differ, exact_only = (sum(c[k] for c in table.values()) for k in ("differ", "exact_only"))
    print(
        f"of the {differ} rows scored differently, {exact_only} are right by exact match and wrong by the parser; "
        f'the other {differ - exact_only} are replies exact match cannot read ("A.", "☞B", a sentence) that the '
        "parser reads as right"
    )


if __name__ == "__main__":
    if "--corpus" in sys.argv[1:]:
        print_corpus_table()
        sys.exit(0)
    if "--sonicbench" in sys.argv[1:]:
        rest = sys.argv[sys.argv.index("--sonicbench") + 1 :]
        peers = os.environ.get("AURALGEN_PEERS") or Path(__file__).resolve().parents[1] / ".peers"
        print_sonicbench_table(rest[0] if rest else str(Path(peers) / "SonicBench"))
        sys.exit(0)
    figures = run()
    print(json.dumps(figures, indent=2))
    results.write(
        "bench_scoring",
        "python bench/bench_scoring.py",
        [
            results.figure(
                f"parse + score {figures['n_records']:,} cached replies",
                figures["parse_plus_score_s"],
                "s",
                target=f"<= {TARGET_S:.0f} s",
            ),
            results.figure("of which scoring", figures["score_s"], "s"),
        ],
    )
    print(
        f"parse+score of {figures['n_records']:,} records: {figures['parse_plus_score_s']:.2f} s "
        f"({figures['ratio_to_target']:.2f} x the {TARGET_S:.0f} s target; scoring alone "
        f"{figures['score_s']:.2f} s = {figures['score_ratio_to_target']:.2f} x)"
    )
