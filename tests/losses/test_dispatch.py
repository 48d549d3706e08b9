"""The kernels' loss dispatch (``_loss`` of :mod:`worker.kernels.objective`) is checked
against the table :data:`worker.losses.LOSSES`: one branch per registered loss, comparing
its code and calling that loss's own ``value`` and ``slope``, and no other branch."""

from __future__ import annotations

import ast
import inspect

import pytest

from worker.kernels import objective
from worker.kernels.objective import loss_value
from worker.losses import BY_CODE, LOSSES, QUADRATIC


def dispatch_branches() -> dict[str, set[str]]:
    """module alias -> the attributes its ``if kind == <module>.CODE`` branch uses."""
    tree = ast.parse(inspect.getsource(objective))
    function = next(node for node in tree.body
                    if isinstance(node, ast.FunctionDef) and node.name == "_loss")
    branches: dict[str, set[str]] = {}
    for node in function.body:
        if not isinstance(node, ast.If):
            continue
        compared = node.test.comparators[0]
        assert isinstance(compared, ast.Attribute) and compared.attr == "CODE"
        module = compared.value.id
        branches[module] = {sub.attr for sub in ast.walk(ast.Module(node.body, []))
                            if isinstance(sub, ast.Attribute)
                            and isinstance(sub.value, ast.Name) and sub.value.id == module}
    return branches


def test_every_registered_loss_has_exactly_its_own_branch():
    modules = {record.value.__module__.rsplit(".", 1)[1]: record for record in LOSSES.values()}
    branches = dispatch_branches()
    assert set(branches) == set(modules), "one branch of _loss per record of LOSSES"
    for name, used in branches.items():
        assert used == {"value", "slope"}, f"{name}'s branch calls {used}"
        assert getattr(objective, name).CODE == modules[name].code


def test_codes_are_unique_and_an_unknown_code_raises():
    assert len(BY_CODE) == len(LOSSES) and QUADRATIC not in BY_CODE
    with pytest.raises(ValueError, match="unknown loss code"):
        loss_value(max(BY_CODE) + 100, 0.0, 1.0)
