"""``eta_w: "auto"``: the step scale of the SGD-type loops, measured on the run itself.

Algorithm 4 steps by ``eta_w / sqrt(t)``. The best ``eta_w`` follows R / G, the distance from
the start to the optimum over the size of the stochastic directions (the SGD bound
R^2 / eta + eta G^2 is smallest at eta ~ R / G), and both depend on the data: on the lattice
ranking problems of :mod:`worker.datasets.lattice` the best fixed ``eta_w`` grows with d,
and ``eta_w = 1`` lands far above the optimum (measured: docs/algorithms.md,
"Automatic step scale"). The rule measures R and G in a warm-up, then fixes the scale:

1. **Two warm-ups race** over the first ``1 / WARMUP_PART`` of the iterations, each from the
   same start and seed, each measuring the root mean square G of its directions (loss,
   penalty, regularizer) and the largest distance r of an iterate from the start:

   * distance over gradients (DoG; Ivgi, Hinder & Carmon, *DoG is SGD's best friend: a
     parameter-free dynamic step size schedule*, ICML 2023), ``eta_t = r_t / sqrt(sum_s
     |g_s|^2)`` with ``r_1 = 1e-6 (1 + |w(1)|)``: it finds R when the optimum lies well
     inside the box, but its distance grows slowly when the steps are sparse and noisy;
   * diagonal AdaGrad (Duchi, Hazan & Singer, JMLR 2011) with each coordinate's box width
     as its diameter, ``ADAGRAD_SCALE (u_j - l_j) / sqrt(2 sum_s g_sj^2)``: it reaches the
     box's scale at once, and overshoots when the optimum is much smaller than the box.

   The warm-up whose running average has the smaller penalized objective
   ``f + gamma [max_i g_i]_+`` wins and the run continues from its state. Only DoG runs when
   a bound is infinite.
2. **Then** ``eta_w = STEP_FRACTION * r / G`` in the usual ``eta_w / sqrt(t)`` schedule
   (t keeps counting). DoG alone stays near ``r / G``; a quarter of it lands closer to the
   optimum, and closer than the best fixed scale (measured: docs/algorithms.md,
   "Automatic step scale").

Scaling the features by c and the box by 1/c scales G by c and r by 1/c, so the chosen step
scales by 1/c^2, as a hand-tuned one would: the rule does not depend on the data's units.
Strongly convex objectives keep ``eta_w / (lambda t)`` with ``eta_w = 1``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from worker.algorithms.run.driver import Driver
from worker.algorithms.run.loop import ChunkedLoop
from worker.algorithms.run.penalty import penalized_objective
from worker.kernels.layout import (
    GRADIENT_SUM,
    ITERATION,
    RADIUS,
    STEP_ADAGRAD,
    STEP_DOG,
    STEP_SCHEDULE,
    KernelState,
)

#: The warm-up is the first 1 / WARMUP_PART of a phase's iterations.
WARMUP_PART = 16
#: A probe's first steps, taken before its time starts: on a cold kernel cache they compile
#: the kernels, which under load outlasted the probe's share of the time and cut it short;
#: the probe's length sets eta_w, so the answer of a run of fixed iterations and seed then
#: depended on the machine's load (measured:
#: docs/algorithms.md#rate-constraints-and-the-two-player-games).
UNTIMED_STEPS = 64
#: eta_w = STEP_FRACTION * r / G after the warm-up.
STEP_FRACTION = 0.25
#: The AdaGrad warm-up's multiplier of each coordinate's box width.
ADAGRAD_SCALE = 0.25
#: Warm-up rules by name, with their eta_w multiplier.
WARMUPS = {"dog": (STEP_DOG, 1.0), "adagrad": (STEP_ADAGRAD, ADAGRAD_SCALE)}


def warmup_end(start: int, stop: int) -> int:
    """The iteration at which the warm-up of a phase over (start, stop] ends."""
    return start + max(1, (stop - start) // WARMUP_PART)


def warm_up(driver: Driver, cfg, until: int, after_each: Callable[[], None] | None = None):
    """Race the warm-ups to iteration ``until``, keep the winner's state in ``driver`` and
    its measurements in ``driver.step_stats``; return ``cfg`` with the measured ``eta_w``.

    ``after_each`` runs after every iteration, as in :meth:`Driver.run` (projected SGD).
    """
    box_is_finite = bool(np.all(np.isfinite(driver.arrays.lower))
                         and np.all(np.isfinite(driver.arrays.upper)))
    names = list(WARMUPS) if box_is_finite else ["dog"]
    start = copied(driver.state)
    best = None
    for name in names:
        rule, scale = WARMUPS[name]
        driver.state = copied(start)
        driver.run(cfg._replace(step_rule=rule, eta_w=scale), until, after_each)
        score = penalized_objective(driver.arrays, driver.average(), cfg.gamma)
        if best is None or score < best[0]:
            best = (score, name, driver.state)
    _, name, driver.state = best
    driver.step_stats = measured_scale(driver.state) | {"eta_w_warmup": name}
    return cfg._replace(step_rule=STEP_SCHEDULE, eta_w=driver.step_stats["eta_w_measured"])


def copied(state):
    """An independent copy of every array of a state (a namedtuple of arrays)."""
    return type(state)(*(np.copy(part) for part in state))


def measured_scale(state: KernelState) -> dict[str, float]:
    """The fixed ``eta_w`` from a warm-up's measurements, with them, for ``stats``.

    Returns
    -------
    dict
        ``eta_w_measured`` (the scale chosen) and :func:`warmup_measurements`.
    """
    measured = warmup_measurements(state)
    rms = measured["warmup_rms_direction"]
    eta_w = STEP_FRACTION * measured["warmup_radius"] / rms if rms > 0 else 1.0
    return {"eta_w_measured": eta_w} | measured


def warmup_measurements(state) -> dict[str, float]:
    """What a warm-up measured, from a state's ``counters`` and ``scalars``:
    ``warmup_radius`` (r, the largest distance of an iterate from the start) and
    ``warmup_rms_direction`` (G, the root mean square of the directions' norms)."""
    steps = max(int(state.counters[ITERATION]) - 1, 1)
    return {"warmup_radius": float(state.scalars[RADIUS]),
            "warmup_rms_direction": float(np.sqrt(state.scalars[GRADIENT_SUM] / steps))}


def probe_steps(advance: Callable[[int], None], iterations: int, deadline: float) -> int:
    """A step-size probe: ``advance(count)`` for :data:`UNTIMED_STEPS` steps, then on until
    ``iterations`` within 1/WARMUP_PART of the time left until ``deadline`` (a
    ``time.perf_counter()`` value; none once it has passed); the steps taken."""
    first = min(iterations, UNTIMED_STEPS) if time.perf_counter() < deadline else 0
    if first:
        advance(first)
    now = time.perf_counter()
    loop = ChunkedLoop(now + (deadline - now) / WARMUP_PART, iterations,
                       describe=lambda: (math.nan, math.nan, 0), iteration=first)
    loop.run(advance, iterations)
    return loop.iteration
