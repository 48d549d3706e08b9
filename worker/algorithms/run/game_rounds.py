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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from worker.distributed.batch import PartitionedBatch, with_rows
from worker.distributed.rate_parts import PartitionedRates
from worker.kernels.games import GameConfig, GameState, RateArrays, game_steps
from worker.kernels.layout import ITERATION, ProblemArrays
from worker.kernels.svrg import batch_key
from worker.problem.rates import RateForm, RateSet

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
    """

    arrays: ProblemArrays
    rate_arrays: RateArrays
    rate_view: Callable[[RateSet | None], RateArrays]
    rates: RateSet | PartitionedRates | None
    source: PartitionedBatch | None = None
    sample: RateSet | None = None
    loaded: int = -1

    @classmethod
    def opened(cls, arrays: ProblemArrays, rates: RateSet | PartitionedRates | None,
               rate_view: Callable[[RateSet | None], RateArrays],
               source: PartitionedBatch | None) -> GameData:
        """The game's data, its first round loaded when the examples are in partitions."""
        data = cls(arrays, rate_view(None if source is not None else rates), rate_view,
                   rates, source)
        if source is not None:
            data.load(0)
        return data

    def load(self, round_index: int) -> None:
        """Hold round ``round_index``'s rows (gathered unless they are the ones held)."""
        if round_index == self.loaded:
            return
        key = batch_key(self.source.seed ^ GAME_SALT, round_index)
        what = f"game round {round_index + 1}'s examples"
        if isinstance(self.rates, PartitionedRates):
            rows, self.sample = self.rates.round_sample(key, ROUND_ROWS, what)
        else:
            rows = self.source.sample(key, ROUND_ROWS, what)
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
            game_steps(self.arrays, self.rate_arrays, cfg, state, step)
            count -= step

    def rate_values(self, w: np.ndarray) -> np.ndarray:
        """True g(w) (m_r,) for progress reports: on every example in memory, on the round's
        rows (an estimate) on partitions; empty without rates."""
        rates = self.rates if self.source is None else self.sample
        return np.zeros(0) if rates is None else rates.values(w)

    def rounds(self) -> dict[str, int] | None:
        """What the rounds cost so far, for the game's record (None in memory)."""
        if self.source is None:
            return None
        return {"round_iterations": ROUND_ITERATIONS, "round_rows": ROUND_ROWS,
                "rounds": self.loaded + 1}


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
