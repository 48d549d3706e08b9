"""``validate`` sees a job as ``solve`` does (:mod:`worker.pipeline.prologue`): rows left in
partitions are planned and counted, and a held-out share is left out of the sizes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.specs import random_spec
from worker import solve
from worker.errors import SpecError
from worker.pipeline.validate import summarize_spec


def partitioned_spec(directory) -> dict:
    """SVRG OL on examples in .npy files (read in partitions)."""
    spec = random_spec("logistic", "mixed", 4, n=200, iterations=2000)
    data = spec["objective"]["data"]
    np.save(directory / "x.npy", np.array(data.pop("features")))
    np.save(directory / "y.npy", np.array(data.pop("labels")))
    data.update(features={"uri": (directory / "x.npy").as_uri()},
                labels={"uri": (directory / "y.npy").as_uri()})
    spec["solver"].update(algorithm="svrg_ol", svrg={"workers": 0, "partition_rows": 37})
    return spec


def test_validate_plans_partitions_as_solve_does(tmp_path):
    spec = partitioned_spec(tmp_path)
    summary = summarize_spec(spec, roots=[tmp_path])
    result = solve(spec, roots=[tmp_path])
    assert result.stats["partitions"] >= 3
    assert summary["algorithm"] == result.algorithm == "svrg_ol"
    assert summary["sizes"]["examples"] == result.sizes.examples == 200


def test_validate_refuses_a_held_out_share_of_partitions_as_solve_does(tmp_path):
    spec = partitioned_spec(tmp_path)
    spec["validation"] = {"fraction": 0.25}
    for run in (summarize_spec, solve):
        with pytest.raises(SpecError, match="validation.fraction: a share of rows cannot"):
            run(spec, roots=[tmp_path])


def test_validate_counts_the_rows_solve_trains_on():
    spec = random_spec("hinge", "linear", 5, n=100, iterations=500)
    spec["validation"] = {"fraction": 0.25, "seed": 1}
    summary = summarize_spec(spec)
    assert summary["sizes"]["examples"] == solve(spec).sizes.examples == 75
