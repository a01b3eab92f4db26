"""Answer-position and option balance of a dataset's tasks (chi-square tests), for the audit.

The chi-square sum runs over the answers in sorted order, so ``answer_p`` does not depend on
set order (PYTHONHASHSEED).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from scipy import stats

from auralgen.validation.read import Check, Observed

BALANCE_ALPHA = 1e-3  # chi-square p below this flags an imbalance


def _chi2(counts: list[int]) -> tuple[float, int]:
    n, k = sum(counts), len(counts)
    if k < 2 or n == 0:
        return 0.0, 0
    e = n / k
    return float(sum((c - e) ** 2 / e for c in counts)), k - 1


def _answer_test(name: str, by_level, expected, unexpected_rows) -> tuple[float, list[str], Counter]:
    """Task ``name``'s answers per level against each item's expected set: the chi-square p summed
    over its levels (1.0 when no level has two expected answers), its unexpected answers
    (``"level L: 'text'"``) and its answer counts."""
    total_stat, total_dof, unexpected, answer_counts = 0.0, 0, [], Counter()
    for (t, level), ctr in sorted(by_level.items()):
        if t != name:
            continue
        answer_counts.update(ctr)
        unexpected += [f"level {level}: {a!r}" for a in dict.fromkeys(unexpected_rows.get((t, level), []))]
        exp = expected.get((t, level))
        if exp and len(exp) >= 2:
            total_stat += float(sum((ctr.get(a, 0) - e) ** 2 / e for a, e in sorted(exp.items())))
            total_dof += len(exp) - 1
    p_opt = float(stats.chi2.sf(total_stat, total_dof)) if total_dof else 1.0
    return p_opt, unexpected, answer_counts


def balance(report, positions, n_positions, by_level, expected, unexpected_rows) -> None:
    """Answer positions (chi-square vs uniform) and answers per level vs each item's expected set.

    An item spreads its weight evenly over the answers it could have had (its own options, or
    "The same" alone at a zero difference), so tasks whose option texts vary per item (the
    mixture's sound names) are tested against what their items actually offered. Each task's
    result goes to ``report.balance``; a p below :data:`BALANCE_ALPHA`, or an unexpected answer,
    adds a flag to ``report.flags``.

    Parameters
    ----------
    report : AuditReport
        Receives the results and flags.
    positions : dict of str to Counter
        Per task, the count of each ``answer_index``.
    n_positions : dict of str to int
        Per task, the options per item (the most seen).
    by_level : dict of (str, int) to Counter
        Per ``(task, level)``, the count of each answer text.
    expected : dict of (str, int) to Counter
        Per ``(task, level)``, each answer text's expected count (fractional weights).
    unexpected_rows : dict of (str, int) to list of str
        Per ``(task, level)``, the answers of rows that were not among their expected answers.
    """
    for name in sorted(positions):
        k = n_positions[name]
        counts = [positions[name].get(i, 0) for i in range(k)]
        stat, dof = _chi2(counts)
        p_pos = float(stats.chi2.sf(stat, dof)) if dof else 1.0
        p_opt, unexpected, answer_counts = _answer_test(name, by_level, expected, unexpected_rows)
        report.balance[name] = {
            "positions": counts,
            "position_p": p_pos,
            "answers": dict(sorted(answer_counts.items())),
            "answer_p": p_opt,
            "unexpected_answers": unexpected,
        }
        if p_pos < BALANCE_ALPHA:
            report.flags.append(
                {
                    "audit": "position_balance",
                    "task": name,
                    "detail": f"answer_index counts {counts} (chi-square p={p_pos:.1e})",
                }
            )
        if p_opt < BALANCE_ALPHA or unexpected:
            listed = "; unexpected " + ", ".join(unexpected[:3]) if unexpected else ""
            report.flags.append(
                {
                    "audit": "option_balance",
                    "task": name,
                    "detail": f"answers {dict(answer_counts)} (p={p_opt:.1e}){listed}",
                }
            )


class AnswerBalance(Check):
    """Counts answer positions and answers per level, and the answers each item could have had
    (the task's ``design.expected_answers``); :meth:`finish` runs :func:`balance` on them."""

    def __init__(self):
        self.positions: dict[str, Counter] = defaultdict(Counter)  # task -> answer_index -> count
        self.n_positions: dict[str, int] = {}  # task -> options per item
        self.by_level: dict[tuple, Counter] = defaultdict(Counter)  # (task, level) -> answer -> count
        self.expected: dict[tuple, Counter] = {}  # (task, level) -> answer -> expected weight
        self.unexpected_rows: dict[tuple, list] = defaultdict(list)  # (task, level) -> answers not expected

    def observe(self, seen: Observed) -> None:
        row, task = seen.row, seen.task
        opts, ai = list(row["options"]), row["answer_index"]
        self.positions[row["task"]][ai] += 1
        self.n_positions[row["task"]] = max(self.n_positions.get(row["task"], 0), len(opts))
        self.by_level[(row["task"], row["level"])][row["answer"]] += 1
        if task is None:
            return
        exp_i = task.design.expected_answers(row["level_value"], opts)  # each item's expected answers share its weight
        bucket = self.expected.setdefault((row["task"], row["level"]), Counter())
        for a in exp_i:
            bucket[a] += 1.0 / len(exp_i)
        if row["answer"] not in exp_i:
            self.unexpected_rows[(row["task"], row["level"])].append(row["answer"])

    def finish(self, report) -> None:
        balance(report, self.positions, self.n_positions, self.by_level, self.expected, self.unexpected_rows)
