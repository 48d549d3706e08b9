"""The examples a game's steps draw from (Cotter, Jiang, Sridharan 2019, Algorithms 2 and 3):
the problem's own rows in memory, or rounds of rows sampled from partitions.

On partitions, round r covers the game's iterations [r R, (r + 1) R), R =
:data:`ROUND_ITERATIONS`. Before its first iteration the driver gathers about
:data:`ROUND_ROWS` rows, selected in every partition by a hash of (seed, r, global row),
with their shares of the rate constraints scaled to estimate the whole data's sums
(:meth:`worker.distributed.rate_parts.PartitionedRates.round_sample`); each step's minibatches
of k_f and k_r examples are drawn from them, so the driver holds the constraints and one
round's rows. Which rows a round holds depends only on the seed, the round and the partitions
(cut by rows, not by workers), and a chunk of steps never crosses a round's edge, so a fixed
iteration count gives the same bits in this process, on one worker and on many.

A rate as the objective (:mod:`worker.problem.rate_objective`) is one more row of the shares
(:class:`~worker.distributed.rate_parts.PartitionedTrueRate`): a round's rows carry its shares
q_i = (n / rows drawn) c_i / sum_S c too, and f's rows for the round are the drawn rows of
S, labelled -sign_i, drawn with probability proportional to q_i, with f's subgradient scaled
by sum q (``GameConfig.f_scale``). Its expectation is then the gradient of sum_i q_i
max(0, 1 + sign_i s_i), the round's estimate of the hinge proxy with the constraints' own
scaling, unbiased as theirs is; with every row drawn it is the in-memory game's f.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from worker.distributed.batch import PartitionedBatch, with_rows
from worker.distributed.rate_parts import PartitionedRates, PartitionedTrueRate
from worker.distributed.tasks import picked
from worker.kernels.games import GameConfig, GameState, RateArrays, game_steps
from worker.kernels.layout import ITERATION, ProblemArrays
from worker.kernels.svrg import Rows, batch_key
from worker.problem.rates import RateForm, RateSet, TrueRate
from worker.problem.weights import mean_one

#: Iterations of one round.
ROUND_ITERATIONS = 2**11
#: Rows a round samples: its steps draw about 1.6 examples per row for f and as many for
#: the rates at the default minibatches of 100.
ROUND_ROWS = 2**17
#: Salt of the key selecting a game round's examples.
GAME_SALT = 0x6A3E5A17


@dataclass
class GameData:
    """What a game's steps read: ``arrays`` (objective rows, linear constraints, the box)
    and the kernel view of the rate constraints, ``rate_arrays``; with ``source`` and
    ``rates`` (examples in partitions), the current round's sample of both, replaced as the
    steps cross a round's edge (module docstring).

    Parameters
    ----------
    arrays : ProblemArrays
    rate_arrays : RateArrays
    rate_view : callable
        ``rate_view(rates)``: the kernel view of a RateSet in the game's form.
    rates : RateSet or PartitionedRates or None
        The rate constraints on every example.
    source : PartitionedBatch, optional
    objective : TrueRate or PartitionedTrueRate, optional
        A rate as the objective, on every example.
    """

    arrays: ProblemArrays
    rate_arrays: RateArrays
    rate_view: Callable[[RateSet | None], RateArrays]
    rates: RateSet | PartitionedRates | None
    source: PartitionedBatch | None = None
    objective: TrueRate | PartitionedTrueRate | None = None
    sample: RateSet | None = None
    objective_sample: RateSet | None = None
    f_scale: float = 1.0
    loaded: int = -1

    @classmethod
    def opened(cls, arrays: ProblemArrays, rates: RateSet | PartitionedRates | None,
               rate_view: Callable[[RateSet | None], RateArrays],
               source: PartitionedBatch | None,
               objective: TrueRate | PartitionedTrueRate | None = None) -> GameData:
        """The game's data, its first round loaded when the examples are in partitions."""
        data = cls(arrays, rate_view(None if source is not None else rates), rate_view,
                   rates, source, objective)
        if source is not None:
            data.load(0)
        return data

    def load(self, round_index: int) -> None:
        """Hold round ``round_index``'s rows (gathered unless they are the ones held)."""
        if round_index == self.loaded:
            return
        key = batch_key(self.source.seed ^ GAME_SALT, round_index)
        what = f"game round {round_index + 1}'s examples"
        shares = self.rates if isinstance(self.rates, PartitionedRates) else \
            None if self.objective is None else self.objective.rate
        if shares is None:
            rows = self.source.sample(key, ROUND_ROWS, what)
        else:
            rows, every = shares.round_sample(key, ROUND_ROWS, what)
            self.sample = None if self.rates is None else self.rates.of(every)
            if self.objective is not None:
                self.objective_sample = self.objective.rate.of(every)
                rows, self.f_scale = round_objective(rows, self.objective_sample)
        self.arrays = with_rows(self.arrays, rows)
        self.rate_arrays = self.rate_view(self.sample)
        self.loaded = round_index

    def steps(self, cfg: GameConfig, state: GameState, count: int) -> None:
        """``count`` steps of the game from the iteration ``state`` is at (chunks cut at
        rounds' edges on partitions)."""
        while count > 0:
            step = count
            if self.source is not None:
                done = int(state.counters[ITERATION]) - 1
                self.load(done // ROUND_ITERATIONS)
                step = min(count, ROUND_ITERATIONS - done % ROUND_ITERATIONS)
            game_steps(self.arrays, self.rate_arrays, cfg._replace(f_scale=self.f_scale),
                       state, step)
            count -= step

    def rate_values(self, w: np.ndarray) -> np.ndarray:
        """True g(w) (m_r,) for progress reports: on every example in memory, on the round's
        rows (an estimate) on partitions; empty without rates."""
        rates = self.rates if self.source is None else self.sample
        return np.zeros(0) if rates is None else rates.values(w)

    def rate_objective(self, w: np.ndarray) -> float:
        """A rate objective's true value at w (d,) for progress reports: on every example in
        memory, on the round's rows (an estimate) on partitions."""
        if self.source is None:
            return float(self.objective.values(w)[0])
        return float(self.objective_sample.values(w)[0])

    def rounds(self) -> dict[str, int] | None:
        """What the rounds cost so far, for the game's record (None in memory)."""
        if self.source is None:
            return None
        return {"round_iterations": ROUND_ITERATIONS, "round_rows": ROUND_ROWS,
                "rounds": self.loaded + 1}


def round_objective(rows: Rows, objective: RateSet) -> tuple[Rows, float]:
    """A round's rows of a rate objective (module docstring) and f's scale, sum q.

    Parameters
    ----------
    rows : Rows
        The round's rows drawn (k of them).
    objective : RateSet
        The objective's row over them (m_r = 1, constant 0, shares q scaled to the round).

    Returns
    -------
    Rows
        The drawn rows of S in order, labelled -sign_i, with weights q of mean 1 (all 1
        where every q_i is equal, drawn uniformly); when the round drew none of S, its first
        row with scale 0 (f takes no step in the round: its estimate is 0).
    float
        sum q.
    """
    k = rows.labels.shape[0]
    shares, signs = np.zeros(k), np.zeros(k)
    for form_matrix, sign in ((objective.relaxed.plus, 1.0), (objective.relaxed.minus, -1.0)):
        entries = sp.csr_matrix(form_matrix)
        shares[entries.indices] += entries.data
        signs[entries.indices] = sign
    chosen = np.flatnonzero(signs)
    if chosen.size == 0:
        return picked(rows, np.zeros(1, dtype=np.int64)), 0.0
    counted = shares[chosen]
    weights = np.ones(chosen.size) if np.all(counted == counted[0]) else mean_one(counted)
    return picked(rows, chosen)._replace(labels=-signs[chosen], weights=weights), \
        float(counted.sum())


def rate_arrays(rates: RateSet | None, d: int, relaxed: bool) -> RateArrays:
    """The kernel view of the rate constraints: the ``relaxed`` form (Lagrangian) or the
    ``proxy`` form (proxy-Lagrangian), entries grouped by example; empty without rates."""
    if rates is None:
        features = sp.csr_matrix((0, d))
        form = RateForm(np.zeros(0), sp.csr_matrix((0, 0)), sp.csr_matrix((0, 0)))
    else:
        features, form = rates.features, rates.relaxed if relaxed else rates.proxy
    features = sp.csr_matrix(features, dtype=np.float64)
    both = sp.hstack([form.plus.T, form.minus.T], format="csr")  # (n_r, 2 m_r)
    both.sort_indices()
    m_r = form.constant.shape[0]
    return RateArrays(
        x_indptr=features.indptr.astype(np.int64), x_indices=features.indices.astype(np.int64),
        x_data=np.ascontiguousarray(features.data, dtype=np.float64),
        wt_indptr=both.indptr.astype(np.int64),
        wt_constraint=(both.indices % max(m_r, 1)).astype(np.int64),
        wt_weight=np.ascontiguousarray(both.data, dtype=np.float64),
        wt_sign=np.where(both.indices < m_r, 1.0, -1.0),
        constant=np.ascontiguousarray(form.constant, dtype=np.float64))
