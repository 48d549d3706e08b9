"""``lighttouch report`` as a real process: the table, the JSON equal to the solver's own
report on the same rows, and exit code 3 when a constraint fails on the data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.problem.test_rates import rate_spec, term
from tests.test_cli import run_cli
from worker import solve

RULE = [{"type": "rate", "lhs": term("positive_prediction_rate", "a"), "op": ">=", "rhs": 0.4}]


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    spec = rate_spec(RULE, iterations=1500)
    result = solve(spec)
    (folder / "result.json").write_text(result.model_dump_json())
    data = spec["objective"]["data"]
    np.save(folder / "x.npy", np.array(data["features"]))
    np.save(folder / "y.npy", np.array(data["labels"]))
    np.save(folder / "a.npy", np.array(data["groups"]["a"]))
    return folder, result


def test_report_on_the_training_rows_repeats_the_training_report(solved):
    folder, result = solved
    done = run_cli("report", str(folder / "result.json"), str(folder / "x.npy"),
                   "--labels", str(folder / "y.npy"), "--groups", f"a={folder / 'a.npy'}",
                   "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for name, model in result.report.training.models.items():
        again = report["validation"]["models"][name]
        assert again["objective"] == pytest.approx(model.objective, rel=1e-12)
        assert again["error"] == pytest.approx(model.error, rel=1e-12)
        rate = again["constraints"][0]["terms"][0]
        assert rate["value"] == pytest.approx(model.constraints[0].terms[0].value, abs=1e-12)
        assert rate["interval"][0] <= rate["value"] <= rate["interval"][1]
    table = run_cli("report", str(folder / "result.json"), str(folder / "x.npy"),
                    "--labels", str(folder / "y.npy"), "--groups", f"a={folder / 'a.npy'}")
    assert table.returncode == 0 and "positive_prediction_rate(a)" in table.stdout
    assert "deterministic" in table.stdout and "constraints[0] rate" in table.stdout


def test_a_constraint_failing_on_the_data_exits_3(solved):
    folder, result = solved
    x = np.load(folder / "x.npy")
    negative = x @ np.array(result.deterministic.solution) <= 0
    assert negative.any()
    np.save(folder / "x_neg.npy", x[negative])
    np.save(folder / "a_neg.npy", np.ones(int(negative.sum())))
    done = run_cli("report", str(folder / "result.json"), str(folder / "x_neg.npy"),
                   "--groups", f"a={folder / 'a_neg.npy'}", "--model", "deterministic")
    assert done.returncode == 3
    assert "deterministic: constraints[0] violated beyond tolerance 0.001" in done.stderr
    assert "0.4*1" in done.stdout  # g = 0.4 - 0, one row violated


def test_bad_groups_and_widths_are_named(solved):
    folder, _ = solved
    np.save(folder / "wide.npy", np.ones((3, 7)))
    done = run_cli("report", str(folder / "result.json"), str(folder / "wide.npy"))
    assert done.returncode == 1
    assert "7 columns; the result's model takes 5" in " ".join(done.stderr.split())
    done = run_cli("report", str(folder / "result.json"), str(folder / "x.npy"),
                   "--groups", "a")
    assert done.returncode == 1 and "--groups: 'a': give NAME=FILE" in done.stderr
    done = run_cli("report", str(folder / "result.json"), str(folder / "x.npy"))
    assert done.returncode == 1 and "group 'a' is not among" in done.stderr


@pytest.fixture(scope="module")
def table_solved(tmp_path_factory):
    """A calibrated model with equal opportunity for groups a and b, named by column, and
    its training table as a csv file."""
    folder = tmp_path_factory.mktemp("table_report")
    rng = np.random.default_rng(5)
    x, g = rng.normal(size=400), np.where(rng.random(400) < 0.3, "a", "b")
    y = np.where(x + 0.8 * (g == "b") + rng.normal(size=400) > 0.4, "yes", "no")
    text = "x,g,y\n" + "".join(f"{v:.4f},{k},{t}\n" for v, k, t in zip(x, g, y, strict=True))
    (folder / "table.csv").write_text(text)
    rules = [{"type": "rate", "op": ">=", "lhs": term("true_positive_rate", name),
              "rhs": {"metric": "true_positive_rate", "scale": 0.9}} for name in ("a", "b")]
    spec = {"spec_version": 1, "bounds": {"lower": -5, "upper": 5},
            "model": {"type": "calibrated_linear", "features": [
                {"column": "x", "keypoints": 4}, {"column": "g", "categories": "auto"}]},
            "objective": {"type": "empirical_risk", "loss": "hinge", "data": {
                "table": {"uri": (folder / "table.csv").as_uri()},
                "label": {"column": "y", "positive": ["yes"]},
                "groups": {name: {"column": "g", "equals": name} for name in ("a", "b")}}},
            "constraints": rules,
            "solver": {"algorithm": "proxy_lagrangian", "iterations": 2000, "seed": 0},
            "output": {"mixture": True, "project": False}}
    result = solve(spec, roots=[folder])
    (folder / "result.json").write_text(result.model_dump_json())
    np.save(folder / "a.npy", (g == "a").astype(float))
    np.save(folder / "b.npy", (g == "b").astype(float))
    return folder, result


def test_report_on_raw_table_rows_takes_labels_and_groups_from_columns(table_solved):
    """On its own training table, the report repeats the training report: the raw rows
    calibrated as the solve did, text labels by --positive-label, groups by column."""
    folder, result = table_solved
    done = run_cli("report", str(folder / "result.json"), str(folder / "table.csv"),
                   "--label-column", "y", "--positive-label", "yes",
                   "--group", "a=g=a", "--group", 'b={"column": "g", "in": ["b"]}', "--json")
    assert done.returncode in (0, 3), done.stderr
    report = json.loads(done.stdout)["validation"]
    assert report["examples"] == 400
    for name, model in result.report.training.models.items():
        again = report["models"][name]
        assert again["objective"] == pytest.approx(model.objective, rel=1e-12)
        assert again["error"] == pytest.approx(model.error, rel=1e-12)
        for before, after in zip(model.constraints, again["constraints"], strict=True):
            assert after["worst"] == pytest.approx(before.worst, rel=1e-9, abs=1e-12)
    files = run_cli("report", str(folder / "result.json"), str(folder / "table.csv"),
                    "--label-column", "y", "--positive-label", "yes",
                    "--groups", f"a={folder / 'a.npy'}", "--groups", f"b={folder / 'b.npy'}",
                    "--json")
    assert files.returncode == done.returncode, files.stderr
    assert json.loads(files.stdout)["validation"] == report     # both --groups kept


def test_a_table_report_names_what_is_missing(table_solved):
    folder, _ = table_solved
    result, table = str(folder / "result.json"), str(folder / "table.csv")
    done = run_cli("report", result, table, "--label-column", "y")
    assert done.returncode == 1 and "--label-column" in done.stderr and \
        "name the positive classes" in done.stderr, done.stderr
    done = run_cli("report", result, table, "--label-column", "y", "--positive-label", "yes",
                   "--group", "a=g=a")
    assert done.returncode == 1 and "group 'b' is not among the report's data groups (a)" in \
        done.stderr, done.stderr
    done = run_cli("report", result, table, "--group", "a=sex=F")
    assert done.returncode == 1 and "no column 'sex'" in done.stderr, done.stderr


def test_report_on_a_networks_training_rows_repeats_its_training_report(tmp_path):
    """A network takes its input width (not its parameter count) from the data file."""
    rng = np.random.default_rng(0)
    features = rng.normal(size=(200, 3))
    labels = np.where(features[:, 0] + features[:, 1] > 0, 1.0, -1.0)
    spec = {"spec_version": 1, "model": {"type": "mlp", "hidden": [4]},
            "bounds": {"lower": -5, "upper": 5},
            "objective": {"type": "empirical_risk", "loss": "logistic", "l2": 1e-3,
                          "data": {"features": features.tolist(), "labels": labels.tolist()}},
            "solver": {"algorithm": "lagrangian", "iterations": 2000, "seed": 0},
            "output": {"mixture": True}}
    result = solve(spec)
    (tmp_path / "result.json").write_text(result.model_dump_json())
    np.save(tmp_path / "x.npy", features)
    np.save(tmp_path / "y.npy", labels)
    done = run_cli("report", str(tmp_path / "result.json"), str(tmp_path / "x.npy"),
                   "--labels", str(tmp_path / "y.npy"), "--json")
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)["validation"]["models"]
    for name, model in result.report.training.models.items():
        assert again[name]["objective"] == pytest.approx(model.objective, rel=1e-9)
        assert again[name]["error"] == pytest.approx(model.error, rel=1e-9)
