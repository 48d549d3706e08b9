"""The spec's ``solver`` block as the plain options the algorithms take: the one place a spec
becomes :class:`~worker.algorithms.run.options.SolverOptions` (with its
:class:`~worker.distributed.options.SvrgOptions` and
:class:`~worker.algorithms.run.game_options.GameOptions`), so that the algorithms never read
the spec."""

from __future__ import annotations

import math
from typing import Any

from worker.algorithms.run.game_options import GameOptions
from worker.algorithms.run.options import SolverOptions
from worker.distributed.options import SvrgOptions
from worker.settings import DaskSettings
from worker.spec.models import Solver
from worker.spec.solver import Game

#: ``iterations: "auto"`` runs every algorithm until its stopping rule
#: (docs/stopping-rules.md); this only plans SVRG OL's schedule (which the rule may end
#: early) and sizes MidTouch's first phase.
DEFAULT_ITERATIONS = 200_000


def _automatic(value: Any) -> int | None:
    """None for ``"auto"``, else the integer."""
    return None if value == "auto" else int(value)


def svrg_options(svrg: Any, cluster: DaskSettings) -> SvrgOptions:
    """From the validated ``solver.svrg`` model and the process's Dask settings."""
    return SvrgOptions(learner=svrg.learner, schedule=svrg.schedule,
                       serial_steps=_automatic(svrg.serial_steps),
                       batch_size=_automatic(svrg.batch_size),
                       workers=_automatic(svrg.workers), partition_rows=svrg.partition_rows,
                       cluster=cluster)


def game_options(game: Game) -> GameOptions:
    """From the validated ``solver.game`` block."""
    return GameOptions(eta_lambda=None if game.eta_lambda == "auto" else float(game.eta_lambda),
                       radius=math.inf if game.radius is None else float(game.radius),
                       regret=game.regret, proxy=game.proxy)


def solver_options(solver: Solver, cluster: DaskSettings,
                   time_limit_s: float | None = None) -> SolverOptions:
    """The plain options the algorithms take, from the spec's ``solver`` block and the
    process's Dask settings; ``time_limit_s``: the job's time limit
    (:meth:`worker.settings.JobSettings.time_limit`), default the spec's."""
    minibatch = None if solver.minibatch == "auto" else (
        solver.minibatch.k_f, solver.minibatch.k_g, solver.minibatch.k_p)
    aggregate = None if solver.aggregate == "auto" else int(solver.aggregate)
    return SolverOptions(
        algorithm=solver.algorithm,
        iterations=DEFAULT_ITERATIONS if solver.iterations == "auto" else solver.iterations,
        until_converged=solver.iterations == "auto", tolerance=solver.tolerance,
        time_limit_s=solver.time_limit_s if time_limit_s is None else time_limit_s,
        seed=solver.seed,
        gamma=None if solver.gamma == "auto" else float(solver.gamma),
        eta_w=None if solver.eta_w == "auto" else float(solver.eta_w), eta_p=solver.eta_p,
        minibatch=minibatch, aggregate=aggregate,
        p_update=solver.p_update, candidates=solver.candidates,
        svrg=svrg_options(solver.svrg, cluster), game=game_options(solver.game))
