"""Every model type of the spec has a record, and each record's layout, declared parameters
and Result round trip agree."""

from __future__ import annotations

import typing

import pytest

from worker.problem.model_types import MODEL_TYPES
from worker.spec.model_types import Model
from worker.spec.models import parse_spec

#: Per type: one ``model`` block of it.
EXAMPLES = {"linear": {"type": "linear"}, "mlp": {"type": "mlp", "hidden": [3, 2]}}


def spec_model_types() -> dict[str, type]:
    """The spec's ``type`` -> model, from the members of its ``Model`` union."""
    union = typing.get_args(Model)[0]
    return {typing.get_args(model.model_fields["type"].annotation)[0]: model
            for model in typing.get_args(union)}


def model_of(block: dict):
    return parse_spec({"dimension": 4, "model": block, "objective": {
        "type": "empirical_risk", "loss": "hinge",
        "data": {"features": [[1.0, 0.0, 0.0, 1.0]], "labels": [1.0]}}}).model


def test_every_spec_model_type_has_a_record_naming_its_model():
    assert {name: record.model for name, record in MODEL_TYPES.items()} == spec_model_types()
    assert set(EXAMPLES) == set(MODEL_TYPES)


@pytest.mark.parametrize("name", list(MODEL_TYPES))
def test_declared_parameters_are_the_layouts_and_results_restore_it(name):
    record, model = MODEL_TYPES[name], model_of(EXAMPLES[name])
    network = record.layers(model, 4, 1)
    assert network.inputs == 4 and network.outputs == 1
    assert record.declared_parameters(model, 4) == network.parameters
    assert record.from_result(network.sizes, network.bias) == network
