"""What a loss is made of: :class:`Loss`, one record per loss in :data:`worker.losses.LOSSES`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from worker.losses.label_rules import LabelRule


@dataclass(frozen=True)
class Loss:
    """One loss l(s, y) of a score s = x.w and a label y.

    Attributes
    ----------
    name : str
        The spec's ``objective.loss``.
    code : int
        The integer the kernels switch on (:func:`worker.kernels.objective.loss_value`).
    formula : str
        The loss in words, for documentation and errors.
    labels : LabelRule
        Which labels the loss takes and how the kernels receive them:
        :data:`~worker.losses.label_rules.CLASSES` or
        :data:`~worker.losses.label_rules.TARGETS`.
    value, slope : numba dispatchers
        ``l(s, y)`` and a subgradient ``dl/ds``, on scalars, compiled.
    reference_value, reference_slope : callable
        The same in plain numpy on arrays of shape (n,): the tests' reference.
    exact_reference : callable
        ``(scores, labels) -> the mean loss`` as a CVXPY expression, for CVXPY expressions
        ``scores`` (n,) and labels (n,) as the kernels take them: the tests' exact optimum.
    smooth : bool
        Differentiable in s: L-BFGS-B takes it, and the gradient-based certificates hold
        tightly (:mod:`worker.algorithms.bounds.certificate`).
    piecewise_linear : bool
        max(0, 1 - y s): with no regularizer the objective is an LP (one slack per example),
        which the hinge LP's lower bound and polish solve
        (:mod:`worker.candidates.hinge_lp`), and whose LP duals alpha give the exact methods'
        bound (:func:`worker.algorithms.bounds.dual_bound.lagrangian_bound`).
    conic : ConicForm or None
        How the exact methods write it; None: no exact method takes it.
    """

    name: str
    code: int
    formula: str
    labels: LabelRule
    value: Callable
    slope: Callable
    reference_value: Callable[[np.ndarray, np.ndarray], np.ndarray]
    reference_slope: Callable[[np.ndarray, np.ndarray], np.ndarray]
    exact_reference: Callable[[Any, np.ndarray], Any]
    smooth: bool
    piecewise_linear: bool = False
    conic: ConicForm | None = None

    @property
    def has_conic_form(self) -> bool:
        """An exact method takes it (:class:`ConicForm`)."""
        return self.conic is not None

    @property
    def has_qp_form(self) -> bool:
        """An LP or QP takes it: a conic form without exponential cones (``exact_qp``)."""
        return self.conic is not None and not self.conic.exponential


@dataclass(frozen=True)
class ConicForm:
    """How the exact methods (:mod:`worker.algorithms.exact`) write a loss.

    Attributes
    ----------
    form : str
        ``"module:name"`` of its :class:`worker.algorithms.exact.loss_forms.LossForm`: its
        variables and rows in the program of one objective and in a robust epigraph, imported
        when an exact method first runs on it.
    exponential : bool
        It needs exponential cones (``exact_conic``; ``exact_qp`` takes the others), each
        example costing :data:`worker.algorithms.method_choice.CONE_WORK` nonzeros more.
    gram : bool
        It enters the program through X'X and X'y (the squared loss): the examples' nonzeros
        are not part of its size.
    """

    form: str
    exponential: bool = False
    gram: bool = False

    def load(self) -> Any:
        """The :class:`~worker.algorithms.exact.loss_forms.LossForm`, imported on first use."""
        module, _, name = self.form.partition(":")
        return getattr(importlib.import_module(module), name)
