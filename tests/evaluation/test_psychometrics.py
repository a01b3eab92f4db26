"""Tests of psychometric fitting and model audiograms."""

import json
import math

import numpy as np
import pytest

from auralgen.core.errors import ParameterError
from auralgen.evaluation.parsing import ParseResult
from auralgen.evaluation.psychometrics import (
    audiogram_thresholds,
    fit_psychometric,
    level_ranges,
    weibull,
    weibull_inverse,
)
from auralgen.evaluation.verdict import is_correct

X = np.array([2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
TRUE = dict(scale=12.0, slope=2.0, chance=0.25, lapse=0.03)


def true_threshold(criterion=0.75, scale=12.0, slope=2.0, chance=0.25, lapse=0.03):
    q = (criterion - chance) / (1.0 - lapse - chance)
    return scale * (-math.log1p(-q)) ** (1.0 / slope)


def simulate(seed, n_per_level=80, x=X, **curve):
    params = {**TRUE, **curve}
    n = np.full(len(x), n_per_level)
    return np.random.default_rng(seed).binomial(n, weibull(x, **params)), n


def test_weibull_shape():
    p = weibull(X, **TRUE)
    assert p[0] > TRUE["chance"] and p[-1] == pytest.approx(1 - TRUE["lapse"], abs=1e-6)
    assert np.all(np.diff(p) > 0)
    assert weibull(TRUE["scale"], **TRUE) == pytest.approx(0.25 + 0.72 * (1 - math.exp(-1)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_known_threshold_and_ci_contains_it(seed):
    k, n = simulate(seed)
    fit = fit_psychometric(X, k, n, chance=0.25)
    truth = true_threshold()
    assert fit.converged and fit.threshold_status == "ok" and fit.threshold_bound is None
    assert fit.threshold == pytest.approx(truth, rel=0.15)
    assert fit.ci_low < truth < fit.ci_high and fit.covers(truth)
    assert fit.ci_low < fit.threshold < fit.ci_high
    assert fit.predict(fit.threshold) == pytest.approx(0.75, abs=0.05)  # the MAP curve near the posterior median


def test_other_criterion():
    k, n = simulate(3, n_per_level=150)
    fit = fit_psychometric(X, k, n, chance=0.25, criterion=0.6)
    assert fit.threshold == pytest.approx(true_threshold(0.6), rel=0.15)
    assert fit.ci_low < true_threshold(0.6) < fit.ci_high
    assert fit.criterion == 0.6


def test_two_alternative_chance():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    n = np.full(5, 100)
    k = np.random.default_rng(8).binomial(n, weibull(x, scale=4.0, slope=2.5, chance=0.5, lapse=0.02))
    fit = fit_psychometric(x, k, n, chance=0.5, n_boot=0)
    assert fit.chance == 0.5 and fit.lapse <= 0.25
    assert fit.threshold == pytest.approx(true_threshold(0.75, scale=4.0, slope=2.5, chance=0.5, lapse=0.02), rel=0.15)


def test_same_counts_give_the_same_fit():
    k, n = simulate(4)
    a, b = fit_psychometric(X, k, n, chance=0.25), fit_psychometric(X, k, n, chance=0.25)
    assert (a.threshold, a.ci_low, a.ci_high) == (b.threshold, b.ci_low, b.ci_high)


def test_zero_difference_level_is_excluded():
    k, n = simulate(5)
    with_zero = fit_psychometric(np.r_[0.0, X], np.r_[0, k], np.r_[80, n], chance=0.25, n_boot=0)
    without = fit_psychometric(X, k, n, chance=0.25, n_boot=0)
    assert with_zero.n_excluded == 1 and without.n_excluded == 0
    assert with_zero.threshold == pytest.approx(without.threshold)
    assert with_zero.x == tuple(X)
    assert math.isnan(without.ci_low) and math.isnan(without.interval()[0])


@pytest.mark.parametrize("seed", [0, 1])
def test_data_at_chance_give_no_threshold_within_the_range(seed):
    n = np.full(len(X), 80)
    k = np.random.default_rng(seed).binomial(n, 0.25)
    fit = fit_psychometric(X, k, n, chance=0.25)
    assert not fit.finite and math.isnan(fit.threshold)
    assert fit.threshold_status in ("not_reached", "beyond_range") and fit.threshold_bound == "above"
    assert fit.estimate > X.max() and fit.ci_high_open


def test_plateau_below_criterion_is_not_reached():
    k, n = simulate(6, n_per_level=200, lapse=0.4)  # asymptote 0.6 < 0.75
    fit = fit_psychometric(X, k, n, chance=0.25, n_boot=0)
    assert (fit.threshold_status, fit.threshold_bound) == ("not_reached", "above")
    assert 1 - fit.lapse < 0.75


def test_threshold_above_tested_range_is_a_bound():
    k, n = simulate(7, n_per_level=200, scale=200.0)  # threshold ~ 218 > max x = 64
    fit = fit_psychometric(X, k, n, chance=0.25, max_lapse=0.05)
    assert (fit.threshold_status, fit.threshold_bound) == ("beyond_range", "above")
    assert math.isnan(fit.threshold) and fit.estimate > X.max()


def test_threshold_below_tested_range_is_a_bound_not_a_number():
    k, n = simulate(8, n_per_level=80, scale=0.5)  # threshold ~ 0.54 < min x = 2
    fit = fit_psychometric(X, k, n, chance=0.25)
    assert (fit.threshold_status, fit.threshold_bound) == ("below_range", "below")
    assert math.isnan(fit.threshold) and fit.estimate < X.min() and fit.ci_low_open


def test_all_correct_gives_a_bound_and_a_nonzero_interval():
    n = np.full(len(X), 20)
    fit = fit_psychometric(X, n, n, chance=0.25)
    assert fit.threshold_bound == "below" and not fit.finite
    assert fit.ci_high - fit.ci_low > 0.1


def test_an_interval_end_beyond_the_range_is_open():
    from auralgen.evaluation.psychometrics import PsychometricFit

    base = dict(
        threshold=12.0,
        slope=2.0,
        lapse=0.0,
        criterion=0.75,
        converged=True,
        scale=12.0,
        chance=0.25,
        threshold_status="ok",
        x=(10.0, 20.0, 40.0),
    )
    wide = PsychometricFit(ci_low=3.0, ci_high=50.0, **base)
    assert (wide.ci_low_open, wide.ci_high_open, wide.interval()) == (True, True, (0.0, math.inf))
    assert wide.covers(1.0) and wide.covers(1e6)
    inner = PsychometricFit(ci_low=11.0, ci_high=15.0, **base)
    assert inner.interval() == (11.0, 15.0) and not inner.covers(10.5) and inner.covers(14.0)


def test_simulated_observers_coverage_on_a_few_runs():
    """Fast form of the slow test below: 3 runs per setting all cover the true threshold (P = 0.86 at 95 %
    coverage; the runs are seeded, so the outcome is fixed) with a small median bias."""
    from bench.bench_psychometrics import SETTINGS
    from bench.bench_psychometrics import simulate as simulate_runs

    for observer in (SETTINGS[1], SETTINGS[3]):
        result = simulate_runs(observer, runs=3)
        assert result["coverage"] == 1.0, result
        assert abs(result["median_bias"]) < 0.25 * observer.threshold, result


@pytest.mark.slow
def test_simulated_observers_coverage():
    """The 95 % interval covers the true threshold in >= 17 of 20 runs per setting (bench: 200 runs, 6 settings)."""
    from bench.bench_psychometrics import SETTINGS
    from bench.bench_psychometrics import simulate as simulate_runs

    for observer in (SETTINGS[1], SETTINGS[3]):  # shallow mid-range; shallow, high lapse, near the lowest level
        result = simulate_runs(observer, runs=20)
        assert result["coverage"] >= 17 / 20, result
        assert abs(result["median_bias"]) < 0.25 * observer.threshold, result


@pytest.mark.parametrize(
    ("args", "kw", "match"),
    [
        (([1, 2], [1], [2, 2]), {}, "equal lengths"),
        (([-1, 2], [1, 1], [2, 2]), {}, "x=.* allowed: finite x >= 0"),
        (([1, 2], [3, 1], [2, 2]), {}, "0 <= n_correct <= n_total"),
        (([0, 2], [1, 1], [2, 2]), {}, "only 1 level"),
        (([1, 2], [1, 1], [2, 2]), {"criterion": 0.2}, "criterion=0.2"),
        (([1, 2], [1, 1], [2, 2]), {"chance": 1.0}, "chance=1.0"),
        (([1, 2], [1, 1], [2, 2]), {"max_lapse": 0.6}, "max_lapse=0.6"),
        (([1, 2], [1, 1], [2, 2]), {"n_boot": -1}, "n_boot=-1"),
    ],
)
def test_bad_input(args, kw, match):
    kw = {"chance": 0.25, **kw}
    with pytest.raises(ParameterError, match=match):
        fit_psychometric(*args, **kw)


def audiogram_records(accuracy_by_cell, n=20):
    records = []
    for (freq, level), acc in accuracy_by_cell.items():
        n_right = round(acc * n)
        records += [dict(frequency_hz=freq, level_value=level, correct=i < n_right, status="ok") for i in range(n)]
    return records


def test_audiogram_thresholds():
    cells = {
        (1000, 0): 0.5,
        (1000, 10): 0.7,
        (1000, 20): 0.9,
        (1000, 30): 1.0,
        (250, 0): 0.8,
        (250, 10): 1.0,
        (8000, 0): 0.5,
        (8000, 40): 0.6,
        (8000, 80): 0.7,
        (4000, 10): 0.8,
        (4000, 20): 0.6,
        (4000, 30): 0.95,  # non-monotone: lowest passing level wins
    }
    result = audiogram_thresholds(audiogram_records(cells))
    assert result == {250.0: 0.0, 1000.0: 20.0, 4000.0: 10.0, 8000.0: None}
    assert list(result) == [250.0, 1000.0, 4000.0, 8000.0]
    assert audiogram_thresholds(audiogram_records(cells), criterion=0.65)[1000.0] == 10.0


def test_audiogram_counts_failed_parses_as_wrong():
    refusal = ParseResult(None, "refusal")
    records = [dict(frequency_hz=500, level_value=10, correct=is_correct(refusal, 0), status="refusal")] * 4
    assert audiogram_thresholds(records) == {500.0: None}


@pytest.mark.parametrize(
    ("records", "kw", "match"),
    [
        ([], {}, "records is empty"),
        ([{"level_value": 0, "correct": True}], {}, "no 'frequency_hz'"),
        ([{"frequency_hz": 1, "level_value": 0, "correct": True}], {"criterion": 1.5}, "criterion=1.5"),
    ],
)
def test_audiogram_bad_input(records, kw, match):
    with pytest.raises(ParameterError, match=match):
        audiogram_thresholds(records, **kw)


def test_audiogram_cells_need_enough_items():
    from auralgen.evaluation.psychometrics import audiogram_thresholds

    one = [dict(id="a", frequency_hz=1000, level_value=10, correct=True) for _ in range(4)]  # one item, 4 rotations
    two = one + [dict(id="b", frequency_hz=1000, level_value=10, correct=True)] * 4
    assert audiogram_thresholds(one, min_items=2) == {1000.0: None}
    assert audiogram_thresholds(two, min_items=2) == {1000.0: 10.0}
    assert audiogram_thresholds(one) == {1000.0: 10.0}


def test_level_ranges_per_frequency():
    recs = [dict(frequency_hz=f, level_value=lv) for f, lv in ((1000, 20), (250, 5), (1000, -10), (1000, 0))]
    assert level_ranges(recs) == {250.0: (5.0, 5.0), 1000.0: (-10.0, 20.0)}


def test_every_reported_threshold_is_where_its_stored_curve_reaches_the_criterion():
    """Recomputed from the stored fit (results.json's record) for every entry: 2-, 3- and 4-option
    tasks, a task mixing option counts, few answers per level and lapses near the bound -- the
    settings where a posterior-median threshold sat at 0.83 or 0.91 of the stored curve."""
    from auralgen.evaluation.report import fit_from_json, psychometrics

    rng = np.random.default_rng(36)
    recs = []
    for t in range(12):
        n_options = [2, 3, 4, (2, 3)][t % 4]
        lapse = [0.0, 0.1, 0.2][t % 3]
        per_level = [2, 4, 8][t // 4]
        for v in (0.0, 1.0, 2.0, 4.0, 8.0, 16.0):
            for i in range(per_level):
                k = n_options if isinstance(n_options, int) else n_options[i % 2]
                p = weibull(v, scale=3.0 + t % 5, slope=1.5 + t % 3, chance=1 / k, lapse=lapse)
                recs.append(
                    dict(
                        task=f"t{t}",
                        regime="relative",
                        level_value=v,
                        level_unit="dB",
                        n_options=k,
                        correct=bool(rng.random() < p),
                    )
                )
    stored = json.loads(json.dumps(psychometrics(recs, criterion=0.75, n_boot=20)))
    numbers = 0
    for name, d in stored.items():
        if d.get("threshold") is None:
            continue
        numbers += 1
        at = weibull(d["threshold"], scale=d["scale"], slope=d["slope"], chance=d["chance"], lapse=d["lapse"])
        assert float(at) == pytest.approx(d["criterion"], abs=1e-9), name
        assert float(fit_from_json(d).predict(d["threshold"])) == pytest.approx(0.75, abs=1e-9)
        low, high = d["ci95"]
        assert (low is None or low <= d["threshold"]) and (high is None or d["threshold"] <= high), name
    assert numbers >= 6


def test_weibull_inverse_is_the_inverse():
    kw = dict(scale=7.0, slope=2.5, chance=1 / 3, lapse=0.15)
    for p in (0.4, 0.6, 0.75, 0.8):
        assert float(weibull(weibull_inverse(p, **kw), **kw)) == pytest.approx(p, abs=1e-12)
    assert weibull_inverse(0.85, **kw) == math.inf and weibull_inverse(0.3, **kw) == 0.0
