"""Every model type of the spec has a record, and each record's layout, declared parameters,
Result description and deployment agree with what the pipeline builds."""

from __future__ import annotations

import typing

import numpy as np
import pytest

from tests.tables.raw import write_table
from worker.model_types import MODEL_TYPES
from worker.pipeline.solve import solve
from worker.pipeline.validate import summarize_spec
from worker.problem.compile import DataSource
from worker.result import CalibratedModel, NetworkModel, Result
from worker.settings import data_settings
from worker.spec.model_types import MODELS
from worker.spec.models import parse_spec
from worker.tables.read import as_table

#: Per type: one ``model`` block of it (a calibrated one over the columns of :func:`rows`,
#: every size fixed by the spec).
EXAMPLES = {
    "linear": {"type": "linear"},
    "mlp": {"type": "mlp", "hidden": [3, 2]},
    "calibrated_linear": {"type": "calibrated_linear", "features": [
        {"column": "x", "keypoints": [0.0, 1.0, 3.0]}, {"column": "c", "categories": ["p", "q"]}]},
    "calibrated_lattice": {"type": "calibrated_lattice", "lattice": {"sizes": [3, 2]},
                           "features": [{"column": "x"}, {"column": "c",
                                                          "categories": ["p", "q"]}]},
}


def rows(n: int = 40) -> dict:
    rng = np.random.default_rng(0)
    x, c = rng.uniform(0, 3, n), rng.choice(["p", "q"], n)
    return {"x": x, "c": c, "y": np.where(x + (c == "q") > 2, 1, -1)}


def spec_model_types() -> dict[str, type]:
    """The spec's ``type`` -> model, from the members of its ``Model`` union."""
    return {typing.get_args(model.model_fields["type"].annotation)[0]: model for model in MODELS}


def spec_of(name: str, root) -> dict:
    if MODEL_TYPES[name].model.reads_tables:
        data = {"table": write_table(root / "t", rows()), "label": "y"}
        return {"bounds": {"lower": -3, "upper": 3}, "model": EXAMPLES[name],
                "objective": {"type": "empirical_risk", "loss": "hinge", "data": data},
                "solver": {"iterations": 2000}}
    return {"dimension": 4, "model": EXAMPLES[name], "objective": {
        "type": "empirical_risk", "loss": "hinge",
        "data": {"features": [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]], "labels": [1.0, -1.0]}},
        "solver": {"iterations": 2000}}


def test_every_spec_model_type_has_a_record_naming_its_model():
    assert {name: record.model for name, record in MODEL_TYPES.items()} == spec_model_types()
    assert set(EXAMPLES) == set(MODEL_TYPES)


def test_the_results_model_enums_are_the_records_names():
    for description in (NetworkModel, CalibratedModel):
        names = set(typing.get_args(description.model_fields["type"].annotation))
        assert names == {name for name, record in MODEL_TYPES.items()
                         if record.description is description}


@pytest.mark.parametrize("name", [n for n, r in MODEL_TYPES.items() if r.network_layers])
def test_declared_parameters_are_the_layouts_and_results_restore_it(name):
    record, model = MODEL_TYPES[name], parse_spec(spec_of(name, None)).model
    network = record.layers(model, 4, 1)
    assert network.inputs == 4 and network.outputs == 1
    assert record.declared_parameters(model, 4) == network.parameters
    description = NetworkModel(type=name, sizes=list(network.sizes), bias=network.bias)
    assert record.deploy(description).network == network


@pytest.mark.parametrize("name", [n for n, r in MODEL_TYPES.items() if r.model.reads_tables])
def test_a_table_model_declares_its_parameters_and_its_result_scores_raw_rows(name, tmp_path):
    spec = spec_of(name, tmp_path)
    record, model = MODEL_TYPES[name], parse_spec(spec).model
    summary = summarize_spec(spec, roots=[tmp_path])
    assert record.declared_parameters(model, 0) == summary["sizes"]["parameters"]
    lowered = record.lower(parse_spec(spec), DataSource([tmp_path], settings=data_settings()))
    assert lowered.spec.model.type == "linear"
    result = Result.model_validate(solve(spec, roots=[tmp_path]).model_dump())
    assert isinstance(result.model, record.description) and result.model.type == name
    deployed = record.deploy(result.model)
    assert deployed.network is None
    features = deployed.rows.features(as_table(rows()))
    np.testing.assert_allclose(features.toarray(),
                               lowered.source.matrix(lowered.spec.objective.data.features,
                                                     "f").toarray())
