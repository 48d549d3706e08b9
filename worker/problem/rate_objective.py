"""A rate as the objective (docs/rates.md#a-rate-as-the-objective), compiled.

The rate r(w) = sum_{i in S} (c_i / sum_S c) 1[sign_i s_i > 0] (S the metric's examples: a
group intersected with a label; c the example weights, all 1 without ``data.weights``; sign_i
+1 counts a positive prediction, -1 a negative one, and ``error_rate`` counts the wrong one,
sign_i = -y_i; :func:`worker.problem.rates.rate_rows`) is played by the proxy-Lagrangian
(Cotter, Jiang, Sridharan 2019, Definition 2, Algorithm 2) through its hinge proxy, the upper
bound max(0, 1 + sign_i s_i) of each indicator, which is the hinge loss max(0, 1 - y s) on
S's rows with labels y_i = -sign_i, weighted by the same c: the theta-player descends it as
the objective f, while the candidates, the shrinking LP and the Result score the true
(weighted) rate (:class:`~worker.problem.rates.TrueRate`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from worker.data.labels import checked_labels
from worker.errors import SpecError
from worker.losses import CLASSES
from worker.problem.compile_rates import RateExamples, group_rows, objective_rows
from worker.problem.compiled import LOSS_CODES, Objective
from worker.problem.csr import as_csr
from worker.problem.rates import TrueRate, build_rate_set
from worker.problem.weights import example_weights, mean_one
from worker.spec.rates import PREDICTION_RATES, RateObjective

#: Where the rate objective's examples are in the spec.
DATA_PATH = "objective.data"
#: The loss of the rate's proxy, as which its examples are read (±1 labels).
PROXY_LOSS = "hinge"


def compile_rate_objective(objective: RateObjective, source) -> tuple[Objective, TrueRate]:
    """The hinge proxy as a hinge-loss :class:`Objective` over S's rows (|S|, d), and the true
    rate over all the objective's examples (n_o, d), read through ``source`` (a
    :class:`~worker.problem.compile.DataSource`); a SpecError naming the field otherwise."""
    data = objective.data
    if data.labels is not None or objective.metric not in PREDICTION_RATES:
        features, labels = source.examples(data.features, data.labels, DATA_PATH)
        labels = checked_labels(labels, CLASSES, DATA_PATH, f"{DATA_PATH}.labels")
    else:
        features, labels = source.matrix(data.features, f"{DATA_PATH}.features"), None
    features = sp.csr_matrix(as_csr(features), dtype=np.float64)
    n = features.shape[0]
    if labels is not None and labels.shape[0] != n:
        raise SpecError.at(f"{DATA_PATH}.labels", f"{labels.shape[0]} labels for {n} "
                           "feature rows; give one label per row")
    if n == 0:
        raise SpecError.at(f"{DATA_PATH}.features", "no examples; give at least one row")
    groups = group_rows(data.groups, n, f"{DATA_PATH}.groups", source)
    weights = example_weights(data.weights, n, f"{DATA_PATH}.weights", source)
    rows, shares, signs = objective_rows(objective, RateExamples(
        features, labels, groups, 0, f"{DATA_PATH}.groups", weights))
    proxy = Objective(LOSS_CODES[PROXY_LOSS], features[rows], -signs, sp.csr_matrix((0, 0)),
                      np.zeros(0), weights=None if weights is None else mean_one(weights[rows]))
    rate = build_rate_set(features, [(0, rows, shares, signs)], np.zeros(1))
    return proxy, TrueRate(rate, labels, groups, weights)
