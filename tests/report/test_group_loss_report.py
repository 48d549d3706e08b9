"""A group loss in the report: its mean loss against the bound on training and validation
data, and ``lighttouch report`` on other rows recomputing it and showing it in the table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.problem.test_rates import rate_spec
from tests.test_cli import run_cli
from worker import solve
from worker.losses import LOSSES

RULE = [{"type": "group_loss", "group": "a", "loss": "logistic", "rhs": 0.55}]


def mean_loss(points, weights, x, y, rows) -> float:
    """The mixture's expected mean logistic loss on ``rows``."""
    return float(sum(p * LOSSES["logistic"].reference_value(x[rows] @ np.array(w), y[rows])
                     .mean() for w, p in zip(points, weights, strict=True)))


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("group_loss_report")
    spec = rate_spec(RULE, loss="logistic", algorithm="auto")
    data = spec["objective"]["data"]
    x, y = np.array(data["features"]), np.array(data["labels"])
    a = np.array(data["groups"]["a"])
    spec["validation"] = {"features": x[::-1].tolist(), "labels": y[::-1].tolist(),
                          "groups": {"a": a[::-1].tolist()}}
    result = solve(spec)
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", y)
    np.save(folder / "a.npy", a)
    (folder / "result.json").write_text(result.model_dump_json())
    return folder, result, x, y, a > 0


def test_the_report_gives_the_groups_mean_loss_against_the_bound(solved):
    _, result, x, y, rows = solved
    mixture = result.report.training.models["mixture"]
    (row,) = mixture.constraints
    points = [m.solution for m in result.mixture]
    weights = [m.weight for m in result.mixture]
    assert (row.type, row.loss, row.group, row.bound, row.examples) == \
        ("group_loss", "logistic", "a", 0.55, int(rows.sum()))
    assert row.lhs == pytest.approx(mean_loss(points, weights, x, y, rows), rel=1e-12)
    assert row.worst == pytest.approx(row.lhs - 0.55, abs=1e-15) == row.difference
    held = result.report.validation.models["mixture"].constraints[0]
    assert held.lhs == pytest.approx(row.lhs, rel=1e-12)    # the same rows, reversed


def test_lighttouch_report_recomputes_and_shows_it(solved):
    folder, result, x, y, rows = solved
    args = ["report", str(folder / "result.json"), str(folder / "x.npy"), "--labels",
            str(folder / "y.npy"), "--groups", f"a={folder / 'a.npy'}"]
    done = run_cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)["validation"]["models"]["mixture"]["constraints"][0]
    assert again["lhs"] == pytest.approx(
        result.report.training.models["mixture"].constraints[0].lhs, rel=1e-12)
    table = run_cli(*args)
    assert table.returncode == 0, table.stderr
    assert "constraints[0] group_loss" in table.stdout
    assert f"mean logistic(a) n={int(rows.sum())}" in table.stdout and "bound" in table.stdout
