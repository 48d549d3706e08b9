"""``lighttouch.solve``: the engine's solve, in this process, for specs that may hold arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lighttouch.arrays import encode_arrays
from worker.pipeline.solve import solve as solve_spec
from worker.result import Result
from worker.settings import budgeted_settings


def solve(spec: dict[str, Any], progress: Callable[[Any], None] | None = None) -> Result:
    """Solve ``spec`` (docs/spec.md) here and return its :class:`Result`.

    Numpy arrays, scipy sparse matrices and pandas objects in the spec are passed as
    ``data:`` URIs of their ``.npy``/``.npz`` bytes (:mod:`lighttouch.arrays`), exactly as
    :class:`lighttouch.Client` sends them, so both give the same answer for the same seed.
    ``progress`` is called between chunks with the engine's progress report. Invalid specs
    raise :class:`~lighttouch.SpecError` naming the JSON path of each bad field. The engine's
    settings (``LIGHTTOUCH_*``: data roots, data limits, the Dask cluster) are read here, once,
    and a job whose in-process memory estimate exceeds ``LIGHTTOUCH_MAX_JOB_BYTES`` runs on
    the Dask cluster or is refused, as the service's are (docs/scale.md).
    """
    return solve_spec(encode_arrays(spec), progress=progress, settings=budgeted_settings())
