"""Worker start-up compiles every kernel a job can reach, without starting a thread pool that a
fork would break."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.local_stack import REPO

CHECK = """
import os, time
import numba.np.ufunc.parallel as parallel
from worker.queue.warm_up import warm_up
from worker import solve
warm_up()
assert not parallel._is_initialized, "warm-up started numba's thread pool"
pid = os.fork()
if pid == 0:
    start = time.perf_counter()
    solve({"dimension": 2, "objective": {"type": "quadratic", "Q": [[1, 0], [0, 1]]},
           "constraints": [{"type": "ordering", "chain": [1, 0]}],
           "solver": {"iterations": 1000, "algorithm": "lighttouch"}})
    os._exit(0 if time.perf_counter() - start < 1.0 else 3)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_warm_up_leaves_no_thread_pool_and_a_forked_solve_pays_no_compilation():
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"


NOTHING_COMPILES = """
import gc, json, sys, tempfile
from pathlib import Path
from numba.core.dispatcher import Dispatcher
from worker.queue.warm_up import warm_up
from worker import solve
from tests.queue.job_kinds import every_job

def compiled():
    return {id(d): (f"{d.py_func.__module__}.{d.py_func.__qualname__}", len(d.signatures))
            for d in gc.get_objects() if isinstance(d, Dispatcher)}

warm_up()
jobs = every_job(Path(sys.argv[1]))
new = {}
for name, spec in jobs.items():
    before = compiled()
    solve(spec)
    grown = [kernel for key, (kernel, count) in compiled().items()
             if count > before.get(key, (kernel, 0))[1]]
    if grown:
        new[name] = grown
print(json.dumps({"jobs": len(jobs), "compiled": new}))
"""


@pytest.mark.slow
def test_a_warmed_process_compiles_nothing_for_any_kind_of_job(tmp_path):
    done = subprocess.run([sys.executable, "-c", NOTHING_COMPILES, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "LIGHTTOUCH_DATA_ROOTS": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["jobs"] > 150
    assert report["compiled"] == {}, (
        "these jobs compiled numba kernels in a warmed process; add a job of their kind to "
        f"worker/queue/warm_up.py's WARM_UP_JOBS: {json.dumps(report['compiled'], indent=1)}")
