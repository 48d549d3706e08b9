"""The chunked loop's progress reports: what they cost is bounded, the last one is sent."""

from __future__ import annotations

import math
import time

from worker.algorithms.run.loop import REPORT_SHARE, ChunkedLoop


def counting_loop(describe_s: float) -> tuple[ChunkedLoop, list, list]:
    """A loop whose ``describe`` takes ``describe_s``; (loop, describes, reports)."""
    describes, reports = [], []

    def describe():
        describes.append(time.perf_counter())
        time.sleep(describe_s)
        return 1.0, 0.0, 0

    loop = ChunkedLoop(math.inf, 10**9, describe, reports.append)
    return loop, describes, reports


def test_a_costly_description_waits_until_it_is_a_small_share_of_the_run():
    loop, describes, reports = counting_loop(0.05)
    loop.report(force=True)
    # 0.05 s to describe: the next unforced report may come only 1 s (0.05 / 5%) later
    assert REPORT_SHARE == 0.05
    time.sleep(0.3)                     # past the quarter second of a cheap description
    for _ in range(100):
        loop.report()
    assert len(describes) == len(reports) == 1
    loop.report(force=True)             # the run's last report is always sent
    assert len(reports) == 2


def test_a_cheap_description_is_reported_every_quarter_second():
    loop, describes, _ = counting_loop(0.0)
    loop.report(force=True)
    loop.report()
    assert len(describes) == 1
    time.sleep(0.3)
    loop.report()
    assert len(describes) == 2


def test_the_loop_advances_to_its_target_and_reports_the_last_iteration():
    loop, _, reports = counting_loop(0.0)
    done = []
    assert loop.run(done.append, 5000)
    loop.report(force=True)
    assert sum(done) == loop.iteration == 5000 and reports[-1].iteration == 5000
