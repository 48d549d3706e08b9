"""Every constraint type of the spec compiles: linear ones by CONSTRAINT_BLOCKS, rates apart."""

from __future__ import annotations

import typing

from worker.problem.compile import CONSTRAINT_BLOCKS
from worker.spec.models import Constraint


def spec_constraint_types() -> set[str]:
    union = typing.get_args(Constraint)[0]
    return {typing.get_args(model.model_fields["type"].annotation)[0]
            for model in typing.get_args(union)}


def test_every_linear_constraint_type_has_a_compile_entry():
    assert spec_constraint_types() == set(CONSTRAINT_BLOCKS) | {"rate"}
