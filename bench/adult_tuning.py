"""Solving the Adult problem of Cotter et al. (2019) §6.2 at given step sizes, evaluating a
stochastic classifier, and choosing the step sizes on a validation split as §6.2 does.

§6.2 chose the initial learning rates by a grid search over powers of two, keeping the best
model on the validation set by its rank heuristic (``best_single`` of worker.candidates:
rank by objective and by each constraint's violation, the worst rank scores). Here every
grid point trains on the fit split; its reported classifier (the shrunk mixture, for the
baseline its single model) is scored on the validation split by its error (the objective)
and the equal-opportunity constraints g_i = 0.95 TPR(all) - TPR(G_i); the heuristic picks
the grid point (ties: the first grid point). The grid is powers of two: eta_w 1/2 .. 64
(the default, "auto", measures its own scale), eta_lambda 1/8 .. 4 for the
proxy-Lagrangian (default 1) and 0.1 * (1/32 .. 1) for the Lagrangian (default 0.1); a
first grid of 1/4 .. 8 for eta_w and a factor 4 either side of the eta_lambda defaults chose
its top eta_w, so it was widened. A choice on the grid's edge is flagged in the results.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from worker.algorithms.registry import run_algorithm
from worker.candidates.best_single import best_single
from worker.datasets.adult import (
    RATIO,
    Split,
    adult_spec,
    true_positive_rates,
    true_positive_ratios,
)
from worker.pipeline.options import solver_options
from worker.pipeline.solve import summarize
from worker.problem.compile import DataSource, compile_problem
from worker.settings import DaskSettings, data_settings, read_settings
from worker.spec.models import parse_spec
from worker.spec.solver import Output

ITERATIONS = 5000
#: eta_w grid, and eta_lambda grid per algorithm (powers of two around the defaults).
ETA_W = tuple(2.0 ** k for k in range(-1, 7))
ETA_LAMBDA = {"proxy_lagrangian": tuple(2.0 ** k for k in range(-3, 3)),
              "lagrangian": tuple(0.1 * 2.0 ** k for k in range(-5, 1))}


@dataclass(frozen=True)
class Setting:
    """One row family of the table: algorithm, whether the rate constraints are on, and the
    indicators' bound the theta-player differentiates."""

    label: str
    algorithm: str
    constrained: bool
    proxy: str = "hinge"


@dataclass(frozen=True)
class Steps:
    """eta_w and eta_lambda (None: the solver's automatic value)."""

    eta_w: float | None = None
    eta_lambda: float | None = None

    def solver(self) -> dict:
        """These steps as ``solver`` keys of a spec."""
        steps = {} if self.eta_w is None else {"eta_w": self.eta_w}
        return steps | ({} if self.eta_lambda is None else {"eta_lambda": self.eta_lambda})


def solve(train: Split, directory: Path, setting: Setting, steps: Steps, seed: int = 0):
    """(trajectory, result) of one solve on ``train``, through the pipeline pieces (to see
    theta-bar and every candidate)."""
    solver = steps.solver()
    game = {"proxy": setting.proxy}
    if "eta_lambda" in solver:
        game["eta_lambda"] = solver.pop("eta_lambda")
    spec = parse_spec(adult_spec(train, directory, algorithm=setting.algorithm,
                                 iterations=ITERATIONS, constrained=setting.constrained,
                                 seed=seed, game=game, **solver))
    spec.output.single = True
    problem = compile_problem(spec, DataSource([directory], data_settings()))
    trajectory = run_algorithm(problem, solver_options(spec.solver, read_settings(DaskSettings)))
    result, _ = summarize(problem, trajectory,
                          Output(mixture=True, project=False, single=True, lower_bound=False))
    return trajectory, result


def shrunk(result) -> tuple[np.ndarray, np.ndarray]:
    """(solutions (k, d), weights (k,)) of a result's mixture."""
    return (np.array([member.solution for member in result.mixture]),
            np.array([member.weight for member in result.mixture]))


def predict(split: Split, solutions: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each example's probability of a positive prediction under the mixture."""
    keep = weights > 0
    return ((split.features @ solutions[keep].T) > 0).astype(np.float64) @ weights[keep]


def error_rate(split: Split, predicted: np.ndarray) -> float:
    """Expected error of the stochastic classifier."""
    return float(np.mean(np.where(split.labels > 0, 1.0 - predicted, predicted)))


def evaluate(split: Split, solutions: np.ndarray, weights: np.ndarray) -> dict:
    """Error and TPR ratios (percent) of the stochastic classifier, expected over weights."""
    return scores(split, predict(split, solutions, weights))


def scores(split: Split, predicted: np.ndarray) -> dict:
    """Error and TPR ratios (percent) of a classifier predicting each example positive with
    probability ``predicted`` (n,)."""
    ratios = true_positive_ratios(split, predicted)
    return {"error": 100 * error_rate(split, predicted),
            **{k: 100 * v for k, v in ratios.items()}}


def violations(split: Split, predicted: np.ndarray) -> np.ndarray:
    """g_i = RATIO * TPR(all) - TPR(G_i) per group (positive: violated)."""
    overall, rates = true_positive_rates(split, predicted)
    return np.array([RATIO * overall - rate for rate in rates.values()])


def grid(setting: Setting) -> list[Steps]:
    """The step sizes tried for ``setting`` (eta_w only without constraints)."""
    if not setting.constrained:
        return [Steps(eta_w) for eta_w in ETA_W]
    return [Steps(eta_w, eta_lambda) for eta_w in ETA_W
            for eta_lambda in ETA_LAMBDA[setting.algorithm]]


def tune(fit: Split, validation: Split, directory: Path, setting: Setting) -> dict:
    """Train at every grid point on ``fit``, score on ``validation``, pick by the §6.2
    heuristic. Returns ``{"steps": Steps, "on_edge": bool, "grid": [...]}``."""
    points, errors, values = grid(setting), [], []
    for steps in points:
        _, result = solve(fit, directory, setting, steps)
        predicted = predict(validation, *shrunk(result))
        errors.append(error_rate(validation, predicted))
        values.append(violations(validation, predicted) if setting.constrained
                      else np.zeros(0))
    chosen = points[best_single(np.array(errors), np.array(values))]
    on_edge = chosen.eta_w in (ETA_W[0], ETA_W[-1]) or (
        setting.constrained and chosen.eta_lambda in (ETA_LAMBDA[setting.algorithm][0],
                                                      ETA_LAMBDA[setting.algorithm][-1]))
    table = [{"eta_w": steps.eta_w, "eta_lambda": steps.eta_lambda,
              "validation_error": 100 * error,
              "validation_max_violation": float(np.max(value, initial=0.0))}
             for steps, error, value in zip(points, errors, values, strict=True)]
    return {"steps": chosen, "on_edge": bool(on_edge), "grid": table}
