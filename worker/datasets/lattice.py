"""Synthetic problems in the shape of the LightTouch paper's YouTube ranking experiment.

LightTouch paper §6: pairs ``(x+, x-)`` of 12 features in [0, 1], each mapped by simplex
interpolation onto the 2^12 = 4096 vertices of the unit lattice (13 nonzeros per row),
a pairwise hinge loss ``max(0, 1 - w.(Phi(x+) - Phi(x-)))`` averaged over n = 612,587
pairs, the box ``-10 <= w_i <= 10`` and m = 12 * 2^11 = 24,576 monotonicity constraints
(one per lattice edge). The real data are proprietary; here the pairs are drawn uniformly
from [0, 1]^D and ordered by a noisy, monotone increasing ground truth.

Lattice vertex flattening (must match the solver's ``monotone_lattice`` constraint): C order
over shape ``[2] * D`` (``numpy.ravel_multi_index``), so the vertex with coordinates
``(b_0, ..., b_{D-1})`` has index ``sum_k b_k * 2**(D-1-k)``.

``bench/lattice_problem.py OUTDIR`` writes one to disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from worker.datasets.simplex import lattice_vertices, simplex_interpolation

#: Paper §6 sizes and §6.1 hyperparameters.
PAPER_PAIRS = 612_587
PAPER_DIMS = 12
BOX_BOUND = 10
GAMMA = 1.0
ETA_W = 16.0
ETA_P = 1.0 / 16.0

#: Defaults of the generated problem (not from the paper).
DEFAULT_NOISE = 0.05
DEFAULT_ITERATIONS = 200_000
DEFAULT_ALGORITHM = "lighttouch"
SPEC_NAME = "spec.json"


@dataclass(frozen=True)
class MonotoneTruth:
    """A ground-truth score on [0, 1]^D, increasing in every coordinate, with range in [0, 1].

    ``truth(x) = sum_j a_j * phi_j(x_j) + sum_k b_k * x_{p_k} * x_{q_k}`` where each
    ``phi_j`` maps [0, 1] onto [0, 1] increasingly (a power ``t**s_j``, or a logistic step
    of steepness ``s_j`` centred at ``c_j``), ``a, b >= 0`` and ``sum(a) + sum(b) = 1``.

    Attributes
    ----------
    weights : ndarray, shape (D,)
        ``a_j``.
    is_step : ndarray of bool, shape (D,)
        True where ``phi_j`` is a logistic step, False where it is a power.
    shape_params : ndarray, shape (D,)
        Power exponent ``s_j`` or logistic steepness ``s_j``.
    centres : ndarray, shape (D,)
        Logistic centre ``c_j`` (unused for powers).
    pairs : ndarray of int, shape (k, 2)
        Interacting coordinates ``(p_k, q_k)``.
    pair_weights : ndarray, shape (k,)
        ``b_k``.
    """

    weights: np.ndarray
    is_step: np.ndarray
    shape_params: np.ndarray
    centres: np.ndarray
    pairs: np.ndarray
    pair_weights: np.ndarray

    @property
    def dims(self) -> int:
        """Number of features D."""
        return int(self.weights.shape[0])

    def transforms(self, x: np.ndarray) -> np.ndarray:
        """Per-coordinate transforms ``phi_j(x_j)``, shape (n, D), each in [0, 1]."""
        power = x**self.shape_params
        steep, centre = self.shape_params, self.centres
        low = _logistic(-steep * centre)
        high = _logistic(steep * (1.0 - centre))
        step = (_logistic(steep * (x - centre)) - low) / (high - low)
        return np.where(self.is_step, step, power)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Score of each row of ``x`` (shape (n, D)); returns shape (n,)."""
        x = np.asarray(x, dtype=np.float64)
        main = self.transforms(x) @ self.weights
        products = x[:, self.pairs[:, 0]] * x[:, self.pairs[:, 1]]
        return main + products @ self.pair_weights

    def lattice_values(self) -> np.ndarray:
        """The truth at every lattice vertex (C order), shape (2**D,): a monotone lattice."""
        return self(lattice_vertices(self.dims))


