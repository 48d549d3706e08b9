"""``solver.algorithm: "auto"``: the method that reaches the tolerance fastest, and why.

In this order (the first that applies):

0. a rate as the objective (:mod:`worker.problem.rate_objective`): ``proxy_lagrangian``, the
   one method that plays its hinge proxy while scoring the true rate (Cotter et al. 2019,
   Algorithm 2); every other method refuses it (:func:`refuse_rate_objective`).
1. rate constraints: ``proxy_lagrangian`` (their rates have no gradient; only the games
   handle them, Cotter et al. 2019).
2. a smooth objective (:attr:`worker.losses.Loss.smooth`) whose only constraint is the box:
   ``lbfgsb``.
   L-BFGS-B costs one pass over the data per iteration and needs tens to hundreds of them
   for 1e-9, where SGD needs millions of samples for 1e-3 (measured:
   docs/method-choice.md#the-rule).
3. a loss with a conic form (:attr:`worker.losses.Loss.conic`; a loss without one goes to
   rule 4) and a program small enough: ``exact_qp`` (hinge LP, QPs) or ``exact_conic`` (a
   loss through exponential cones, the logistic), both by Clarabel. An interior point takes
   20-40 iterations whatever the tolerance, each a sparse LDL factorization of the program's
   KKT matrix, whose cost grows faster than its nonzeros. :func:`exact_work` counts them:
   the data's, the constraint rows', d^2 for the coordinates' block, and :data:`CONE_WORK`
   per example for the logistic's two exponential cones. Exact when it is at most
   :data:`EXACT_MAX_WORK`, the size up to which Clarabel took less time than the LightTouch
   family's defaults
   (``bench/method_crossover.py`` against ``bench/defaults_matrix.py``, measured:
   docs/method-choice.md#where-the-crossover-lies-measured). The LightTouch paper's lattice
   (d = 4,096, m = 24,576, n = 612,587) is over 16.8 million (d^2 alone), where LightTouch
   reaches 1% long before Clarabel ends (measured: docs/benchmarks.md, accuracy per second).
4. otherwise the LightTouch family (LightTouch paper, §3.2): FullTouch when m <= 16
   (checking everything is as cheap as sampling) — Epro-SGD instead when l2 > 0, Epro-ORDA
   when also l1 > 0 (O(1/T) rates, and with l1 ORDA's proximal steps land closer to the
   optimum than Epro-SGD's, measured by ``bench/epro_rate.py``:
   docs/algorithms.md#strongly-convex-problems-epro-sgd-and-epro-orda) — and LightTouch
   above 16.

Networks and softmax objectives never come here (:mod:`worker.pipeline.network`). One whose
only constraint is the box (one differentiable term, no rate constraints,
:func:`~worker.algorithms.runners.lbfgsb_network.network_box_only`) comes to :func:`choose_network`:
full-batch L-BFGS-B when :func:`network_work`, n P, is at most :data:`NETWORK_MAX_WORK`
(up to which ``bench/network_crossover.py`` found L-BFGS-B faster than the games at every
size) and the objective is convex (linear scores, no hidden layer) or has an l2 penalty; the
games otherwise, as every other network problem. Without a penalty a network's full-batch
minimizer fits the training set and tests worse than the games, which stop at their
tolerance; with one, L-BFGS-B tests about as well in a fraction of the games' time (measured:
docs/method-choice.md#networks-whose-only-constraint-is-the-box). A robust ``max_of`` of a
linear model over convex losses, or a linear model under group-loss constraints without
rate constraints
(:func:`~worker.algorithms.exact.robust_form.exact_robust_applies`) comes to :func:`choose_robust`:
its epigraph program is exact (``exact_conic`` with a logistic loss, else ``exact_qp``) when
:func:`robust_work` is at most :data:`EXACT_MAX_WORK`, by the same measure as rule 3, and
goes to the games otherwise, saying why (:func:`games_reason`). SVRG OL runs when asked for
(``solver.algorithm: "svrg_ol"``), which is also what partitions a big file.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.algorithms.exact.robust_form import exact_robust_applies, program_terms
from worker.algorithms.runners.lbfgsb import smooth_box_only
from worker.algorithms.runners.lbfgsb_network import network_box_only
from worker.catalogue import CATALOGUE, Algorithm
from worker.errors import SpecError
from worker.losses import loss_of
from worker.problem.compiled import QUADRATIC, CompiledProblem
from worker.problem.network import NetworkProblem

FULLTOUCH_MAX_M = 16
#: The largest program an exact method takes, in :func:`exact_work`: Clarabel takes less
#: there than the LightTouch family (bench/results/method_crossover.json,
#: defaults_matrix.json; measured: docs/method-choice.md#where-the-crossover-lies-measured).
EXACT_MAX_WORK = 2_500_000
#: An example of a logistic loss costs as many nonzeros as this (its variables t, a, e and
#: six cone rows; measured: docs/method-choice.md#where-the-crossover-lies-measured).
CONE_WORK = 25
#: The largest network L-BFGS-B trains when ``auto`` chooses, in :func:`network_work`: it
#: was faster than the games at every size measured up to here, 135 million on noisy labels
#: and 270 million on the digits (bench/results/network_crossover_*.json, measured:
#: docs/method-choice.md#networks-whose-only-constraint-is-the-box); beyond it the games,
#: whose steps cost the same whatever n.
NETWORK_MAX_WORK = 250_000_000
#: The games (Cotter, Jiang, Sridharan 2019), the methods that take rate constraints.
GAMES = ("proxy_lagrangian", "lagrangian")

#: The method of a rate objective.
RATE_OBJECTIVE_METHOD = "proxy_lagrangian"


@dataclass(frozen=True)
class Choice:
    """The method to run and why (``stats.method`` / ``method_reason``): ``auto``'s choice,
    or the spec's own; resolved once per job and passed down."""

    name: str
    reason: str

    @property
    def record(self) -> Algorithm:
        """The method's catalogue record."""
        return CATALOGUE[self.name]

    @property
    def certified(self) -> bool:
        """It returns one certified answer (:attr:`worker.catalogue.Algorithm.certified`)."""
        return self.record.certified


