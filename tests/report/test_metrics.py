"""The report's numbers against a direct numpy computation on known mixtures, and the
bootstrap intervals' coverage in a seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from worker.report.bootstrap import rate_intervals
from worker.report.build import _rate_constraint as rate_constraint
from worker.report.evaluate import Definition, model_report
from worker.report.metrics import Deployed, Examples
from worker.report.schema import DataReport
from worker.report.text import report_table
from worker.spec.models import RateConstraint

N, D = 400, 4


def examples(seed: int = 0) -> Examples:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, D))
    y = np.where(rng.uniform(size=N) < 0.4, 1.0, -1.0)
    return Examples(sp.csr_matrix(x), y, True, {"a": rng.uniform(size=N) < 0.3})


def mixture(seed: int = 1) -> Deployed:
    rng = np.random.default_rng(seed)
    return Deployed(rng.normal(size=(3, D)), np.array([0.5, 0.3, 0.2]))


def tpr_rule() -> RateConstraint:
    """TPR(a) >= 0.9 TPR(all)."""
    return RateConstraint.model_validate({
        "type": "rate", "lhs": {"metric": "true_positive_rate", "group": "a"}, "op": ">=",
        "rhs": {"metric": "true_positive_rate", "scale": 0.9}})


def test_report_equals_numpy_on_a_known_mixture():
    data, mix = examples(), mixture()
    rows = sp.csr_matrix(np.array([[1.0, -1.0, 0, 0], [0, 0, 1.0, 0]]) / [[np.sqrt(2)], [1]])
    rhs = np.array([0.0, 0.5])
    definition = Definition("hinge", 0.1, 0.2, blocks=[(1, "linear", rows, rhs)],
                            rates=[(0, tpr_rule(), None)])
    report = model_report(definition, data, mix, 1e-3)
    x, y, a = data.features.toarray(), data.labels, data.groups["a"]
    objectives, errors, lhs, rhs_rates = [], [], [], []
    for w in mix.solutions:
        s = x @ w
        objectives.append(np.maximum(0, 1 - y * s).mean() + 0.1 * np.abs(w).sum()
                          + 0.1 * w @ w)
        errors.append(np.mean(np.sign(s) != y))
        lhs.append(np.mean(s[a & (y > 0)] > 0))
        rhs_rates.append(np.mean(s[y > 0] > 0))
    p = mix.weights
    assert report.objective == pytest.approx(p @ objectives, rel=1e-12)
    assert report.error == pytest.approx(p @ errors, rel=1e-12)
    rate, linear = report.constraints
    assert rate.index == 0 and linear.index == 1
    g = 0.9 * (p @ rhs_rates) - p @ lhs
    assert rate.worst == pytest.approx(g, abs=1e-12) and rate.violated == int(g > 1e-3)
    assert rate.terms[0].examples == int((a & (y > 0)).sum())
    assert rate.terms[0].group_size == int(a.sum())
    assert rate.terms[1].value == pytest.approx(p @ rhs_rates, abs=1e-12)
    expected_rows = (rows.toarray() @ mix.solutions.T) @ p - rhs
    assert linear.worst == pytest.approx(expected_rows.max(), abs=1e-12)
    assert linear.violated == int(np.sum(expected_rows > 1e-3))
    assert report.max_violation == pytest.approx(max(0.0, g, expected_rows.max()))


def test_a_point_and_its_one_member_mixture_agree():
    data, mix = examples(2), mixture(3)
    definition = Definition("logistic", 0.0, 0.0, rates=[(0, tpr_rule(), None)])
    one = Deployed(mix.solutions[:1], np.ones(1))
    assert model_report(definition, data, one, 1e-3) == \
        model_report(definition, data, Deployed.point(mix.solutions[0]), 1e-3)


def test_intervals_cover_a_known_rate_at_about_the_nominal_level():
    rate, n, trials = 0.3, 300, 300
    rng = np.random.default_rng(0)
    covered = 0
    for trial in range(trials):
        values = (rng.uniform(size=n) < rate).astype(float)
        subset = np.ones(n, dtype=bool)
        ((low, high),) = rate_intervals([subset], [values], resamples=400, seed=trial)
        covered += low <= rate <= high
    # 95% nominal; the binomial spread of 300 trials is about +-2.5%
    assert 0.90 <= covered / trials <= 0.985


def test_intervals_are_seeded_and_skip_empty_subsets():
    values = np.linspace(0, 1, 50)
    subset = values > 0.5
    first = rate_intervals([subset, np.zeros(50, bool)], [values, values], seed=3)
    assert first == rate_intervals([subset, np.zeros(50, bool)], [values, values], seed=3)
    assert first[1] is None
    low, high = first[0]
    assert low < values[subset].mean() < high


def test_intervals_do_not_depend_on_how_the_resamples_are_chunked(monkeypatch):
    import worker.report.bootstrap as bootstrap

    values = np.random.default_rng(1).uniform(size=300)
    subset = values > 0.3
    whole = rate_intervals([subset], [values], resamples=250, seed=5)
    monkeypatch.setattr(bootstrap, "CHUNK_COUNTS", 300 * 7)     # chunks of 7 resamples
    assert rate_intervals([subset], [values], resamples=250, seed=5) == whole


def test_each_side_and_the_difference_of_an_expression():
    """TPR(a) - 0.5 FPR(a) <= TPR(all) + 0.05, and precision(a) >= 0.3, on a mixture."""
    data, mix = examples(5), mixture(6)
    expression = RateConstraint.model_validate({
        "type": "rate", "op": "<=",
        "lhs": {"terms": [{"metric": "true_positive_rate", "group": "a"},
                          {"metric": "false_positive_rate", "group": "a", "scale": -0.5}]},
        "rhs": {"terms": [{"metric": "true_positive_rate"}], "constant": 0.05}})
    precision = RateConstraint.model_validate({
        "type": "rate", "lhs": {"metric": "precision", "group": "a"}, "op": ">=", "rhs": 0.3})
    definition = Definition("hinge", 0.0, 0.0, rates=[(0, expression, None),
                                                      (1, precision, None)])
    report = model_report(definition, data, mix, 1e-3)
    x, y, a = data.features.toarray(), data.labels, data.groups["a"]
    positive = (x @ mix.solutions.T > 0).astype(float) @ mix.weights
    tpr_a, fpr_a = positive[a & (y > 0)].mean(), positive[a & (y < 0)].mean()
    lhs, rhs = tpr_a - 0.5 * fpr_a, positive[y > 0].mean() + 0.05
    first, second = report.constraints
    assert [t.side for t in first.terms] == ["lhs", "lhs", "rhs"]
    assert first.lhs == pytest.approx(lhs, abs=1e-12)
    assert first.rhs == pytest.approx(rhs, abs=1e-12)
    assert first.difference == pytest.approx(lhs - rhs, abs=1e-12) == first.worst
    assert first.bound is None and first.rhs_constant == 0.05
    expected = positive[a] @ (y[a] > 0) / positive[a].sum()
    assert second.lhs == pytest.approx(expected, abs=1e-12) and second.bound == 0.3
    assert second.worst == pytest.approx(0.3 - expected, abs=1e-12)


def test_weighted_rates_equal_repeated_rows():
    data, mix = examples(7), mixture(8)
    counts = np.random.default_rng(9).integers(0, 4, size=N)
    weighted = Examples(data.features, data.labels, True, data.groups,
                        weights=counts.astype(float))
    rows = np.repeat(np.arange(N), counts)
    repeated = Examples(data.features[rows], data.labels[rows], True,
                        {"a": data.groups["a"][rows]})
    definition = Definition("hinge", 0.0, 0.0, rates=[(0, tpr_rule(), None)])
    one, other = (model_report(definition, e, mix, 1e-3).constraints[0]
                  for e in (weighted, repeated))
    assert one.difference == pytest.approx(other.difference, abs=1e-12)
    assert [t.value for t in one.terms] == pytest.approx([t.value for t in other.terms])


@pytest.mark.parametrize("constraint", [
    {"type": "rate", "op": "<=", "lhs": {"metric": "true_positive_rate", "group": "a"},
     "rhs": {"terms": [{"metric": "true_positive_rate"}], "constant": 0.05}},
    {"type": "rate", "op": ">=", "lhs": 0.3, "rhs": {"metric": "error_rate", "scale": 2.0}},
    {"type": "rate", "op": ">=", "lhs": {"metric": "precision", "group": "a"}, "rhs": 0.4}])
def test_a_report_row_describes_its_constraint_again(constraint):
    """``lighttouch report`` rebuilds each rate constraint from its report row."""
    original = RateConstraint.model_validate(constraint)
    row = model_report(Definition("hinge", 0.0, 0.0, rates=[(0, original, None)]),
                       examples(), mixture(), 1e-3).constraints[0]
    assert rate_constraint(row).linear() == original.linear()


def test_the_text_table_shows_each_side_and_the_difference():
    row = model_report(Definition("hinge", 0.0, 0.0, rates=[(0, tpr_rule(), None)]),
                       examples(), mixture(), 1e-3)
    table = report_table(DataReport(examples=N, models={"mixture": row}), "training")
    lines = dict(line.strip().rsplit(None, 1) for line in table.splitlines()[2:])
    constraint = row.constraints[0]
    assert float(lines["lhs"]) == pytest.approx(constraint.lhs, abs=1e-4)
    assert float(lines["rhs"]) == pytest.approx(constraint.rhs, abs=1e-4)
    assert float(lines["lhs - rhs"]) == pytest.approx(constraint.difference, abs=1e-4)
    assert any(label.startswith("0.9*true_positive_rate(all)") for label in lines)
