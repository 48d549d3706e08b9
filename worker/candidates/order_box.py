"""The feasible set of a problem whose every constraint is an ordering w_t <= w_h, with a box
constant on each connected piece of the order (the monotone lattice): its exact projection
and the constraint multipliers that best balance a cost on it.

On such a set the projection is ``clip(isotonic(y), lower, upper)`` (the reason is
:func:`worker.projection.project`'s isotonic path), and the multipliers of the LP
``min {c . w : w in the set}`` are one maximum flow
(:func:`worker.candidates.dual_certificate.ordering_multipliers`). Both work on the order's
vertices, numbered once here, so a method that projects or refits many times pays for the
numbering once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from worker.kernels.isotonic import closure_flow, isotonic_from, isotonic_on_order
from worker.problem.compiled import CompiledProblem


@dataclass(frozen=True)
class OrderBox:
    """An order with a box constant on its pieces (module docstring).

    Attributes
    ----------
    vertices : ndarray of int64, shape (v,)
        The coordinates on some edge, sorted.
    tails, heads : ndarray of int64, shape (m,)
        Each constraint row's edge w_t <= w_h, in positions of ``vertices``.
    scale : ndarray, shape (m,)
        Row k is scale_k (w_t - w_h) <= 0 (rows may be normalized).
    lower, upper : ndarray, shape (d,)
        The box.
    """

    vertices: np.ndarray
    tails: np.ndarray
    heads: np.ndarray
    scale: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def of(cls, problem: CompiledProblem) -> OrderBox | None:
        """The problem's order and box, or None when a constraint is no ordering, there is
        none, or the box is not constant on a piece of the order."""
        constraints = problem.constraints
        if constraints.orderings is None or constraints.m == 0:
            return None
        edges = constraints.orderings
        tails, heads = edges[:, 0], edges[:, 1]
        if np.any(problem.lower[tails] != problem.lower[heads]) or \
                np.any(problem.upper[tails] != problem.upper[heads]):
            return None
        vertices, local = np.unique(edges, return_inverse=True)
        local = local.reshape(edges.shape).astype(np.int64)
        scale = np.asarray(constraints.matrix[np.arange(constraints.m), tails]).ravel()
        return cls(vertices, np.ascontiguousarray(local[:, 0]),
                   np.ascontiguousarray(local[:, 1]), scale, problem.lower, problem.upper)

    def project(self, point: np.ndarray, near: np.ndarray | None = None) -> np.ndarray:
        """The exact Euclidean projection of ``point`` (d,) onto the order and the box,
        shape (d,); started from the level sets of ``near`` (d,), a point of the set close
        to the projection (:func:`~worker.kernels.isotonic.isotonic_from`), when given."""
        x, y = point.copy(), point[self.vertices]
        x[self.vertices] = isotonic_on_order(y, self.tails, self.heads)[0] if near is None \
            else isotonic_from(y, self.tails, self.heads, near[self.vertices])
        return np.clip(x, self.lower, self.upper)

    def multipliers(self, gradient: np.ndarray) -> np.ndarray:
        """The multipliers lam >= 0 (m,) of least ||gradient + A^T lam||_1 on the order's
        vertices: ``gradient`` (d,) routed along the edges by one maximum flow."""
        return closure_flow(-gradient[self.vertices], self.tails, self.heads) / self.scale