def exact_work(problem: CompiledProblem) -> int:
    """The size of the exact method's program (rule 3 of the module docstring): nnz of the
    examples (of Q for a quadratic; none for squared loss in its Gram form) and of the
    constraint rows, d^2, and :data:`CONE_WORK` per example of a logistic loss."""
    objective = problem.objective
    if objective.kind == QUADRATIC:
        data, cones = objective.quadratic.nnz, 0
    else:
        conic = loss_of(objective.kind).conic   # None: no program, sized as the LP's
        data = 0 if conic is not None and conic.gram else objective.features.nnz
        cones = CONE_WORK * objective.n if conic is not None and conic.exponential else 0
    return int(data + cones + problem.constraints.matrix.nnz + problem.d ** 2)


def refuse_rate_objective(problem: CompiledProblem | NetworkProblem, name: str) -> None:
    """A SpecError at ``solver.algorithm`` when ``name`` is asked to minimize a rate."""
    if isinstance(problem, CompiledProblem) and problem.true_rate is not None \
            and name != RATE_OBJECTIVE_METHOD:
        raise SpecError.at("solver.algorithm", f"{name} cannot minimize a rate (a rate "
                           "objective is a count of predictions, with no gradient); "
                           f"choose {RATE_OBJECTIVE_METHOD} or auto")


def choose_method(problem: CompiledProblem) -> Choice:
    """``auto``'s method for a compiled (linear-model) problem (module docstring)."""
    if problem.true_rate is not None:
        return Choice(RATE_OBJECTIVE_METHOD, "a rate as the objective: the proxy-Lagrangian "
                      "plays its hinge proxy, candidates are scored on the true rate")
    if problem.rates is not None:
        return Choice("proxy_lagrangian", "rate constraints: only the games handle them")
    if smooth_box_only(problem):
        return Choice("lbfgsb", "smooth objective, only the box: quasi-Newton")
    record = loss_of(problem.objective.kind)
    if record is not None and record.conic is None:
        return Choice(iterative_method(problem), f"the {record.name} loss has no conic form "
                      "(no exact method): the LightTouch family")
    work = exact_work(problem)
    if work <= EXACT_MAX_WORK:
        exponential = record is not None and record.conic.exponential
        return Choice("exact_conic" if exponential else "exact_qp",
                      f"small program ({work:,} <= {EXACT_MAX_WORK:,} nonzeros): interior point")
    return Choice(iterative_method(problem), f"program of {work:,} nonzeros (exact up to "
                  f"{EXACT_MAX_WORK:,}): the LightTouch family")


def robust_work(problem: NetworkProblem) -> int:
    """:func:`exact_work` of a robust or group-loss-constrained linear problem's epigraph
    program: every term's and group loss's examples' nonzeros, :data:`CONE_WORK` per example
    of a logistic loss, and d^2."""
    return int(sum(term.features.nnz + (CONE_WORK * term.n if _exponential(term.code) else 0)
                   for term in program_terms(problem)) + problem.d ** 2)


def _exponential(code: int) -> bool:
    """Whether the loss of ``code`` needs exponential cones (``exact_conic``)."""
    return loss_of(code).conic.exponential


