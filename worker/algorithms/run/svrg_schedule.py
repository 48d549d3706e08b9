"""SVRG OL's schedule: serial phase lengths T_k and batch sizes N^_k.

Two schedules (Cutkosky & Busa-Fekete):

* ``practical`` (§8.3): constant T_k = T_0 and growing batches N^_k = k C (C = T_0 unless
  ``batch_size`` sets it). Early anchors are far from the optimum and need little accuracy.
* ``theoretical`` (§7, Theorem 2): doubling T_k = T_1 2^(k-1) and N^ = T^2 for the whole run
  of T serial steps, so K = O(log N) rounds.

Here T = ``solver.iterations`` (the serial steps). The automatic T_0 / T_1 split T into
K = ceil(log2(T) / 2) rounds (at least one), so both schedules need O(log N) communication
rounds for N examples in all (N = sum_k N^_k + T), and a run of 10^6 serial steps
takes 10. A batch larger than the data set is the exact full gradient.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from worker.distributed.options import SvrgOptions


@dataclass(frozen=True)
class Round:
    """One communication round: a batch of ``batch_size`` examples, then ``serial_steps``."""

    batch_size: int
    serial_steps: int


def automatic_rounds(total_steps: int) -> int:
    """K = ceil(log2(T) / 2), at least 1: the round count of the automatic T_0 / T_1."""
    return max(1, math.ceil(math.log2(max(total_steps, 1)) / 2))


def schedule(options: SvrgOptions, total_steps: int) -> list[Round]:
    """The rounds of a run of ``total_steps`` serial steps (their lengths sum to it)."""
    if options.schedule == "theoretical":
        return _doubling(options, total_steps)
    first = options.serial_steps or math.ceil(total_steps / automatic_rounds(total_steps))
    scale = options.batch_size or first
    lengths = _split(total_steps, [first] * math.ceil(total_steps / first))
    return [Round(batch_size=(k + 1) * scale, serial_steps=length)
            for k, length in enumerate(lengths)]


def _doubling(options: SvrgOptions, total_steps: int) -> list[Round]:
    rounds = automatic_rounds(total_steps)
    first = options.serial_steps or max(1, math.ceil(total_steps / (2**rounds - 1)))
    lengths = []
    while sum(lengths) < total_steps:
        lengths.append(first * 2 ** len(lengths))
    lengths = _split(total_steps, lengths)
    return [Round(batch_size=total_steps**2, serial_steps=length) for length in lengths]


def _split(total: int, lengths: list[int]) -> list[int]:
    """``lengths`` with the last one cut so that they sum to ``total``."""
    lengths[-1] -= sum(lengths) - total
    return lengths


def examples_needed(rounds: list[Round]) -> int:
    """N = sum_k N^_k + T: the examples the schedule processes (batches and serial steps)."""
    return sum(r.batch_size + r.serial_steps for r in rounds)
