"""Every loss of :data:`worker.losses.LOSSES` solved by every method ``auto`` may pick for a
linear model (:mod:`worker.algorithms.method_choice`: L-BFGS-B, the exact methods, the
LightTouch family, the proxy-Lagrangian game) against CVXPY's optimum of the loss's own
reference (:attr:`worker.losses.Loss.exact_reference`); a method that cannot take a loss
refuses it by name."""

from __future__ import annotations

import itertools

import pytest

from tests.specs import exact_optimum, random_spec
from worker import solve
from worker.catalogue import CATALOGUE
from worker.errors import LossRefused
from worker.losses import LOSSES

#: The methods of the rules of worker.algorithms.method_choice, with the largest relative gap
#: of the projected answer each may leave at 5,000 iterations on these problems, about three
#: times the worst measured over the losses (Epro-SGD's constant steps: 2.7e-2; L-BFGS-B
#: 1.0e-7, the exact methods 4e-10; the others 3.6e-3 or less).
AUTO_PICKS = {"lbfgsb": 1e-6, "exact_qp": 1e-8, "exact_conic": 1e-8, "fulltouch": 1e-2,
              "lighttouch": 1e-2, "epro_sgd": 8e-2, "epro_orda": 1e-2,
              "proxy_lagrangian": 1e-3}
CASES = [(loss, name) for loss, name in itertools.product(LOSSES, AUTO_PICKS)
         if CATALOGUE[name].takes(LOSSES[loss])]
REFUSED = [(loss, name) for loss, name in itertools.product(LOSSES, AUTO_PICKS)
           if not CATALOGUE[name].takes(LOSSES[loss])]


def problem(loss: str, name: str) -> dict:
    """A small strongly convex problem with an ordering chain (only the box for L-BFGS-B)."""
    spec = random_spec(loss, "none" if name == "lbfgsb" else "ordering_chain", 4, l2=0.2,
                       iterations=5000)
    spec["solver"]["algorithm"] = name
    return spec


@pytest.mark.parametrize(("loss", "name"), CASES)
def test_every_method_auto_may_pick_solves_every_loss_it_takes(loss, name):
    spec = problem(loss, name)
    optimum, _ = exact_optimum(spec)
    result = solve(spec)
    assert result.projected.status == "optimal"
    gap = (result.projected.objective - optimum) / abs(optimum)
    assert -1e-7 <= gap <= AUTO_PICKS[name]


@pytest.mark.parametrize(("loss", "name"), REFUSED)
def test_a_method_refuses_a_loss_it_cannot_take_by_name(loss, name):
    with pytest.raises(LossRefused, match=f"{name} cannot take the {loss} loss") as caught:
        solve(problem(loss, name))
    assert caught.value.takers and name not in caught.value.takers
    assert all(CATALOGUE[taker].takes(LOSSES[loss]) for taker in caught.value.takers)


def test_every_loss_has_an_exact_method_or_none_is_picked():
    for record in LOSSES.values():
        exact = [name for name in ("exact_qp", "exact_conic") if CATALOGUE[name].takes(record)]
        assert bool(exact) == record.has_conic_form
