"""A work horse lives no longer than its worker.

RQ forks each horse into its own process group, so a SIGKILL of the worker parent alone
(an OOM kill, ``kill -9``) would leave the horse running as an orphan: the reaper fails its
job for the missing heartbeats, and the orphan would later finish a job that has already
ended. On Linux the horse asks the kernel for SIGKILL when its parent dies
(``prctl(PR_SET_PDEATHSIG)``); elsewhere the atomic first-finisher rule of
:func:`worker.queue.events.finish` still keeps the job to one outcome.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

#: ``<linux/prctl.h>``: deliver a signal to this process when its parent dies.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have this process killed when the process ``parent_pid`` (its parent) dies.

    Exits at once if the parent already died between the fork and this call.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent_pid:
        os._exit(1)
