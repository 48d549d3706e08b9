"""The spec's ``solver`` and ``output`` blocks: algorithm choice and hyperparameters."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from worker.catalogue import algorithm_names
from worker.spec.strict import MAX_ITERATIONS, Count, Scale, StrictModel
from worker.spec.warm_start import WarmStart

#: The names ``solver.algorithm`` accepts: ``auto`` and the catalogue's
#: (:data:`worker.catalogue.CATALOGUE`).
ALGORITHMS = algorithm_names()


#: What trains networks, multiclass and robust problems (:attr:`worker.spec.models.Spec.network`).
NETWORK_ALGORITHMS = algorithm_names(networks=True)


#: ``solver.tolerance`` when the spec leaves it out (also the tolerance a Result file
#: written without its ``feasibility`` is judged at).
DEFAULT_TOLERANCE = 1e-3


class Minibatch(StrictModel):
    """Fixed minibatch sizes: examples (k_f), sampled constraints (k_g), p-update (k_p)."""

    k_f: Count = 2
    k_g: Count = 2
    k_p: Count = 8


class Game(StrictModel):
    """The lambda-player of ``lagrangian`` / ``proxy_lagrangian`` (Cotter et al. 2019).

    ``eta_lambda``: its step ("auto": see :mod:`worker.algorithms.runners.games`); ``radius``: R of
    the Lagrangian's {lambda >= 0, ||lambda||_1 <= R} (null: unbounded, as the paper's §6);
    ``regret``: the proxy-Lagrangian's swap-regret (Algorithm 2) or external-regret player;
    ``proxy``: the upper bound of each rate's indicators that the theta-player differentiates
    (and the Lagrangian relaxes to): ``hinge`` (convex) or ``ramp`` (non-convex, the hinge
    clipped at 1).
    """

    eta_lambda: Literal["auto"] | Scale = "auto"
    radius: Scale | None = None
    regret: Literal["swap", "external"] = "swap"
    proxy: Literal["hinge", "ramp"] = "hinge"


class Svrg(StrictModel):
    """SVRG OL settings (Cutkosky & Busa-Fekete): base learner, schedule, batch phase."""

    learner: Literal["adagrad", "freerex"] = "adagrad"
    schedule: Literal["practical", "theoretical"] = "practical"
    serial_steps: Literal["auto"] | Annotated[int, Field(ge=1, le=MAX_ITERATIONS)] = "auto"
    batch_size: Literal["auto"] | Count = "auto"
    workers: Literal["auto"] | Annotated[int, Field(ge=0, le=4096)] = "auto"
    partition_rows: Count = 2**18

    @model_validator(mode="after")
    def _batch_size_is_practical(self) -> Svrg:
        if self.schedule == "theoretical" and self.batch_size != "auto":
            raise ValueError("batch_size sets the practical schedule's N_k = k * batch_size; "
                             "the theoretical schedule uses N = T^2 (omit batch_size)")
        return self


class Solver(StrictModel):
    """Algorithm choice and its hyperparameters (LightTouch paper, Algorithm 4); ``polish``
    refines the answer of a hinge-loss LP with trust-region LPs
    (:mod:`worker.candidates.polish`)."""

    algorithm: Literal[ALGORITHMS] = "auto"  # type: ignore[valid-type]
    iterations: Literal["auto"] | Annotated[int, Field(ge=1, le=MAX_ITERATIONS)] = "auto"
    time_limit_s: float = Field(600.0, gt=0, allow_inf_nan=False)
    tolerance: float = Field(DEFAULT_TOLERANCE, gt=0, lt=1, allow_inf_nan=False)
    seed: int = Field(0, ge=0, lt=2**63)
    gamma: Literal["auto"] | Scale = "auto"
    eta_w: Literal["auto"] | Scale = "auto"
    eta_p: Scale = 0.0625
    minibatch: Literal["auto"] | Minibatch = "auto"
    aggregate: Literal["auto"] | Count = "auto"
    p_update: Literal["auto", "dense", "lazy"] = "auto"
    candidates: int = Field(100, ge=1, le=10_000)
    polish: bool = True
    #: where ``pairwise_hinge``'s tables, or examples in files with rate constraints or a
    #: rate objective, are read in partitions (docs/scale.md): omitted, the driver reads
    #: them whole; 0, partitions in this process; n, on Dask (the cluster at
    #: ``LIGHTTOUCH_DASK_SCHEDULER`` or a ``LocalCluster`` of n workers)
    workers: Annotated[int, Field(ge=0, le=4096)] | None = None
    svrg: Svrg = Svrg()
    game: Game = Game()
    #: start from an earlier answer (:mod:`worker.spec.warm_start`)
    warm_start: WarmStart | None = None


class Output(StrictModel):
    """What the Result carries besides the mixture summary; ``single`` adds the best single
    model of the candidates (Cotter et al. 2019, §6.2 heuristic); ``lower_bound`` a certified
    lower bound on the optimum where the problem is a hinge-loss LP
    (:mod:`worker.candidates.lower_bound`)."""

    mixture: bool = True
    project: bool = True
    single: bool = False
    lower_bound: bool = True