def choose_robust(problem: NetworkProblem) -> Choice | None:
    """The exact method for a small robust linear problem (module docstring), else None."""
    if not exact_robust_applies(problem):
        return None
    work = robust_work(problem)
    if work > EXACT_MAX_WORK:
        return None
    exponential = any(_exponential(term.code) for term in program_terms(problem))
    kind = "group-loss" if problem.bounded else "robust"
    return Choice("exact_conic" if exponential else "exact_qp",
                  f"small {kind} program ({work:,} <= {EXACT_MAX_WORK:,} nonzeros): interior "
                  "point on the epigraph")


def games_reason(problem: NetworkProblem) -> str:
    """Why ``auto`` plays a game on a network problem (:func:`choose_robust` and
    :func:`choose_network` having declined)."""
    if not problem.bounded:
        return "network, multiclass or robust objective: the games"
    if problem.rates is not None:
        return "group losses beside rate constraints (rates have no gradient): the games"
    if not exact_robust_applies(problem):
        return ("group losses on a network, or a loss without a conic form (no exact "
                "program): the games")
    return (f"group-loss program of {robust_work(problem):,} nonzeros (exact up to "
            f"{EXACT_MAX_WORK:,}): the games")


def network_work(problem: NetworkProblem) -> int:
    """n P: the multiply-adds of one full forward pass over the examples, to within the
    layers' shapes (a backward pass costs about twice as many)."""
    return problem.n * problem.d


def choose_network(problem: NetworkProblem) -> Choice | None:
    """Full-batch L-BFGS-B for a network whose only constraint is the box, whose full pass is
    cheap enough and which is convex (no hidden layer) or penalized (l2 > 0): the module
    docstring; else None (the games)."""
    if not network_box_only(problem):
        return None
    hidden = len(problem.network.sizes) > 2
    if hidden and problem.terms[0].l2 <= 0:
        return None
    work = network_work(problem)
    if work > NETWORK_MAX_WORK:
        return None
    shape = "network with an l2 penalty" if hidden else "linear scores"
    return Choice("lbfgsb", f"{shape}, only the box, small data (n P = {work:,} <= "
                            f"{NETWORK_MAX_WORK:,}): full-batch quasi-Newton")


def choose_partitioned(problem: CompiledProblem, requested: str) -> Choice:
    """The method for examples left in partitions (pairs with ``solver.workers``, or a job
    ``auto`` placed on a cluster past the budget): the spec's own, or for ``auto`` L-BFGS-B
    on a smooth objective whose only constraint is the box (rule 2, each evaluation one
    map-reduce; on a million logistic rows it ended 70 times closer to its certified bound
    than SVRG OL in about as much time, measured:
    docs/scale.md#l-bfgs-b-or-svrg-ol-on-partitions-measured), else SVRG OL with the LightTouch
    constraint term, whose batch phases' full gradients reached a lower objective on pairs
    than the LightTouch family's rounds of sampled rows in as many iterations and fewer
    rounds (docs/scale.md#svrg-ol-or-the-lighttouch-familys-rounds-measured); the exact
    methods and Epro need every row on the driver. With a rate as the objective or rate
    constraints, the proxy-Lagrangian on rounds of sampled rows (rules 0 and 1)."""
    if requested != "auto":
        return Choice(requested, "solver.algorithm")
    if problem.true_rate is not None:
        return Choice(RATE_OBJECTIVE_METHOD, "examples read in partitions with a rate as the "
                                             "objective: the proxy-Lagrangian game on rounds "
                                             "of rows sampled from the partitions plays its "
                                             "hinge proxy, candidates are scored on the true "
                                             "rate")
    if problem.rates is not None:
        return Choice("proxy_lagrangian", "examples read in partitions with rate constraints: "
                                          "the proxy-Lagrangian game on rounds of rows "
                                          "sampled from the partitions")
    if smooth_box_only(problem):
        return Choice("lbfgsb", "examples read in partitions: L-BFGS-B on a smooth objective "
                                "whose only constraint is the box, each evaluation one pass "
                                "over the partitions")
    return Choice("svrg_ol", "examples read in partitions: SVRG OL with the LightTouch "
                             "constraint term, its batch phases on the partitions")


def iterative_method(problem: CompiledProblem) -> str:
    """The LightTouch family's member for the problem (rule 4 of the module docstring)."""
    if problem.m <= FULLTOUCH_MAX_M:
        if problem.objective.l2 > 0:
            return "epro_orda" if problem.objective.l1 > 0 else "epro_sgd"
        return "fulltouch"
    return "lighttouch"
