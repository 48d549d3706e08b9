"""A rate objective's report: the objective's true (weighted) rate and the constraints on
training and validation data, and ``lighttouch report`` recomputing them on other rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.test_cli import run_cli
from worker import solve


def data(seed: int, n: int):
    """A 1-D score whose positives sit 1.5 higher, as (score, 1) features, and labels."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.uniform(size=n) < 0.4, 1.0, -1.0)
    score = rng.normal(size=n) + 1.5 * (y > 0)
    return np.column_stack([score, np.ones(n)]), y


def rates(result, x, y, c=None) -> tuple[float, float]:
    """The mixture's expected (TPR, FPR), each row weighing c (None: 1)."""
    c = np.ones(y.size) if c is None else c
    weights = np.array([m.weight for m in result.mixture])
    members = np.array([m.solution for m in result.mixture])
    positive = (x @ members.T > 0).astype(float) @ (weights / weights.sum())
    return (float(np.average(positive[y > 0], weights=c[y > 0])),
            float(np.average(positive[y < 0], weights=c[y < 0])))


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rate_objective_report")
    x, y = data(0, 300)
    held_x, held_y = data(1, 200)
    c = np.random.default_rng(2).uniform(0.2, 2.0, y.size)
    spec = {"objective": {"type": "rate", "metric": "false_positive_rate",
                          "data": {"features": x.tolist(), "labels": y.tolist(),
                                   "weights": c.tolist()}},
            "constraints": [{"type": "rate", "lhs": {"metric": "true_positive_rate"},
                             "op": ">=", "rhs": 0.8}],
            "validation": {"features": held_x.tolist(), "labels": held_y.tolist()},
            "solver": {"seed": 0}}
    result = solve(spec)
    np.save(folder / "x.npy", held_x)
    np.save(folder / "y.npy", held_y)
    (folder / "result.json").write_text(result.model_dump_json())
    return folder, result, (x, y, c), (held_x, held_y)


def test_the_report_gives_the_true_rate_and_the_constraint(solved):
    _, result, (x, y, c), (held_x, held_y) = solved
    report = result.report
    assert report is not None and not any("no report" in n for n in result.notes)
    definition = report.objective
    assert (definition.metric, definition.group, definition.loss, definition.weighted) == \
        ("false_positive_rate", None, None, True)
    tpr, fpr = rates(result, x, y, c)
    mixture = report.training.models["mixture"]
    assert mixture.objective == pytest.approx(fpr, abs=1e-12)
    assert mixture.objective == pytest.approx(result.expected.objective, abs=1e-12)
    (row,) = mixture.constraints
    assert row.terms[0].value == pytest.approx(tpr, abs=1e-12)
    held_tpr, held_fpr = rates(result, held_x, held_y)
    held = report.validation.models["mixture"]
    assert held.objective == pytest.approx(held_fpr, abs=1e-12)
    assert held.constraints[0].terms[0].value == pytest.approx(held_tpr, abs=1e-12)


def test_lighttouch_report_recomputes_the_rate(solved):
    folder, result, _, (held_x, held_y) = solved
    args = ["report", str(folder / "result.json"), str(folder / "x.npy"), "--labels",
            str(folder / "y.npy")]
    done = run_cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)["validation"]["models"]["mixture"]
    assert again["objective"] == pytest.approx(rates(result, held_x, held_y)[1], abs=1e-12)
    table = run_cli(*args)
    assert table.returncode == 0, table.stderr
    assert "true_positive_rate(all)" in table.stdout
    (line,) = [line for line in table.stdout.splitlines() if line.startswith("objective")]
    assert f"{again['objective']:.4g}" in line
