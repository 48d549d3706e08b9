"""``bench/many_constraints.py`` records every job's row when jobs run side by side."""

from __future__ import annotations

import json
import multiprocessing

from bench.many_constraints import _recorded

#: Rows each job adds, each with a payload long enough that reading and writing the file take
#: a while, the window in which an unlocked writer would drop the other job's rows.
ROWS, PAYLOAD = 30, 2000


def _add_rows(path, job: int) -> None:
    for k in range(ROWS):
        _recorded(path, row={"job": job, "k": k, "trace": [0.5] * PAYLOAD})


def test_jobs_side_by_side_keep_each_others_rows(tmp_path):
    path = tmp_path / "many_constraints.json"
    _recorded(path, exact={"14": 0.379449})
    jobs = [multiprocessing.get_context("spawn").Process(target=_add_rows, args=(path, job))
            for job in range(2)]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(120)
    assert [job.exitcode for job in jobs] == [0, 0]
    record = json.loads(path.read_text())
    assert sorted((row["job"], row["k"]) for row in record["runs"]) == \
        [(job, k) for job in range(2) for k in range(ROWS)]
    assert record["exact"] == {"14": 0.379449}
