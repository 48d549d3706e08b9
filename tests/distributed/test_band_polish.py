"""The trust-region polish and the certified lower bound on examples read in partitions
(worker.distributed.band_rows): the partitioned rows answer as the rows in memory do, and a
pointwise hinge job (weighted or not) read in partitions is polished to the exact optimum and
certified, with the same bits on a LocalCluster as in this process."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from tests.distributed.test_weights import weights_file
from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.candidates import lower_bound
from worker.candidates.hinge_lp import SignedRows
from worker.distributed.band_rows import PartitionedRows
from worker.distributed.batch import open_partitioned
from worker.distributed.options import SvrgOptions
from worker.distributed.partitions import plan_files
from worker.settings import data_settings
from worker.spec.models import parse_spec


def hinge_spec(directory, *, n: int = 3000, weighted: bool = False) -> tuple[dict, dict]:
    """(a hinge spec with ordering constraints on n rows in an svmlight file under
    ``directory`` read by svrg_ol in partitions of about 20 kB, the same spec inline)."""
    spec = random_spec("hinge", "ordering_chain", 6, d=8, n=n, iterations=30_000)
    if weighted:
        spec["objective"]["data"]["weights"] = \
            np.random.default_rng(9).uniform(0.1, 3.0, size=n).tolist()
    inline = copy.deepcopy(spec)
    data = spec["objective"]["data"]
    features, labels = np.array(data.pop("features")), np.array(data.pop("labels"))
    dump_svmlight_file(features, labels, str(directory / "train.svm"), zero_based=True)
    data["features"] = {"uri": (directory / "train.svm").as_uri(), "zero_based": True,
                        "n_features": 8}
    if weighted:
        spec = weights_file(spec, directory)
    spec["solver"].update(algorithm="svrg_ol", svrg={"workers": 0})
    return spec, inline


def test_partitioned_rows_read_as_the_rows_in_memory(tmp_path):
    spec, inline = hinge_spec(tmp_path, n=500, weighted=True)
    settings = data_settings()
    plan = plan_files(parse_spec(spec), [tmp_path], 10**6, 2000, settings)
    with open_partitioned(plan, SvrgOptions(workers=0), 0, settings) as batch:
        rows = PartitionedRows(batch)
        data = inline["objective"]["data"]
        weights = np.asarray(data["weights"])
        memory = SignedRows(sp.csr_matrix(np.asarray(data["features"])), np.asarray(data["labels"]),
                            weights / weights.mean())
        rng = np.random.default_rng(4)
        w, alpha = rng.normal(size=8), rng.uniform(size=500)
        assert len(batch.parts) >= 4
        np.testing.assert_allclose(rows.margins(w), memory.margins(w), atol=1e-12)
        np.testing.assert_allclose(rows.weights, memory.weights, rtol=1e-12)
        np.testing.assert_allclose(rows.reach(), np.abs(np.asarray(data["features"])).sum(1),
                                   rtol=1e-12)
        np.testing.assert_allclose(rows.transpose_dot(alpha), memory.transpose_dot(alpha),
                                   atol=1e-10)
        assert rows.mass(alpha) == pytest.approx(memory.mass(alpha), rel=1e-12)
        kept = np.array([0, 7, 123, 499])
        np.testing.assert_allclose(rows.take(kept).toarray(), memory.take(kept).toarray(),
                                   atol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_partitioned_hinge_job_is_polished_to_the_optimum_and_certified(tmp_path, weighted):
    spec, inline = hinge_spec(tmp_path, weighted=weighted)
    result = solve(spec, roots=[tmp_path])
    optimum, _ = exact_optimum(inline)
    stats = result.stats
    assert stats["partitions"] >= 1 and stats["polish_rounds"] >= 1
    answer = result.projected.objective
    assert result.projected.max_violation <= 1e-6
    assert optimum - 1e-7 <= answer <= optimum + 1e-4 * max(1.0, abs(optimum))
    assert stats["lower_bound"] <= optimum + 1e-7
    assert stats["relative_gap"] <= 1e-3


def test_the_polish_on_partitions_gives_the_same_bits_on_a_cluster(tmp_path, cluster,
                                                                   monkeypatch):
    monkeypatch.setenv("LIGHTTOUCH_DASK_SCHEDULER", cluster.scheduler_address)
    monkeypatch.setenv("LIGHTTOUCH_PARTITION_BYTES", "20000")
    spec, _ = hinge_spec(tmp_path, weighted=True)
    in_process = solve(copy.deepcopy(spec), roots=[tmp_path])
    spec["solver"]["svrg"]["workers"] = 2
    on_cluster = solve(spec, roots=[tmp_path])
    assert on_cluster.stats["batch_workers"] == 2 and on_cluster.stats["partitions"] >= 4
    assert on_cluster.projected.solution == in_process.projected.solution
    assert on_cluster.stats["lower_bound"] == in_process.stats["lower_bound"]
    assert on_cluster.stats["polish_rounds"] == in_process.stats["polish_rounds"] >= 1


def test_an_order_at_scale_is_polished_by_the_primal_dual_method_on_partitions(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setattr(lower_bound, "PDLP_ROWS", 1)      # an order at scale
    spec, inline = hinge_spec(tmp_path, weighted=True)
    spec["solver"]["time_limit_s"] = 30
    result = solve(spec, roots=[tmp_path])
    optimum, _ = exact_optimum(inline)
    stats = result.stats
    assert stats["partitions"] >= 1 and stats["polish_method"] == "primal_dual"
    assert result.projected.max_violation <= 1e-6
    assert optimum - 1e-7 <= result.projected.objective <= optimum + 2e-3 * abs(optimum)
    assert stats["lower_bound_status"] == "ascent"
    assert optimum - 0.05 * abs(optimum) <= stats["lower_bound"] <= optimum + 1e-7
