"""The options every runner takes: :class:`SolverOptions` (what it returns is
:class:`worker.candidates.trajectory.Trajectory`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from worker.algorithms.run.game_options import GameOptions
from worker.candidates.trajectory import GameEnd
from worker.distributed.options import SvrgOptions


@dataclass(frozen=True)
class SolverOptions:
    """Plain solver settings (mirrors ``spec.solver``; ``minibatch=None`` means automatic)."""

    algorithm: str = "auto"
    iterations: int = 200_000
    #: ``iterations: "auto"``: run until the stopping rule (``stopping``) or the time limit;
    #: SVRG OL takes ``iterations`` (the default budget) and MidTouch sizes its first phase
    #: by it.
    until_converged: bool = False
    tolerance: float = 1e-3
    time_limit_s: float = 600.0
    seed: int = 0
    gamma: float | None = None  # None: automatic (see worker.algorithms.run.penalty)
    eta_w: float | None = None  # None: automatic (DoG steps, or 1 / (l2 t) if strongly convex)
    eta_p: float = 0.0625
    minibatch: tuple[int, int, int] | None = None
    aggregate: int | None = None
    p_update: str = "auto"
    candidates: int = 100
    svrg: SvrgOptions = SvrgOptions()
    game: GameOptions = GameOptions()
    #: w(1) (or theta(1)) of a warm start (``solver.warm_start``); None: 0, or a network's
    #: initialization
    start: np.ndarray | None = None
    #: a warm start's earlier members (P,) each, added to the shrinking LP's candidates
    warm_candidates: tuple[np.ndarray, ...] = ()
    #: a warm start's earlier penalty, where ``gamma`` is automatic (FullTouch, LightTouch,
    #: MidTouch, projected SGD start there instead of at 1)
    start_gamma: float | None = None
    #: a warm start's earlier game state (the Result's ``resume``): the linear games resume
    #: their multipliers and theta steps from it
    resume: GameEnd | None = None


def start_point(problem, options: SolverOptions, default: np.ndarray | None = None
                ) -> np.ndarray:
    """w(1): the warm start's point, else ``default`` (zeros of the problem's d), clipped
    to the box W = [lower, upper]."""
    start = options.start if options.start is not None else \
        np.zeros(problem.d) if default is None else default
    return np.clip(start, problem.lower, problem.upper)


def step_scale(options: SolverOptions) -> float:
    """eta_w: as given, or 1 when automatic (then a multiplier of the DoG step or of
    1 / (l2 t))."""
    return 1.0 if options.eta_w is None else options.eta_w