def _logistic(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-z))``."""
    return 1.0 / (1.0 + np.exp(-z))


def make_truth(dims: int = PAPER_DIMS, truth_seed: int = 0) -> MonotoneTruth:
    """Draw a :class:`MonotoneTruth`; deterministic per ``(dims, truth_seed)``.

    Feature importances are Gamma(1) draws (a few features dominate); about a third of
    the transforms are logistic steps, the rest powers with exponent in [1/3, 3]; there are
    ``max(1, D // 3)`` pairwise interactions carrying a quarter of the total weight.

    Parameters
    ----------
    dims : int
        Number of features D (>= 2).
    truth_seed : int
        Seed of the truth's parameters (independent of the sample seed).

    Returns
    -------
    MonotoneTruth
    """
    if dims < 2:
        raise ValueError(f"dims must be >= 2, got {dims}")
    rng = np.random.default_rng([truth_seed, dims])
    is_step = rng.random(dims) < 1.0 / 3.0
    exponents = np.exp(rng.uniform(np.log(1.0 / 3.0), np.log(3.0), dims))
    steepness = rng.uniform(6.0, 20.0, dims)
    n_pairs = max(1, dims // 3)
    pairs = np.array([rng.choice(dims, size=2, replace=False) for _ in range(n_pairs)])
    weights = rng.gamma(1.0, size=dims)
    pair_weights = rng.gamma(1.0, size=n_pairs)
    return MonotoneTruth(
        weights=0.75 * weights / weights.sum(),
        is_step=is_step,
        shape_params=np.where(is_step, steepness, exponents),
        centres=rng.uniform(0.25, 0.75, dims),
        pairs=pairs.astype(np.int64),
        pair_weights=0.25 * pair_weights / pair_weights.sum(),
    )


# --------------------------------------------------------------------------- problem


def sample_pairs(
    n_pairs: int, truth: MonotoneTruth, noise: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Draw pairs uniformly from [0, 1]^D; the one with the larger noisy truth is positive.

    Parameters
    ----------
    n_pairs : int
        Number of pairs n.
    truth : MonotoneTruth
        The ground truth.
    noise : float
        Standard deviation of the Gaussian noise added to each point's truth (>= 0).
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    x_positive, x_negative : ndarray, shape (n, D)
    """
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    first = rng.random((n_pairs, truth.dims))
    second = rng.random((n_pairs, truth.dims))
    first_score = truth(first) + noise * rng.standard_normal(n_pairs)
    second_score = truth(second) + noise * rng.standard_normal(n_pairs)
    second_wins = (second_score > first_score)[:, None]
    return np.where(second_wins, second, first), np.where(second_wins, first, second)


def make_ranking_problem(
    n_pairs: int,
    D: int = PAPER_DIMS,  # the paper's name for the feature count
    noise: float = DEFAULT_NOISE,
    seed: int = 0,
    truth_seed: int = 0,
) -> tuple[sp.csr_matrix, sp.csr_matrix, MonotoneTruth]:
    """A pairwise ranking problem of the paper's shape on synthetic data.

    Deterministic per ``(n_pairs, D, noise, seed, truth_seed)``. The truth depends only on
    ``(D, truth_seed)``, so two seeds give a training and a held-out set of one problem.

    Parameters
    ----------
    n_pairs : int
        Number of pairs n (paper: 612,587).
    D : int
        Number of features (paper: 12); the model has 2**D parameters.
    noise : float
        Standard deviation of the noise on each point's truth (truth ranges over [0, 1]).
    seed : int
        Seed of the sampled pairs and noise.
    truth_seed : int
        Seed of the ground truth.

    Returns
    -------
    positive : scipy.sparse.csr_matrix, shape (n, 2**D)
        ``Phi(x+)`` rows, D + 1 entries each.
    negative : scipy.sparse.csr_matrix, shape (n, 2**D)
        ``Phi(x-)`` rows.
    truth : MonotoneTruth
        The ground truth; ``truth.lattice_values()`` is a feasible, monotone ``w``.
    """
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be >= 1, got {n_pairs}")
    truth = make_truth(D, truth_seed)
    x_positive, x_negative = sample_pairs(n_pairs, truth, noise, np.random.default_rng(seed))
    return simplex_interpolation(x_positive), simplex_interpolation(x_negative), truth


def problem_spec(
    positive_path: Path,
    negative_path: Path,
    dims: int,
    *,
    seed: int,
    iterations: int,
    algorithm: str,
    name: str,
) -> dict:
    """The spec of a lattice ranking problem whose data are two npz files.

    Parameters
    ----------
    positive_path, negative_path : pathlib.Path
        The ``Phi(x+)`` and ``Phi(x-)`` matrices (``scipy.sparse.save_npz``).
    dims : int
        Number of features D.
    seed, iterations : int
        Solver seed and iteration budget.
    algorithm : str
        Solver algorithm name.
    name : str
        Label of the problem.

    Returns
    -------
    dict
        JSON-serialisable spec, hyperparameters as in LightTouch paper §6.1.
    """

    def reference(path: Path) -> dict:
        return {"uri": path.resolve().as_uri(), "format": "npz"}

    return {
        "spec_version": 1,
        "name": name,
        "dimension": 2**dims,
        "bounds": {"lower": -BOX_BOUND, "upper": BOX_BOUND},
        "objective": {
            "type": "empirical_risk",
            "loss": "pairwise_hinge",
            "data": {"positive": reference(positive_path), "negative": reference(negative_path)},
            "l2": 0,
        },
        "constraints": [
            {"type": "monotone_lattice", "shape": [2] * dims, "increasing": list(range(dims))}
        ],
        "solver": {
            "algorithm": algorithm,
            "iterations": iterations,
            "seed": seed,
            "gamma": GAMMA,
            "eta_w": ETA_W,
            "eta_p": ETA_P,
        },
    }


def write_problem(
    directory: str | Path,
    n_pairs: int,
    D: int = PAPER_DIMS,  # the paper's name for the feature count
    seed: int = 0,
    iterations: int = DEFAULT_ITERATIONS,
    algorithm: str = DEFAULT_ALGORITHM,
    noise: float = DEFAULT_NOISE,
    truth_seed: int = 0,
    compressed: bool = False,
) -> Path:
    """Generate a problem and write ``positive.npz``, ``negative.npz`` and ``spec.json``.

    Parameters
    ----------
    directory : str or pathlib.Path
        Output directory (created if missing; existing files are overwritten).
    n_pairs, D, noise, seed, truth_seed
        As in :func:`make_ranking_problem`; ``seed`` is also the solver seed.
    iterations : int
        Solver iteration budget written in the spec.
    algorithm : str
        Solver algorithm written in the spec.
    compressed : bool
        Deflate the npz files: smaller, but much slower to write and to load (measured:
        docs/benchmarks.md#fixed-costs-measured).

    Returns
    -------
    pathlib.Path
        Absolute path of the spec JSON.
    """
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    positive, negative, _ = make_ranking_problem(n_pairs, D, noise, seed, truth_seed)
    positive_path, negative_path = directory / "positive.npz", directory / "negative.npz"
    sp.save_npz(positive_path, positive, compressed=compressed)
    sp.save_npz(negative_path, negative, compressed=compressed)
    name = f"lattice-ranking D={D} n={n_pairs} noise={noise} seed={seed}"
    spec = problem_spec(
        positive_path,
        negative_path,
        D,
        seed=seed,
        iterations=iterations,
        algorithm=algorithm,
        name=name,
    )
    spec_path = directory / SPEC_NAME
    spec_path.write_text(json.dumps(spec, indent=2) + "\n")
    return spec_path
