"""Every constraint type of the spec has a record, and each record compiles, evaluates and
projects its blocks as it says (evaluation against plain numpy on the spec's own numbers)."""

from __future__ import annotations

import typing

import numpy as np
import pytest

from worker.model_types import MODEL_TYPES
from worker.problem.compile import DataSource, compile_problem
from worker.problem.compile_network import compile_network_problem
from worker.problem.constraint_types import CONSTRAINT_TYPES, GROUP_LOSSES, RATES, ROWS
from worker.projection import project
from worker.settings import data_settings
from worker.spec.models import Constraint, parse_spec

D = 4
RNG = np.random.default_rng(0)
FEATURES = RNG.normal(size=(30, D))
LABELS = np.where(FEATURES[:, 0] > 0, 1.0, -1.0)
A = np.array([[1.0, 2.0, 0.0, -1.0], [0.0, 0.0, 3.0, 4.0]])
B = np.array([0.5, 1.0])
SQRT_HALF = np.sqrt(0.5)


def order_values(pairs: list[tuple[int, int]], w: np.ndarray) -> np.ndarray:
    """(w_i - w_j) / sqrt(2) for each pair (i, j) meaning w_i <= w_j."""
    return np.array([(w[i] - w[j]) * SQRT_HALF for i, j in pairs])


#: Per type: one block of it, and g(w) of that block in plain numpy.
EXAMPLES = {
    "linear": ({"type": "linear", "A": A.tolist(), "b": B.tolist()},
               lambda w: (A @ w - B) / np.linalg.norm(A, axis=1)),
    "ordering": ({"type": "ordering", "chain": [2, 0, 3]},
                 lambda w: order_values([(2, 0), (0, 3)], w)),
    "monotone_lattice": ({"type": "monotone_lattice", "shape": [2, 2], "increasing": [0, 1]},
                         lambda w: order_values([(0, 2), (1, 3), (0, 1), (2, 3)], w)),
    "rate": ({"type": "rate", "lhs": {"metric": "positive_prediction_rate"}, "op": "<=",
              "rhs": 0.5},
             lambda w: np.array([np.mean(FEATURES @ w > 0) - 0.5])),
    "group_loss": ({"type": "group_loss", "group": None, "loss": "hinge", "rhs": 0.5},
                   lambda w: np.array([np.maximum(0.0, 1.0 - LABELS * (FEATURES @ w)).mean()
                                       - 0.5])),
}


def spec_constraint_models() -> dict[str, type]:
    """The spec's ``type`` -> model, from the members of its ``Constraint`` union."""
    union = typing.get_args(Constraint)[0]
    return {typing.get_args(model.model_fields["type"].annotation)[0]: model
            for model in typing.get_args(union)}


def compiled(block: dict):
    """The problem of one block: a network problem for a type the network games play."""
    spec = parse_spec({
        "dimension": D, "bounds": {"lower": -1.0, "upper": 1.0},
        "objective": {"type": "empirical_risk", "loss": "hinge",
                      "data": {"features": FEATURES.tolist(), "labels": LABELS.tolist()}},
        "constraints": [block]})
    if spec.network:
        return compile_network_problem(spec, DataSource([], data_settings()),
                                       MODEL_TYPES[spec.model.type])
    return compile_problem(spec, DataSource([], data_settings()))


def test_every_spec_constraint_type_has_a_record_naming_its_model():
    assert {name: record.model for name, record in CONSTRAINT_TYPES.items()} \
        == spec_constraint_models()
    assert set(EXAMPLES) == set(CONSTRAINT_TYPES)


@pytest.mark.parametrize("name", list(CONSTRAINT_TYPES))
def test_compiled_blocks_evaluate_as_their_numpy_reference(name):
    record, (block, reference) = CONSTRAINT_TYPES[name], EXAMPLES[name]
    problem = compiled(block)
    form = problem.constraints if record.form == ROWS else problem.rates \
        if record.form == RATES else problem
    assert (problem.rates is None) == (record.form != RATES)
    for w in np.random.default_rng(1).normal(size=(5, D)):
        point = w[None, :] if record.form == GROUP_LOSSES else w    # parameters (T, P)
        np.testing.assert_allclose(np.ravel(record.evaluate(form, point)), reference(w),
                                   atol=1e-12)


@pytest.mark.parametrize("name", [n for n, r in CONSTRAINT_TYPES.items() if r.form == ROWS])
def test_row_types_take_their_projection_path(name):
    problem = compiled(EXAMPLES[name][0])
    point = np.array([0.9, -0.7, 0.4, -0.2])
    projection = project(point, problem.constraints, problem.lower, problem.upper)
    assert projection.status == "optimal"
    assert projection.method == CONSTRAINT_TYPES[name].projection


def test_only_row_types_are_projected():
    for record in CONSTRAINT_TYPES.values():
        assert (record.projection is None) == (record.form != ROWS), record.name


@pytest.mark.parametrize("name", [n for n, r in CONSTRAINT_TYPES.items() if r.form == ROWS])
def test_declared_rows_are_the_compiled_rows_or_none(name):
    record, block = CONSTRAINT_TYPES[name], EXAMPLES[name][0]
    rows, nonzeros = record.declared(parse_spec({
        "dimension": D, "objective": {"type": "quadratic", "Q": np.eye(D).tolist()},
        "constraints": [block]}).constraints[0])
    matrix = compiled(block).constraints.matrix
    assert (rows, nonzeros) in {(0, 0), (matrix.shape[0], matrix.nnz)}
    assert (rows, nonzeros) != (0, 0) or name == "linear"   # only linear rows are in data
