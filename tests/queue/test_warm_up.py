"""Worker start-up compiles the kernels without starting a thread pool that a fork would break."""

from __future__ import annotations

import subprocess
import sys

from service.local_stack import REPO

CHECK = """
import os, time
import numba.np.ufunc.parallel as parallel
from worker.queue.workers import warm_up
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
