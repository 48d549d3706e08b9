"""scikit-learn estimators that fit by solving a constrained problem: ``ConstrainedClassifier``
and ``ConstrainedRegressor``.

``fit`` builds a spec from the parameters and the arrays (:mod:`lighttouch.problem`) and
solves it in this process (``backend="local"``) or as a job of a service
(``backend=lighttouch.Client(...)``); both read the same bytes and give the same Result for
the same ``random_state``. The fitted model is the Result's mixture of at most m+1 solutions
(``result_``, ``mixture_``): a randomized classifier that draws a member per example
(Cotter, Jiang, Sridharan 2019, §5), whose rates are the ones the constraints bound.

Groups of rate constraints come from ``sensitive_features`` (a fit parameter routed by
scikit-learn's metadata routing, requested by default) or from ``sensitive_columns`` of a
DataFrame ``X`` (then not used as features). ``sample_weight``: finite non-negative weights,
fractional allowed, become the spec's ``objective.data.weights``: the loss and every rate
counted on the training rows are then weighted exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from lighttouch.problem import (
    Groups,
    build_spec,
    in_user_terms,
    user_constraints,
    with_intercept,
)
from lighttouch.solving import solve
from worker.errors import SpecError
from worker.mixture import Mixture, predictions
from worker.result import Result

#: check_estimator's checks the classifier is known to fail, and why (the argument of
#: ``check_estimator(ConstrainedClassifier(), expected_failed_checks=...)``): none. The two
#: sample-weight equivalence checks, which compare integer weights with rows repeated in
#: another order, failed while the games solved the checks' 3-class problems (a seeded
#: stochastic path samples rows by position); full-batch L-BFGS-B solves them now, and a
#: deterministic full pass sees the same problem either way.
CLASSIFIER_EXPECTED_FAILED_CHECKS: dict[str, str] = {}


class _ConstrainedEstimator(BaseEstimator):
    """Parameters, fitting and scoring shared by the classifier and the regressor."""

    __metadata_request__fit = {"sensitive_features": True}

    #: The ``loss`` and ``prediction`` that None stands for.
    DEFAULT_LOSS = DEFAULT_PREDICTION = ""

    def __init__(self, loss: str | None = None, *, model: Any = "linear",
                 fit_intercept: bool = True,
                 l1: float = 0.0, l2: float = 0.0, bounds: Any = None,
                 constraints: Any = None, sensitive_columns: list | None = None,
                 algorithm: str = "auto", iterations: int | str = "auto",
                 solver: dict | None = None, prediction: str | None = None,
                 random_state: int = 0, backend: Any = "local", objective: Any = None):
        self.loss = loss
        self.model = model
        self.fit_intercept = fit_intercept
        self.l1 = l1
        self.l2 = l2
        self.bounds = bounds
        self.constraints = constraints
        self.sensitive_columns = sensitive_columns
        self.algorithm = algorithm
        self.iterations = iterations
        self.solver = solver
        self.prediction = prediction
        self.random_state = random_state
        self.backend = backend
        self.objective = objective

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _split_sensitive(self, X: Any) -> tuple[Any, Any]:
        """(features, sensitive columns) of ``X`` (the latter None without sensitive_columns)."""
        if not self.sensitive_columns:
            return X, None
        if not hasattr(X, "columns"):
            raise ValueError("sensitive_columns names columns of a DataFrame X; pass "
                             "sensitive_features to fit instead for an array X")
        return X.drop(columns=self.sensitive_columns), X[self.sensitive_columns]

    def _features(self, X: Any, reset: bool) -> Any:
        """Validated features (n, d), with the intercept column when the model is linear."""
        X, _ = self._split_sensitive(X)
        X = validate_data(self, X, reset=reset, accept_sparse="csr", dtype=np.float64)
        return self._with_intercept(X)

    def _with_intercept(self, X: Any) -> Any:
        linear = self.model == "linear" or (isinstance(self.model, dict)
                                            and self.model.get("type") == "linear")
        return with_intercept(X, self.fit_intercept and linear)

    def _training_rows(self, X: Any, y: Any, sample_weight: Any, sensitive_features: Any,
                       numeric: bool) -> tuple[Any, np.ndarray, Any, np.ndarray | None]:
        """Validated (features (n, d), y (n,), sensitive features, weights (n,) or None)."""
        X, from_columns = self._split_sensitive(X)
        X, y = validate_data(self, X, y, reset=True, accept_sparse="csr", dtype=np.float64,
                             y_numeric=numeric)
        sensitive = sensitive_features if sensitive_features is not None else from_columns
        return X, y, sensitive, _checked_weights(sample_weight, X.shape[0])

    def _solve(self, features: Any, labels: np.ndarray, sensitive: Any, loss: str,
               classes: int | None = None, weights: np.ndarray | None = None) -> None:
        """Fit: solve the spec of the arrays, each row weighing ``weights`` (None: 1), and
        keep its Result and mixture."""
        features = self._with_intercept(features)
        groups = Groups.of(sensitive, features.shape[0])
        params = self.get_params()
        spec = build_spec(params, features, labels, groups, loss=loss, classes=classes,
                          weights=weights)
        try:
            self.result_ = _run(spec, self.backend)
        except SpecError as error:
            raise in_user_terms(error, user_constraints(params["constraints"], groups)) \
                from None
        self.mixture_ = Mixture.from_result(self.result_)
        self.groups_ = sorted(groups.members)

    def _scores(self, X: Any) -> np.ndarray:
        """Scores (n,) or (n, K) of the member ``prediction`` picks per example."""
        check_is_fitted(self)
        return self.mixture_.score(self._features(X, reset=False),
                                   self.prediction or self.DEFAULT_PREDICTION, self.random_state)

    @property
    def _loss(self) -> str:
        return self.loss or self.DEFAULT_LOSS


class ConstrainedClassifier(ClassifierMixin, _ConstrainedEstimator):
    """A linear (or MLP) classifier fitted under constraints, e.g. on rates of groups.

    Parameters
    ----------
    loss : str, optional
        The spec's loss: ``hinge`` (None), ``logistic``, ``squared_hinge``; more than two
        classes use ``softmax_cross_entropy`` (no rate constraints then).
    model : "linear" or dict
        The spec's ``model`` (e.g. ``{"type": "mlp", "hidden": [16]}``).
    fit_intercept : bool
        Append a constant feature to a linear model.
    l1, l2 : float
        Regularization weights.
    bounds : None, float or (lower, upper)
        The box of every parameter (None: unbounded; b: [-b, b]).
    constraints : dict, criterion or list of them
        Spec constraints, or criteria of :mod:`lighttouch.fairness` (``EqualizedOdds(
        difference_bound=0.05)``, standing for their ``to_spec()``); a rate term's ``group``
        names a group of the sensitive features (their value, or ``column=value`` for
        several), ``"*"`` every group in turn.
    sensitive_columns : list, optional
        Columns of a DataFrame ``X`` that give the groups (not used as features).
    algorithm, iterations, solver : str, int or "auto", dict
        The spec's ``solver.algorithm``, ``solver.iterations``, further ``solver`` options.
    prediction : {"stochastic", "expected", "deterministic"}, optional
        How :meth:`predict` uses the mixture: (None) a member drawn per example (seeded by
        ``random_state``, the randomized classifier whose rates the constraints bound), the
        sign of the weighted mean score, or the Result's deterministic model (the best
        candidate within ``solver.tolerance``, docs/results.md).
    random_state : int
        The solver's seed and the seed of stochastic predictions.
    backend : "local" or lighttouch.Client
        Solve in this process, or as a job of a service.
    objective : str or dict, optional
        A rate to minimize instead of a loss (docs/rates.md#a-rate-as-the-objective): a
        metric's name, e.g. ``"false_positive_rate"`` with a constraint
        ``true_positive_rate >= 0.8`` (Neyman-Pearson), or ``{"metric": ..., "group": ...}``;
        ``loss``, ``l1`` and ``l2`` then stay unset.

    Attributes
    ----------
    result_ : Result
    mixture_ : Mixture
    classes_ : ndarray (K,)
    groups_ : list of str
        The group names the sensitive features gave.
    """

    DEFAULT_LOSS, DEFAULT_PREDICTION = "hinge", "stochastic"


    def fit(self, X: Any, y: Any, sample_weight: Any = None, *,
            sensitive_features: Any = None) -> ConstrainedClassifier:
        """Solve the constrained problem on ``X`` (n, d) and labels ``y`` (n,)."""
        X, y, sensitive, weights = self._training_rows(X, y, sample_weight, sensitive_features,
                                                       numeric=False)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"y holds one class ({self.classes_[0]!r}) among the rows "
                             "fitted; a classifier needs at least two")
        if self.classes_.size > 2 and self.objective is not None:
            raise ValueError(f"objective={self.objective!r}: a rate counts positive "
                             f"predictions of two classes; y holds {self.classes_.size}")
        if self.classes_.size == 2:
            self._solve(X, np.where(encoded == 1, 1.0, -1.0), sensitive, self._loss,
                        weights=weights)
        else:
            self._solve(X, encoded.astype(np.float64), sensitive, "softmax_cross_entropy",
                        classes=int(self.classes_.size), weights=weights)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """The weighted mean score of the mixture's members: (n,), or (n, K) for K classes."""
        check_is_fitted(self)
        return self.mixture_.score(self._features(X, reset=False), "expected")

    def predict(self, X: Any) -> np.ndarray:
        """Predicted classes (n,), members chosen as ``prediction`` says."""
        scores = self._scores(X)
        return self.classes_[predictions(scores)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """(n, K): per example, the probability that the randomized mixture predicts each
        class (the weight of the members that do); with two classes, column 1 is the
        probability of a positive prediction."""
        check_is_fitted(self)
        scores = self.mixture_.member_scores(self._features(X, reset=False))
        weights = self.mixture_.weights / self.mixture_.weights.sum()
        if scores.ndim == 2:
            positive = (scores > 0).astype(np.float64) @ weights
            return np.column_stack([1.0 - positive, positive])
        chosen = scores.argmax(axis=2)
        return np.stack([(chosen == k).astype(np.float64) @ weights
                         for k in range(self.classes_.size)], axis=1)


class ConstrainedRegressor(RegressorMixin, _ConstrainedEstimator):
    """A linear (or MLP) regressor fitted under constraints; parameters as
    :class:`ConstrainedClassifier`'s, with ``loss="squared"`` and ``prediction="expected"``
    (the mixture's weighted mean prediction) by default; ``objective`` (a rate) is the
    classifier's alone."""

    DEFAULT_LOSS, DEFAULT_PREDICTION = "squared", "expected"


    def fit(self, X: Any, y: Any, sample_weight: Any = None, *,
            sensitive_features: Any = None) -> ConstrainedRegressor:
        """Solve the constrained problem on ``X`` (n, d) and targets ``y`` (n,)."""
        if self.objective is not None:
            raise ValueError("objective: a rate counts predicted classes; minimize it with "
                             "ConstrainedClassifier")
        X, y, sensitive, weights = self._training_rows(X, y, sample_weight, sensitive_features,
                                                       numeric=True)
        self._solve(X, y, sensitive, self._loss, weights=weights)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions (n,), members chosen as ``prediction`` says."""
        return self._scores(X)


def _checked_weights(sample_weight: Any, n: int) -> np.ndarray | None:
    """``sample_weight`` as finite non-negative weights (n,) of positive sum (None stays
    None); scikit-learn's ValueError saying what to fix otherwise."""
    if sample_weight is None:
        return None
    return _check_sample_weight(sample_weight, np.empty((n, 0)), ensure_non_negative=True)


def _run(spec: dict, backend: Any) -> Result:
    """Solve ``spec`` in this process or as a job of ``backend`` (a lighttouch.Client)."""
    if isinstance(backend, str):
        if backend != "local":
            raise ValueError(f"backend must be 'local' or a lighttouch.Client, got {backend!r}")
        return solve(spec)
    job = backend.submit(spec)
    job.wait(progress=False)
    return job.result()
