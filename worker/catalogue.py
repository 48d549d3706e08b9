"""The algorithms by name: one :class:`Algorithm` record each, with the traits the spec checks.

The spec's ``solver.algorithm`` enum and its network subset (:mod:`worker.spec.models`), the
OpenAPI document, ``GET /v1/algorithms`` (which the dashboard's filter reads) and the runners
(:mod:`worker.algorithms.registry`) all derive from :data:`CATALOGUE`; adding an algorithm
is its module plus one record here. The runner is named by its import path
(``"module:function"``) so that this table imports nothing and the spec can read it; it is
imported when the algorithm first runs.

=================  ===========================================================================
algorithm          what runs (LightTouch paper numbering)
=================  ===========================================================================
fulltouch          Algorithm 1: SGD on f + gamma max(0, max_i g_i), all m checked each step
lighttouch         Algorithm 4 (practical LightTouch; Algorithm 2 with fixed minibatches):
                   sampled constraints i ~ p, multiplicative p-update, §5.2 minibatching,
                   §5.1 aggregation, dense or lazy (sublinear) p-update
midtouch           Algorithm 3: T1 FullTouch steps, then LightTouch with k = 1 from their mean
projected_sgd      SGD with an exact projection onto W ∩ {g <= 0} after every step
epro_sgd           Epro paper, Algorithm 1 (:mod:`worker.algorithms.runners.epro`): doubling
                   epochs of constant-step SGD on f + lambda [max_i g_i]_+, one exact
                   projection per epoch
epro_orda          Epro paper, Algorithm 3 (:mod:`worker.algorithms.runners.epro_orda`): the
                   same epochs running ORDA (Algorithm 2) with exact proximal steps on the
                   regularizer
svrg_ol            SVRG OL (Cutkosky & Busa-Fekete, :mod:`worker.algorithms.runners.svrg_ol`)
lagrangian         Two-player games paper (:mod:`worker.algorithms.runners.games`): Lagrangian
                   game on the hinge-relaxed problem, projected gradient ascent on lambda
proxy_lagrangian   Two-player games paper, Algorithm 2: theta on proxy constraints, swap-regret
                   lambda-player on the true ones (rate constraints need one of these two)
exact_qp           one LP (hinge) or QP solved by Clarabel's interior point to its tolerance
                   (:mod:`worker.algorithms.exact.exact`)
exact_conic        the same, and the logistic loss through exponential cones
lbfgsb             L-BFGS-B on smooth objectives whose only constraint is the box
                   (:mod:`worker.algorithms.runners.lbfgsb`); on a network (an MLP or K
                   scores) with one such objective and no rate constraints, by full batches
                   of forward and backward passes (:mod:`worker.algorithms.runners.lbfgsb_network`)
=================  ===========================================================================
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The name that lets the ``auto`` rule choose
#: (:func:`worker.algorithms.registry.chosen`).
AUTO = "auto"


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: where its runner is and what it takes (its traits)."""

    #: ``"module:function"`` of ``run(problem, options, progress, deadline) -> Trajectory``
    #: (:data:`worker.algorithms.registry.Runner`) on a linear problem.
    runner: str
    #: The ``solver`` sub-block it reads besides the common settings (``"svrg"``, ``"game"``).
    options: str | None = None
    #: It handles rate constraints.
    rates: bool = False
    #: It also trains networks, multiclass and robust problems (their runner is
    #: :attr:`network_runner`, else the network game of
    #: :mod:`worker.algorithms.runners.network_games` played under this name).
    networks: bool = False
    #: ``"module:function"`` of ``run(problem, options, progress, deadline) -> Trajectory`` on
    #: a :class:`~worker.problem.network.NetworkProblem`, for a method of its own on networks.
    network_runner: str | None = None
    #: It needs a strongly convex objective (``objective.l2 > 0``).
    needs_l2: bool = False
    #: It reads examples left in partitions (:mod:`worker.distributed`): its runner then
    #: takes them open as ``source=``.
    partitioned: bool = False
    #: It reads ``pairwise_hinge``'s tables left in partitions (``solver.workers``;
    #: :mod:`worker.distributed.pairs`): its runner then takes them open as ``source=``.
    pairs: bool = False
    #: It returns one answer with its own certificate (the exact and quasi-Newton methods):
    #: the pipeline then neither polishes it nor bounds it again.
    certified: bool = False
    #: What it asks of the objective's loss: names of true properties of its record
    #: (:class:`worker.losses.Loss`: ``"smooth"``, ``"has_conic_form"``, ``"has_qp_form"``);
    #: a loss without one of them is refused by name
    #: (:class:`worker.errors.LossRefused`).
    loss_needs: tuple[str, ...] = ()

    def takes(self, loss: Any) -> bool:
        """Whether it takes ``loss`` (a :class:`worker.losses.Loss`)."""
        return all(getattr(loss, need) for need in self.loss_needs)

    def load(self, *, network: bool = False) -> Callable[..., Any]:
        """The runner function (:attr:`network_runner` if ``network``), imported on first
        use."""
        path = self.network_runner if network else self.runner
        module, _, function = path.partition(":")
        return getattr(importlib.import_module(module), function)


CATALOGUE: dict[str, Algorithm] = {
    "lighttouch": Algorithm("worker.algorithms.runners.touch:run_lighttouch", pairs=True),
    "fulltouch": Algorithm("worker.algorithms.runners.touch:run_fulltouch", pairs=True),
    "midtouch": Algorithm("worker.algorithms.runners.touch:run_midtouch"),
    "projected_sgd": Algorithm("worker.algorithms.runners.touch:run_projected_sgd"),
    "epro_sgd": Algorithm("worker.algorithms.runners.epro:run_epro_sgd", needs_l2=True),
    "epro_orda": Algorithm("worker.algorithms.runners.epro_orda:run_epro_orda", needs_l2=True),
    "svrg_ol": Algorithm("worker.algorithms.runners.svrg_ol:run_svrg_ol", options="svrg",
                         partitioned=True),
    "lagrangian": Algorithm("worker.algorithms.runners.games:run_lagrangian", options="game",
                            rates=True, networks=True, partitioned=True),
    "proxy_lagrangian": Algorithm("worker.algorithms.runners.games:run_proxy_lagrangian",
                                  options="game", rates=True, networks=True,
                                  partitioned=True),
    "exact_qp": Algorithm("worker.algorithms.exact.exact:run_exact_qp", certified=True,
                          loss_needs=("has_qp_form",)),
    "exact_conic": Algorithm("worker.algorithms.exact.exact:run_exact_conic", certified=True,
                             loss_needs=("has_conic_form",)),
    "lbfgsb": Algorithm(
        "worker.algorithms.runners.lbfgsb:run_lbfgsb", certified=True, networks=True,
        partitioned=True,
        network_runner="worker.algorithms.runners.lbfgsb_network:run_network_lbfgsb",
        loss_needs=("smooth",)),
}


def algorithm_names(*, networks: bool = False) -> tuple[str, ...]:
    """``auto`` and the catalogue's names (only those that train networks, if asked), in
    catalogue order: the values ``solver.algorithm`` accepts."""
    return (AUTO, *(name for name, record in CATALOGUE.items()
                    if record.networks or not networks))
