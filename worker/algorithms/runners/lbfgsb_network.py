"""L-BFGS-B on a network problem whose only constraint is the box: an MLP or a K-class
softmax model trained on one smooth objective (:func:`worker.losses.is_smooth`; not a
``max_of``), without rate constraints, by full batches.

Every evaluation is one forward and backward pass over all the examples
(:func:`~worker.kernels.network.full_loss_gradient`), plus the l2 term; l1 goes through the
split of :mod:`.lbfgsb` (:func:`~worker.algorithms.runners.lbfgsb.minimize_in_box`, which also holds
the stopping tests: the relative decrease tied to ``solver.tolerance``, the iteration cap and
the deadline). It starts where the network games do: the network's seeded theta(1)
(:meth:`~worker.problem.network.Network.initial`), or a warm start's point, so the same spec
and seed give the same answer. A network's objective is not convex, so the answer carries no
certificate (``certificate: "none"``): it is a point where L-BFGS-B's tests passed.
"""

from __future__ import annotations

import time

import numpy as np

from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.one_answer import answer_trajectory, refuse
from worker.algorithms.run.options import SolverOptions, start_point
from worker.algorithms.runners.lbfgsb import minimize_in_box
from worker.candidates.trajectory import Trajectory
from worker.kernels.network import full_loss_gradient
from worker.losses import is_smooth
from worker.problem.csr import kernel_parts
from worker.problem.network import NetworkProblem


def network_box_only(problem: NetworkProblem) -> bool:
    """Whether L-BFGS-B applies to a network problem: one term (not robust) of a
    smooth loss (:func:`worker.losses.is_smooth`), no rate and no group-loss constraints."""
    return (not problem.robust and len(problem.terms) == 1 and problem.rates is None
            and not problem.bounded and is_smooth(problem.terms[0].code))


def run_network_lbfgsb(problem: NetworkProblem, options: SolverOptions,
                       progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """L-BFGS-B from the network's theta(1) on the full batch (module docstring)."""
    if not network_box_only(problem):
        raise refuse("lbfgsb", "trains a network on one smooth objective (not a max_of) "
                     "whose only constraint is the box; rate and group_loss constraints need "
                     "the games (proxy_lagrangian or lagrangian)")
    began = time.perf_counter()
    term, net = problem.terms[0], problem.network.arrays()
    rows = kernel_parts(term.features)
    labels = np.ascontiguousarray(term.labels, dtype=np.float64)
    weights = term.row_weights()
    gradient = np.empty(problem.d)

    def smooth_part(theta: np.ndarray) -> tuple[float, np.ndarray]:
        value = full_loss_gradient(net, theta, *rows, labels, weights, term.code, gradient)
        return value + 0.5 * term.l2 * float(theta @ theta), gradient + term.l2 * theta

    start = start_point(problem, options, problem.network.initial(problem.init_seed))
    theta, stats = minimize_in_box(smooth_part, start, problem.lower, problem.upper, term.l1,
                                   options.tolerance, deadline)
    theta = np.clip(theta, problem.lower, problem.upper)
    return answer_trajectory(
        "lbfgsb", theta, lambda: (float(problem.term_losses(theta[None, :]).max()),
                                  problem.box_violation(theta)),
        stats | {"certificate": "none"}, began, progress)
