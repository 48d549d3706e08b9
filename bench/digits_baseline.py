"""How much each corruption of ``worker.datasets.digits`` hurts a linear softmax classifier.

For the clean images and each corrupted set, trains scikit-learn's ``LogisticRegression``
(multinomial, default C = 1, ``max_iter`` 5,000, on the 64 pixels) on the training split
and reports test error of: the model trained on clean images, the model trained on that
set, and the model trained on the union of the four corrupted training sets. A corruption
is strong enough when the clean-trained error rises clearly above the clean error, and
learnable enough when the set's own model stays well under 20%. Each corruption seed (the
argument of ``corrupted_digits``; the split is fixed) is one draw of the four sets.

Usage::

    python bench/digits_baseline.py                # seeds 0..3; bench/results/digits_baseline.json
    python bench/digits_baseline.py --seeds 0      # the shipped draw only
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from sklearn.linear_model import LogisticRegression

from worker.datasets import digits

RESULTS = Path(__file__).resolve().parent / "results" / "digits_baseline.json"
MAX_ITER = 5_000


def fitted(split: digits.Split) -> LogisticRegression:
    """A linear softmax classifier trained on ``split``."""
    return LogisticRegression(max_iter=MAX_ITER).fit(split.features, split.labels)


def error(model: LogisticRegression, split: digits.Split) -> float:
    """Share of ``split`` the model misclassifies."""
    return float(1.0 - model.score(split.features, split.labels))


def test_errors(seed: int) -> dict[str, dict[str, float]]:
    """Set name (and ``clean``) -> test error of the clean-, own- and union-trained models."""
    data = digits.corrupted_digits(seed)
    clean, union = fitted(data.clean.train), fitted(data.union)
    rows = {"clean": {"clean_trained": error(clean, data.clean.test),
                      "own_trained": error(clean, data.clean.test),
                      "union_trained": error(union, data.clean.test)}}
    for name, pair in data.sets.items():
        rows[name] = {"clean_trained": error(clean, pair.test),
                      "own_trained": error(fitted(pair.train), pair.test),
                      "union_trained": error(union, pair.test)}
    return rows


def main() -> None:
    """Train the classifiers per seed, print tables of test errors and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = time.perf_counter()
    by_seed = {seed: test_errors(seed) for seed in args.seeds}
    for seed, rows in by_seed.items():
        print_table(seed, rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "classifier": f"sklearn LogisticRegression(max_iter={MAX_ITER})",
        "test_error_by_seed": {str(seed): rows for seed, rows in by_seed.items()},
        "seconds": time.perf_counter() - started}, indent=2) + "\n")


def print_table(seed: int, rows: dict[str, dict[str, float]]) -> None:
    """Test errors in % of one seed, one line per set."""
    print(f"seed {seed}")
    print(f"{'test error %':12} {'clean-trained':>14} {'own':>8} {'union':>8}")
    for name, row in rows.items():
        print(f"{name:12} {100 * row['clean_trained']:14.1f} {100 * row['own_trained']:8.1f} "
              f"{100 * row['union_trained']:8.1f}")


if __name__ == "__main__":
    main()
