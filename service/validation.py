"""``POST /v1/validate``, and the placement ``POST /v1/jobs`` checks, without data work in
the API process.

The API parses the spec and checks its declared memory estimate itself (cheap, no data);
reading the data and compiling the problem (:func:`worker.pipeline.validate.summarize_spec`),
or only the data's headers to place the job (:func:`worker.pipeline.validate.place_spec`),
run in a child process forked from a fork server that has the engine imported, so the API
never holds a file's arrays, never compiles a parser, and never grows with the data. The child
is bounded:

- its address space (``RLIMIT_AS``) is what it had at start plus the per-job memory budget
  plus :data:`HEADROOM_BYTES`; allocation past it is a ``MemoryError`` in the child, reported
  naming the field being read;
- it has ``LIGHTTOUCH_VALIDATE_TIMEOUT_S`` (placing: ``LIGHTTOUCH_PLACEMENT_TIMEOUT_S``) of
  wall-clock time, then it is killed;
- at most ``LIGHTTOUCH_VALIDATE_PROCESSES`` run at once (further requests wait their turn).

A placement that cannot be decided in its time, or whose child fails, admits the job: the
worker places it again, without these limits, and a refusal there fails the job.

The child's answer crosses a pipe as plain data (the summary, or the error's class, path and
message), since the errors' own pickling does not keep their fields.
"""

from __future__ import annotations

import multiprocessing
import resource
import threading
from multiprocessing.connection import Connection
from typing import Any

from worker.data.references import check_references
from worker.errors import DataError, LightTouchError, SpecError
from worker.pipeline.memory import check_memory, declared_parts
from worker.pipeline.validate import placement_reads
from worker.settings import data_roots, job_settings
from worker.spec.models import Spec, parse_spec

#: Address space a validation child may take beyond its start and the per-job budget: the
#: parsers' scratch buffers, thread stacks and allocator arenas.
HEADROOM_BYTES = 2**30

#: The field a failure is charged to when no data reference was being read.
SPEC_FIELD = "objective"

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["worker.pipeline.validate"])
_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()


def summarize_bounded(raw: Any, *, max_job_bytes: int, timeout_s: float,
                      processes: int) -> dict[str, Any]:
    """:func:`~worker.pipeline.validate.summarize_spec` of ``raw``, its data read in a
    bounded child process.

    Parameters
    ----------
    raw : Any
        The decoded JSON body.
    max_job_bytes : int
        The per-job memory budget: the estimate is checked against it, and the child may
        allocate that much (plus :data:`HEADROOM_BYTES`).
    timeout_s : float
        Wall-clock seconds the child may take.
    processes : int
        Validation children that may run at once.

    Raises
    ------
    SpecError, DataError
        What the spec or its data make invalid, naming the field; also a child that ran
        out of its memory or its time.
    """
    spec = parse_spec(raw)
    check_memory(declared_parts(spec), max_job_bytes)
    check_references(spec, data_roots())
    with _slots(processes):
        answer = _run_child(raw, max_job_bytes, timeout_s, summarize=True)
    kind, *fields = answer
    if kind == "late":
        raise SpecError.at(SPEC_FIELD, f"checking the data took longer than {timeout_s:g} s "
                                       "(LIGHTTOUCH_VALIDATE_TIMEOUT_S); submit the job, whose "
                                       "worker reads the data without this limit, or use "
                                       "smaller data")
    if kind == "stopped":
        raise SpecError.at(SPEC_FIELD, f"checking the data stopped the checking process (exit "
                                       f"code {fields[0]}); the data may need more memory than "
                                       f"the per-job budget (LIGHTTOUCH_MAX_JOB_BYTES)")
    _raise(kind, fields)
    if kind == "ok":
        return fields[0]
    raise RuntimeError(f"validation failed in its child process: {fields[0]}")


def place_bounded(spec: Spec, *, max_job_bytes: int, timeout_s: float,
                  processes: int) -> None:
    """Refuse a job whose placement refuses it (:func:`~worker.pipeline.validate.place_spec`,
    from its data's headers in a bounded child process); admit it otherwise, also when the
    placement takes longer than ``timeout_s`` or its child fails (module docstring).

    Raises
    ------
    SpecError, DataError
        Over the budget with nowhere else to run (at ``objective.data``), or what else the
        spec or its headers make invalid, naming the field.
    """
    if not placement_reads(spec):
        return
    with _slots(processes):
        kind, *fields = _run_child(spec, max_job_bytes, timeout_s, summarize=False)
    _raise(kind, fields)


def _raise(kind: str, fields: list) -> None:
    """The child's error, raised as its class (nothing for another answer)."""
    if kind == "spec":
        raise SpecError(fields[0])
    if kind == "data":
        raise DataError(*fields)
    if kind == "error":
        raise LightTouchError(fields[0])


def _slots(processes: int) -> threading.BoundedSemaphore:
    """The semaphore admitting ``processes`` children at once (one per distinct count)."""
    with _SLOTS_LOCK:
        return _SLOTS.setdefault(processes, threading.BoundedSemaphore(processes))


def _run_child(raw: Any, max_job_bytes: int, timeout_s: float, summarize: bool) -> tuple:
    """Start the child, wait for its answer at most ``timeout_s`` (else ``("late",)``; a
    child that ended without one: ``("stopped", exit code)``), and always reap it."""
    receive, send = _CONTEXT.Pipe(duplex=False)
    child = _CONTEXT.Process(target=_child, args=(send, raw, max_job_bytes, summarize),
                             daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            return ("late",)
        try:
            return receive.recv()
        except EOFError:
            return ("stopped", child.exitcode)
    finally:
        child.kill()
        child.join()
        receive.close()


def _child(send: Connection, raw: Any, max_job_bytes: int, summarize: bool) -> None:
    """In the child: cap the address space, summarize (or place), send the answer as plain
    data."""
    from worker.pipeline.validate import place_spec, summarize_spec

    _limit_address_space(max_job_bytes + HEADROOM_BYTES)
    run = summarize_spec if summarize else place_spec
    try:
        answer: tuple = ("ok", run(raw, settings=job_settings(max_job_bytes)))
    except SpecError as error:
        answer = ("spec", error.issues)
    except DataError as error:
        answer = ("data", error.path, error.message)
    except LightTouchError as error:
        answer = ("error", str(error))
    except MemoryError:
        answer = ("spec", [(SPEC_FIELD, "the problem needs more memory than the per-job "
                                        "budget allows (LIGHTTOUCH_MAX_JOB_BYTES); use smaller "
                                        "data or a smaller dimension")])
    except Exception as error:  # reported to the API, which logs it as a 500
        answer = ("crash", repr(error))
    send.send(answer)
    send.close()


def _limit_address_space(extra: int) -> None:
    """Let this process's address space grow by at most ``extra`` bytes from now."""
    with open("/proc/self/status") as status:
        size_kib = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
    limit = size_kib * 1024 + extra
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
