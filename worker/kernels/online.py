"""Per-coordinate online learners for the serial phase of SVRG OL (Cutkosky & Busa-Fekete,
Algorithm 1, "online learning algorithm A"), behind one small interface.

A learner is an integer code plus a state array ``slots`` of shape (n_slots, d); one call of
:func:`learner_step` feeds it the gradient coordinate g_j and returns the new w_j inside the
box [lower_j, upper_j]. Both learners are diagonal, so coordinates with g_j = 0 never change
and a step costs O(touched coordinates) (the §8.1 sparse updates). To add a learner: a new
code, its slot count in :data:`SLOTS`, and a branch in :func:`learner_step`.

* ``adagrad`` (Duchi et al. 2011, diagonal): G_j += g_j^2, w_j <- clip(w_j - eta g_j / sqrt(G_j)).
  Second-order regret D sqrt(2 sum ||g_t||^2) (paper §4), the form Theorem 1 needs.
* ``freerex`` (Cutkosky & Boahen 2017, the paper's base learner, §9), one 1-D copy per
  coordinate: FTRL with psi(w) = (|w|+1) log(|w|+1) - |w|, parameter-free,
  z_j = -sign(S_j) (exp(|S_j| eta_j / k) - 1) / a_j with S_j the sum of the gradients,
  1/eta_j^2 = max(1/eta_j^2 + 2 g^2, L_j |S_j|), a_j = max(a_j, 1/(L_j eta_j)^2), k = sqrt(5).
  FreeRex is unconstrained; the box is handled by the constrained-domain reduction of
  Cutkosky & Orabona (2018): play w_j = clip(z_j) and feed g + |g| sign(z_j - w_j), the
  gradient of g w + |g| dist(w, [lower_j, upper_j]) at z_j.
"""

from __future__ import annotations

import numpy as np

from worker.kernels.jit import kernel

LEARNER_ADAGRAD = 0
LEARNER_FREEREX = 1
LEARNER_CODES = {"adagrad": LEARNER_ADAGRAD, "freerex": LEARNER_FREEREX}

#: Rows of ``slots`` each learner keeps.
SLOTS = {LEARNER_ADAGRAD: 1, LEARNER_FREEREX: 5}

# AdaGrad slot
SQUARED_SUM = 0
# FreeRex slots
GRADIENT_SUM = 0     # S_j = sum of the (reduced) gradients
INVERSE_ETA_SQ = 1   # 1 / eta_j^2
LIPSCHITZ = 2        # L_j = max |g|
SCALE = 3            # a_j
UNCONSTRAINED = 4    # z_j, the point before the box

#: FreeRex's k (the COLT 2017 paper's choice, also its reference implementation's 1/sqrt(5)).
FREEREX_K = np.sqrt(5.0)
#: exp() argument cap: keeps z finite when a coordinate is unbounded and keeps growing.
_MAX_EXPONENT = 700.0


def new_slots(code: int, d: int) -> np.ndarray:
    """A fresh learner state, shape (SLOTS[code], d); FreeRex starts at z = 0."""
    return np.zeros((SLOTS[code], d))


@kernel(inline="always")
def _clip(value, lower, upper):
    return min(max(value, lower), upper)


@kernel
def _adagrad(slots, eta, j, w_j, g, lower, upper):
    slots[SQUARED_SUM, j] += g * g
    if slots[SQUARED_SUM, j] <= 0.0:
        return w_j
    return _clip(w_j - eta * g / np.sqrt(slots[SQUARED_SUM, j]), lower, upper)


@kernel
def _freerex(slots, j, g, lower, upper):
    z = slots[UNCONSTRAINED, j]
    if z > upper:
        g += abs(g)
    elif z < lower:
        g -= abs(g)
    if g == 0.0:
        return _clip(z, lower, upper)
    total = slots[GRADIENT_SUM, j] + g
    lipschitz = max(slots[LIPSCHITZ, j], abs(g))
    inverse_eta_sq = max(slots[INVERSE_ETA_SQ, j] + 2.0 * g * g, lipschitz * abs(total))
    scale = max(slots[SCALE, j], inverse_eta_sq / (lipschitz * lipschitz))
    exponent = min(abs(total) / (FREEREX_K * np.sqrt(inverse_eta_sq)), _MAX_EXPONENT)
    z = -np.sign(total) * np.expm1(exponent) / scale
    slots[GRADIENT_SUM, j] = total
    slots[LIPSCHITZ, j] = lipschitz
    slots[INVERSE_ETA_SQ, j] = inverse_eta_sq
    slots[SCALE, j] = scale
    slots[UNCONSTRAINED, j] = z
    return _clip(z, lower, upper)


@kernel
def learner_step(code, slots, eta, j, w_j, g, lower, upper):
    """Feed gradient coordinate g to learner ``code``; return the new w_j in [lower, upper].

    Parameters
    ----------
    code : int
        ``LEARNER_ADAGRAD`` or ``LEARNER_FREEREX``.
    slots : ndarray, shape (SLOTS[code], d)
        The learner's state, updated in place at column j.
    eta : float
        AdaGrad's step scale (ideally the box diameter / sqrt(2)); FreeRex ignores it.
    j : int
        Coordinate.
    w_j, g : float
        Current value and gradient coordinate.
    lower, upper : float
        The box of coordinate j (may be infinite).
    """
    if code == LEARNER_ADAGRAD:
        return _adagrad(slots, eta, j, w_j, g, lower, upper)
    return _freerex(slots, j, g, lower, upper)
