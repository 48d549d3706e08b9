"""lighttouch.fairness against fairlearn's ExponentiatedGradient on UCI Adult, both in one run.

The data: the repository's copy of Adult (:func:`lighttouch.datasets.adult`), label
``>50K``, numeric columns standardized on the training file, categorical columns one-hot
(the sensitive column stays among the features, as in fairlearn's own Adult examples). With
``sex``, and again with ``race``, as the sensitive feature, three criteria by the same name
and parameters on both sides: ``EqualizedOdds(difference_bound=0.05)``,
``DemographicParity(difference_bound=0.02)``, ``TruePositiveRateParity(ratio_bound=0.95)``.

* ours: ``ConstrainedClassifier(loss="logistic", constraints=criterion)``, a linear model
  (the mixture of at most m+1 solutions the games return), default solver settings;
* fairlearn: ``ExponentiatedGradient(LogisticRegression(), constraints=criterion)``, its
  defaults (eps 0.01, 50 iterations).

Both sides' classifiers are randomized; every number is the expectation over their
randomization (ours: ``predict_proba``, fairlearn: ``_pmf_predict``). ``deviation`` is the
criterion's own measure, the largest over groups (and labels, for the odds) of
|rate(G) - rate(all)| for a difference bound, and of r rate(G) - rate(all) and
r rate(all) - rate(G) for a ratio bound r (so the training deviation is within the bound
when it is <= the difference bound, or <= 0 for a ratio); ``between`` is fairlearn's
metric of the same rates, the largest difference between two groups. Targets: fit time <=
fairlearn's, test deviation <= fairlearn's + 0.02, training deviation within the bound
(+ 0.001, the solver's default tolerance), test error <= fairlearn's + 0.5 point.

The first fit of ours compiles the numba kernels (cached afterwards); a small warm-up fit
runs first and is not timed.

Usage::

    python -m bench.fairlearn_compare            # about 5 minutes
    python -m bench.fairlearn_compare --quick    # 5,000 training rows

Writes ``bench/results/fairlearn_compare.json`` and ``.png``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from lighttouch import ConstrainedClassifier
from lighttouch import fairness as ours
from lighttouch.datasets import adult

RESULTS = Path(__file__).resolve().parent / "results"
#: (name, criterion keyword arguments); the same on both sides.
CRITERIA = (("EqualizedOdds", {"difference_bound": 0.05}),
            ("DemographicParity", {"difference_bound": 0.02}),
            ("TruePositiveRateParity", {"ratio_bound": 0.95}))
SENSITIVE = ("sex", "race")
#: The solver's default tolerance: a training deviation this far past the bound is within it.
TOLERANCE = 1e-3
METRICS = {"EqualizedOdds": ("true_positive_rate", "false_positive_rate"),
           "DemographicParity": ("positive_prediction_rate",),
           "TruePositiveRateParity": ("true_positive_rate",)}


def encoded(train: pd.DataFrame, test: pd.DataFrame) -> tuple:
    """(X_train, y_train, X_test, y_test): standardized numeric, one-hot categorical."""
    both = pd.concat([train, test], keys=["train", "test"])
    labels = (both.pop("Y") == ">50K").astype(int).to_numpy()
    numeric = both.select_dtypes("number")
    numeric = (numeric - numeric.loc["train"].mean()) / numeric.loc["train"].std()
    features = pd.concat([numeric, pd.get_dummies(both.select_dtypes(exclude="number"),
                                                  dtype=float)], axis=1).to_numpy(float)
    n = len(train)
    return features[:n], labels[:n], features[n:], labels[n:]


def rates(metric: str, positive: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> float:
    """The expected rate over ``rows`` given each row's probability of a positive."""
    subset = rows & {"true_positive_rate": labels == 1,
                     "false_positive_rate": labels == 0}.get(metric, np.ones_like(rows))
    return float(positive[subset].mean())


def measures(name: str, bound: dict, positive: np.ndarray, labels: np.ndarray,
             groups: np.ndarray) -> dict:
    """Expected error, the criterion's deviation and the largest between-group gap."""
    ratio = bound.get("ratio_bound", 1.0)
    deviation, between = -np.inf, 0.0
    for metric in METRICS[name]:
        overall = rates(metric, positive, labels, np.ones(labels.size, dtype=bool))
        own = [rates(metric, positive, labels, groups == g) for g in np.unique(groups)]
        between = max(between, max(own) - min(own))
        for value in own:
            gaps = (abs(value - overall),) if "difference_bound" in bound else \
                (ratio * value - overall, ratio * overall - value)
            deviation = max(deviation, *gaps)
    error = float(np.mean(np.where(labels == 1, 1.0 - positive, positive)))
    return {"error": error, "deviation": float(deviation), "between": float(between)}


