"""Plain settings of the lambda-player of the game algorithms (mirrors ``spec.solver.game``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from worker.spec.solver import Game


@dataclass(frozen=True)
class GameOptions:
    """eta_lambda (None: automatic), the Lagrangian's radius R, the proxy regret type, and
    the indicators' upper bound the theta-player differentiates
    (:data:`worker.problem.rates.PROXIES`)."""

    eta_lambda: float | None = None
    radius: float = math.inf
    regret: str = "swap"
    proxy: str = "hinge"

    @classmethod
    def from_spec(cls, game: Game) -> GameOptions:
        """From the validated ``solver.game`` block."""
        return cls(eta_lambda=None if game.eta_lambda == "auto" else float(game.eta_lambda),
                   radius=math.inf if game.radius is None else float(game.radius),
                   regret=game.regret, proxy=game.proxy)
