"""Plain settings of the lambda-player of the game algorithms (mirrors ``spec.solver.game``;
made by :func:`worker.pipeline.options.game_options`)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class GameOptions:
    """eta_lambda (None: automatic), the Lagrangian's radius R, the proxy regret type, and
    the indicators' upper bound the theta-player differentiates
    (:data:`worker.problem.rates.PROXIES`)."""

    eta_lambda: float | None = None
    radius: float = math.inf
    regret: str = "swap"
    proxy: str = "hinge"