def fit_ours(name, bound, X, y, groups):
    model = ConstrainedClassifier(loss="logistic", l2=1.0 / len(y),
                                  constraints=getattr(ours, name)(**bound))
    start = time.perf_counter()
    model.fit(X, y, sensitive_features=groups)
    return time.perf_counter() - start, lambda Z: model.predict_proba(Z)[:, 1], model


def fit_fairlearn(name, bound, X, y, groups):
    from fairlearn import reductions
    from sklearn.linear_model import LogisticRegression

    model = reductions.ExponentiatedGradient(LogisticRegression(max_iter=1000),
                                             constraints=getattr(reductions, name)(**bound))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y, sensitive_features=groups)
    return time.perf_counter() - start, lambda Z: model._pmf_predict(Z)[:, 1], model


def compare(name, bound, data, column) -> dict:
    X, y, Xt, yt, train, test = data
    groups, test_groups = train[column].to_numpy(str), test[column].to_numpy(str)
    row = {"sensitive": column, "criterion": name, **bound}
    for side, fit in (("lighttouch", fit_ours), ("fairlearn", fit_fairlearn)):
        seconds, positive, model = fit(name, bound, X, y, groups)
        row[side] = {"fit_s": seconds,
                     "train": measures(name, bound, positive(X), y, groups),
                     "test": measures(name, bound, positive(Xt), yt, test_groups)}
        if side == "lighttouch":
            row[side]["support"] = len(model.result_.mixture)
            row[side]["iterations"] = model.result_.stats.get("iterations")
            row[side]["stopped_by"] = model.result_.stats.get("stopped_by")
    limit = bound.get("difference_bound", 0.0) + TOLERANCE
    lt, fl = row["lighttouch"], row["fairlearn"]
    row["targets"] = {
        "fit_time": lt["fit_s"] <= fl["fit_s"],
        "test_deviation": lt["test"]["deviation"] <= fl["test"]["deviation"] + 0.02,
        "train_within_bound": lt["train"]["deviation"] <= limit,
        "test_error": lt["test"]["error"] <= fl["test"]["error"] + 0.005}
    return row


def figure(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    short = {"EqualizedOdds": "EO 0.05", "DemographicParity": "DP 0.02",
             "TruePositiveRateParity": "TPR ratio 0.95"}
    labels = [f"{short[r['criterion']]}\n{r['sensitive']}" for r in rows]
    x = np.arange(len(rows))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, (key, title) in zip(axes, (("fit_s", "fit time (s)"),
                                       ("error", "test error"),
                                       ("deviation", "test deviation")), strict=True):
        for shift, side in ((-0.2, "lighttouch"), (0.2, "fairlearn")):
            values = [r[side][key] if key == "fit_s" else r[side]["test"][key] for r in rows]
            ax.bar(x + shift, values, 0.4, label=side)
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_title(title)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 training rows")
    args = parser.parse_args()
    train, test = adult()
    if args.quick:
        train = train.sample(5000, random_state=0)
    X, y, Xt, yt = encoded(train, test)
    data = (X, y, Xt, yt, train, test)
    fit_ours("DemographicParity", {"difference_bound": 0.1}, X[:500], y[:500],
             train["sex"].to_numpy(str)[:500])  # warm-up: compiles the kernels
    stem = "fairlearn_compare_quick" if args.quick else "fairlearn_compare"
    RESULTS.mkdir(exist_ok=True)
    rows = []
    for column in SENSITIVE:
        for name, bound in CRITERIA:
            rows.append(compare(name, bound, data, column))
            (RESULTS / f"{stem}.json").write_text(json.dumps(  # each row as it comes
                {"rows": len(train), "test_rows": len(test), "results": rows}, indent=1) + "\n")
            lt, fl = rows[-1]["lighttouch"], rows[-1]["fairlearn"]
            print(f"{column:5} {name:23} ours {lt['fit_s']:6.1f}s err {lt['test']['error']:.4f}"
                  f" dev {lt['test']['deviation']:.4f} (train {lt['train']['deviation']:.4f})"
                  f" | fairlearn {fl['fit_s']:6.1f}s err {fl['test']['error']:.4f}"
                  f" dev {fl['test']['deviation']:.4f} (train {fl['train']['deviation']:.4f})"
                  f" | {rows[-1]['targets']}", flush=True)
    figure(rows, RESULTS / f"{stem}.png")


if __name__ == "__main__":
    main()
