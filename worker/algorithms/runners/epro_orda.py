"""Epro-ORDA: epoch-projection ORDA for strongly convex problems with an l1 term (Chen et al.,
Algorithm 3).

Epochs k = 1, 2, ... of T_k = T_1 2^(k-1) iterations run ORDA (Algorithm 2,
:mod:`worker.kernels.orda`) from x_1^k on f + lambda [max_i g_i]_+ + r, where
r = l1 ||x||_1 + (l2/2)||x||^2 is applied by exact proximal steps, so coordinates reach exact
zeros (where every example's loss gradient stays within l1: :mod:`worker.kernels.orda`);
each epoch's output x_{T+2} is projected exactly onto W ∩ {g <= 0}, which starts the
next epoch with eta_{k+1} = eta_k / sqrt(2). Theorem 3: E f^(x) - f^(x*) <= 68 mu^2 G^2 /
(beta (T + 17)) with ceil(log2(T/17 + 1)) projections. The epoch loop, the candidates and
``gamma: "auto"`` are Epro-SGD's (:func:`~worker.algorithms.runners.epro.run_epochs`).

Defaults, from Theorem 3 where its constants are known:

* T_1 = 16 (Theorem 3). An epoch of T_k iterations is the paper's ORDA(x_1^k, eta_k, T)
  with T + 1 = T_k iterations (its output is x_{T+2}); the budget is used exactly, as in
  Epro-SGD, so there are at most ceil(log2(T/16 + 1)) projections.
* eta_1 = eta_w / beta with beta = ``objective.l2``: Theorem 3's mu / beta with mu =
  rho / (rho - G_1 / lambda) taken at its limit 1 (lambda >> G_1 / rho; G_1 and rho are
  unknown). ORDA's dual-averaging point z weighs the epoch start by
  theta_t nu_t gamma_{t+1} ~ 4 / (eta_k sqrt(t)), which with this eta_k falls to about
  beta at every epoch's end, the strength of r's own l2 term.
* lambda: ``solver.gamma``, or ``"auto"`` as Epro-SGD (re-estimated after each projection;
  at exact zeros the l1 subgradient of least residual is used).
"""

from __future__ import annotations

import math

import numpy as np

from worker.algorithms.run.loop import ProgressCallback
from worker.algorithms.run.options import SolverOptions, step_scale
from worker.algorithms.runners.epro import Epoch, run_epochs, strong_convexity
from worker.candidates.trajectory import Trajectory
from worker.kernels.layout import ITERATION
from worker.kernels.orda import OrdaState, orda_steps
from worker.problem.compiled import CompiledProblem

#: T_1 of Theorem 3.
FIRST_EPOCH = 16


def _orda_epoch(epoch: Epoch) -> tuple[np.ndarray, bool]:
    """Algorithm 3, line 4: ORDA from x_1 = z_1 = ``epoch.w``; returns x_{T+2}."""
    w = epoch.w
    state = OrdaState(x=w, z=w.copy(), start=w.copy(), dual=np.zeros_like(w),
                      direction=np.zeros_like(w))
    first = int(epoch.counters[ITERATION])

    def advance(count: int) -> None:
        orda_steps(epoch.arrays, state, epoch.eta, epoch.penalty, epoch.k_f, epoch.rng,
                   epoch.counters, first, count)

    finished = epoch.loop.run(advance, epoch.stop)
    return w.copy(), finished


def run_epro_orda(problem: CompiledProblem, options: SolverOptions,
                  progress: ProgressCallback | None, deadline: float) -> Trajectory:
    """Algorithm 3 of the Epro paper; candidates are the epoch outputs and projections."""
    beta = strong_convexity(problem, "epro_orda")
    return run_epochs(problem, options, progress, deadline, name="epro_orda",
                      first=FIRST_EPOCH, eta=step_scale(options) / beta, decay=math.sqrt(2.0),
                      inner=_orda_epoch)
